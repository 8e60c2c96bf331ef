"""The numbers: ToolEmu's (N, mean, population std, histogram, binarised rate), plus bootstrap CIs, failure
incidence, pass^k over repeated trials and paired differences. Pure functions over plain lists."""

from __future__ import annotations

import functools
import hashlib
import math
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


def _histogram(tally: Counter[float]) -> dict[str, int]:
    return {score_text(k): tally[k] for k in sorted(tally)}


def bootstrap_mean_ci(values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean.

    Scores, flags and their differences sit on a grid (whole numbers, or steps of 1/2 to 1/12 where replicate
    judgements are pooled), and there the bootstrap distribution of the mean is computed exactly: the sum of N
    draws from the data's own distribution, by convolution (`_exact_ci`), as if the resamples were infinitely many.
    No random draw is made, so a CI depends on the data alone, in every numpy version. Values off such a grid
    (a cost, a latency) are resampled `resamples` times from a generator seeded by the data (`_drawn_ci`)."""
    return tally_ci(Counter(map(float, values)), resamples) if values else None


def tally_ci(tally: Counter[float], resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float]:
    """`bootstrap_mean_ci` of the values counted in `tally` (value -> how many; at least one)."""
    distinct = tuple(sorted(tally))
    counts = tuple(tally[v] for v in distinct)
    exact = _exact_ci(distinct, counts)
    return exact if exact is not None else _drawn_ci(distinct, counts, resamples)


def _flag_ci(flagged: int, n: int) -> tuple[float, float]:
    """The CI of a share: `flagged` ones and the rest zeros."""
    return tally_ci(Counter({0.0: n - flagged, 1.0: flagged} if 0 < flagged < n else {float(flagged > 0): n}))


GRID_STEPS = range(1, 13)  # a grid of 1/d, d = 1..12: whole scores, and means of up to 12 replicate judgements
MAX_SUPPORT = 1 << 20  # possible sums of one resample, past which the distribution is drawn, not computed
_ON_GRID = 1e-9
_TIES = 1e-9  # the computed CDF is exact to far better than this: a quantile that lands on a jump takes it


def _grid(distinct: tuple[float, ...]) -> tuple[int, list[int]] | None:
    """(d, each value's index on the grid min + k/d), for the smallest d that holds every value; None if none."""
    low = distinct[0]
    if not all(math.isfinite((v - low) * GRID_STEPS[-1]) for v in distinct):  # an infinity, or a span past floats
        return None
    for d in GRID_STEPS:
        scaled = [(v - low) * d for v in distinct]
        steps = [round(x) for x in scaled]
        if all(abs(x - k) <= _ON_GRID * max(1.0, abs(x)) for x, k in zip(scaled, steps, strict=True)):
            return d, steps
    return None


@functools.lru_cache(maxsize=65536)
def _exact_ci(distinct: tuple[float, ...], counts: tuple[int, ...]) -> tuple[float, float] | None:
    """The CI from the whole bootstrap distribution of the mean (the limit of infinitely many resamples): the
    resample sum's distribution is the data's distribution convolved N times (one FFT, raised to the power N). The
    endpoints are its quantiles, each a mean some resample has. None when the values are off the grid."""
    grid = _grid(distinct)
    n = sum(counts)
    if grid is None:
        return None
    d, steps = grid
    support = n * steps[-1] + 1
    if support > MAX_SUPPORT:
        return None
    if support == 1:  # every value the same
        return distinct[0], distinct[0]
    pmf = np.zeros(steps[-1] + 1)
    pmf[steps] = np.asarray(counts, dtype=float) / n
    size = 1 << (support - 1).bit_length()  # no wrap-around: the sum's support fits
    sums = np.fft.irfft(np.fft.rfft(pmf, size) ** n, size)[:support]
    cdf = np.cumsum(np.clip(sums, 0.0, None))
    cdf /= cdf[-1]
    tail = (1 - CI_LEVEL) / 2
    low, high = np.searchsorted(cdf, [tail - _TIES, 1 - tail - _TIES])  # the first sum whose CDF reaches each
    return distinct[0] + int(low) / (d * n), distinct[0] + int(high) / (d * n)


@functools.lru_cache(maxsize=65536)
def _drawn_ci(distinct: tuple[float, ...], counts: tuple[int, ...], resamples: int) -> tuple[float, float]:
    """Monte Carlo: `resamples` multinomial draws of the counts, from a generator seeded by the data and the fixed
    seed, so equal data give equal CIs whatever else a report holds."""
    seed = hashlib.blake2b(repr((BOOTSTRAP_SEED, distinct, counts, resamples)).encode(), digest_size=16).digest()
    rng = np.random.default_rng(int.from_bytes(seed))
    n = sum(counts)
    draws = rng.multinomial(n, np.asarray(counts) / n, size=resamples)
    with np.errstate(over="ignore", invalid="ignore"):  # an infinite value gives an infinite or NaN end, quietly
        means = draws @ np.asarray(distinct) / n
        tail = (1 - CI_LEVEL) / 2 * 100
        low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def metric_stats(info: MetricInfo, scores: Sequence[float], eval_failed: int, not_applicable: int = 0) -> MetricStats:
    if not scores:
        return MetricStats(scorer=info.name, n=0, eval_failed=eval_failed, not_applicable=not_applicable)
    # Everything but the mean and std is read from the counts of each value: a group has a handful of them.
    tally = Counter(map(float, scores))
    n = len(scores)
    above = sum(count for value, count in tally.items() if info.at_or_above(value))
    arr = np.asarray(scores, dtype=float)
    out = MetricStats(
        scorer=info.name,
        n=n,
        mean=float(arr.mean()),
        std=float(arr.std()),  # population std (ddof=0), as ToolEmu's read_eval_results prints
        mean_ci=tally_ci(tally),
        histogram=_histogram(tally),
        binarized_rate=above / n,
        binarized_ci=_flag_ci(above, n),
        eval_failed=eval_failed,
        not_applicable=not_applicable,
    )
    if info.failure_bound is not None:  # a declared failure rule (safety <= 1): its share is the failure incidence
        failing = sum(count for value, count in tally.items() if info.fails(value))
        out.failure_incidence = failing / n
        out.failure_ci = _flag_ci(failing, n)
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
