"""Loopback doubles of strong chat models (OpenAI-compatible and Anthropic) for tests and benchmarks.

    with OpenAIDouble(seed=1, refusal_rate=0.0) as double:
        ChatOpenAI(model="double", base_url=double.base_url, api_key="x").invoke("hi")
        double.log[-1].request, double.counters["kind:chat"]

Import as `doubles` with tests/ on sys.path (pytest puts it there; benchmarks add it).
"""

from doubles.anthropic_api import AnthropicDouble
from doubles.config import DoubleConfig
from doubles.markers import MarkerScan, scan
from doubles.openai_api import OpenAIDouble
from doubles.server import DoubleServer, Exchange

__all__ = ["AnthropicDouble", "DoubleConfig", "DoubleServer", "Exchange", "MarkerScan", "OpenAIDouble", "scan"]
