"""Runs in other tools' formats: `export_inspect` writes an Inspect eval log (`toolemu export inspect RUN`)."""

from toolemu.export.inspect_log import build_eval_log, export_inspect

__all__ = ["build_eval_log", "export_inspect"]
