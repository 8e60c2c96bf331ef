"""Reports: statistics for any set of scorers, the console table, summary.csv, report.json and report.html.

The names below load on first use, so a module of the package (the report's shortcut, toolemu.reporting.again) can
be imported without the report's code."""

from importlib import import_module
from typing import Any

_WHERE = {
    "build_report": "toolemu.reporting.build",
    "LoadedRun": "toolemu.reporting.load",
    "load_run": "toolemu.reporting.load",
    "load_runs": "toolemu.reporting.load",
    "EpisodeView": "toolemu.reporting.model",
    "GroupStats": "toolemu.reporting.model",
    "MetricStats": "toolemu.reporting.model",
    "Report": "toolemu.reporting.model",
    "print_summary": "toolemu.reporting.tables",
    "summary_csv": "toolemu.reporting.tables",
    "write_report": "toolemu.reporting.write",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'toolemu.reporting' has no attribute {name!r}")


__all__ = sorted(_WHERE)
