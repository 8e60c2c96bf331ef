"""Loopback doubles of strong chat models, for tests and benchmarks: an OpenAI-compatible server
(POST /v1/chat/completions) and an Anthropic Messages server (POST /v1/messages).

They answer like GPT-4-class models and Claude rather than like a script: 1,000-3,000 character bodies with a
checkable marker (markers.py), ~20-item arrays, JSON read off the request's schema (response_format, a forced
tool, or the prompt's "matching this JSON schema:"), prose/fenced JSON when nothing enforces the schema,
parallel tool calls, ReAct text, refusals, usage, 429 with Retry-After, 5xx. Every knob is in config.py; a
reply depends only on (config, request body).

    from doubles import OpenAIDouble, scan

    with OpenAIDouble(seed=1, refusal_rate=0.0, rate_limit_rate=0.1) as double:
        options = ModelOptions(model="openai:double", base_url=double.base_url)  # or ChatOpenAI(base_url=...)
        ...
        double.log[-1].request, double.counters["repair:structured"], scan(records).intact

AnthropicDouble is the same with `anthropic:double` and base_url without /v1; GeminiDouble is the OpenAI double as
Gemini's OpenAI-compatible endpoint. Every double refuses, with a 400 in its API's words, the tool and response
schemas the real API refuses (schema_rules.py). Import as `doubles`: pytest puts
tests/ on sys.path; scripts add it (see benchmarks/strong_double_run.py). No streaming.
"""

from doubles.anthropic_api import AnthropicDouble
from doubles.config import DoubleConfig
from doubles.markers import MarkerScan, scan
from doubles.openai_api import GeminiDouble, OpenAIDouble
from doubles.server import DoubleServer, Exchange

__all__ = [
    "AnthropicDouble",
    "DoubleConfig",
    "DoubleServer",
    "Exchange",
    "GeminiDouble",
    "MarkerScan",
    "OpenAIDouble",
    "scan",
]
