"""`toolemu report` as a library call: load the dumps, build the report, write its files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from toolemu.llm.secrets import redact
from toolemu.paths import output_dir
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
    dumps: list[Path],
    out: Path | None = None,
    accuracy: list[JudgeAccuracy] | None = None,
    formats: Sequence[str] = (),
) -> tuple[Report, dict[str, Path]]:
    """Write report.json, summary.csv, report.html and one `<run>_unified_report.txt` per run, and with `formats`
    (parquet, csv) the frames of toolemu.analysis (episodes.parquet, scores.csv, ...); returns their paths by kind
    (the unified reports as `unified:<run>`, the frames as `<frame>.<format>`). `accuracy`: judges' sensitivity
    and specificity, for rates corrected for judge error."""
    from toolemu.analysis.export import check_formats, write_frames
    from toolemu.reporting.html import render_html  # matplotlib is imported only when a page is drawn

    check_formats(list(formats))
    runs = load_runs(dumps)
    report = build_report(runs, accuracy)
    out = output_dir(out or default_out_dir(dumps), "--out")
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
    files |= {f"unified:{run}": path for run, path in unified.items()}
    if formats:
        files |= write_frames(runs, out, list(formats))
    return report, files
