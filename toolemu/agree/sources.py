"""What `toolemu agree` compares: sets of one scorer's verdicts, each on trajectories it can fingerprint.

An input is a run directory or a trajectory .jsonl file (its standard eval file: the run's headline judge), one
eval file `<prefix>_eval_<type>[@<judge>].jsonl` (its trajectories are `<prefix>.jsonl` beside it), or a folder of
runs: every ToolEmu dump (`<prefix>.jsonl` with its eval files) and every run directory in it or in the folders
below it, as published studies lay them out (judge/agent/files).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from toolemu.agree.fingerprint import trajectory_fingerprint
from toolemu.errors import InputError
from toolemu.log import TRAJECTORIES, Evaluation, RunLog, eval_file_key, read_run, split_eval_key
from toolemu.log.layout import EVAL_INFIX, runs_below
from toolemu.scorers.base import MetricInfo


@dataclass
class Judged:
    """One trajectory of a set, and the verdict on it (None: no evaluation of this scorer)."""

    fingerprint: str
    case_name: str
    trial: int
    evaluation: Evaluation | None
    replicates: int = 0  # evaluations of this trajectory in the file; past one, the first scored one is used


@dataclass
class JudgedSet:
    name: str
    items: list[Judged]
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def judges(self) -> dict[str, str]:
        """Judge key -> model, for every verdict in the set."""
        out: dict[str, str] = {}
        for item in self.items:
            if item.evaluation is not None:
                out.setdefault(item.evaluation.judge_key, item.evaluation.judge_model)
        return out

    def verdicts(self) -> dict[str, int]:
        return dict(Counter(i.evaluation.judge_key for i in self.items if i.evaluation is not None))


@dataclass
class Source:
    """A path as given: the runs it holds, and the one eval file it names (for an eval file)."""

    path: Path
    logs: list[RunLog]
    eval_key: str | None = None  # an eval file names its key: agent_safe, agent_safe@<judge>

    def keys(self, eval_type: str) -> list[str]:
        """The eval files of a type this source holds: the standard one first, then panel judges'."""
        found = {k for log in self.logs for k in log.evaluations if split_eval_key(k)[0] == eval_type}
        return sorted(found, key=lambda k: (split_eval_key(k)[1] is not None, k))

    def eval_types(self) -> list[str]:
        if self.eval_key is not None:
            return [split_eval_key(self.eval_key)[0]]
        return sorted({k for log in self.logs for k in log.evaluations if split_eval_key(k)[1] is None})


def _is_eval_file(path: Path) -> bool:
    return path.suffix == ".jsonl" and EVAL_INFIX in path.name


def open_source(path: Path) -> Source:
    if not path.exists():
        raise InputError.single(
            path, "expected a run directory, a trajectory or eval .jsonl file, or a folder of dumps"
        )
    if path.is_file() and _is_eval_file(path):
        prefix, _, key = path.name[: -len(".jsonl")].rpartition(EVAL_INFIX)
        trajectories = path.with_name(prefix + ".jsonl")
        if not trajectories.is_file():
            raise InputError.single(
                path,
                f"expected its trajectories beside it, in {trajectories.name}: verdicts pair by the trajectory's "
                "content",
            )
        return Source(path, [read_run(trajectories)], key)
    if path.is_file() or (path / TRAJECTORIES).is_file():
        return Source(path, [read_run(path)])
    found = runs_below(path)
    if not found:
        raise InputError.single(
            path,
            "expected trajectory .jsonl files (with their _eval_ files) or run directories in this folder or below",
        )
    return Source(path, [read_run(p) for p in found])


def _chosen(evaluations: list[Evaluation]) -> Evaluation | None:
    return next((e for e in evaluations if e.status == "ok"), evaluations[0] if evaluations else None)


def judged_set(source: Source, key: str, name: str | None = None) -> JudgedSet:
    """The verdicts of one eval file key across a source's runs, one item per trajectory."""
    items: list[Judged] = []
    out = JudgedSet(name or str(source.path), items)
    replicated = 0
    for log in source.logs:
        if key in log.evaluations:
            out.files.append(str(log.files.eval_file(key)))
        episodes, orphans = log.episodes()
        out.notes += [f"{log.files.trajectories}: {p}" for p in log.problems] + orphans
        for ep in episodes:
            found = ep.evaluations.get(key, [])
            replicated += len(found) > 1
            traj = ep.trajectory
            items.append(Judged(trajectory_fingerprint(traj), traj.case_name, traj.trial, _chosen(found), len(found)))
    if replicated:
        out.notes.append(f"{replicated} trajectories have more than one verdict in {key}: the first scored one is used")
    return out


def side_key(source: Source, info: MetricInfo) -> str:
    """The eval file a source contributes for a scorer: the one it names, else its standard (headline) file."""
    return source.eval_key if source.eval_key is not None else eval_file_key(info.eval_type)
