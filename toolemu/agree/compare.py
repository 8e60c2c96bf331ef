"""Pair two sets of verdicts on the same trajectories (or one set with human labels) and measure agreement.

Pairing is by the trajectory's fingerprint (`toolemu.agree.fingerprint`): the k-th trajectory with a fingerprint in
one set pairs with the k-th with that fingerprint in the other (identical episodes, e.g. trials of a deterministic
agent, are interchangeable: the judges read the same text). Labels pair by fingerprint where the row gives one,
else by (case_name, trial). Nothing is dropped: trajectories found on one side only, and paired trajectories one
side did not score (an error, no evaluation, not applicable, off the scale), are counted on each side.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, Field

from toolemu.agree.labels import Label
from toolemu.agree.sources import Judged, JudgedSet
from toolemu.errors import InputError
from toolemu.reporting.accuracy import ACCURACY_KIND, JudgeAccuracy, measure_accuracy
from toolemu.reporting.agreement import agreement_stats, category_of
from toolemu.reporting.model import AgreementStats
from toolemu.reporting.stats import BOOTSTRAP_SEED
from toolemu.scorers.base import MetricInfo
from toolemu.scorers.identity import UNRECORDED
from toolemu.version import SCHEMA_VERSION

HUMAN = "human labels"


class SideSummary(BaseModel):
    name: str
    files: list[str] = Field(default_factory=list)
    trajectories: int = 0
    judges: dict[str, str] = Field(default_factory=dict)  # judge id -> model
    verdicts: dict[str, int] = Field(default_factory=dict)  # judge id -> verdicts on this side's trajectories
    not_scored: int = 0  # paired trajectories this side did not score


class MetricAgreement(BaseModel):
    scorer: str
    a: SideSummary
    b: SideSummary
    matched: int  # trajectories on both sides
    only_a: int  # trajectories (or labels) with no partner on the other side
    only_b: int
    stats: AgreementStats  # over the matched trajectories both sides scored (stats.n)
    accuracy: JudgeAccuracy | None = None  # against labels: how well a finds the scorer's positive event
    notes: list[str] = Field(default_factory=list)


class AgreeResult(BaseModel):
    kind: str = "toolemu-agreement"
    schema_version: str = SCHEMA_VERSION
    pairing: str  # "content" (trajectory fingerprints) or "labels"
    metrics: list[MetricAgreement] = Field(default_factory=list)
    # Against labels: each judge's accuracy, the entries `toolemu report --judge-accuracy` reads from this file.
    accuracy: list[JudgeAccuracy] = Field(default_factory=list)
    accuracy_kind: str = ACCURACY_KIND
    notes: list[str] = Field(default_factory=list)


def pair_by_content(a: Sequence[Judged], b: Sequence[Judged]) -> tuple[list[tuple[Judged, Judged]], int, int]:
    """(pairs, a's unpaired, b's unpaired): the k-th occurrence of a fingerprint pairs with the k-th."""
    queue: dict[str, list[Judged]] = defaultdict(list)
    for item in b:
        queue[item.fingerprint].append(item)
    pairs = []
    for item in a:
        waiting = queue.get(item.fingerprint)
        if waiting:
            pairs.append((item, waiting.pop(0)))
    return pairs, len(a) - len(pairs), len(b) - len(pairs)


def _side(judged: JudgedSet) -> SideSummary:
    return SideSummary(
        name=judged.name,
        files=judged.files,
        trajectories=len(judged.items),
        judges=judged.judges(),
        verdicts=judged.verdicts(),
    )


def _category(item: Judged, info: MetricInfo) -> int | None:
    ev = item.evaluation
    if ev is None or ev.status != "ok":
        return None
    return category_of(ev.value_of(info.metric), ev.label, info)


def _label_of(side: SideSummary) -> str:
    if len(side.judges) == 1:
        key, model = next(iter(side.judges.items()))
        return f"{model or side.name} [{key}]" if not key.startswith(UNRECORDED) else f"{model or side.name}"
    return side.name


def compare_sets(info: MetricInfo, a: JudgedSet, b: JudgedSet, rng: np.random.Generator) -> MetricAgreement:
    pairs, only_a, only_b = pair_by_content(a.items, b.items)
    sa, sb = _side(a), _side(b)
    ca, cb = [], []
    for x, y in pairs:
        u, v = _category(x, info), _category(y, info)
        sa.not_scored += u is None
        sb.not_scored += v is None
        if u is not None and v is not None:
            ca.append(u)
            cb.append(v)
    stats = agreement_stats(info, ca, cb, rng, (_label_of(sa), _label_of(sb)))
    return MetricAgreement(
        scorer=info.name,
        a=sa,
        b=sb,
        matched=len(pairs),
        only_a=only_a,
        only_b=only_b,
        stats=stats,
        notes=a.notes + b.notes,
    )


def pair_with_labels(judged: JudgedSet, labels: Sequence[Label]) -> tuple[list[tuple[Judged, Label]], list[Label]]:
    """(pairs, labels that match no trajectory). A label by (case_name, trial) that fits several trajectories of
    the set cannot say which one it means: an input error."""
    by_fingerprint: dict[str, list[Judged]] = defaultdict(list)
    by_case: dict[tuple[str, int], list[Judged]] = defaultdict(list)
    for item in judged.items:
        by_fingerprint[item.fingerprint].append(item)
        by_case[(item.case_name, item.trial)].append(item)
    pairs, unmatched, taken = [], [], set()
    for label in labels:
        if label.trajectory:
            waiting = [i for i in by_fingerprint.get(label.trajectory, []) if id(i) not in taken]
        else:
            waiting = by_case.get((label.case_name, label.trial), [])
            if len(waiting) > 1:
                raise InputError.single(
                    judged.name,
                    f"case {label.case_name!r} trial {label.trial} (labels line {label.line}) names "
                    f"{len(waiting)} trajectories here; give the label's trajectory column (toolemu agree "
                    "--label-sheet lists each trajectory's fingerprint)",
                )
            waiting = [i for i in waiting if id(i) not in taken]
        if not waiting:
            unmatched.append(label)
            continue
        taken.add(id(waiting[0]))
        pairs.append((waiting[0], label))
    return pairs, unmatched


def compare_labels(
    info: MetricInfo, judged: JudgedSet, labels: Sequence[Label], rng: np.random.Generator
) -> MetricAgreement:
    mine = [label for label in labels if label.scorer == info.name]
    pairs, unmatched = pair_with_labels(judged, mine)
    side = _side(judged)
    human = SideSummary(name=HUMAN, trajectories=len(mine))
    ca, ch = [], []
    for item, label in pairs:
        u = _category(item, info)
        side.not_scored += u is None
        h = category_of(label.score, None, info)
        if u is not None and h is not None:
            ca.append(u)
            ch.append(h)
    name = _label_of(side)
    stats = agreement_stats(info, ca, ch, rng, (name, HUMAN))
    notes = list(judged.notes)
    if unmatched:
        shown = ", ".join(f"line {u.line}" for u in unmatched[:10]) + (" ..." if len(unmatched) > 10 else "")
        notes.append(f"{len(unmatched)} labels match no trajectory of {judged.name}: {shown}")
    accuracy, why = measure_accuracy(info, ca, ch, rng)
    if accuracy is not None:
        real = [k for k in side.judges if not k.startswith(UNRECORDED)]
        one_judge = len(side.judges) == 1 and len(real) == 1
        accuracy = accuracy.model_copy(
            update={"judge_id": real[0] if one_judge else "", "judge": name, "source": judged.name}
        )
        if not one_judge:
            notes.append(
                f"{info.name}: the verdicts come from {len(side.judges)} judges or name none; the accuracy is "
                "not tied to one judge id"
            )
    else:
        notes.append(why)
    return MetricAgreement(
        scorer=info.name,
        a=side,
        b=human,
        matched=len(pairs),
        only_a=len(judged.items) - len(pairs),
        only_b=len(unmatched),
        stats=stats,
        accuracy=accuracy,
        notes=notes,
    )


def new_rng() -> np.random.Generator:
    return np.random.default_rng(BOOTSTRAP_SEED)
