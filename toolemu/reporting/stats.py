"""The numbers: ToolEmu's (N, mean, population std, histogram, binarised rate), plus bootstrap CIs, failure
incidence, pass^k over repeated trials and paired differences. Pure functions over plain lists."""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from collections.abc import Sequence
from math import comb

import numpy as np

from toolemu.reporting.model import MetricStats
from toolemu.scorers.base import MetricInfo

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0  # fixed, so the same dumps give the same report
CI_LEVEL = 0.95


def score_text(score: float) -> str:
    return str(int(score)) if float(score).is_integer() else f"{score:g}"


def histogram(scores: Sequence[float]) -> dict[str, int]:
    counts = Counter(scores)
    return {score_text(k): counts[k] for k in sorted(counts)}


def bootstrap_mean_ci(values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean. Scores take few distinct values, so a resample is drawn as
    multinomial counts over those values: memory grows with the distinct values, not with N.

    The draws come from a generator seeded by the data (its distinct values and their counts) and the fixed seed,
    so a group's CI is the same whatever else a report holds (another run added, a group more or less), and equal
    data are resampled once: a study's thousands of groups share a few hundred distinct count vectors."""
    if not values:
        return None
    distinct, counts = np.unique(np.asarray(values, dtype=float), return_counts=True)
    return _counts_ci(tuple(distinct.tolist()), tuple(counts.tolist()), resamples)


@functools.lru_cache(maxsize=65536)
def _counts_ci(distinct: tuple[float, ...], counts: tuple[int, ...], resamples: int) -> tuple[float, float]:
    seed = hashlib.blake2b(repr((BOOTSTRAP_SEED, distinct, counts, resamples)).encode(), digest_size=16).digest()
    rng = np.random.default_rng(int.from_bytes(seed))
    n = sum(counts)
    draws = rng.multinomial(n, np.asarray(counts) / n, size=resamples)
    means = draws @ np.asarray(distinct) / n
    tail = (1 - CI_LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def rate(flags: Sequence[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def metric_stats(info: MetricInfo, scores: Sequence[float], eval_failed: int, not_applicable: int = 0) -> MetricStats:
    if not scores:
        return MetricStats(scorer=info.name, n=0, eval_failed=eval_failed, not_applicable=not_applicable)
    arr = np.asarray(scores, dtype=float)
    binary = [float(info.at_or_above(s)) for s in scores]
    out = MetricStats(
        scorer=info.name,
        n=len(scores),
        mean=float(arr.mean()),
        std=float(arr.std()),  # population std (ddof=0), as ToolEmu's read_eval_results prints
        mean_ci=bootstrap_mean_ci(scores),
        histogram=histogram(scores),
        binarized_rate=rate([b == 1.0 for b in binary]),
        binarized_ci=bootstrap_mean_ci(binary),
        eval_failed=eval_failed,
        not_applicable=not_applicable,
    )
    if info.failure_bound is not None:  # a declared failure rule (safety <= 1): its share is the failure incidence
        failures = [float(info.fails(s)) for s in scores]
        out.failure_incidence = rate([f == 1.0 for f in failures])
        out.failure_ci = bootstrap_mean_ci(failures)
    return out


def pass_hat_k(successes: Sequence[tuple[int, int]], k: int) -> float | None:
    """pass^k: the mean over cases of C(c, k) / C(n, k), with c of a case's n scored trials passing.

    It estimates the chance that k trials drawn without replacement all pass. Cases with fewer than k
    scored trials cannot say, so they are left out at that k; None when no case has k trials.
    """
    usable = [(c, n) for c, n in successes if n >= k]
    if k < 1 or not usable:
        return None
    return sum(comb(c, k) / comb(n, k) for c, n in usable) / len(usable)


def pass_k_curve(successes: Sequence[tuple[int, int]]) -> list[float | None]:
    most = max((n for _, n in successes), default=0)
    return [pass_hat_k(successes, k) for k in range(1, most + 1)]


def paired_difference(
    a: dict[tuple[str, int], float], b: dict[tuple[str, int], float]
) -> tuple[int, float | None, tuple[float, float] | None]:
    """b minus a over the (case, trial) pairs both scored: (pairs, mean difference, bootstrap CI)."""
    diffs = [b[key] - a[key] for key in sorted(a.keys() & b.keys())]
    if not diffs:
        return 0, None, None
    return len(diffs), float(np.mean(diffs)), bootstrap_mean_ci(diffs)
