"""The noise of a report's headline rates (toolemu noise): read from each run's RUN/noise/noise.json, and said
beside each headline in the console and in summary.csv, "±x, of which agent a%, emulator e%, judge j%", or "not
measured" where `toolemu noise` has not been run on it. The page's table is toolemu.reporting.noise_html."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolemu.log import RunLog
from toolemu.reporting.load import LoadedRun, read_beside
from toolemu.reporting.model import GroupStats, Report
from toolemu.reporting.noise_model import (
    NO_NOISE,
    NO_SPREAD,
    NOISE_DIR,
    NOISE_FILE,
    MetricNoise,
    NoiseSummary,
    Part,
    RunNoise,
    measured_metric,
    noise_text,
)
from toolemu.reporting.text_parts import pct

NOT_MEASURED = "not measured (toolemu noise RUN splits each headline's spread into agent, emulator and judge)"


def noise_file(log: RunLog) -> Path:
    """Where `toolemu noise` writes by default for this run file: RUN/noise/noise.json, or <stem>_noise/ beside a
    trajectory file."""
    files = log.files
    if files.is_dir:
        return files.directory / NOISE_DIR / NOISE_FILE
    return files.trajectories.with_name(f"{files.trajectories.stem}_{NOISE_DIR}") / NOISE_FILE


def run_noise(runs: Sequence[LoadedRun]) -> list[RunNoise]:
    """One row per run: its noise.json (the first of its files that has one), or none."""
    out = []
    for run in runs:
        row = RunNoise(run=run.info.run)
        for log in run.all_logs:
            file = noise_file(log)
            summary = read_beside(NoiseSummary, file, run.info.notes, "a noise summary of toolemu noise")
            if summary is not None:
                row = RunNoise(run=run.info.run, file=str(file), summary=summary)
                break
        out.append(row)
    return out


def headline_scorers(report: Report, g: GroupStats) -> list[str]:
    """The headline metrics a group has verdicts of: the ones whose noise is measured."""
    return [i.name for i in report.scorers if measured_metric(i) and (m := g.metric(i.name)) is not None and m.n]


def metric_line(run: str, m: MetricNoise) -> str:
    """One metric's split in full: the shares with CIs, each part's standard deviation, the design behind it."""
    head = f"noise {run} {m.scorer} ({m.rate_name} rate): {noise_text(m)}"
    if any(c.share is not None for c in m.components):
        head += "; " + ", ".join(f"{c.name} {pct(c.share, c.share_ci)} (sd {c.sd:.3f})" for c in m.components)
    if m.observations:
        head += (
            f"; {m.observations} judgements of {m.worlds} trajectories, {m.trials} trials, {m.cases} cases "
            f"({m.resamples} bootstrap resamples)"
        )
    said = [d for d in m.degenerate.split("; ") if d and d not in (NO_SPREAD, NO_NOISE)]
    if said and m.headline_sd is not None:
        head += "; " + "; ".join(said)
    if m.judge_dominated:
        head += " - JUDGE-DOMINATED: most of its spread is the judge's"
    return head


def summary_lines(summary: NoiseSummary) -> list[str]:
    """What `toolemu noise` prints: each metric's split, then the cost and the notes."""
    lines = [
        f"noise {summary.run}: {len(summary.cases)} of {summary.of_cases} cases, {summary.trials} new trials each, "
        f"{summary.seeds} new worlds per trial, {summary.samples} judgements per trajectory"
    ]
    lines += [metric_line(summary.run, m) for m in summary.metrics]
    c = summary.cost
    per_case = f"{c.calls_per_case:g}" if c.calls_per_case is not None else "-"
    lines.append(
        f"noise cost: {c.calls} model calls ({per_case} per case: "
        + ", ".join(f"{r.role} {r.calls}" for r in c.roles)
        + f"), {c.cache_hits} cache hits, {c.episodes} episodes, {c.judgements} judgements, ${c.cost_usd:.4f}"
    )
    lines += [f"note: {n}" for n in summary.notes]
    return lines


def noise_lines(report: Report) -> list[str]:
    """For the console, after the qualifiers: each run's headline noise, or that it was not measured."""
    rows = {r.run: r for r in report.noise}
    lines = []
    for g in (g for g in report.groups if g.by == "all"):
        names = headline_scorers(report, g)
        row = rows.get(g.run)
        if not names:
            continue
        if row is None or row.summary is None:
            lines.append(f"noise {g.run}: {NOT_MEASURED}")
            continue
        for name in names:
            m = row.metric(name)
            lines.append(metric_line(g.run, m) if m is not None else f"noise {g.run} {name}: not measured")
    return lines


# ----------------------------------------------------------------------------------------------- summary.csv


def noise_cells(report: Report, g: GroupStats) -> dict[str, object]:
    """A run's `all` row: the text beside its headline, its standard deviation and the three shares. Its keys are
    summary.csv's noise columns, there only where some run of the report was measured: a report of runs without
    noise keeps its columns."""
    if g.by != "all":
        return {}
    row = next((r for r in report.noise if r.run == g.run), None)
    out: dict[str, object] = {}
    measured = {m.scorer for r in report.noise if r.summary is not None for m in r.summary.metrics}
    for name in report.scorer_names(measured):
        m = row.metric(name) if row is not None else None
        out[f"{name}_noise"] = noise_text(m)
        out[f"{name}_noise_sd"] = m.headline_sd if m is not None else None
        for part in ("agent", "emulator", "judge"):
            out[f"{name}_noise_{part}_share"] = m.share(part) if m is not None else None  # type: ignore[arg-type]
    return out


def noise_share(report: Report, run: str, scorer: str, part: Part) -> tuple[float | None, str]:
    """A part's share of a headline's noise, for `toolemu check` (max_judge_noise_share, max_emulator_noise_share),
    or None and why it cannot be read."""
    row = next((r for r in report.noise if r.run == run), None)
    m = row.metric(scorer) if row is not None else None
    if m is None:
        return None, f"no {scorer} noise measured: toolemu noise RUN"
    found = next((c for c in m.components if part in c.parts), None)
    if found is None:
        return None, f"the {part} part of {scorer}'s noise was not measured (toolemu noise --num-trials, --seeds)"
    if len(found.parts) > 1:
        return None, f"the {part} part of {scorer}'s noise is not apart from the rest ({found.name}: {m.degenerate})"
    if found.share is None:  # no spread at all: the part moved nothing (0 of 0)
        return 0.0, ""
    return found.share, ""
