"""How much two judges agree on the same trajectories: raw agreement, Cohen's kappa (unweighted, quadratic-weighted,
and on ToolEmu's binarised split), each judge's rates, the confusion matrix, and bootstrap CIs over the pairs.

Kappa is over the scorer's *scores* (its whole-number scale, 0-3 for ToolEmu's judges), not its labels: weighting
needs an ordered scale, ToolEmu's numbers and thresholds are on scores, and dumps from other tools often carry only
the score. So safety's two labels with score 1 ("Likely Mild Risk" and "Possible Severe Risk") count as agreeing.
A verdict's category is its label's score where it has a label on the scale (for several samples that is the
majority label), else its value rounded to the nearest whole score.

Pure functions over numbers; the bootstrap resamples pairs as multinomial counts over the cells of the confusion
matrix (a resample of pairs *is* a resampled matrix), 2,000 draws.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from toolemu.reporting.model import AgreementStats, Interval
from toolemu.reporting.stats import BOOTSTRAP_RESAMPLES, CI_LEVEL
from toolemu.scorers.base import MetricInfo


def category_of(value: float | None, label: str | None, info: MetricInfo) -> int | None:
    """A verdict's place on the scorer's whole-number scale; None when it has none (no value, off the scale)."""
    scale = dict(info.labels)
    if label in scale:
        return int(round(scale[label]))
    if value is None:
        return None
    whole = int(np.floor(value + 0.5))  # halves round up, the same way in every process
    return whole if info.lower <= whole <= info.upper else None


def confusion_matrix(a: Sequence[int], b: Sequence[int], categories: Sequence[int]) -> np.ndarray:
    """counts[i, j]: pairs that judge a put in categories[i] and judge b in categories[j]."""
    index = {c: i for i, c in enumerate(categories)}
    counts = np.zeros((len(categories), len(categories)), dtype=np.int64)
    for x, y in zip(a, b, strict=True):
        counts[index[x], index[y]] += 1
    return counts


def disagreement_weights(k: int, kind: str) -> np.ndarray:
    """How much a disagreement between category i and j costs: 0/1 (unweighted) or ((i - j) / (k - 1))^2."""
    i, j = np.indices((k, k))
    if kind == "unweighted":
        return (i != j).astype(float)
    if kind == "quadratic":
        return ((i - j) / max(k - 1, 1)) ** 2
    raise ValueError(f"unknown kappa weights {kind!r}")


def kappas(counts: np.ndarray, kind: str = "unweighted") -> np.ndarray:
    """Cohen's kappa of one matrix (shape k x k) or of a stack of them (r x k x k): 1 - observed / expected
    disagreement, where expected comes from the two judges' own marginals. NaN where it is undefined (no pairs,
    or both judges used one and the same category, so chance agreement is already perfect)."""
    counts = np.asarray(counts, dtype=float)
    weights = disagreement_weights(counts.shape[-1], kind)
    n = counts.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (counts * weights).sum(axis=(-2, -1)) / n
        rows, cols = counts.sum(axis=-1) / n[..., None], counts.sum(axis=-2) / n[..., None]
        expected = (rows[..., :, None] * cols[..., None, :] * weights).sum(axis=(-2, -1))
        out = 1 - observed / expected
    return np.where(expected > 0, out, np.nan)


def kappa(counts: np.ndarray, kind: str = "unweighted") -> float | None:
    value = float(kappas(counts, kind))
    return value if np.isfinite(value) else None


def binarised(counts: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Collapse k x k matrices to 2 x 2 ones: index 1 for the categories where `positive` (a k-vector) holds."""
    pos = positive.astype(bool)
    out = np.empty((*counts.shape[:-2], 2, 2), dtype=counts.dtype)
    for i, rows in enumerate((~pos, pos)):
        for j, cols in enumerate((~pos, pos)):
            out[..., i, j] = counts[..., rows, :][..., :, cols].sum(axis=(-2, -1))
    return out


def percentile_interval(samples: np.ndarray) -> Interval | None:
    """The percentile CI of bootstrap draws, over the draws that have a value."""
    ok = samples[np.isfinite(samples)]
    if ok.size == 0:
        return None
    tail = (1 - CI_LEVEL) / 2 * 100
    low, high = np.percentile(ok, [tail, 100 - tail])
    return float(low), float(high)


def agreement_stats(
    info: MetricInfo,
    a: Sequence[int],
    b: Sequence[int],
    rng: np.random.Generator,
    names: tuple[str, str] = ("a", "b"),
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> AgreementStats:
    """Every agreement number for paired categories a[i], b[i] (the same trajectory), with bootstrap CIs."""
    categories = info.integer_scale
    counts = confusion_matrix(a, b, categories)
    n = int(counts.sum())
    cats = np.asarray(categories, dtype=float)
    at_or_above = cats >= info.threshold
    out = AgreementStats(
        scorer=info.name,
        a=names[0],
        b=names[1],
        n=n,
        categories=categories,
        confusion=counts.tolist(),
        threshold=info.threshold,
        rate_name=info.rate_name,
        failure_max=info.failure_max,
        resamples=resamples,
    )
    if n == 0:
        return out
    draws = rng.multinomial(n, (counts / n).ravel(), size=resamples).reshape(resamples, *counts.shape)
    both = np.concatenate([counts[None], draws])  # index 0: the data; 1..: the resamples

    def point_and_ci(values: np.ndarray) -> tuple[float | None, Interval | None]:
        point = float(values[0])
        return (point if np.isfinite(point) else None), percentile_interval(values[1:])

    total = both.sum(axis=(-2, -1)).astype(float)
    diagonal = np.trace(both, axis1=-2, axis2=-1)
    out.raw, out.raw_ci = point_and_ci(diagonal / total)
    out.kappa, out.kappa_ci = point_and_ci(kappas(both, "unweighted"))
    out.kappa_quadratic, out.kappa_quadratic_ci = point_and_ci(kappas(both, "quadratic"))
    split = binarised(both, at_or_above)
    out.raw_binary = float(np.trace(split[0]) / n)
    out.kappa_binary, out.kappa_binary_ci = point_and_ci(kappas(split, "unweighted"))
    rows, cols = both.sum(axis=-1) / total[:, None], both.sum(axis=-2) / total[:, None]
    out.rate_a, out.rate_a_ci = point_and_ci(rows[:, at_or_above].sum(axis=-1))
    out.rate_b, out.rate_b_ci = point_and_ci(cols[:, at_or_above].sum(axis=-1))
    out.mean_a, out.mean_b = float(rows[0] @ cats), float(cols[0] @ cats)
    if info.failure_bound is not None:
        failing = np.array([info.fails(float(c)) for c in cats], dtype=bool)
        out.failure_a, out.failure_b = float(rows[0, failing].sum()), float(cols[0, failing].sum())
    for name, value in (("kappa", out.kappa), ("binarised kappa", out.kappa_binary)):
        if value is None:
            out.notes.append(f"{name} is undefined: both judges put every pair in one and the same category")
    return out
