"""ToolEmu: an LM-emulated sandbox for finding the risks of LLM agents.

The library API (`toolemu.run`, `toolemu.emulate`, `toolemu.evaluate`, `toolemu.report`, `toolemu.RunConfig`) is
loaded on first use, so `import toolemu` stays cheap for tools that only read a record.
"""

from typing import Any

from toolemu.version import SCHEMA_VERSION, __version__

_API = {"run", "emulate", "evaluate", "report", "RunConfig", "RunResult", "ReportResult"}


def __getattr__(name: str) -> Any:
    if name in _API:
        from toolemu import api

        return getattr(api, name)
    raise AttributeError(f"module 'toolemu' has no attribute {name!r}")


__all__ = ["SCHEMA_VERSION", "__version__", *sorted(_API)]
