"""Each record of a submission, read line by line before any number is computed from it.

A line is one JSON object (strict_json: UTF-8, each key once, finite numbers, nesting bounded, at most MAX_RECORD
bytes) with only the keys toolemu writes. Beyond the form:
- run.json records the benchmark this toolemu ships, as it ships it (version, hash, every case and toolkit hash);
- a trajectory's case is that benchmark's case, as the benchmark has it; each (case, trial) has one record;
- each episode has one evaluation per file; a verdict agrees with itself: its score is its eval_scores' value, on
  the scorer's scale, each sample's score is its label's, the judge's value is the mean of its samples and its
  label their majority, and judge_id is the hash of the judge it names.
A judgement cannot be made again here (that takes the judge's model); a verdict forged with its samples to match
is beyond these checks, and a re-judging is what finds it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from toolemu import strict_json
from toolemu.log import RUN_FILE, TRAJECTORIES, Evaluation, RunMeta, Trajectory
from toolemu.scorers import registered_infos
from toolemu.scorers.base import MetricInfo
from toolemu.scorers.judge import majority_label
from toolemu.specs.benchmark import benchmark_identity, load_cases
from toolemu.specs.version import BenchmarkIdentity
from toolemu.submission.files import (
    ERRORS_SUFFIX,
    MAX_RECORD,
    MAX_RECORDS_FILE,
    MAX_RUN_FILE,
    MIB,
    Unreadable,
    open_regular,
    read_regular,
)
from toolemu.submission.schema_errors import field_problems

SHOWN = 20  # problems named per file; the rest are counted
CASE_EXTRA = "case_extra"  # where a record keeps our case keys beside ToolEmu's (Trajectory.to_record)
JUDGE_VALUE = "judge_value"  # metadata of a scorer that joins its judge with a check: the judge's own value


def _keys(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(f.alias or name for name, f in model.model_fields.items())


TRAJECTORY_KEYS = _keys(Trajectory) | {CASE_EXTRA}
EVALUATION_KEYS = _keys(Evaluation)
RUN_KEYS = _keys(RunMeta)


@dataclass(frozen=True)
class Shipped:
    """The benchmark this toolemu ships: its identity and each case as a trajectory records it."""

    identity: BenchmarkIdentity
    cases: dict[str, dict[str, Any]]


@cache
def shipped() -> Shipped:
    bench = load_cases()
    as_json = {case.name: json.loads(json.dumps(case.to_json(), default=str)) for case in bench.cases}
    return Shipped(benchmark_identity(bench), as_json)


def _lines(path: Path, rel: str) -> Iterator[tuple[int, bytes | None, str | None]]:
    """(number, line, None) per line, or (number, None, problem) for a line too long; the file opened safely."""
    fd = open_regular(path, rel, MAX_RECORDS_FILE)
    with os.fdopen(fd, "rb") as fh:
        number = 0
        while True:
            raw = fh.readline(MAX_RECORD + 2)
            if not raw:
                return
            number += 1
            if len(raw.rstrip(b"\n")) > MAX_RECORD:
                yield number, None, f"expected a record of at most {MAX_RECORD // MIB} MiB"
                while raw and not raw.endswith(b"\n"):  # the rest of that line
                    raw = fh.readline(1 << 20)
                continue
            yield number, raw.rstrip(b"\n"), None


@dataclass
class _Findings:
    rel: str
    problems: list[str]
    count: int = 0

    def add(self, where: str, text: str) -> None:
        self.count += 1
        if self.count <= SHOWN:
            self.problems.append(f"{self.rel}: {where}: {text}" if where else f"{self.rel}: {text}")

    def close(self) -> None:
        if self.count > SHOWN:
            self.problems.append(f"{self.rel}: {self.count - SHOWN} more problems")


def _objects(path: Path, found: _Findings) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line as a JSON object; every other line is a problem."""
    for number, raw, problem in _lines(path, found.rel):
        line = f"line {number}"
        if raw is None:
            found.add(line, problem or "")
        elif not raw.strip():
            found.add(line, "expected a JSON object, got a blank line")
        else:
            parsed = strict_json.parse(raw)
            if not parsed.ok:
                for text in parsed.problems:
                    found.add(line, str(text))
            elif not isinstance(parsed.value, dict):
                found.add(line, f"expected a JSON object, got {type(parsed.value).__name__}")
            else:
                yield number, parsed.value


def _unknown_keys(record: dict[str, Any], known: frozenset[str], line: str, found: _Findings) -> bool:
    extra = sorted(set(record) - known)
    for key in extra:
        found.add(line, f"{key}: expected no field {key!r} in a record of this file")
    return bool(extra)


def _typed(model: type[BaseModel], record: dict[str, Any], line: str, found: _Findings) -> Any:
    try:
        return model.model_validate(record)
    except ValidationError as exc:
        for text in field_problems(exc):
            found.add(line, text)
        return None


def _check_run_file(path: Path, found: _Findings, bench: Shipped) -> None:
    try:
        parsed = strict_json.parse(read_regular(path, found.rel, MAX_RUN_FILE))
    except Unreadable as exc:
        found.problems.append(str(exc))
        return
    if not parsed.ok:
        for text in parsed.problems:
            found.add("", str(text))
        return
    if not isinstance(parsed.value, dict):
        found.add("", f"expected a JSON object, got {type(parsed.value).__name__}")
        return
    if _unknown_keys(parsed.value, RUN_KEYS, "", found):
        return
    meta = _typed(RunMeta, parsed.value, "", found)
    if meta is None or meta.benchmark is None:
        return  # a run that records no benchmark: the run checks name it
    got, want = meta.benchmark, bench.identity
    if got.model_dump(mode="json") != want.model_dump(mode="json"):
        differing = sorted(
            name for name in set(got.cases) | set(want.cases) if got.cases.get(name) != want.cases.get(name)
        )
        detail = f"; its case hashes differ: {', '.join(differing[:5])}" if differing and got.hash == want.hash else ""
        found.add(
            "benchmark",
            f"expected benchmark {want.label()} as this toolemu ships it, got {got.label()}{detail} (a submission is "
            "checked against the benchmark the checking toolemu ships)",
        )


def _check_trajectories(path: Path, found: _Findings, bench: Shipped) -> None:
    first: dict[tuple[str, int], int] = {}
    for number, record in _objects(path, found):
        line = f"line {number}"
        if _unknown_keys(record, TRAJECTORY_KEYS, line, found):
            continue
        traj = _typed(Trajectory, record, line, found)
        if traj is None:
            continue
        key = (traj.case_name, traj.trial)
        if key in first:
            found.add(
                line,
                f"expected one record per (case, trial), {traj.case_name}#{traj.trial} has a second (line "
                f"{first[key]} has the first)",
            )
            continue
        first[key] = number
        expected = bench.cases.get(traj.case_name)
        if expected is not None and traj.case != expected:
            differing = sorted(k for k in set(traj.case) | set(expected) if traj.case.get(k) != expected.get(k))
            found.add(
                line,
                f"case: expected the case as benchmark {bench.identity.label()} has it, the record's "
                f"{traj.case_name} differs in {', '.join(differing[:5])}",
            )


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _verdict_problems(ev: Evaluation, info: MetricInfo) -> list[str]:
    """Where an evaluation disagrees with itself (a score edited after the judgement, say)."""
    out = []
    if ev.judge is not None and ev.judge_id != ev.judge.id:
        out.append(f"judge_id: expected the hash of its judge ({ev.judge.id}), got {ev.judge_id!r}")
    if ev.status != "ok":
        return out
    value = ev.value_of(info.metric)
    if value is None:
        return [*out, f"eval_scores.{info.metric}: expected the verdict's score, it has none"]
    if ev.score is None or not _close(ev.score, value):
        out.append(f"Overall Quantitative Score: expected {value} (its eval_scores' {info.metric}), got {ev.score}")
    if not info.lower <= value <= info.upper:
        out.append(f"eval_scores.{info.metric}: expected a score from {info.lower} to {info.upper}, got {value}")
    if not info.labels or not ev.samples:
        return out
    scale = dict(info.labels)
    for i, sample in enumerate(ev.samples):
        if sample.label not in scale:
            out.append(f"samples[{i}].label: expected one of {', '.join(map(repr, scale))}, got {sample.label!r}")
        elif not _close(sample.score, scale[sample.label]):
            out.append(
                f"samples[{i}].score: expected {scale[sample.label]} (the score of its label), got {sample.score}"
            )
    if out:
        return out
    mean = sum(s.score for s in ev.samples) / len(ev.samples)
    joined = JUDGE_VALUE in ev.metadata  # the scorer joined its judge with a check: the judge's value is kept apart
    judged = ev.metadata[JUDGE_VALUE] if joined else value
    field = f"metadata.{JUDGE_VALUE}" if joined else "Overall Quantitative Score"
    if not isinstance(judged, int | float) or isinstance(judged, bool) or not _close(judged, mean):
        out.append(f"{field}: expected {mean} (the mean of its samples' scores), got {judged}")
    if not joined and ev.label != majority_label(ev.samples, info):
        out.append(
            f"Overall Qualitative Label: expected {majority_label(ev.samples, info)!r} (its samples' majority), "
            f"got {ev.label!r}"
        )
    if joined and ev.label not in scale:
        out.append(f"Overall Qualitative Label: expected one of {', '.join(map(repr, scale))}, got {ev.label!r}")
    return out


def _check_evaluations(path: Path, found: _Findings, info: MetricInfo | None) -> None:
    first: dict[tuple[str, int, str], int] = {}
    for number, record in _objects(path, found):
        line = f"line {number}"
        if not record.get("schema_version"):  # ToolEmu's or a fork's evaluate.py wrote it (e.g. into our run)
            found.add(
                line,
                "a judgement another tool wrote (no schema_version): a submission holds toolemu's judgements, each "
                "naming its judge; judge the run with `toolemu evaluate`",
            )
            continue
        if _unknown_keys(record, EVALUATION_KEYS, line, found):
            continue
        ev = _typed(Evaluation, record, line, found)
        if ev is None:
            continue
        if ev.key in first:
            found.add(
                line,
                f"expected one evaluation per episode, {ev.case_name}#{ev.trial} has a second (line "
                f"{first[ev.key]} has the first)",
            )
            continue
        first[ev.key] = number
        for text in _verdict_problems(ev, info) if info is not None else []:
            found.add(line, text)


def _check_set_aside(path: Path, found: _Findings) -> None:
    for _ in _objects(path, found):
        pass


def record_problems(run_dir: Path, rel: str, names: list[str]) -> list[str]:
    """Every problem of a run folder's record files (`names`, in the folder), each line starting with its file
    (`rel`/<name>)."""
    bench = shipped()
    infos = {info.eval_type: info for info in registered_infos()}
    stem = Path(TRAJECTORIES).stem + "_eval_"
    problems: list[str] = []
    for name in names:
        found = _Findings(f"{rel}/{name}", problems)
        path = run_dir / name
        try:
            if name == RUN_FILE:
                _check_run_file(path, found, bench)
            elif name.endswith(ERRORS_SUFFIX):
                _check_set_aside(path, found)
            elif name == TRAJECTORIES:
                _check_trajectories(path, found, bench)
            else:
                eval_type = name[len(stem) : -len(".jsonl")].partition("@")[0]
                _check_evaluations(path, found, infos.get(eval_type))
        except Unreadable as exc:
            problems.append(str(exc))
        found.close()
    return problems
