"""What `toolemu noise` measures and on which cases: the headline metrics, the cases chosen (the same ones on every
call), and the judgements of the re-run folders as observations for the fit (toolemu.noise.fit)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from toolemu.log import Evaluation, RunLog, split_eval_key
from toolemu.log.evaluation import short_hash
from toolemu.noise.fit import Observation
from toolemu.reporting.flips import read_rejudged
from toolemu.reporting.noise_model import measured_metric
from toolemu.scorers import info_for_eval_type
from toolemu.scorers.base import MetricInfo

RUN_WORLD = "run"  # a trial's own world, the one it was played in


def noise_metrics(eval_types: Sequence[str]) -> list[MetricInfo]:
    """The headline metrics among a run's eval files: the failure metrics (MetricInfo.headline: safety, attack)
    and helpfulness, ToolEmu's other headline number. A panel judge's own files are left out."""
    infos = [info_for_eval_type(t) for t in eval_types if split_eval_key(t)[1] is None]
    chosen = {i.name: i for i in infos if measured_metric(i)}
    return sorted(chosen.values(), key=lambda i: (i.order, i.name))


def choose_cases(names: Sequence[str], count: int | None) -> list[str]:
    """`count` of the case names (all where None), chosen by a hash of each name: the same cases on every call and
    in any order of the run's records, and a larger count keeps the smaller one's cases."""
    unique = sorted(set(names), key=lambda n: (short_hash(["noise", n]), n))
    return unique if count is None else unique[:count]


def scored(ev: Evaluation, info: MetricInfo) -> float | None:
    return ev.value_of(info.metric) if ev.status == "ok" else None


def _judgements(log: RunLog, info: MetricInfo, samples: int) -> dict[Hashable, list[float]]:
    """Per trajectory (by the run's join key): its scored judgements, the first (the eval file's) and then the
    re-judgements k = 1..samples-1 in order of k."""
    out: dict[Hashable, list[tuple[int, float]]] = {}
    for position, ev in enumerate(log.evaluations.get(info.eval_type) or []):
        if (value := scored(ev, info)) is not None:
            out.setdefault(log.join_key(ev, position), []).append((0, value))
    rejudged = read_rejudged(log)
    for position, ev in enumerate(rejudged.evaluations.get(info.eval_type) or []):
        if 1 <= ev.rejudge < samples and (value := scored(ev, info)) is not None:
            out.setdefault(log.join_key(ev, position), []).append((ev.rejudge, value))
    return {key: [v for _, v in sorted(pairs, key=lambda p: p[0])] for key, pairs in out.items()}


def observations(
    trials: RunLog, worlds: dict[str, RunLog], info: MetricInfo, samples: int, cases: Sequence[str]
) -> list[Observation]:
    """Every scored judgement of the chosen cases' trials (in their own world, and replayed in each new one),
    binarised as the headline rate is (value >= the scorer's threshold)."""
    chosen = set(cases)
    units = {t.key for t in trials.trajectories if t.case_name in chosen and t.status != "error"}
    out: list[Observation] = []
    for label, log in [(RUN_WORLD, trials), *sorted(worlds.items())]:
        values = _judgements(log, info, samples)
        for position, traj in enumerate(log.trajectories):
            if traj.key not in units or traj.status == "error":
                continue
            for value in values.get(log.join_key(traj, position), []):
                out.append(Observation(traj.case_name, str(traj.trial), label, float(info.at_or_above(value))))
    return out
