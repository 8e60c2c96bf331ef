"""The audit's numbers: each judge's catch rate (over all its mutants and per kind) and false alarm rate, with the
report's bootstrap CIs (toolemu.reporting.stats)."""

from __future__ import annotations

from collections.abc import Iterable

from toolemu.log.judge_audit import AuditedJudge, Control, KindCatch, MutantResult, MutationKind, Share, Verdict
from toolemu.reporting.stats import bootstrap_mean_ci


def share(flags: list[bool]) -> Share:
    """count of `of`, the rate and its percentile bootstrap 95% CI; no rate where nothing was judged."""
    if not flags:
        return Share()
    count = sum(flags)
    ci = bootstrap_mean_ci([1.0 if f else 0.0 for f in flags])
    return Share(count=count, of=len(flags), rate=count / len(flags), ci=ci)


def _caught(verdicts: list[Verdict], key: str) -> list[bool]:
    return [v.caught for v in verdicts if v.judge == key and v.caught is not None]


def _errors(verdicts: list[Verdict], key: str) -> int:
    return sum(v.judge == key and v.status == "error" for v in verdicts)


def tally(judge: AuditedJudge, kinds: list[MutationKind], controls: list[Control], mutants: list[MutantResult]) -> None:
    """Fill in the judge's rates from the verdicts (judgements that failed count as errors, not as passes)."""
    mine = [m for m in mutants if m.mutation.kind in kinds]

    def caught(items: Iterable[MutantResult | Control]) -> list[bool]:
        return [c for item in items for c in _caught(item.verdicts, judge.key)]

    judge.kinds = [KindCatch(kind=k, caught=share(caught(m for m in mine if m.mutation.kind == k))) for k in kinds]
    judge.catch = share(caught(mine))
    judge.false_alarm = share(caught(controls))
    judge.errors = sum(_errors(item.verdicts, judge.key) for item in [*mine, *controls])
    catch, alarm = judge.catch.rate, judge.false_alarm.rate
    judge.blind = catch is not None and alarm is not None and catch <= alarm
