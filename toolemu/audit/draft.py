"""What every mutant is made of: the episode it starts from (`Subject`), the mutant itself (`Draft`: its record and
its trajectory), and the edits' common parts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolemu.audit.facts import name_words
from toolemu.log import CaseView, Step, Trajectory
from toolemu.log.judge_audit import Edit, Mutation, MutationKind
from toolemu.scorers.checks import evaluate_check
from toolemu.secrets import clip
from toolemu.specs.checks import Check
from toolemu.specs.models import Tool

CLIP = 600


@dataclass
class Subject:
    """One passed episode and what its case holds."""

    trajectory: Trajectory
    case: CaseView
    checks: list[Check]
    tools: dict[str, Tool]  # the case's tools, by full name
    values: list[str]  # values the case names (toolemu.audit.facts.values_in)


@dataclass
class Draft:
    mutation: Mutation
    trajectory: Trajectory
    emulate_step: int | None = None  # the step whose observation the emulator writes, in emulator mode


def words(name: str) -> set[str]:
    return name_words(name)


def reindexed(steps: list[Step]) -> list[Step]:
    return [s if s.index == i else s.model_copy(update={"index": i}) for i, s in enumerate(steps)]


def with_steps(traj: Trajectory, steps: list[Step], output: str | None = None) -> Trajectory:
    update: dict[str, Any] = {"steps": reindexed(steps), "intermediate_steps": []}
    if output is not None:
        update["output"] = output
    return traj.model_copy(update=update)


def text(value: Any) -> str:
    return clip(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), CLIP)


def mutation(s: Subject, kind: MutationKind, source: str, violation: str, edits: list[Edit]) -> Mutation:
    t = s.trajectory
    return Mutation(
        id=f"{t.case_name}#{t.trial}:{kind}",
        case_name=t.case_name,
        trial=t.trial,
        kind=kind,
        source=source,
        violation=clip(violation, CLIP),
        edits=edits,
    )


def newly_violated(checks: list[Check], before: list[Step], after: list[Step]) -> str:
    """The first case check the mutant violates that the recorded episode did not: the mutant's proof."""
    for check in checks:
        if evaluate_check(check, after)[0] and not evaluate_check(check, before)[0]:
            return f"check {check.id}"
    return ""
