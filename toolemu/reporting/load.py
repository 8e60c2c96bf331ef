"""Runs for a report, read through the run log: our run directories and the dumps ToolEmu itself wrote.

Nothing is dropped: an evaluation that failed or is missing shows as such, evaluation records that match no
trajectory are noted, and so are lines that are not records.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from toolemu.llm.usage import BudgetUse
from toolemu.log import CaseView, Episode, RunLog, Score, read_run, runs_in, split_eval_key
from toolemu.reporting.judges import Member, collect_members
from toolemu.reporting.model import EpisodeView, RunInfo
from toolemu.robust.models import RobustSummary
from toolemu.scorers import info_for_eval_type
from toolemu.scorers.base import MetricInfo
from toolemu.specs.lint import risk_category

log = logging.getLogger("toolemu")
UNCATEGORISED = "uncategorised"
# ToolEmu's two evaluations: shown for every run, as missing when a run has not been evaluated yet.
ALWAYS_SHOWN = ("agent_safe", "agent_help")


@dataclass
class LoadedRun:
    info: RunInfo
    episodes: list[EpisodeView]
    scorers: list[MetricInfo]
    judges: dict[str, list[Member]] = field(default_factory=dict)  # by scorer: each judge's verdicts, per episode
    log: RunLog | None = None  # what it was read from: the frames of toolemu.analysis read the rest there
    sources: list[Episode] | None = None  # sources[i] is the trajectory and evaluations behind episodes[i]
    robust: RobustSummary | None = None  # `toolemu robust` run on it, with its default --out


def robust_summary(path: Path, notes: list[str]) -> RobustSummary | None:
    """RUN/robust/robust.json, when `toolemu robust RUN` wrote one; a file that does not read is noted."""
    file = path / "robust" / "robust.json" if path.is_dir() else None
    if file is None or not file.is_file():
        return None
    try:
        return RobustSummary.model_validate_json(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValidationError) as exc:
        notes.append(f"{file}: not a robust summary of toolemu robust ({type(exc).__name__}); left out")
        return None


def categories_of(case: CaseView) -> list[str]:
    found = {risk_category(o) for o in case.potential_risky_outcomes}
    return sorted(c for c in found if c) or [UNCATEGORISED]


def evaluation_scores(episode: Episode, info: MetricInfo) -> list[Score]:
    """One Score per evaluation line that judged the episode (several: replicates)."""
    return [ev.to_score(info.name, info.metric) for ev in episode.evaluations.get(info.eval_type) or []]


def score_of(episode: Episode, info: MetricInfo, has_file: bool) -> Score | None:
    """The episode's score for one scorer, for tables by episode and the trace viewer: the mean over replicate
    evaluations; None when the run has no such evaluations at all."""
    scores = evaluation_scores(episode, info)
    if not scores:
        return Score(scorer=info.name, metric=info.metric, status="missing") if has_file else None
    ok = [s for s in scores if s.scored]
    if len(scores) == 1 or not ok:
        return scores[0]
    first = ok[0]
    values = [s.value for s in ok if s.value is not None]
    return first.model_copy(
        update={
            "value": sum(values) / len(values),
            "samples": sum(s.samples for s in ok),
            "metadata": {**first.metadata, "replicates": values},
        }
    )


def load_run(path: Path, label: str | None = None) -> LoadedRun:
    run: RunLog = read_run(path)
    joined, notes = run.episodes()
    notes = run.problems + notes
    # A panel judge's file (<type>@<judge>) is not a scorer of its own: its verdicts reach the judges section.
    eval_types = list(dict.fromkeys([*ALWAYS_SHOWN, *(t for t in run.evaluations if split_eval_key(t)[1] is None)]))
    infos = [info_for_eval_type(t) for t in eval_types]
    episodes = []
    for ep in joined:
        traj = ep.trajectory
        scores, replicates = {}, {}
        for info in infos:
            score = score_of(ep, info, info.eval_type in run.evaluations or info.eval_type in ALWAYS_SHOWN)
            if score is not None:
                scores[info.name] = score
            if len(lines := evaluation_scores(ep, info)) > 1:
                replicates[info.name] = lines
        episodes.append(
            EpisodeView(
                run="",
                case_name=traj.case_name,
                case_idx=traj.case_idx,
                trial=traj.trial,
                toolkits=traj.toolkits,
                risk_categories=categories_of(traj.case_view),
                threat=traj.case_view.threat.kind if traj.case_view.threat else None,
                status=traj.status,
                instruction=traj.instruction,
                final_answer=traj.output,
                error=f"{traj.error.type}: {traj.error.message}" if traj.error else None,
                steps=traj.steps,
                scores=scores,
                replicates=replicates,
                ledger=traj.ledger or traj.recomputed_ledger(),
            )
        )
    robust = robust_summary(path, notes)
    info = _run_info(path, run, label, [i.name for i in infos], notes)
    for ep in episodes:
        ep.run = info.run
    return LoadedRun(info, episodes, infos, collect_members(info.run, joined, infos), run, joined, robust)


def _run_info(path: Path, run: RunLog, label: str | None, scorers: list[str], notes: list[str]) -> RunInfo:
    first = next((t for t in run.trajectories if t.schema_version), None)

    def model(role: str, detail: str) -> str:
        name = first.model_of(role) if first else ""
        return f"{name} ({detail})" if name and detail else name

    budget = BudgetUse.from_dict(run.meta.budget).line() if run.meta and run.meta.budget else ""
    evaluator = next((ev.evaluator_model for evs in run.evaluations.values() for ev in evs if ev.evaluator_model), "")
    bench = run.meta.benchmark if run.meta else None
    return RunInfo(
        run=label or run.files.label,
        source=str(path),
        format=run.format,
        agent=model("agent", first.agent_type if first else "") or run.files.label,
        emulator=model("emulator", first.simulator_type if first else ""),
        evaluator=evaluator,
        scorers=scorers,
        notes=notes,
        benchmark_version=bench.version if bench else None,
        benchmark_hash=bench.hash if bench else None,
        problems=list(run.problems),
        budget=budget,
    )


def load_runs(paths: list[Path]) -> list[LoadedRun]:
    """Each path one run (a folder of ToolEmu dumps: one run per dump); labels are the directory (or file) names,
    made unique where they clash."""
    paths = [run for path in paths for run in runs_in(path)]
    runs = [load_run(p) for p in paths]
    seen: dict[str, int] = {}
    for run, path in zip(runs, paths, strict=True):
        label = run.info.run
        if label in seen or sum(r.info.run == label for r in runs) > 1:
            label = f"{path.resolve().parent.name}/{label}"
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        run.info.run = label
        if run.robust is not None:
            run.robust.run = label
        for ep in run.episodes:
            ep.run = label
        for members in run.judges.values():
            for m in members:
                m.use.run = label
    for run in runs:
        for note in run.info.notes:
            if note not in run.info.problems:  # lines that are not records: the caller reports those
                log.warning("%s: %s", run.info.source, note)
    return runs
