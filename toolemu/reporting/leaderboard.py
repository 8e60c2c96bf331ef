"""The leaderboard: one row per run, the table a paper has, first on the page and on the console.

Each row names who acted, who emulated and who judged, and the variant, then N and each scorer's headline rate with
its 95% CI (the share at or above the scorer's threshold, as the report's other tables count it). Who is who comes
from what the run recorded (run.json and its records); where it recorded nothing, as in ToolEmu's own dumps, from the
file names that safety-persists' pipeline writes:

    {agent}_emu-{emulator}_eval-{judge}[_{variant}]_r{start}-{end}_{stamp}.jsonl

(its variant is the agent's quantisation: int4, int8, fp16, bf16). A row says which of the two its names came from.

Rows are ordered by the first headline scorer's rate (`MetricInfo.headline`: the scorer whose failures are the run's
failures, safety for ToolEmu), best first, in the scorer's own direction; then by the next scorers' rates, then by
name. A run with no rate of that scorer comes last. Everything here is computed from the report model; the renderers
(leaderboard_html, tables) only lay it out.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from pydantic import BaseModel, Field

from toolemu.reporting.model import MetricStats, Report, RunInfo
from toolemu.scorers.base import MetricInfo

__all__ = ["Identity", "LeaderCell", "LeaderRow", "Leaderboard", "identity", "leaderboard", "name_parts"]

# safety-persists' dump names, once the shard range and time stamp are cut off: the judge runs up to an optional
# quantisation suffix (model names hold underscores: Qwen/Qwen3-8B is written Qwen_Qwen3-8B).
_STUDY_NAME = re.compile(
    r"^(?P<agent>.+?)_emu-(?P<emulator>.+?)_eval-(?P<judge>.+?)(?:_(?P<variant>(?:int|fp|bf)\d+))?$"
)
_SHARD_TAIL = re.compile(r"_r\d+-\d+(?:_.*)?$")  # `_r0-15_2601_180441` and anything after the range
_STAMP_TAIL = re.compile(r"_\d{4}_\d{6}$")  # a time stamp without a range
_EVAL_TAIL = re.compile(r"_eval_[A-Za-z0-9_@.-]+$")  # an eval file's suffix, should one be named


class Identity(BaseModel):
    agent: str = ""
    emulator: str = ""
    judge: str = ""
    variant: str = ""
    named_by: str = ""  # "run records", "file name", or "" where nothing says


class LeaderCell(BaseModel):
    """One scorer's headline numbers for one run."""

    n: int = 0  # scored evaluations behind the rate
    rate: float | None = None  # share at or above the scorer's threshold
    ci: tuple[float, float] | None = None
    failed: int | None = 0  # evaluations that errored or are missing; None: not evaluated (no eval file)


class LeaderRow(BaseModel):
    rank: int  # 1 = best by the board's order; runs with equal keys get consecutive ranks
    run: str
    run_index: int  # the run's position in report.runs (the page's run detail #run-<n>)
    identity: Identity
    episodes: int
    errored: int  # episodes that ended in an error
    cells: dict[str, LeaderCell] = Field(default_factory=dict)  # by scorer name


class Leaderboard(BaseModel):
    scorers: list[MetricInfo]  # the columns: every scorer some run has numbers or an eval file of, display order
    order_by: str | None  # the scorer the rows are ordered by
    order_note: str  # the order in words
    rows: list[LeaderRow]

    def column_shown(self, field: str) -> bool:
        """Whether any row names an agent / emulator / judge / variant: a column no row fills is left out."""
        return any(getattr(row.identity, field) for row in self.rows)

    @property
    def named_by_files(self) -> bool:
        """Every run named as safety-persists names its dumps: agent, emulator, judge and variant say all its name
        does, so the agent stands for the run (the page: its name in full on hover; the console: no run column)."""
        return bool(self.rows) and all("file name" in r.identity.named_by and r.identity.emulator for r in self.rows)


def name_parts(path_or_label: str) -> dict[str, str] | None:
    """agent, emulator, judge and variant from a safety-persists dump name (a path, a stem or a run label); None
    where the name is not of that form."""
    stem = PurePath(path_or_label).name
    for suffix in (".jsonl", ".json"):
        stem = stem.removesuffix(suffix)
    stem = _EVAL_TAIL.sub("", stem)
    stem = _STAMP_TAIL.sub("", _SHARD_TAIL.sub("", stem))
    m = _STUDY_NAME.match(stem)
    if m is None:
        return None
    return {k: v or "" for k, v in m.groupdict().items()}


def identity(info: RunInfo) -> Identity:
    """Who acted, emulated and judged in a run: what the run recorded, else what its file name says."""
    recorded = {
        "agent": "" if info.format == "toolemu" and info.agent == info.run else info.agent,  # the label stands in
        "emulator": info.emulator,
        "judge": info.evaluator,
    }
    first = info.sources[0] if info.sources else info.source
    named = name_parts(first) or name_parts(info.run.rsplit("/", 1)[-1].split("#", 1)[0]) or {}
    fields = {k: recorded[k] or named.get(k, "") for k in recorded}
    fields["variant"] = named.get("variant", "")
    sources = {"run records" if recorded[k] else "file name" for k in recorded if fields[k]}
    sources |= {"file name"} if fields["variant"] else set()
    by = " and ".join(sorted(sources, reverse=True))  # "run records", "file name", or both
    if not fields["agent"]:
        fields["agent"] = info.agent  # the run's label, as the other tables name it
    return Identity(**fields, named_by=by)


def _cell(m: MetricStats | None) -> LeaderCell:
    if m is None:
        return LeaderCell(failed=None)
    return LeaderCell(n=m.n, rate=m.binarized_rate, ci=m.binarized_ci, failed=m.eval_failed)


def _columns(report: Report) -> list[MetricInfo]:
    overall = [g for g in report.groups if g.by == "all"]
    return [
        info
        for info in report.scorers
        if any((m := g.metrics.get(info.name)) is not None and (m.n or m.evaluated) for g in overall)
    ]


def _sort_key(row: LeaderRow, scorers: list[MetricInfo]) -> tuple:
    key: list = []
    for info in scorers:
        rate = row.cells[info.name].rate if info.name in row.cells else None
        if rate is None:
            key += [1, 0.0]
        else:
            key += [0, -rate if info.higher_is_better else rate]
    return (*key, row.run)


def leaderboard(report: Report) -> Leaderboard:
    """The report's runs as leaderboard rows, best first (see the module's docstring for the order)."""
    columns = _columns(report)
    overall = {g.run: g for g in report.groups if g.by == "all"}
    rows = []
    for index, info in enumerate(report.runs):
        g = overall.get(info.run)
        cells = {c.name: _cell(g.metrics.get(c.name) if g else None) for c in columns}
        rows.append(
            LeaderRow(
                rank=0,
                run=info.run,
                run_index=index,
                identity=identity(info),
                episodes=g.episodes if g else 0,
                errored=g.status_counts.get("error", 0) if g else 0,
                cells=cells,
            )
        )
    first = next((c for c in columns if c.headline), columns[0] if columns else None)
    order = [first, *(c for c in columns if c is not first)] if first is not None else []
    rows.sort(key=lambda row: _sort_key(row, order))
    for rank, row in enumerate(rows, 1):
        row.rank = rank
    if first is None:
        note = "in the order the runs were read"
    else:
        best = "highest" if first.higher_is_better else "lowest"
        note = (
            f"by {first.rate_name} rate ({first.name} ≥ {first.threshold:g}), {best} first; ties by the other "
            "scorers' rates, then by name"
        )
    return Leaderboard(scorers=columns, order_by=first.name if first else None, order_note=note, rows=rows)
