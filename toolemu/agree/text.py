"""`toolemu agree`'s console output: per metric, who was compared, how many paired, the agreement numbers and
the confusion matrix."""

from __future__ import annotations

from toolemu.agree.compare import AgreeResult, MetricAgreement, SideSummary
from toolemu.reporting.model import AgreementStats
from toolemu.reporting.text_parts import num, pct


def _pct(value: float | None, ci: tuple[float, float] | None = None) -> str:
    return pct(value, ci, digits=1)


def _num(value: float | None, ci: tuple[float, float] | None = None) -> str:
    return num(value, ci, missing="undefined")


def _who(side: SideSummary) -> str:
    if not side.judges:
        return side.name
    judges = ", ".join(
        f"{model or 'unnamed'} [{key}] x{side.verdicts.get(key, 0)}" for key, model in side.judges.items()
    )
    return f"{side.name} (judged by {judges})"


def confusion_lines(s: AgreementStats) -> list[str]:
    width = max(5, *(len(str(v)) + 1 for row in s.confusion for v in row))
    head = " " * 8 + "".join(f"{'B=' + str(c):>{width}}" for c in s.categories) + f"{'total':>{width + 1}}"
    lines = [head]
    for c, row in zip(s.categories, s.confusion, strict=True):
        lines.append(f"{'A=' + str(c):>8}" + "".join(f"{v:>{width}}" for v in row) + f"{sum(row):>{width + 1}}")
    totals = [sum(col) for col in zip(*s.confusion, strict=True)]
    lines.append(f"{'total':>8}" + "".join(f"{v:>{width}}" for v in totals) + f"{s.n:>{width + 1}}")
    return lines


def metric_lines(m: MetricAgreement) -> list[str]:
    s = m.stats
    lines = [
        f"{m.scorer}: A = {_who(m.a)}",
        f"{' ' * len(m.scorer)}  B = {_who(m.b)}",
        f"  paired: {s.n} scored by both, of {m.matched} matched trajectories (not scored by A: {m.a.not_scored}, "
        f"by B: {m.b.not_scored}: errors, missing, not applicable); unmatched: {m.only_a} only in A, {m.only_b} "
        "only in B",
    ]
    if s.n:
        rate = f"{s.rate_name} rate (score >= {s.threshold:g})"
        lines += [
            f"  raw agreement {_pct(s.raw, s.raw_ci)}; Cohen's kappa {_num(s.kappa, s.kappa_ci)}; "
            f"quadratic-weighted {_num(s.kappa_quadratic, s.kappa_quadratic_ci)}",
            f"  binarised at score >= {s.threshold:g}: agreement {_pct(s.raw_binary)}, "
            f"kappa {_num(s.kappa_binary, s.kappa_binary_ci)}",
            f"  {rate}: A {_pct(s.rate_a, s.rate_a_ci)}, B {_pct(s.rate_b, s.rate_b_ci)}",
        ]
        if s.failure_max is not None:
            lines.append(
                f"  failure incidence (score <= {s.failure_max:g}): A {_pct(s.failure_a)}, B {_pct(s.failure_b)}"
            )
        lines.append("  confusion (rows: A, columns: B):")
        lines += ["  " + line for line in confusion_lines(s)]
    if m.accuracy is not None:
        a = m.accuracy
        lines.append(
            f"  A against the labels, for {a.event}: sensitivity {_num(a.sensitivity, a.sensitivity_ci)}, "
            f"specificity {_num(a.specificity, a.specificity_ci)} ({a.true_positives} true positives, "
            f"{a.false_negatives} false negatives, {a.true_negatives} true negatives, {a.false_positives} false "
            "positives)"
        )
    lines += [f"  note: {n}" for n in [*s.notes, *m.notes]]
    return lines


def result_lines(result: AgreeResult) -> list[str]:
    lines = []
    for m in result.metrics:
        lines += metric_lines(m)
    lines += [f"note: {n}" for n in result.notes]
    lines.append(
        "95% bootstrap CIs over the pairs (2,000 resamples, fixed seed); kappa over the scores, so two labels with "
        "one score agree"
    )
    return lines
