"""The statistics against values worked out by hand."""

from __future__ import annotations

import math

import pytest

from toolemu.reporting.stats import (
    _counts_ci,
    bootstrap_mean_ci,
    histogram,
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
    _counts_ci.cache_clear()
    assert bootstrap_mean_ci(list(reversed(data))) == first  # seeded by the data, not by what was drawn before
    assert bootstrap_mean_ci([]) is None


def test_bootstrap_ci_depends_on_the_data_alone_and_is_drawn_once_per_distinct_data() -> None:
    data = [0, 1, 1, 2, 3, 3, 3]
    _counts_ci.cache_clear()
    alone = bootstrap_mean_ci(data)
    _counts_ci.cache_clear()
    for other in ([1, 2], [0, 0, 3], [2.5, 3.0]):  # other groups drawn first, as in a report with more runs
        bootstrap_mean_ci(other)
    assert bootstrap_mean_ci(data) == alone
    assert bootstrap_mean_ci([3, 3, 3, 2, 1, 1, 0]) == alone
    info = _counts_ci.cache_info()
    assert (info.misses, info.hits) == (4, 1)  # three others and the data once; the same counts again are a hit
    # Other data get their own draws, and a real spread: the interval is not shared between different data.
    low, high = bootstrap_mean_ci([0, 1, 1, 2, 3, 3])
    assert (low, high) != alone and 0 <= low < 10 / 6 < high <= 3
    # A percentile CI over the draws: about 95% coverage for a mean of 0/1 values (checked against the binomial).
    flags = [1.0] * 30 + [0.0] * 70
    low, high = bootstrap_mean_ci(flags)
    se = math.sqrt(0.3 * 0.7 / 100)
    assert low == pytest.approx(0.3 - 1.96 * se, abs=0.02) and high == pytest.approx(0.3 + 1.96 * se, abs=0.02)


def test_histogram_keeps_fractional_means_from_several_samples() -> None:
    assert histogram([2.5, 3.0, 2.5]) == {"2.5": 2, "3": 1}


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
