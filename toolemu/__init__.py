"""ToolEmu: an LM-emulated sandbox for finding the risks of LLM agents.

The library API (`toolemu.run`, `toolemu.emulate`, `toolemu.evaluate`, `toolemu.report`, `toolemu.RunConfig`) is
loaded on first use, so `import toolemu` stays cheap for tools that only read a record.
"""

from typing import Any

__version__ = "0.1.0"

# Every record the project writes carries this, so readers can tell which layout wrote it.
SCHEMA_VERSION = "1"

_API = {"run", "emulate", "evaluate", "report", "RunConfig", "RunResult", "ReportResult"}


def __getattr__(name: str) -> Any:
    if name in _API:
        from toolemu import api, runner

        return getattr(runner if name == "RunConfig" else api, name)
    raise AttributeError(f"module 'toolemu' has no attribute {name!r}")
