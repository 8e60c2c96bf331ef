"""A judge's accuracy against human labels, and rates corrected for the judge's errors (Rogan-Gladen).

The event a judge is scored on is the metric's headline proportion: a failure where the scorer defines failures
(safety: score <= 1), else its binarised rate (score >= threshold: helpful, attack succeeded). Sensitivity is the
share of the humans' positives the judge also calls positive, specificity the share of the humans' negatives it
calls negative. A raw rate p from that judge then estimates the true rate as

    (p + Sp - 1) / (Se + Sp - 1), clipped to [0, 1]          (Rogan and Gladen, 1978)

which is undefined when Se + Sp <= 1 (the judge is no better than a coin against the labels).

The CI is a percentile bootstrap over both sources of error: the run's N scored episodes (p* ~ Binomial(N, p)/N)
and the labelled pairs (Se* ~ Binomial(positives, Se)/positives, Sp* likewise over the negatives), with the same
fixed seed as every other CI. We chose it over a delta-method interval because the estimator is a ratio clipped to
[0, 1]: near 0 or 1, and when Se + Sp - 1 is small, a symmetric normal interval is wrong, while the bootstrap
keeps the clipping and the skew. Accuracy given without counts is taken as exact (only p is resampled), and the
result says so. Resamples where Se* + Sp* <= 1 have no estimate; when more of them than one CI tail (2.5%) fail,
the data cannot bound the rate and the CI is the whole [0, 1].
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError, model_validator

from toolemu.errors import InputError, first_error
from toolemu.reporting.agreement import percentile_interval
from toolemu.reporting.model import CorrectedRate, Interval
from toolemu.reporting.stats import BOOTSTRAP_RESAMPLES, CI_LEVEL
from toolemu.scorers import registered_infos
from toolemu.scorers.base import MetricInfo

ACCURACY_KIND = "toolemu-judge-accuracy"
# Labelled pairs a count may hold: the bootstrap draws binomials of them (numpy's are 64-bit), and no study labels more.
MAX_LABELLED = 10**9


def positive_event(info: MetricInfo) -> tuple[str, Callable[[float], bool]]:
    """What a 'positive' is for this scorer, in words, and as a test of a score."""
    if info.failure_bound is not None:
        op, bound = info.failure_bound
        return f"failure (score {op} {bound:g})", info.fails
    return f"{info.rate_name} (score >= {info.threshold:g})", info.at_or_above


class JudgeAccuracy(BaseModel):
    """How well one judge finds one scorer's positive event, measured against labels or given by hand."""

    scorer: str
    judge_id: str = ""  # the judge measured ("" when not tied to one: it then applies to any judge of the scorer)
    judge: str = ""  # readable: model [id]
    event: str = ""
    sensitivity: float | None = Field(None, ge=0, le=1)
    specificity: float | None = Field(None, ge=0, le=1)
    # The labelled pairs behind the numbers, when measured: the corrected rate's CI resamples them.
    true_positives: int | None = Field(None, ge=0, le=MAX_LABELLED)
    false_negatives: int | None = Field(None, ge=0, le=MAX_LABELLED)
    true_negatives: int | None = Field(None, ge=0, le=MAX_LABELLED)
    false_positives: int | None = Field(None, ge=0, le=MAX_LABELLED)
    sensitivity_ci: Interval | None = None
    specificity_ci: Interval | None = None
    source: str = ""

    @model_validator(mode="after")
    def _complete(self) -> JudgeAccuracy:
        if self.sensitivity is None and self.positives:
            self.sensitivity = self.true_positives / self.positives  # type: ignore[operator]
        if self.specificity is None and self.negatives:
            self.specificity = self.true_negatives / self.negatives  # type: ignore[operator]
        if self.sensitivity is None or self.specificity is None:
            raise ValueError("expected sensitivity and specificity, or the counts they come from")
        return self

    @property
    def positives(self) -> int | None:
        if self.true_positives is None or self.false_negatives is None:
            return None
        return self.true_positives + self.false_negatives

    @property
    def negatives(self) -> int | None:
        if self.true_negatives is None or self.false_positives is None:
            return None
        return self.true_negatives + self.false_positives

    def applies_to(self, scorer: str, judge_id: str) -> bool:
        return self.scorer == scorer and (not self.judge_id or self.judge_id == judge_id)


def measure_accuracy(
    info: MetricInfo,
    judge: Sequence[float],
    truth: Sequence[float],
    rng: np.random.Generator,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[JudgeAccuracy | None, str]:
    """Sensitivity and specificity of a judge's scores against the true ones (same trajectories, in order), with
    bootstrap CIs; None and the reason when the labels hold no positive or no negative."""
    event, positive = positive_event(info)
    pairs = [(positive(j), positive(t)) for j, t in zip(judge, truth, strict=True)]
    tp = sum(j and t for j, t in pairs)
    fn = sum(not j and t for j, t in pairs)
    tn = sum(not j and not t for j, t in pairs)
    fp = sum(j and not t for j, t in pairs)
    if not tp + fn or not tn + fp:
        missing = "positive" if not tp + fn else "negative"
        return None, f"{info.name}: the labels hold no {missing} ({event}), so the judge's accuracy cannot be measured"
    acc = JudgeAccuracy(
        scorer=info.name,
        event=event,
        true_positives=tp,
        false_negatives=fn,
        true_negatives=tn,
        false_positives=fp,
    )
    acc.sensitivity_ci = percentile_interval(rng.binomial(tp + fn, acc.sensitivity, resamples) / (tp + fn))
    acc.specificity_ci = percentile_interval(rng.binomial(tn + fp, acc.specificity, resamples) / (tn + fp))
    return acc, ""


def rogan_gladen(p: float, sensitivity: float, specificity: float) -> float | None:
    youden = sensitivity + specificity - 1
    if youden <= 0:
        return None
    return float(min(1.0, max(0.0, (p + specificity - 1) / youden)))


def corrected_rate(
    run: str,
    info: MetricInfo,
    judge_id: str,
    judge: str,
    values: Sequence[float],
    acc: JudgeAccuracy,
    rng: np.random.Generator,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> CorrectedRate:
    event, positive = positive_event(info)
    n = len(values)
    k = sum(positive(v) for v in values)
    se, sp = float(acc.sensitivity), float(acc.specificity)  # type: ignore[arg-type]
    p = k / n if n else 0.0
    out = CorrectedRate(
        run=run,
        scorer=info.name,
        judge_id=judge_id,
        judge=judge,
        event=event,
        n=n,
        raw=p,
        sensitivity=se,
        specificity=sp,
        labelled=(acc.positives or 0) + (acc.negatives or 0) if acc.positives is not None else None,
    )
    if not n:
        out.notes.append("no scored episodes")
        return out
    p_star = rng.binomial(n, p, resamples) / n
    out.raw_ci = percentile_interval(p_star)
    out.corrected = rogan_gladen(p, se, sp)
    if out.corrected is None:
        out.notes.append("not corrected: sensitivity + specificity <= 1, the judge is no better than chance")
        return out
    if acc.positives and acc.negatives:
        se_star = rng.binomial(acc.positives, se, resamples) / acc.positives
        sp_star = rng.binomial(acc.negatives, sp, resamples) / acc.negatives
    else:
        se_star, sp_star = np.full(resamples, se), np.full(resamples, sp)
        out.notes.append("sensitivity and specificity given without counts: taken as exact, the CI covers the run only")
    youden = se_star + sp_star - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.where(youden > 0, np.clip((p_star + sp_star - 1) / youden, 0, 1), np.nan)
    failed = int(np.isnan(est).sum())
    if failed > (1 - CI_LEVEL) / 2 * resamples:
        out.corrected_ci = (0.0, 1.0)
        out.notes.append(f"{failed} of {resamples} resamples had sensitivity + specificity <= 1: CI is [0, 1]")
    else:
        out.corrected_ci = percentile_interval(est)
    return out


def _scorer_name(name: str) -> str:
    """A scorer by its name or its eval type (agent_safe -> safety)."""
    return next((i.name for i in registered_infos() if name in (i.name, i.eval_type)), name)


def read_accuracy(path: Path) -> list[JudgeAccuracy]:
    """A judge-accuracy file: `toolemu agree --labels ... --json` output, or by hand: one entry
    {"scorer": "safety", "sensitivity": 0.8, "specificity": 0.9}, a list of them, or {"accuracy": [...]}."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError.single(path, f"cannot be read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InputError.single(path, f"expected a JSON judge-accuracy file: {exc}") from None
    entries = data["accuracy"] if isinstance(data, dict) and "accuracy" in data else data
    entries = [entries] if isinstance(entries, dict) else entries
    if not isinstance(entries, list) or not entries:
        raise InputError.single(path, "expected a judge-accuracy entry, a list of them, or {'accuracy': [...]}")
    out = []
    for i, entry in enumerate(entries):
        try:
            acc = JudgeAccuracy.model_validate(entry)
        except ValidationError as exc:
            where, message = first_error(exc)
            raise InputError.single(path, message, item=f"entry {i + 1}", field=where) from None
        out.append(acc.model_copy(update={"scorer": _scorer_name(acc.scorer), "source": acc.source or str(path)}))
    return out
