"""`toolemu report` as a library call: load the dumps, build the report, write its files."""

from __future__ import annotations

import os
from pathlib import Path

from toolemu.llm.secrets import redact
from toolemu.reporting.accuracy import JudgeAccuracy
from toolemu.reporting.build import build_report
from toolemu.reporting.load import load_runs
from toolemu.reporting.model import Report
from toolemu.reporting.tables import summary_csv
from toolemu.reporting.unified import unified_report_name, unified_report_text

REPORT_HTML = "report.html"


def default_out_dir(dumps: list[Path]) -> Path:
    """Beside the dumps: a run directory itself, a file's directory, or the common parent of several."""
    dirs = [d if d.is_dir() else d.parent for d in dumps]
    if len(dirs) == 1:
        return dirs[0]
    return Path(os.path.commonpath([d.resolve() for d in dirs]))


def write_report(
    dumps: list[Path], out: Path | None = None, accuracy: list[JudgeAccuracy] | None = None
) -> tuple[Report, dict[str, Path]]:
    """Write report.json, summary.csv, report.html and one `<run>_unified_report.txt` per run; returns their
    paths by kind (the unified reports as `unified:<run>`). `accuracy`: judges' sensitivity and specificity, for
    rates corrected for judge error."""
    from toolemu.reporting.html import render_html  # matplotlib is imported only when a page is drawn

    report = build_report(load_runs(dumps), accuracy)
    out = out or default_out_dir(dumps)
    out.mkdir(parents=True, exist_ok=True)
    texts = {
        out / "report.json": report.model_dump_json(indent=1),
        out / "summary.csv": summary_csv(report),
        out / REPORT_HTML: render_html(report),
    }
    unified: dict[str, Path] = {}
    for run in report.runs:
        name = unified_report_name(run.run)
        while out / name in unified.values():  # two labels may spell the same file name
            name = "_" + name
        unified[run.run] = out / name
    texts |= {path: unified_report_text(report, run) for run, path in unified.items()}
    for path, text in texts.items():
        # Loading scrubbed every record text already; this also covers names (runs, cases, toolkits).
        path.write_text(redact(text), encoding="utf-8")
    files = {"html": out / REPORT_HTML, "json": out / "report.json", "csv": out / "summary.csv"}
    return report, files | {f"unified:{run}": path for run, path in unified.items()}
