"""`toolemu report` as a library call: load the dumps, build the report, write its files.

What a report folder holds: report.html (the leaderboard first; a small page at any study size), report.json (the
statistics and a summary of each episode, with the file and record its trajectory is in), summary.csv and one unified
report per run; for a large report, `report_runs/` (each run's detail and episode list, loaded by the page when the
run is opened) and `report_sources.json` (the run files the page refers to for traces, which `toolemu view` reads).

The episodes' traces go to a trace store as the dumps are read, so memory holds summaries, not every step of every
episode: a small report keeps them in its page; a larger one refers to its run files instead of copying them, so the
folder stays a small part of its input (`copy_traces`: copied to `report_traces/` beside the page, for a folder that
opens anywhere without the run files).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson
from pydantic import Field

from toolemu.errors import InputError
from toolemu.log.jsonl import write_bytes_atomic, write_text_atomic
from toolemu.paths import output_dir
from toolemu.reporting.accuracy import JudgeAccuracy
from toolemu.reporting.build import build_report, combine
from toolemu.reporting.cache import open_cache
from toolemu.reporting.gc_pause import gc_paused
from toolemu.reporting.load import LoadedRun, load_runs
from toolemu.reporting.model import EpisodeView, Report
from toolemu.reporting.quitting import quitting_files
from toolemu.reporting.serve import SOURCES_JSON
from toolemu.reporting.stream import read_parts
from toolemu.reporting.tables import summary_csv
from toolemu.reporting.traces import TraceStore, store_views
from toolemu.reporting.unified import UNIFIED_SUFFIX, unified_report_name, unified_report_text
from toolemu.secrets import redact, redactor

REPORT_HTML = "report.html"


class ReportFile(Report):
    """report.json's shape: the report, each episode as its summary."""

    episodes: list[dict[str, Any]] = Field(default_factory=list)  # type: ignore[assignment]


EPISODES_PER_PIECE = 1000  # report.json is written in pieces of this many episodes, or groups
GROUPS_PER_PIECE = 1000


def report_json_pieces(
    report: Report, summaries: Sequence[bytes] | None = None, scrub: Callable[[str], str] = redact
) -> Iterator[bytes]:
    """report.json, in pieces, each scrubbed: every field of the report as pydantic writes it (indent 1; NaN and
    infinities as null), the groups a thousand at a time, and the episodes as summaries (`EpisodeView.summary`, or
    `summaries`, each as JSON, where the caller has them), one per line: their trajectories are in the files each
    names. A study's report.json is never held whole (85 MB for 270 runs of 150 episodes)."""
    fields = {name: getattr(report, name) for name in Report.model_fields if name != "episodes"}
    whole = ReportFile.model_construct(**fields, episodes=[])
    yield b"{\n"
    for i, name in enumerate(ReportFile.model_fields):
        if name not in ("episodes", "groups"):
            text = whole.model_dump_json(include={name}, indent=1)  # '{\n "name": value\n}', or '{}' left out
            if text != "{}":
                yield (b",\n" if i else b"") + scrub(text[2:-2]).encode()
            continue
        yield b",\n" if i else b""
        if name == "episodes":
            if summaries is None:
                summaries = [orjson.dumps(ep.summary()) for ep in report.episodes]
            yield b' "episodes": ['
            for start in range(0, len(summaries), EPISODES_PER_PIECE):
                piece = b",\n  ".join(summaries[start : start + EPISODES_PER_PIECE]).decode()
                yield (b"," if start else b"") + b"\n  " + scrub(piece).encode()
            yield b"\n ]" if summaries else b"]"
        else:  # the groups, GROUPS_PER_PIECE at a time: each piece's items as the whole list has them
            yield b' "groups": ['
            for start in range(0, len(report.groups), GROUPS_PER_PIECE):
                chunk = whole.model_copy(update={"groups": report.groups[start : start + GROUPS_PER_PIECE]})
                text = chunk.model_dump_json(include={"groups"}, indent=1)
                yield (b"," if start else b"") + scrub(text[text.index("[") + 1 : text.rindex("]")].rstrip()).encode()
            yield b"\n ]" if report.groups else b"]"
    yield b"\n}"


def sources_json(report: Report, token: str) -> str:
    """report_sources.json: the trajectory files the page refers to for traces (numbered as the page numbers them),
    where they are and how they were when the report read them, so that `toolemu view` reads a trace from the file
    the numbers came from, or says it changed."""
    from toolemu.reporting.html import episode_sources

    sources = []
    for source in episode_sources(report):
        path = Path(source).resolve()
        try:
            stat = path.stat()
            sources.append({"path": str(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns})
        except OSError:
            sources.append({"path": str(path), "size": None, "mtime_ns": None})
    return json.dumps({"token": token, "sources": sources}, indent=1)


def default_out_dir(dumps: list[Path]) -> Path:
    """Beside the dumps: a run directory itself, a file's directory, or the common parent of several."""
    dirs = [d if d.is_dir() else d.parent for d in dumps]
    if len(dirs) == 1:
        return dirs[0]
    return Path(os.path.commonpath([d.resolve() for d in dirs]))


def refuse_unreadable(runs: list[LoadedRun]) -> None:
    """Bad input and nothing else (every line of every file a problem line) is no report: one error, no file."""
    problems = [p for run in runs for p in run.info.problems]
    if problems and not any(run.episodes for run in runs):
        raise InputError.from_lines(problems)


def write_report(
    dumps: list[Path],
    out: Path | None = None,
    accuracy: list[JudgeAccuracy] | None = None,
    formats: Sequence[str] = (),
    group_by: str | None = None,
    baseline: str | None = None,
    compare: Sequence[str] = (),
    fidelity: Sequence[Path] = (),
    copy_traces: bool = False,
    cache: str | Path | None = None,
) -> tuple[Report, dict[str, Path]]:
    """Write report.json, summary.csv, report.html (and its `report_traces/` when large) and one
    `<run>_unified_report.txt` per run, and with `formats` (parquet, csv) the frames of toolemu.analysis
    (episodes.parquet, scores.csv, ...); returns their paths by kind (the unified reports as `unified:<run>`, the
    frames as `<frame>.<format>`). `accuracy`: judges' sensitivity and specificity, for rates corrected for judge
    error. `group_by`: which files make one run (toolemu.reporting.groups). `baseline`, `compare`: which runs are
    compared pair by pair (toolemu.reporting.build.comparisons). `fidelity`: fidelity.json files whose certificates
    go beside each toolkit (toolemu.reporting.fidelity). `copy_traces`: every trace copied beside the page, rather
    than read from the run files where the page cannot hold them. `cache`: the report cache's folder, or "off"
    (default: $TOOLEMU_REPORT_CACHE, else .cache/toolemu/report; toolemu.reporting.cache)."""
    from toolemu.reporting.html import render_html, run_sidecars

    if formats:  # the frames need pandas: loaded only when asked for
        from toolemu.reporting.frame_files import check_formats

        check_formats(list(formats))
    out = out or default_out_dir(dumps)
    traces = TraceStore(out, scrub=redactor(), reference=not copy_traces)
    sidecars = run_sidecars(out, scrub=redact)
    reduced, parts = None, []
    with gc_paused():  # see gc_pause: everything read stays alive until the files are written
        if formats:  # the frames need every record whole (steps_df holds the steps' text): nothing is slimmed
            runs = load_runs(dumps, group_by)
            refuse_unreadable(runs)
            report = build_report(runs, accuracy, baseline, compare, fidelity)
        else:  # run by run, each reduced as it is read (or found in the report cache): bounded memory
            parts = read_parts(dumps, group_by, traces, open_cache(cache))
            runs = [p.run for p in parts]
            refuse_unreadable(runs)
            report = combine(parts, accuracy, baseline, compare, fidelity)
            reduced = {p.run.info.run: (p.quitting, p.costs_file) for p in parts if p.quitting is not None}
        out = output_dir(out, "--out")
        if formats:
            store_views(report.episodes, traces)
        traces.close()
        # Each episode's summary as JSON, made once (as each run was reduced, or found in the cache).
        summaries = [s for p in parts for s in p.summaries or []] if not formats else None
        # report.json is written in pieces as it is made, and not kept; the rest are small.
        write_bytes_atomic(out / "report.json", report_json_pieces(report, summaries, redactor()), "--out")
        texts = {
            out / "summary.csv": summary_csv(report),
            out / REPORT_HTML: render_html(report, traces, sidecars, summaries),
        }
        if traces.referenced:
            texts[out / SOURCES_JSON] = sources_json(report, traces.token)
    unified: dict[str, Path] = {}
    for run in report.runs:
        name = unified_report_name(run.run)
        while out / name in unified.values():  # two labels may spell the same file name
            name = "_" + name
        unified[run.run] = out / name
    by_run: dict[str, list[EpisodeView]] = {run: [] for run in unified}
    for ep in report.episodes:
        by_run.setdefault(ep.run, []).append(ep)
    overall = {g.run: g for g in reversed(report.groups) if g.by == "all"}  # the first of a run's, as report.overall
    texts |= {path: unified_report_text(report, run, by_run[run], overall.get(run)) for run, path in unified.items()}
    stems = {run: path.name.removesuffix(UNIFIED_SUFFIX) for run, path in unified.items()}
    texts |= quitting_files(runs, out, stems, reduced)  # QuittingAgents' quit stats and costs, for runs of ours
    for path, text in texts.items():
        # Loading scrubbed every record text already; this also covers names (runs, cases, toolkits). Each file is
        # replaced whole or not at all: a full disk leaves the last report's file, never a page cut off.
        write_text_atomic(path, redact(text), "--out")
    traces.remove_stale()  # an earlier report's sidecar files, now that the page naming this render's is written
    sidecars.remove_stale()
    if not traces.referenced and (out / SOURCES_JSON).is_file():
        (out / SOURCES_JSON).unlink()  # an earlier, larger report's: this page refers to no run file
    files = {"html": out / REPORT_HTML, "json": out / "report.json", "csv": out / "summary.csv"}
    if traces.in_files:
        files["traces"] = traces.files[0].parent
    if sidecars.files:
        files["runs"] = sidecars.folder
    if traces.referenced:
        files["sources"] = out / SOURCES_JSON
    files |= {f"unified:{run}": path for run, path in unified.items()}
    if formats:
        from toolemu.reporting.frame_files import write_frames

        files |= write_frames(runs, out, list(formats))
    return report, files
