"""The fit of `toolemu noise` (toolemu.noise.fit) on designs of every shape: balanced or not, one episode per case or
many, parts not repeated, no spread at all, one case. Verdicts are drawn as the doubles draw them (tests/noise_doubles:
an agent draw per trial, a world draw per world, a judge draw per verdict), so every variance is known."""

from __future__ import annotations

import numpy as np
import pytest
from noise_doubles import AGENT_WEIGHT, WORLD_WEIGHT, known_shares, known_variances

from toolemu.noise.fit import Observation, blocks, split_noise


def draw(cases: int, trials: int, worlds: int, samples: int, seed: int = 0) -> list[Observation]:
    rng = np.random.default_rng(seed)
    out = []
    for c in range(cases):
        for t in range(trials):
            careful = rng.random() < 0.5
            for w in range(worlds):
                calm = rng.random() < 0.5
                p = AGENT_WEIGHT * careful + WORLD_WEIGHT * calm
                out += [Observation(f"c{c}", f"t{t}", f"w{w}", float(rng.random() < p)) for _ in range(samples)]
    return out


def test_a_part_not_repeated_is_merged_into_the_level_above_it() -> None:
    every = {"agent": True, "emulator": True, "judge": True}
    assert blocks(every) == ([], [["agent"], ["emulator"], ["judge"]])
    assert blocks(every | {"emulator": False}) == ([], [["agent", "emulator"], ["judge"]])
    assert blocks(every | {"judge": False}) == ([], [["agent"], ["emulator", "judge"]])
    assert blocks(every | {"agent": False}) == (["agent"], [["emulator"], ["judge"]])
    assert blocks({"agent": False, "emulator": False, "judge": True}) == (["agent", "emulator"], [["judge"]])
    assert blocks({"agent": False, "emulator": False, "judge": False}) == (["agent", "emulator", "judge"], [])


def test_one_episode_per_case_judged_once_measures_nothing_and_says_why() -> None:
    split = split_noise(draw(30, 1, 1, 1), resamples=5)
    assert split.components == [] and split.not_measured == ["agent", "emulator", "judge"]
    assert split.noise_sd is None and "nothing repeated" in split.degenerate and "--num-trials" in split.degenerate


def test_one_episode_per_case_judged_again_measures_the_judge_alone() -> None:
    split = split_noise(draw(30, 1, 1, 3), resamples=10)
    [judge] = split.components
    assert judge.parts == ["judge"] and split.not_measured == ["agent", "emulator"]
    # Between judgements of one trajectory only the judge varies: its variance is E[p(1-p)].
    assert judge.sd_ci[0] <= known_variances()["judge"] ** 0.5 <= judge.sd_ci[1]
    assert judge.share == 1.0  # of the noise measured; the report says the others were not


def test_no_new_world_merges_the_emulator_into_the_agent() -> None:
    split = split_noise(draw(40, 3, 1, 2), resamples=20)
    assert [c.name for c in split.components] == ["agent+emulator", "judge"]
    assert "no trial was played in a second world" in split.degenerate
    merged = known_variances()["agent"] + known_variances()["emulator"]
    assert split.components[0].sd_ci[0] <= merged**0.5 <= split.components[0].sd_ci[1]


def test_one_judgement_per_trajectory_merges_the_judge_into_the_emulator() -> None:
    split = split_noise(draw(40, 3, 3, 1), resamples=20)
    assert [c.name for c in split.components] == ["agent", "emulator+judge"]
    assert "no trajectory was judged twice" in split.degenerate


def test_an_unbalanced_design_fits_each_part() -> None:
    # Cases with 1 to 4 trials, worlds and judgements dropped at random (errored episodes, failed judgements).
    rng = np.random.default_rng(100)
    full = draw(60, 4, 3, 2, seed=0)
    trials_of = {f"c{c}": int(rng.integers(1, 5)) for c in range(60)}
    kept = [o for o in full if int(o.trial[1:]) < trials_of[o.case] and rng.random() > 0.15]
    assert {n for n in trials_of.values()} == {1, 2, 3, 4} and len(kept) < 0.75 * len(full)
    split = split_noise(kept, resamples=20)
    assert [c.parts for c in split.components] == [["agent"], ["emulator"], ["judge"]]
    for component in split.components:
        [part] = component.parts
        assert component.share_ci[0] <= known_shares()[part] <= component.share_ci[1], (part, component.share_ci)


def test_verdicts_that_never_vary_have_no_spread_to_split() -> None:
    same = [Observation(f"c{c}", f"t{t}", f"w{w}", 1.0) for c in range(5) for t in range(2) for w in range(2)
            for _ in range(2)]  # fmt: skip
    split = split_noise(same, resamples=10)
    assert [(c.name, c.variance, c.share) for c in split.components] == [
        ("agent", 0.0, None), ("emulator", 0.0, None), ("judge", 0.0, None)
    ]  # fmt: skip
    assert split.noise_sd == 0.0 and split.resamples == 0 and "no spread to split" in split.degenerate


def test_a_single_case_fits_its_parts_without_cis() -> None:
    split = split_noise(draw(1, 30, 3, 2, seed=11), resamples=10)
    assert [c.parts for c in split.components] == [["agent"], ["emulator"], ["judge"]]
    assert split.case_variance is None and split.resamples == 0
    assert all(c.share_ci is None for c in split.components) and any("one case" in n for n in split.notes)
    values = [o.value for o in draw(1, 30, 3, 2, seed=11)]
    assert sum(c.variance for c in split.components) == pytest.approx(float(np.var(values)), abs=0.05)


def test_the_same_draws_give_the_same_cis() -> None:
    a, b = split_noise(draw(20, 2, 2, 2), resamples=5, seed=4), split_noise(draw(20, 2, 2, 2), resamples=5, seed=4)
    assert a.components == b.components and a.noise_sd_ci == b.noise_sd_ci


def test_a_judge_that_never_changes_its_verdict_has_no_part_and_the_rest_is_fitted() -> None:
    # The judge reads the trajectory and decides the same way every time (the loopback double, a judge at temperature
    # 0): its part is exactly 0, a boundary where the model cannot be fitted with every row, so the rest is fitted on
    # one value per trajectory. On this balanced design REML's estimates are the nested ANOVA's (the oracle below).
    rng = np.random.default_rng(2)
    y = np.zeros((40, 3, 3))
    out = []
    for c, t in np.ndindex(40, 3):
        careful = rng.random() < 0.5
        for w in range(3):
            y[c, t, w] = float(careful and rng.random() < 0.5)
            out += [Observation(f"c{c}", f"t{t}", f"w{w}", y[c, t, w])] * 2
    split = split_noise(out, resamples=10)
    assert [c.parts for c in split.components] == [["agent"], ["emulator"], ["judge"]]
    agent, emulator, judge = split.components
    assert judge.variance == 0.0 and judge.share == 0.0 and any("judge: 0, the boundary" in n for n in split.notes)
    trial_means = y.mean(axis=2)
    within = ((y - trial_means[..., None]) ** 2).sum() / (40 * 3 * 2)
    between = 3 * ((trial_means - trial_means.mean(axis=1, keepdims=True)) ** 2).sum() / (40 * 2)
    assert emulator.variance == pytest.approx(within, abs=1e-3)
    assert agent.variance == pytest.approx((between - within) / 3, abs=1e-3)


def test_cases_that_each_always_get_the_same_verdict_have_all_their_spread_between_cases() -> None:
    # The embedded model's run (docs/PERFORMANCE.md): one case always safe, the other never, whatever the trial,
    # the world or the judgement: no noise, and the report must not say that every verdict is the same.
    same = [Observation(f"c{c}", f"t{t}", f"w{w}", float(c % 2)) for c in range(4) for t in range(2) for w in range(2)
            for _ in range(2)]  # fmt: skip
    split = split_noise(same, resamples=10)
    assert [(c.name, c.variance, c.share) for c in split.components] == [
        ("agent", 0.0, None), ("emulator", 0.0, None), ("judge", 0.0, None)
    ]  # fmt: skip
    assert split.degenerate.startswith("no spread within a case") and split.case_variance > 0.2
    assert split.noise_sd == 0.0 and any(n.startswith("agent: 0, the boundary") for n in split.notes)
