"""Agreement and error-correction statistics against hand computations: kappa (unweighted, quadratic, binarised),
categories, bootstrap CIs, sensitivity and specificity, Rogan-Gladen and its CI, and the accuracy file."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from judge_helpers import hand_confusion, hand_kappa

from toolemu.errors import InputError
from toolemu.reporting.accuracy import JudgeAccuracy, corrected_rate, measure_accuracy, read_accuracy, rogan_gladen
from toolemu.reporting.agreement import agreement_stats, category_of, kappa
from toolemu.scorers import ATTACK, HELPFULNESS, SAFETY

A = [3, 3, 3, 2, 2, 1, 1, 0, 0, 3]
B = [3, 3, 2, 2, 1, 1, 1, 0, 3, 3]  # agrees with A on 7 of 10


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def test_kappa_matches_the_hand_computation() -> None:
    s = agreement_stats(SAFETY, A, B, rng())
    cats = [0, 1, 2, 3]
    assert s.confusion == hand_confusion(A, B, cats)
    assert s.confusion == [[1, 0, 0, 1], [0, 2, 0, 0], [0, 1, 1, 0], [0, 0, 1, 3]]
    # po = 7/10; A's categories 0,1,2,3 come 2,2,2,4 times, B's 1,3,2,4: pe = (2+6+4+16)/100 = 28/100;
    # kappa = (0.70 - 0.28) / (1 - 0.28) = 42/72 = 7/12.
    assert s.raw == pytest.approx(0.7)
    assert s.kappa == pytest.approx(float(Fraction(7, 12)))
    assert s.kappa == pytest.approx(float(hand_kappa(A, B, cats)))
    # Quadratic: observed disagreement (1 + 1/9 + 1/9) / 10 = 11/90, expected 41/150: 1 - (11/90) / (41/150) = 68/123.
    assert s.kappa_quadratic == pytest.approx(float(Fraction(68, 123)))
    assert s.kappa_quadratic == pytest.approx(float(hand_kappa(A, B, cats, "quadratic")))
    # Binarised at >= 2: A 1111100001, B 1111000011: agree 8/10, pe = .6*.6 + .4*.4 = .52, kappa = .28/.48.
    bin_a, bin_b = [int(x >= 2) for x in A], [int(x >= 2) for x in B]
    assert s.raw_binary == pytest.approx(0.8)
    assert s.kappa_binary == pytest.approx(float(hand_kappa(bin_a, bin_b, [0, 1])))
    assert (s.rate_a, s.rate_b) == (pytest.approx(0.6), pytest.approx(0.6))
    assert (s.failure_a, s.failure_b) == (pytest.approx(0.4), pytest.approx(0.4))
    assert (s.mean_a, s.mean_b) == (pytest.approx(sum(A) / 10), pytest.approx(sum(B) / 10))


def test_kappa_is_undefined_when_both_judges_use_one_category_and_perfect_otherwise() -> None:
    s = agreement_stats(HELPFULNESS, [2] * 5, [2] * 5, rng())
    assert s.raw == 1 and s.kappa is None and s.kappa_quadratic is None and s.kappa_ci is None
    assert any("undefined" in n for n in s.notes)
    same = agreement_stats(SAFETY, A, A, rng())
    assert same.kappa == pytest.approx(1) and same.kappa_quadratic == pytest.approx(1)
    assert same.raw_ci == (1.0, 1.0) and same.kappa_ci == (pytest.approx(1.0), pytest.approx(1.0))


def test_kappa_can_be_negative_and_the_two_dimensional_form_matches_stacks() -> None:
    a, b = [0, 1, 0, 1], [1, 0, 1, 0]  # always disagreeing, balanced: kappa = (0 - 0.5) / 0.5 = -1
    assert kappa(np.array(hand_confusion(a, b, [0, 1]))) == pytest.approx(-1)
    assert agreement_stats(ATTACK, a, b, rng()).kappa == pytest.approx(float(hand_kappa(a, b, [0, 1])))


def test_bootstrap_cis_are_reproducible_and_hold_the_estimate() -> None:
    one, two = agreement_stats(SAFETY, A, B, rng()), agreement_stats(SAFETY, A, B, rng())
    assert one.kappa_ci == two.kappa_ci and one.raw_ci == two.raw_ci
    for point, (low, high) in ((one.raw, one.raw_ci), (one.kappa, one.kappa_ci), (one.rate_a, one.rate_a_ci)):
        assert low <= point <= high and low < high


def test_categories_come_from_the_label_then_the_rounded_value() -> None:
    assert category_of(1.0, "Possible Severe Risk (1)", SAFETY) == 1  # safety's two labels with score 1 agree
    assert category_of(5 / 3, "Likely Mild Risk (1)", SAFETY) == 1  # samples: the majority label decides
    assert category_of(1.5, None, SAFETY) == 2 and category_of(2.4, "", SAFETY) == 2
    assert category_of(7.0, None, SAFETY) is None and category_of(None, None, SAFETY) is None


def test_sensitivity_and_specificity_by_hand() -> None:
    judge = [0, 1, 1, 2, 3, 0, 3, 2, 1, 3]
    truth = [0, 1, 2, 1, 3, 3, 3, 2, 1, 0]
    # Positive = failure (<= 1). Humans: positives at 0,1,3,8,9 (5); the judge calls 0,1,2,5,8 positive.
    # TP = {0,1,8} = 3, FN = {3,9} = 2, FP = {2,5} = 2, TN = {4,6,7} = 3.
    acc, why = measure_accuracy(SAFETY, judge, truth, rng())
    assert why == "" and acc is not None
    assert (acc.true_positives, acc.false_negatives, acc.false_positives, acc.true_negatives) == (3, 2, 2, 3)
    assert acc.sensitivity == pytest.approx(3 / 5) and acc.specificity == pytest.approx(3 / 5)
    assert acc.event == "failure (score <= 1)"
    none, why = measure_accuracy(SAFETY, [3, 3], [3, 2], rng())
    assert none is None and "no positive" in why


def test_rogan_gladen_by_hand_and_clipped() -> None:
    assert rogan_gladen(0.4, 0.8, 0.9) == pytest.approx((0.4 + 0.9 - 1) / (0.8 + 0.9 - 1))  # 0.3 / 0.7
    assert rogan_gladen(0.05, 0.8, 0.9) == 0.0  # (0.05 - 0.1) / 0.7 < 0
    assert rogan_gladen(0.99, 0.8, 0.99) == 1.0  # (0.98) / 0.79 > 1
    assert rogan_gladen(0.4, 0.5, 0.5) is None  # no better than chance


def test_corrected_rate_and_its_ci() -> None:
    values = [0.0] * 40 + [3.0] * 60  # 40% failures
    exact = JudgeAccuracy(scorer="safety", sensitivity=0.8, specificity=0.9)
    fixed = corrected_rate("run", SAFETY, "j1", "judge", values, exact, rng())
    assert fixed.raw == pytest.approx(0.4) and fixed.n == 100
    assert fixed.corrected == pytest.approx(0.3 / 0.7)
    assert fixed.corrected_ci[0] < fixed.corrected < fixed.corrected_ci[1]
    assert any("taken as exact" in n for n in fixed.notes)
    counted = JudgeAccuracy(scorer="safety", true_positives=8, false_negatives=2, true_negatives=9, false_positives=1)
    assert (counted.sensitivity, counted.specificity) == (0.8, 0.9)
    wider = corrected_rate("run", SAFETY, "j1", "judge", values, counted, rng())
    assert wider.corrected == pytest.approx(fixed.corrected) and wider.labelled == 20
    width = lambda c: c.corrected_ci[1] - c.corrected_ci[0]  # noqa: E731
    assert width(wider) > width(fixed)  # the labels' own uncertainty widens it
    coin = JudgeAccuracy(scorer="safety", true_positives=1, false_negatives=1, true_negatives=1, false_positives=1)
    unsure = corrected_rate("run", SAFETY, "j1", "judge", values, coin, rng())
    assert unsure.corrected is None and "no better than chance" in unsure.notes[0]


def test_accuracy_files_by_hand_and_bad_ones(tmp_path) -> None:
    path = tmp_path / "acc.json"
    path.write_text(json.dumps({"scorer": "agent_safe", "sensitivity": 0.8, "specificity": 0.9}))
    [acc] = read_accuracy(path)
    assert (acc.scorer, acc.judge_id, acc.source) == ("safety", "", str(path))
    path.write_text(json.dumps({"accuracy": [{"scorer": "safety", "sensitivity": 1.4, "specificity": 0.9}]}))
    with pytest.raises(InputError) as err:
        read_accuracy(path)
    assert "entry 1" in str(err.value) and "sensitivity" in str(err.value)
    path.write_text(json.dumps([{"scorer": "safety"}]))
    with pytest.raises(InputError, match="expected sensitivity and specificity"):
        read_accuracy(path)
    path.write_text("{not json")
    with pytest.raises(InputError, match="expected a JSON judge-accuracy file"):
        read_accuracy(path)
