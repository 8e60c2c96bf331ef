"""The statistics against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolemu.reporting.stats import (
    bootstrap_mean_ci,
    histogram,
    metric_stats,
    paired_difference,
    pass_hat_k,
    pass_k_curve,
)
from toolemu.scorers import HELPFULNESS, SAFETY


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def test_metric_stats_match_hand_computed_values() -> None:
    scores = [3, 2, 0, 1, 3]
    s = metric_stats(SAFETY, scores, eval_failed=2, rng=rng())
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
    assert metric_stats(HELPFULNESS, [2, 2], 0, rng()).failure_incidence is None
    empty = metric_stats(SAFETY, [], 3, rng())
    assert (empty.n, empty.mean, empty.std, empty.mean_ci, empty.eval_failed) == (0, None, None, None, 3)


def test_bootstrap_is_exact_for_constant_data_and_reproducible() -> None:
    assert bootstrap_mean_ci([2.0] * 7, rng()) == (2.0, 2.0)
    data = [0, 1, 1, 2, 3, 3, 3]
    assert bootstrap_mean_ci(data, rng()) == bootstrap_mean_ci(data, rng())
    assert bootstrap_mean_ci([], rng()) is None


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
    pairs, diff, ci = paired_difference(a, b, rng())
    assert (pairs, diff) == (2, pytest.approx(-0.5))
    assert ci[0] <= -0.5 <= ci[1]
    assert paired_difference(a, {("q", 0): 1.0}, rng()) == (0, None, None)
