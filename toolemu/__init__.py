"""ToolEmu: an LM-emulated sandbox for finding the risks of LLM agents.

The library API (`toolemu.run`, `toolemu.emulate`, `toolemu.evaluate`, `toolemu.report`, `toolemu.RunConfig`) is
loaded on first use, so `import toolemu` stays cheap for tools that only read a record.
"""

from toolemu.registration import lazy_names
from toolemu.version import SCHEMA_VERSION, __version__

_API = {"run", "emulate", "evaluate", "report", "RunConfig", "RunResult", "ReportResult"}
__getattr__ = lazy_names(__name__, dict.fromkeys(_API, "toolemu.api"))


__all__ = ["SCHEMA_VERSION", "__version__", *sorted(_API)]
