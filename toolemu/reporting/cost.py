"""The full cost of a run: tokens and dollars per role (agent, emulator, user, monitor, ... as the trajectories
record them), per judge (each scorer's headline judge, a panel's other judges, re-judgements), and what the
headline numbers cost: per episode, the judges' share, per judged failure, per robust failure.

Dollars are what each call recorded when it was made (toolemu.llm.usage prices it by the price table in force;
run.json names the table's version). A call whose model the table lacked is unpriced: it is counted and its model
named, and every dollar figure of its run is then a lower bound. A run gets a cost only where it has one to give:
a dollar spent, an unpriced call, or a run.json that names its price table (written since the table was a file).
"""

from __future__ import annotations

from collections.abc import Iterable

from toolemu.llm.usage import Usage
from toolemu.log import Evaluation, RunLog, read_run, split_eval_key
from toolemu.log.robust import RobustSummary
from toolemu.reporting.flips import Rejudged
from toolemu.reporting.load import ROBUST_DIR, LoadedRun
from toolemu.reporting.qualifiers import RoleCost, RunCost
from toolemu.scorers import info_for_eval_type
from toolemu.scorers.base import MetricInfo

JUDGE, REJUDGE = "judge", "rejudge"


class _Roles:
    """Usage summed by (role, model)."""

    def __init__(self) -> None:
        self.by: dict[tuple[str, str], RoleCost] = {}

    def add(self, role: str, model: str, usage: Usage, judge: bool = False) -> None:
        if not (usage.calls or usage.cache_hits or usage.cost_usd or usage.unpriced_calls):
            return
        row = self.by.setdefault((role, model), RoleCost(role=role, model=model, judge=judge))
        row.calls += usage.calls
        row.cache_hits += usage.cache_hits
        row.prompt_tokens += usage.prompt_tokens
        row.completion_tokens += usage.completion_tokens
        row.cost_usd += usage.cost_usd
        row.unpriced_calls += usage.unpriced_calls

    def rows(self) -> list[RoleCost]:
        judges_last = sorted(self.by.values(), key=lambda r: (r.judge, r.role.startswith(REJUDGE), r.role, r.model))
        for row in judges_last:
            row.cost_usd = round(row.cost_usd, 9)
        return judges_last


def _judge_role(kind: str, file_key: str) -> str:
    eval_type, judge = split_eval_key(file_key)
    return f"{kind}:{info_for_eval_type(eval_type).name}" + (f"@{judge}" if judge else "")


def _add_evaluations(roles: _Roles, role: str, evaluations: Iterable[Evaluation]) -> None:
    for ev in evaluations:
        roles.add(role, ev.evaluator_model or ev.judge_model, ev.usage, judge=True)


def _add_log(roles: _Roles, log: RunLog) -> None:
    for traj in log.trajectories:
        for role, usage in traj.usage.items():
            if role != "total":
                roles.add(role, traj.model_of(role), usage)
    for file_key, evaluations in log.evaluations.items():
        _add_evaluations(roles, _judge_role(JUDGE, file_key), evaluations)


def run_roles(run: LoadedRun, rejudged: list[Rejudged]) -> list[RoleCost]:
    """Every role's and judge's calls in the run's files (its shards together)."""
    roles = _Roles()
    for log in run.all_logs:
        _add_log(roles, log)
    for found in rejudged:
        for eval_type, evaluations in found.evaluations.items():
            _add_evaluations(roles, _judge_role(REJUDGE, eval_type), evaluations)
    return roles.rows()


def judged_failures(run: LoadedRun, infos: list[MetricInfo]) -> dict[str, int]:
    """Per headline scorer (MetricInfo.headline: safety, attack): the run's episodes that its judge scored as a
    failure, by the scorer's own rule, on the episode's score (replicates pooled) as the report counts it."""
    out = {}
    for info in (i for i in infos if i.headline):
        scores = [ep.scores.get(info.name) for ep in run.episodes]
        scored = [s for s in scores if s is not None and s.scored]
        if scored:
            out[info.name] = sum(info.fails(s.value) for s in scored if s.value is not None)
    return out


def robust_usage(run: LoadedRun, summary: RobustSummary) -> tuple[Usage, dict[str, int], list[str]]:
    """The robust re-runs' own calls (their episodes and judgements), from each seed's folder in RUN/robust."""
    total, unpriced, notes = Usage(), {}, []
    folder = run.log.files.directory / ROBUST_DIR if run.log is not None else None
    for seed in summary.seeds:
        path = folder / f"seed-{seed}" if folder is not None else None
        if path is None or not (path / "trajectories.jsonl").is_file():
            notes.append(f"robust re-runs of seed {seed} not found beside the run: their cost is not counted")
            continue
        roles = _Roles()
        _add_log(roles, read_run(path))
        for row in roles.rows():
            total.add(Usage(calls=row.calls, cost_usd=row.cost_usd, unpriced_calls=row.unpriced_calls))
            if row.unpriced_calls:
                unpriced[row.model] = unpriced.get(row.model, 0) + row.unpriced_calls
    return total, unpriced, notes


def _per(total: float, count: int | None) -> float | None:
    return total / count if count else None


def run_cost(run: LoadedRun, rejudged: list[Rejudged], infos: list[MetricInfo]) -> RunCost | None:
    """The run's cost, or None where its records hold none (no dollar, no unpriced call, no price table named)."""
    roles = run_roles(run, rejudged)
    total = sum(r.cost_usd for r in roles)
    unpriced: dict[str, int] = {}
    for r in roles:
        if r.unpriced_calls:
            unpriced[r.model or r.role] = unpriced.get(r.model or r.role, 0) + r.unpriced_calls
    meta = run.log.meta if run.log is not None else None
    table = meta.budget.price_table if meta is not None and meta.budget is not None else None
    if not (total > 0 or unpriced or table):
        return None
    judge = sum(r.cost_usd for r in roles if r.judge)
    episodes = len(run.episodes)
    failures = judged_failures(run, infos)
    cost = RunCost(
        run=run.info.run,
        episodes=episodes,
        roles=roles,
        total_usd=round(total, 9),
        judge_usd=round(judge, 9),
        judge_share=judge / total if total > 0 else None,
        per_episode=_per(total, episodes),
        failures=failures,
        per_failure={name: _per(total, n) for name, n in failures.items()},
        price_table=table,
    )
    if run.robust is not None:
        spent, more, notes = robust_usage(run, run.robust)
        for model, n in more.items():
            unpriced[model] = unpriced.get(model, 0) + n
        cost.robust_failures = run.robust.robust_most.count
        cost.robust_usd = round(spent.cost_usd, 9)
        cost.per_robust_failure = _per(total + spent.cost_usd, cost.robust_failures)
        cost.notes += notes
    cost.unpriced = dict(sorted(unpriced.items()))
    return cost
