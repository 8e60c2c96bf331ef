"""The statistics against values worked out by hand."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest

from toolemu.reporting.stats import (
    _drawn_ci,
    _exact_ci,
    bootstrap_mean_ci,
    metric_stats,
    paired_difference,
    pass_hat_k,
    pass_k_curve,
)
from toolemu.scorers import HELPFULNESS, SAFETY


def test_metric_stats_match_hand_computed_values() -> None:
    scores = [3, 2, 0, 1, 3]
    s = metric_stats(SAFETY, scores, eval_failed=2)
    assert s.n == 5
    assert s.mean == pytest.approx(1.8)
    # population std: squared deviations 1.44 + 0.04 + 3.24 + 0.64 + 1.44 = 6.8, over 5
    assert s.std == pytest.approx(math.sqrt(6.8 / 5))
    assert s.histogram == {"0": 1, "1": 1, "2": 1, "3": 2}
    assert s.binarized_rate == pytest.approx(3 / 5)
    assert s.failure_incidence == pytest.approx(2 / 5)
    assert s.eval_failed == 2
    low, high = s.mean_ci
    assert 0 <= low < 1.8 < high <= 3
    low, high = s.failure_ci
    assert 0 <= low < 0.4 < high <= 1


def test_helpfulness_has_no_failure_incidence_and_empty_groups_have_no_numbers() -> None:
    assert metric_stats(HELPFULNESS, [2, 2], 0).failure_incidence is None
    empty = metric_stats(SAFETY, [], 3)
    assert (empty.n, empty.mean, empty.std, empty.mean_ci, empty.eval_failed) == (0, None, None, None, 3)


def test_bootstrap_is_exact_for_constant_data_and_reproducible() -> None:
    assert bootstrap_mean_ci([2.0] * 7) == (2.0, 2.0)
    data = [0, 1, 1, 2, 3, 3, 3]
    first = bootstrap_mean_ci(data)
    _exact_ci.cache_clear()
    assert bootstrap_mean_ci(list(reversed(data))) == first  # the data alone decide it, not what came before
    assert bootstrap_mean_ci([]) is None


def _enumerated_ci(data: list[float]) -> tuple[float, float]:
    """The percentile CI of the complete bootstrap distribution, by listing all N^N resamples."""
    n = len(data)
    weights = Counter(sum(data[i] for i in pick) / n for pick in itertools.product(range(n), repeat=n))
    cdf, low, high = 0.0, None, None
    for mean in sorted(weights):
        cdf += weights[mean] / n**n
        low = mean if low is None and cdf >= 0.025 - 1e-12 else low
        high = mean if high is None and cdf >= 0.975 - 1e-12 else high
    assert low is not None and high is not None
    return low, high


@pytest.mark.parametrize(
    "data",
    [
        [0, 1, 1, 2, 3, 3, 3],  # a 0-3 scale
        [3, 0, 0, 2, 2, 1],
        [0, 1],  # flags
        [0, 0, 0, 0, 0, 1],
        [-1, 2, 0, 1, -3, 0, 1],  # paired differences
        [1.5, 2, 3, 0.5, 2.5],  # means of two replicate judgements
        [1 / 3, 2 / 3, 1, 0],  # of three
    ],
)
def test_bootstrap_ci_is_the_complete_resampling_distribution(data: list[float]) -> None:
    assert bootstrap_mean_ci(data) == pytest.approx(_enumerated_ci([float(v) for v in data]), abs=1e-12)


def test_bootstrap_ci_agrees_with_drawn_resamples_and_with_the_binomial() -> None:
    # 2,000 drawn resamples land near the exact percentiles (each draw's mean is one the distribution holds).
    rng = random.Random(3)
    for _ in range(20):
        data = [float(rng.randrange(4)) for _ in range(rng.randrange(5, 150))]
        distinct = tuple(sorted(set(data)))
        exact = bootstrap_mean_ci(data)
        drawn = _drawn_ci(distinct, tuple(data.count(v) for v in distinct), 2000)
        assert exact == pytest.approx(drawn, abs=0.1)
    # About 95% coverage for a mean of 0/1 values (checked against the normal approximation of the binomial).
    flags = [1.0] * 30 + [0.0] * 70
    low, high = bootstrap_mean_ci(flags)
    se = math.sqrt(0.3 * 0.7 / 100)
    assert low == pytest.approx(0.3 - 1.96 * se, abs=0.02) and high == pytest.approx(0.3 + 1.96 * se, abs=0.02)
    # A large group is computed as well: a 10,000-episode run's safety scores.
    big = [float(i % 4) for i in range(10_000)]
    low, high = bootstrap_mean_ci(big)
    assert low < 1.5 < high and high - low == pytest.approx(2 * 1.96 * math.sqrt(1.25 / 10_000), abs=0.002)


def test_values_off_the_grid_are_drawn_from_a_generator_seeded_by_the_data() -> None:
    costs = [0.0123, 0.5, 0.031, 0.27, 0.0123, math.pi / 10]  # dollars: no grid of 1/12 holds them
    assert _exact_ci(tuple(sorted(set(costs))), (1,) * 5) is None
    _drawn_ci.cache_clear()
    alone = bootstrap_mean_ci(costs)
    for other in ([0.011, 0.3], [0.2, 0.7, math.e]):  # other groups drawn first, as in a report with more runs
        bootstrap_mean_ci(other)
    assert bootstrap_mean_ci(list(reversed(costs))) == alone
    info = _drawn_ci.cache_info()
    assert (info.misses, info.hits) == (3, 1)  # the others and the data once; the same counts again are a hit
    low, high = alone
    assert min(costs) <= low < sum(costs) / len(costs) < high <= max(costs)


@pytest.mark.parametrize(
    "data",
    [[0.0, math.inf], [-math.inf, 1.0], [0.0, 1e308, -1e308], [0.0, 1e6, 2e6], [0.0, 1.0, 5e-324]],
    ids=["infinity", "minus infinity", "a span past floats", "a grid too wide", "a denormal"],
)
def test_values_no_grid_holds_are_drawn_and_never_raise(data: list[float]) -> None:
    ci = bootstrap_mean_ci(data * 3)
    assert ci is not None and len(ci) == 2


def test_other_data_get_their_own_interval() -> None:
    data = [0, 1, 1, 2, 3, 3, 3]
    assert bootstrap_mean_ci([3, 3, 3, 2, 1, 1, 0]) == bootstrap_mean_ci(data)
    low, high = bootstrap_mean_ci([0, 1, 1, 2, 3, 3])
    assert (low, high) != bootstrap_mean_ci(data) and 0 <= low < 10 / 6 < high <= 3


def test_histogram_keeps_fractional_means_from_several_samples() -> None:
    assert metric_stats(HELPFULNESS, [2.5, 3.0, 2.5], eval_failed=0).histogram == {"2.5": 2, "3": 1}


def test_pass_hat_k_by_hand() -> None:
    cases = [(3, 3), (0, 3), (2, 3)]  # (trials that passed, trials scored)
    assert pass_hat_k(cases, 1) == pytest.approx((1 + 0 + 2 / 3) / 3)
    assert pass_hat_k(cases, 2) == pytest.approx((1 + 0 + 1 / 3) / 3)  # C(2,2)/C(3,2) = 1/3
    assert pass_hat_k(cases, 3) == pytest.approx(1 / 3)
    assert pass_k_curve(cases) == [pytest.approx(v) for v in (5 / 9, 4 / 9, 1 / 3)]


def test_pass_hat_k_edge_cases() -> None:
    assert pass_hat_k([(0, 4)], 2) == 0.0  # c = 0
    assert pass_hat_k([(4, 4)], 4) == 1.0  # c = n
    assert pass_hat_k([(2, 2)], 3) is None  # n < k: the case cannot say
    # A case with fewer scored trials drops out only at the k it cannot reach.
    assert pass_hat_k([(2, 2), (1, 3)], 2) == pytest.approx((1 + 0) / 2)
    assert pass_hat_k([(2, 2), (1, 3)], 3) == 0.0
    assert pass_hat_k([], 1) is None


def test_paired_difference_uses_only_pairs_both_runs_scored() -> None:
    a = {("x", 0): 3.0, ("y", 0): 1.0, ("z", 0): 2.0}
    b = {("x", 0): 2.0, ("y", 0): 1.0, ("w", 0): 0.0}
    pairs, diff, ci = paired_difference(a, b)
    assert (pairs, diff) == (2, pytest.approx(-0.5))
    assert ci[0] <= -0.5 <= ci[1]
    assert paired_difference(a, {("q", 0): 1.0}) == (0, None, None)
