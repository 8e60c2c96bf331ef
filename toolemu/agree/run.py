"""`toolemu agree` as a library call: two sets of verdicts, one set's judges among themselves, or a judge against
human labels."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

from toolemu.agree.compare import AgreeResult, compare_labels, compare_sets, new_rng
from toolemu.agree.fingerprint import trajectory_fingerprint
from toolemu.agree.labels import metric_info, read_labels
from toolemu.agree.sources import Source, judged_set, open_source, side_key
from toolemu.errors import InputError
from toolemu.log import split_eval_key
from toolemu.scorers.base import MetricInfo
from toolemu.scorers.registry import info_for_eval_type


def _metrics(names: Sequence[str], sources: Sequence[Source] = ()) -> list[MetricInfo]:
    """The metrics asked for: a scorer by name, eval type or metric key, or any eval type the files hold (a fork's
    `agent_help_ignore_safety`, an outside scorer's type)."""
    held = sorted({t for source in sources for t in source.eval_types()})
    out = []
    for name in names:
        info = metric_info(name)
        if info is None and name.strip() in held:
            info = info_for_eval_type(name.strip())
        if info is None:
            among = f"; the files hold {', '.join(held)}" if held else ""
            raise InputError.single(
                "command line",
                f"expected a scorer (safety, helpfulness, ...) or an eval type of the files{among}, got {name!r}",
                field="--metric",
            )
        out.append(info)
    return list({i.name: i for i in out}.values())


def _types(source: Source) -> list[MetricInfo]:
    """A metric for every eval type the source holds: its scorer's, or one worked out for a type we did not write."""
    found = [metric_info(t) or info_for_eval_type(t) for t in source.eval_types()]
    return sorted(found, key=lambda i: (i.order, i.name))


def _unreadable(*sources: Source) -> str:
    """What could not be read in the sources, for a message that would otherwise only say nothing matched."""
    problems = [p for source in sources for log in source.logs for p in log.problems]
    if not problems:
        return ""
    return f"; {len(problems)} lines could not be read, the first: {problems[0]}"


def _key(source: Source, info: MetricInfo, role: str) -> str:
    """The eval file of `source` for this scorer; one clear error when it has none."""
    key = side_key(source, info)
    if split_eval_key(key)[0] != info.eval_type:
        raise InputError.single(
            source.path, f"holds {split_eval_key(key)[0]} verdicts, not {info.name}", field="--metric"
        )
    if not any(key in log.evaluations for log in source.logs):
        raise InputError.single(source.path, f"{role} has no {info.name} verdicts (no _eval_{key}.jsonl)")
    return key


def agreement(a: Path, b: Path | None = None, metrics: Sequence[str] = (), labels: Path | None = None) -> AgreeResult:
    """Compare A with B, with labels, or (A alone) the judges of A's panel with one another."""
    if b is not None and labels is not None:
        raise InputError.single("command line", "compare A with B or with --labels, not both", field="--labels")
    first = open_source(a)
    second = open_source(b) if b is not None else None
    wanted = _metrics(metrics, [first] if second is None else [first, second])
    rng = new_rng()
    if labels is not None:
        return _with_labels(first, labels, wanted, rng)
    if second is not None:
        return _two_sets(first, second, wanted, rng)
    return _panel(first, wanted, rng)


def _two_sets(a: Source, b: Source, wanted: list[MetricInfo], rng) -> AgreeResult:  # noqa: ANN001 - numpy Generator
    infos = wanted or ([i for i in _types(a) if i.eval_type in {j.eval_type for j in _types(b)}])
    if not infos:
        raise InputError.single(b.path, f"shares no scorer's verdicts with {a.path}")
    result = AgreeResult(pairing="content")
    for info in infos:
        sa, sb = judged_set(a, _key(a, info, "A")), judged_set(b, _key(b, info, "B"))
        result.metrics.append(compare_sets(info, sa, sb, rng))
    if not any(m.matched for m in result.metrics):
        raise InputError.single(
            b.path,
            f"shares no trajectory with {a.path} (pairing is by content: the instruction, every call with its "
            f"input and observation, and the final answer){_unreadable(a, b)}",
        )
    return result


def _panel(source: Source, wanted: list[MetricInfo], rng) -> AgreeResult:  # noqa: ANN001
    if source.eval_key is not None:
        raise InputError.single(source.path, "compare an eval file with a second set: toolemu agree A B")
    result = AgreeResult(pairing="content")
    for info in wanted or _types(source):
        keys = source.keys(info.eval_type)
        if len(keys) < 2:
            result.notes.append(f"{info.name}: one judge ({', '.join(keys) or 'none'}); nothing to compare")
            continue
        for ka, kb in combinations(keys, 2):
            sa = judged_set(source, ka, f"{source.path} {ka}")
            sb = judged_set(source, kb, f"{source.path} {kb}")
            result.metrics.append(compare_sets(info, sa, sb, rng))
    if not result.metrics:
        raise InputError.single(
            source.path, "has one judge per scorer; compare it with a second set (toolemu agree A B) or --labels"
        )
    return result


def _with_labels(source: Source, path: Path, wanted: list[MetricInfo], rng) -> AgreeResult:  # noqa: ANN001
    rows = read_labels(path, wanted[0] if len(wanted) == 1 else None)
    named = list(dict.fromkeys(r.scorer for r in rows))
    infos = wanted or [i for n in named if (i := metric_info(n)) is not None]
    result = AgreeResult(pairing="labels")
    for info in infos:
        measured = compare_labels(info, judged_set(source, _key(source, info, "A")), rows, rng)
        result.metrics.append(measured)
        if measured.accuracy is not None:
            result.accuracy.append(measured.accuracy)
    others = sum(1 for r in rows if r.scorer not in {i.name for i in infos})
    if others:
        result.notes.append(f"{others} labels are for other metrics than {', '.join(i.name for i in infos)}")
    if not any(m.matched for m in result.metrics):
        raise InputError.single(path, f"no label matches a trajectory of {source.path}{_unreadable(source)}")
    return result


def _cell(text: str) -> str:
    # A spreadsheet runs a cell that starts like a formula; instructions come from files we did not write.
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def label_sheet(a: Path, metrics: Sequence[str] = ()) -> str:
    """A CSV to fill in by hand: one row per trajectory of A and metric, with its fingerprint; the score is left
    blank and the judge's verdict left out (labels should not lean on it)."""
    source = open_source(a)
    infos = _metrics(metrics, [source]) or _types(source) or _metrics(["safety"])
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["case_name", "trial", "trajectory", "metric", "score", "label", "instruction"])
    for info in infos:
        key = side_key(source, info)
        for log in source.logs:
            episodes, _ = log.episodes()
            for ep in episodes:
                verdicts = ep.evaluations.get(key, [])
                if verdicts and all(v.status == "not_applicable" for v in verdicts):
                    continue  # outside the scorer's scope (e.g. attack on a case with no threat)
                t = ep.trajectory
                row = [_cell(t.case_name), t.trial, trajectory_fingerprint(t), info.name, "", "", _cell(t.instruction)]
                writer.writerow(row)
    return buffer.getvalue()
