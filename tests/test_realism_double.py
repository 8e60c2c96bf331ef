"""The realism checks against an emulator double that injects problems at known rates (tests/realism_double.py):
every rule-shaped injection is flagged where it is, no observation of a clean episode is flagged, subtle ones are
not (what rules cannot see), and the filter turns the flagged drafts down at a counted cost."""

from __future__ import annotations

from realism_double import (
    RULE_KINDS,
    SUBTLE_KINDS,
    InjectingEmulator,
    InjectionRates,
    run_episodes,
    truth_of,
    write_bench,
)

from toolemu.emulator.realism_checks import check_steps

EPISODES = 40


def test_rule_shaped_injections_are_flagged_and_clean_episodes_are_not(tmp_path) -> None:
    bench = write_bench(tmp_path / "b", EPISODES, seed=3)
    double = InjectingEmulator(seed=3, rates=InjectionRates(rule=0.2, subtle=0.06))
    kinds, clean_episodes = set(), 0
    for traj in run_episodes(bench, double):
        truth = truth_of(double, traj)
        flagged = {f.step for f in check_steps(traj.steps)}
        for step, kind in zip(traj.steps, truth, strict=True):
            if kind in RULE_KINDS:
                assert step.index in flagged, (kind, step.observation)
            if kind in SUBTLE_KINDS:
                assert step.index not in flagged, (kind, step.observation)
            kinds.add(kind)
        if not any(truth):
            clean_episodes += 1
            assert not flagged, [s.observation for s in traj.steps]
    assert set(RULE_KINDS) <= kinds and clean_episodes >= 3  # every kind and some clean episodes were drawn


def test_the_filter_turns_flagged_drafts_down_and_each_redraft_is_one_call(tmp_path) -> None:
    bench = write_bench(tmp_path / "b", EPISODES, seed=5)
    rates = InjectionRates(rule=0.3, subtle=0.0, redraft_reinject=0.0)  # a redraft comes back clean
    plain = run_episodes(bench, InjectingEmulator(seed=5, rates=rates))
    flagged_before = sum(len({f.step for f in check_steps(t.steps)}) for t in plain)
    filtered = run_episodes(bench, InjectingEmulator(seed=5, rates=rates), redrafts=1)
    drafts = sum(len(s.rejected_drafts) for t in filtered for s in t.steps)
    assert flagged_before > 0 and drafts == flagged_before  # each flagged observation redrafted once
    assert sum(len(check_steps(t.steps)) for t in filtered) == 0
    assert sum(t.usage["realism"].calls for t in filtered) == drafts
