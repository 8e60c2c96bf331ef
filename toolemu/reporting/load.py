"""Runs for a report, read through the run log: our run directories and the dumps ToolEmu itself wrote.

Nothing is dropped: an evaluation that failed or is missing shows as such, evaluation records that match no
trajectory are noted, and so are lines that are not records. The shards of a run are read as one run
(`toolemu.reporting.groups`).

Given a TraceStore, every episode's full trace goes there as it is read, and the run's records are slimmed (no
step text, no judge's text): a study of hundreds of dumps is reported in bounded memory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from toolemu.errors import first_error
from toolemu.log import CaseView, Episode, RunLog, Score, read_run, split_eval_key
from toolemu.log.evaluation import Sample
from toolemu.log.layout import FolderListing, eval_files_among, run_files
from toolemu.log.robust import RobustSummary
from toolemu.reporting.gc_pause import gc_paused
from toolemu.reporting.groups import RunGroup, group_runs
from toolemu.reporting.judges import Member, collect_members, pooled_score
from toolemu.reporting.model import EpisodeView, RunInfo
from toolemu.reporting.pairs import empty_shard_note, keep_one_per_pair
from toolemu.reporting.traces import TraceStore
from toolemu.scorers import info_for_eval_type
from toolemu.scorers.base import MetricInfo
from toolemu.specs.lint import risk_category

log = logging.getLogger("toolemu")
UNCATEGORISED = "uncategorised"
# ToolEmu's two evaluations: shown for every run, as not evaluated when a run has no eval file of them yet.
ALWAYS_SHOWN = ("agent_safe", "agent_help")
ROBUST_DIR = "robust"  # `toolemu robust`'s default --out in a run folder: its summary and re-runs are read


M = TypeVar("M", bound=BaseModel)


@dataclass
class LoadedRun:
    info: RunInfo
    episodes: list[EpisodeView]
    scorers: list[MetricInfo]
    judges: dict[str, list[Member]] = field(default_factory=dict)  # by scorer: each judge's verdicts, per episode
    log: RunLog | None = None  # the first file read (run.json of ours): the frames of toolemu.analysis read it
    sources: list[Episode] | None = None  # sources[i] is the trajectory and evaluations behind episodes[i]
    logs: list[RunLog] = field(default_factory=list)  # every file read into this run (shards: several), in order
    robust: RobustSummary | None = None  # `toolemu robust` run on it, with its default --out
    with_files: set[str] | None = None  # the scorers the run has eval files of (None: every scorer it lists)

    @property
    def all_logs(self) -> list[RunLog]:
        return self.logs or ([self.log] if self.log is not None else [])


def read_beside(model: type[M], file: Path, notes: list[str], what: str) -> M | None:
    """What another command wrote beside a run (robust.json, noise.json, judge_audit.json), where it wrote it; a
    file that does not read is noted on the run (not `what` it should be, and why) and left out."""
    if not file.is_file():
        return None
    try:
        return model.model_validate_json(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValidationError) as exc:
        why = first_error(exc)[1] if isinstance(exc, ValidationError) else type(exc).__name__
        notes.append(f"{file}: not {what} ({why}); left out")
        return None


def robust_summary(path: Path, notes: list[str]) -> RobustSummary | None:
    """RUN/robust/robust.json, when `toolemu robust RUN` wrote one."""
    if not path.is_dir():
        return None
    return read_beside(RobustSummary, path / ROBUST_DIR / "robust.json", notes, "a robust summary of toolemu robust")


def categories_of(case: CaseView) -> list[str]:
    found = {risk_category(o) for o in case.potential_risky_outcomes}
    return sorted(c for c in found if c) or [UNCATEGORISED]


def evaluation_scores(episode: Episode, info: MetricInfo) -> list[Score]:
    """One Score per evaluation line that judged the episode (several: replicates)."""
    return [ev.to_score(info.name, info.metric) for ev in episode.evaluations.get(info.eval_type) or []]


def episode_view(ep: Episode, infos: list[MetricInfo], shown: set[str], source: str) -> EpisodeView:
    """One joined episode as the viewer shows it; `shown`: the eval types the run has files of."""
    traj = ep.trajectory
    case = traj.case_view  # validated once: every field below reads it
    scores, replicates = {}, {}
    for info in infos:
        lines = evaluation_scores(ep, info)
        score = pooled_score(lines, info, info.eval_type in shown)  # no file at all: not evaluated, no Score
        if score is not None:
            scores[info.name] = score
        if len(lines) > 1:
            replicates[info.name] = lines
    return EpisodeView(
        run="",
        case_name=traj.case_name,
        case_idx=traj.case_idx,
        trial=traj.trial,
        toolkits=case.toolkits,
        risk_categories=categories_of(case),
        threat=case.threat.kind if case.threat else None,
        status=traj.status,
        instruction=case.user_instruction or traj.input,
        final_answer=traj.output,
        error=f"{traj.error.type}: {traj.error.message}" if traj.error else None,
        steps=traj.steps,
        scores=scores,
        replicates=replicates,
        ledger=traj.ledger or traj.recomputed_ledger(),
        source=source,
        record=ep.position,
    )


def load_run(path: Path, label: str | None = None) -> LoadedRun:
    """One run directory or trajectory file as one run."""
    return load_group(RunGroup(label or "", [path]))


class Listings(dict[Path, FolderListing]):
    """Each folder listed once for a whole report: a study folder of thousands of files serves every run in it."""

    def of(self, directory: Path) -> FolderListing:
        if directory not in self:
            self[directory] = FolderListing(os.listdir(directory))
        return self[directory]


class TraceSink(Protocol):
    def add(self, view: EpisodeView) -> int | None: ...


def load_group(
    group: RunGroup,
    traces: TraceSink | None = None,
    label: str | None = None,
    listings: Listings | None = None,
    slim: bool = True,
    scrub: Callable[[str], str] | None = None,
) -> LoadedRun:
    """The files of one run (a run, or the shards of one) read as one run, in the group's order. With `traces`,
    each episode's trace goes there and the run keeps slim records (`slim=False`: whole, for a caller that drops
    them once the run is reduced). `label`: the run's name in the report, where the caller has made the names of
    several runs unique (`run_labels`). `listings`: folders the caller has listed (a study's folder, listed once
    for all its runs). `scrub`: the secrets' scrubber, where the caller made one for every run."""
    # Every scorer any shard has is the run's: a shard without its eval file shows those evaluations as missing.
    files = [run_files(path) for path in group.paths]
    listings = Listings() if listings is None else listings  # shards share one folder: listed once
    found = [t for f in files for t in eval_files_among(f.trajectories, listings.of(f.directory))]
    eval_types = list(dict.fromkeys([*ALWAYS_SHOWN, *(t for t in found if split_eval_key(t)[1] is None)]))
    infos = [info_for_eval_type(t) for t in eval_types]
    shown = set(found)
    logs: list[RunLog] = []
    joined: list[Episode] = []
    episodes: list[EpisodeView] = []
    notes = list(group.notes)
    for path, run_file in zip(group.paths, files, strict=True):
        run = read_run(path, listing=listings.of(run_file.directory), scrub=scrub or True)
        mine, more = run.episodes()
        notes += run.problems + more
        views = [episode_view(ep, infos, shown, str(run.files.trajectories)) for ep in mine]
        if traces is not None:
            for view in views:
                view.trace_id = traces.add(view)
            if slim:
                _slim(run, mine, views)
        logs.append(run)
        joined += mine
        episodes += views
    formats = {str(log.files.trajectories): log.format for log in logs}
    joined, episodes, repeats = keep_one_per_pair(joined, episodes, [formats[v.source] == "ours" for v in episodes])
    notes += [note for note in (repeats, empty_shard_note(logs)) if note]
    # A combined run's robustness summary: the first of its folders that has one (shards of ours each could).
    robust = next((r for path in group.paths if (r := robust_summary(path, notes)) is not None), None)
    info = _run_info(group, logs, [i.name for i in infos], notes)
    if label is not None:
        info.run = label
        if robust is not None:
            robust.run = label
    for ep in episodes:
        ep.run = info.run
    judges = collect_members(info.run, joined, infos)
    with_files = {i.name for i in infos if i.eval_type in shown}
    return LoadedRun(info, episodes, infos, judges, logs[0], joined, logs, robust, with_files)


def _run_info(group: RunGroup, logs: list[RunLog], scorers: list[str], notes: list[str]) -> RunInfo:
    first = next((t for run in logs for t in run.trajectories if t.schema_version), None)

    def model(role: str, detail: str) -> str:
        name = first.model_of(role) if first else ""
        return f"{name} ({detail})" if name and detail else name

    # The command's budget use, from run.json; a combined run's shards each have their own, in their run.json.
    meta = logs[0].meta
    budget = meta.budget.line() if len(logs) == 1 and meta and meta.budget else ""
    evaluator = next(
        (ev.evaluator_model for run in logs for evs in run.evaluations.values() for ev in evs if ev.evaluator_model),
        "",
    )
    bench = logs[0].meta.benchmark if logs[0].meta else None
    label = group.label or logs[0].files.label
    return RunInfo(
        run=label,
        source=_source(group.paths),
        sources=[str(p) for p in group.paths] if len(group.paths) > 1 else [],
        format="ours" if any(run.format == "ours" for run in logs) else "toolemu",
        agent=model("agent", first.agent_type if first else "") or label,
        emulator=model("emulator", first.simulator_type if first else ""),
        evaluator=evaluator,
        scorers=scorers,
        notes=notes,
        benchmark_version=bench.version if bench else None,
        benchmark_hash=bench.hash if bench else None,
        problems=[p for run in logs for p in run.problems],
        budget=budget,
    )


def _source(paths: list[Path]) -> str:
    """The path read, or for several, the folder they share and how many there are."""
    if len(paths) == 1:
        return str(paths[0])
    parents = {p.parent for p in paths}
    where = paths[0].parent if len(parents) == 1 else Path(os.path.commonpath([p.resolve() for p in paths]))
    return f"{where} ({len(paths)} shards)"


# -------------------------------------------------------------------------------------------------- slimming

# The texts a report reads only in a trace: emptied once the trace is stored.
STEP_TEXTS = (
    "thought",
    "agent_log",
    "discarded_text",
    "reasoning",
    "observation",
    "emulator_thought",
    "emulator_log_summary",
)
TRAJECTORY_TEXTS = ("input", "output")


def _slim(run: RunLog, episodes: list[Episode], views: list[EpisodeView]) -> None:
    """Drop the texts whose traces are stored, in place (these records were just read and nothing else holds
    them): what counts, statuses, gates, scores and judges need stays. A view keeps its instruction and final
    answer (the list shows and searches them) and its ledger. The fields are set in each record's `__dict__`, as
    pydantic keeps them: emptying a field needs no validation, and a study has 200,000 of them."""
    for ep in episodes:
        traj = ep.trajectory
        for step in traj.steps:
            vars(step).update(_EMPTY_STEP, tool_input={}, state=[])
        vars(traj).update(_EMPTY_TRAJECTORY, intermediate_steps=[], case={}, policies=[], ledger={})
    for evaluations in run.evaluations.values():
        for ev in evaluations:
            samples = [Sample.model_construct(thought="", label=s.label, score=s.score, summary="") for s in ev.samples]
            vars(ev).update(evaluator_thought="", log_summary="", samples=samples)
    for view in views:  # a view keeps its ledger: a few facts, and the checks read it
        for score in [*view.scores.values(), *(s for lines in view.replicates.values() for s in lines)]:
            vars(score).update(explanation="", summary="")


_EMPTY_STEP = dict.fromkeys(STEP_TEXTS, "")
_EMPTY_TRAJECTORY = dict.fromkeys(TRAJECTORY_TEXTS, "")


def _prefix_clashing_labels(labels: list[str], groups: list[RunGroup]) -> list[str]:
    """Runs that share a label get the fewest folders above them that tell them apart (a study's judge/agent/...
    folders): two `run` folders under judge-a/qwen and judge-b/qwen are judge-a/qwen/run and judge-b/qwen/run."""
    out = list(labels)
    by_label: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        by_label.setdefault(label, []).append(i)
    for label, clashing in by_label.items():
        if len(clashing) < 2:
            continue
        parents = [groups[i].paths[0].resolve().parent.parts for i in clashing]
        names = [p[-1] if p else "" for p in parents]  # one folder, when none tells them apart (see "#n" below)
        for depth in range(2, max(len(p) for p in parents) + 1):
            if len(set(names)) == len(names):
                break
            names = ["/".join(p[-depth:]) for p in parents]
        if len(set(names)) < len(names):
            names = [p[-1] if p else "" for p in parents]
        for i, name in zip(clashing, names, strict=True):
            out[i] = f"{name}/{label}"
    return out


def run_labels(groups: list[RunGroup]) -> list[str]:
    """Each group's name in the report, unique, known before any file is read (so runs can be read one at a
    time): the group's label, else its first file's or folder's; labels that clash get the folders above them
    that tell them apart, and what still clashes a `#n`."""
    labels = _prefix_clashing_labels([g.label or run_files(g.paths[0]).label for g in groups], groups)
    seen: dict[str, int] = {}
    for i, label in enumerate(labels):
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            labels[i] = f"{label}#{seen[label]}"
    return labels


def warn_notes(run: LoadedRun) -> None:
    """Log a run's notes as warnings (lines that are not records are reported by the caller instead)."""
    for note in run.info.notes:
        if note not in run.info.problems:
            log.warning("%s: %s", run.info.source, note)


def load_runs(paths: list[Path], group_by: str | None = None, traces: TraceStore | None = None) -> list[LoadedRun]:
    """The runs the paths name, the shards of one run combined (`toolemu.reporting.groups`; `group_by` chooses
    how); labels are made unique where they clash. With `traces`, every trace goes there as it is read."""
    groups = group_runs(paths, group_by)
    labels = run_labels(groups)
    with gc_paused():
        runs = [load_group(g, traces, label) for g, label in zip(groups, labels, strict=True)]
    for run in runs:
        warn_notes(run)
    return runs
