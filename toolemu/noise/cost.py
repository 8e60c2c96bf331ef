"""What the noise re-runs cost, from what each record of the re-run folders says it spent. The run's own episodes
and verdicts, copied into the trials folder and reused, cost the command nothing and are not counted."""

from __future__ import annotations

from collections.abc import Hashable

from toolemu.llm.usage import Usage
from toolemu.log import RunLog
from toolemu.reporting.flips import read_rejudged
from toolemu.reporting.noise_model import NoiseCost, RoleCalls
from toolemu.scorers import info_for_eval_type


def noise_cost(logs: list[tuple[RunLog, set[Hashable]]], cases: int) -> NoiseCost:
    """Each folder with what it reused: the run's own trajectories (their keys) and evaluations ((eval type, key,
    started_at)) copied into it."""
    roles: dict[str, Usage] = {}
    cost = NoiseCost(cases=cases)
    for log, reused in logs:
        for traj in log.trajectories:
            if traj.key in reused:
                continue
            cost.episodes += 1
            for role, used in traj.usage.items():
                if role != "total":
                    roles.setdefault(role, Usage()).add(used)
        rejudged = read_rejudged(log).evaluations  # never the run's: the run's verdicts are copied to eval files only
        for eval_type, evaluations, copied in [
            *((t, evs, reused) for t, evs in log.evaluations.items()),
            *((t, evs, set()) for t, evs in rejudged.items()),
        ]:
            for ev in evaluations:
                if (eval_type, ev.key, ev.started_at) in copied or ev.status != "ok" and not ev.usage.calls:
                    continue
                cost.judgements += 1
                roles.setdefault(f"judge:{info_for_eval_type(eval_type).name}", Usage()).add(ev.usage)
    for role, used in sorted(roles.items()):
        cost.roles.append(
            RoleCalls(
                role=role,
                calls=used.calls,
                cache_hits=used.cache_hits,
                prompt_tokens=used.prompt_tokens,
                completion_tokens=used.completion_tokens,
                cost_usd=round(used.cost_usd, 9),
            )
        )
        cost.calls += used.calls
        cost.cache_hits += used.cache_hits
        cost.cost_usd += used.cost_usd
    cost.cost_usd = round(cost.cost_usd, 9)
    cost.calls_per_case = round(cost.calls / cases, 3) if cases else None
    return cost
