"""ToolEmu-format specs: models and loading."""

from toolemu.specs.benchmark import benchmark_identity, load_cases, load_toolkits
from toolemu.specs.load import Benchmark, FileSummary, load_benchmark
from toolemu.specs.models import (
    RISK_CATEGORIES,
    THREAT_KINDS,
    Case,
    Threat,
    Tool,
    ToolArgument,
    ToolException,
    Toolkit,
    ToolReturn,
)

__all__ = [
    "RISK_CATEGORIES",
    "THREAT_KINDS",
    "Benchmark",
    "Case",
    "FileSummary",
    "Threat",
    "Tool",
    "ToolArgument",
    "ToolException",
    "ToolReturn",
    "Toolkit",
    "benchmark_identity",
    "load_benchmark",
    "load_cases",
    "load_toolkits",
]
