"""Which judges an audit scores with: the run's own, as their eval files recorded them (a panel member by member),
or the models the command line names; and which kinds of violation each scorer is audited on."""

from __future__ import annotations

from dataclasses import dataclass

from toolemu.errors import InputError
from toolemu.log import Evaluation, RunLog, split_eval_key
from toolemu.log.judge_audit import KINDS, MutationKind
from toolemu.log.model import ModelDescription
from toolemu.scorers import Scorer, get_scorer, info_for_eval_type
from toolemu.scorers.attack import ATTACK
from toolemu.scorers.base import MetricInfo
from toolemu.scorers.panel import PRIMARY_ROLE, panel_judges


@dataclass(frozen=True)
class JudgeSpec:
    scorer: Scorer
    role: str  # evaluator, or evaluator@<slug> for a panel's other judges
    recorded: ModelDescription | None = None  # the model its records name (None: the command line's)
    samples: int = 1

    @property
    def key(self) -> str:
        return f"{self.scorer.info.name}:{self.role}"

    @property
    def headline(self) -> bool:
        return self.role == PRIMARY_ROLE


def audited_kinds(info: MetricInfo, kinds: list[MutationKind]) -> list[MutationKind]:
    """The attack judge answers for the attacker's goal only; every other headline judge for every violation."""
    if info.name == ATTACK.name:
        return [k for k in kinds if k == "injection_followed"]
    return [k for k in KINDS if k in kinds]


def audited_scorers(run: RunLog) -> list[Scorer]:
    """The run's headline LLM judges (safety, attack, ...): one per standard eval file whose scorer is known."""
    found: dict[str, Scorer] = {}
    for key in run.evaluations:
        eval_type, judge = split_eval_key(key)
        if judge is not None or not info_for_eval_type(eval_type).headline:
            continue
        try:
            scorer = get_scorer(eval_type)
        except InputError:
            continue
        if scorer.needs_model:
            found.setdefault(scorer.info.name, scorer)
    return sorted(found.values(), key=lambda s: (s.info.order, s.info.name))


def _first_ok(evaluations: list[Evaluation]) -> Evaluation | None:
    return next((ev for ev in evaluations if ev.status == "ok" and ev.evaluator is not None), None)


def recorded_judges(run: RunLog, scorers: list[Scorer]) -> list[JudgeSpec]:
    """Each scorer's judges as the run's eval files name them: the standard file's, then each panel member's."""
    specs = []
    by_type = {s.info.eval_type: s for s in scorers}
    for key, evaluations in sorted(run.evaluations.items(), key=lambda kv: (split_eval_key(kv[0])[1] or "", kv[0])):
        eval_type, judge = split_eval_key(key)
        ev = _first_ok(evaluations) if eval_type in by_type else None
        if ev is None:
            continue
        samples = ev.samples_drawn(run.files.eval_file(key))
        role = PRIMARY_ROLE if judge is None else f"{PRIMARY_ROLE}@{judge}"
        specs.append(JudgeSpec(by_type[eval_type], role, ev.evaluator, samples))
    return sorted(specs, key=lambda j: (not j.headline, j.scorer.info.order, j.role))


def named_judges(models: list[str], scorers: list[Scorer], samples: int) -> list[JudgeSpec]:
    """The judges the command line names (a panel: the first has the evaluator role), each for every scorer."""
    return [JudgeSpec(scorer, j.role, None, samples) for j in panel_judges(models) for scorer in scorers]
