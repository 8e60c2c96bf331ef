"""The one reader: a run folder (ours) or a ToolEmu dump, as typed records.

`read_run(path)` returns a RunLog: the run's settings, its trajectories, and the evaluations of every scorer found
beside them, each joined to its trajectory. Judges, resume, merge, reports and notebooks all read through here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import ValidationError

from toolemu.log.evaluation import Evaluation
from toolemu.log.jsonl import first_record, scan_jsonl
from toolemu.log.layout import FolderListing, RunFiles, eval_files_among, run_files
from toolemu.log.meta import RunMeta, read_meta
from toolemu.log.records import Trajectory
from toolemu.log.toolemu_format import NO_EVAL_ID, eval_positions, is_ours, upgrade_evaluation, upgrade_trajectory
from toolemu.secrets import redactor

Scrub = Callable[[str], str] | None
JoinKey = tuple[str, int, str] | int
R = TypeVar("R")


def _invalid(path: Path, line: int, exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(record)"
    return f"{path}: line {line}: field '{where}': {err['msg']}"


def parse_trajectory(record: dict[str, Any], position: int) -> Trajectory:
    """One record as a Trajectory: ours validated, ToolEmu's upgraded. Raises ValidationError."""
    return Trajectory.model_validate(record) if is_ours(record) else upgrade_trajectory(record, position)


def parse_evaluation(record: dict[str, Any], eval_type: str, position: int) -> Evaluation:
    """One record as an Evaluation: ours validated, ToolEmu's upgraded. Raises ValidationError."""
    return Evaluation.model_validate(record) if is_ours(record) else upgrade_evaluation(record, eval_type, position)


def _read(path: Path, parse: Callable[[dict[str, Any], int], R], scrub: Scrub) -> tuple[list[R], list[str]]:
    """Every record of a file as `parse` reads it (with its position), and a line for each record that is not one."""
    content = scan_jsonl(path, scrub)
    out: list[R] = []
    problems = list(content.problems)
    for position, (record, line) in enumerate(zip(content.records, content.lines, strict=True)):
        try:
            out.append(parse(record, position))
        except ValidationError as exc:
            problems.append(_invalid(path, line, exc))
    return out, problems


def read_trajectories(path: Path, scrub: Scrub = None) -> tuple[list[Trajectory], list[str]]:
    """Every trajectory of a file (ours, or ToolEmu's upgraded), and a line for each record that is not one."""
    return _read(path, parse_trajectory, scrub)


def read_evaluations(path: Path, eval_type: str, scrub: Scrub = None) -> tuple[list[Evaluation], list[str]]:
    return _read(path, lambda record, position: parse_evaluation(record, eval_type, position), scrub)


@dataclass
class Episode:
    """One trajectory with the evaluations that judged it, by eval type (several: replicates)."""

    trajectory: Trajectory
    position: int
    evaluations: dict[str, list[Evaluation]] = field(default_factory=dict)

    def evaluation(self, eval_type: str) -> Evaluation | None:
        found = self.evaluations.get(eval_type)
        return found[0] if found else None


@dataclass
class RunLog:
    files: RunFiles
    format: Literal["ours", "toolemu"]
    meta: RunMeta | None
    trajectories: list[Trajectory]
    evaluations: dict[str, list[Evaluation]]  # by eval type, in file order
    problems: list[str] = field(default_factory=list)  # lines that are not records: reported, never dropped
    rejudge_files: dict[str, Path] = field(default_factory=dict)  # `<type>#rejudge` files beside it, when read

    def join_key(self, item: Trajectory | Evaluation, position: int) -> JoinKey:
        """Ours join on (case, trial, episode start); ToolEmu's only have their position (eval_id)."""
        if self.format == "toolemu":
            return item.eval_id if isinstance(item, Evaluation) else position
        if isinstance(item, Evaluation):
            return item.key
        return (item.case_name, item.trial, item.started_at)

    def eval_keys(self, evaluations: list[Evaluation]) -> tuple[list[JoinKey], int]:
        """Each evaluation's join key, and the number of concatenated shards a ToolEmu eval file was read as. In a
        run of ours, a line another tool wrote (QuittingAgents' evaluate.py: no keys of ours, only eval_id, the
        trajectory's position) joins the trajectory at that position."""
        if self.format == "toolemu":
            positions, shards = eval_positions([ev.eval_id for ev in evaluations], len(self.trajectories))
            return list(positions), shards
        return [self._key_of(ev, position) for position, ev in enumerate(evaluations)], 1

    def _key_of(self, ev: Evaluation, position: int) -> JoinKey:
        if ev.schema_version or ev.case_name:
            return self.join_key(ev, position)
        at = ev.eval_id
        return self.join_key(self.trajectories[at], at) if 0 <= at < len(self.trajectories) else NO_EVAL_ID

    def episodes(self) -> tuple[list[Episode], list[str]]:
        """Each trajectory with every evaluation line that judged it (replicates included), and a note for
        evaluations that match no trajectory."""
        index: dict[str, dict[JoinKey, list[Evaluation]]] = {}
        notes = []
        for eval_type, evaluations in self.evaluations.items():
            by_key: dict[JoinKey, list[Evaluation]] = {}
            keys, shards = self.eval_keys(evaluations)
            for key, ev in zip(keys, evaluations, strict=True):
                by_key.setdefault(key, []).append(ev)
            index[eval_type] = by_key
            if shards > 1:
                notes.append(
                    f"{self.files.eval_file(eval_type).name}: eval_ids restart at 0 {shards - 1} times; read as "
                    f"{shards} concatenated shards of {self.files.trajectories.name}"
                )
        episodes, used = [], {t: set() for t in index}
        for position, traj in enumerate(self.trajectories):
            key = self.join_key(traj, position)
            ep = Episode(traj, position)
            for eval_type, by_key in index.items():
                if key in by_key:
                    ep.evaluations[eval_type] = by_key[key]
                    used[eval_type].add(key)
            episodes.append(ep)
        for eval_type, by_key in index.items():
            unnamed = len(by_key.get(NO_EVAL_ID, []))
            orphans = sum(len(v) for k, v in by_key.items() if k not in used[eval_type]) - unnamed
            if orphans:
                notes.append(
                    f"{self.files.eval_file(eval_type).name}: {orphans} evaluations match no trajectory in "
                    f"{self.files.trajectories.name} (left out of the statistics)"
                )
            if unnamed:
                notes.append(
                    f"{self.files.eval_file(eval_type).name}: {unnamed} evaluation lines have no eval_id (ToolEmu's "
                    "evaluate.py writes its failed judgements so): they name no trajectory (left out of the statistics)"
                )
        return episodes, notes


def read_run(
    path: Path,
    *,
    scrub: bool | Callable[[str], str] = True,
    evaluations: bool = True,
    listing: list[str] | FolderListing | None = None,
) -> RunLog:
    """Read a run directory or a trajectory file with every `_eval_<type>.jsonl` beside it.

    `scrub` redacts secrets set in this environment from every line before it is parsed: dumps written by other
    tools, or before a key was set, may hold one, and it must never reach a report (a scrubber: the caller's
    `redactor()`, made once for many runs). `listing`: the names in the trajectories' folder, where the caller has
    listed it (a study folder of hundreds of dumps is listed once)."""
    files = run_files(path)
    clean = scrub if callable(scrub) else redactor() if scrub else None
    trajectories, problems = read_trajectories(files.trajectories, clean)
    raw_ours = any(t.schema_version for t in trajectories)
    meta = read_meta(files.run_file) if files.run_file is not None and files.run_file.is_file() else None
    evals: dict[str, list[Evaluation]] = {}
    rejudged: dict[str, Path] = {}
    if evaluations:
        if not isinstance(listing, FolderListing):
            listing = FolderListing(os.listdir(files.directory) if listing is None else listing)
        for eval_type, file in eval_files_among(files.trajectories, listing).items():
            evals[eval_type], more = read_evaluations(file, eval_type, clean)
            problems += more
        rejudged = eval_files_among(files.trajectories, listing, rejudged=True)
    return RunLog(files, "ours" if raw_ours else "toolemu", meta, trajectories, evals, problems, rejudged)


def first_trajectory(path: Path) -> Trajectory | None:
    """The first record of a trajectory file, typed, reading no further (what a run's settings are, cheaply);
    None when there is none or it is not a trajectory record."""
    record = first_record(path)
    if record is None:
        return None
    try:
        return parse_trajectory(record, 0)
    except ValidationError:
        return None
