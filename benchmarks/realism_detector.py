"""Precision and recall of the deterministic realism checks, and the cost of the realism filter in calls, on an
emulator double that injects problems at known rates (tests/realism_double.py).

Every episode runs the same plan through the real episode pipeline (scripted agent, the injecting emulator double);
each observation the agent saw is labelled with what the double injected (nothing, a rule-shaped problem, a subtle
one) and compared with what `toolemu.emulator.realism_checks.check_steps` flags. Counted per observation and per
episode (an episode is injected when any of its observations is, flagged when any is flagged). Then the same
episodes again with `--realism-filter N` (rules only, and with a judge double that passes every draft, to count the
calls a judge adds): the filter's calls, the emulator's, and what the checks still flag in what the agent saw.

The judge's own precision and recall need a real model: the judge double here measures nothing but calls.

Run: python benchmarks/realism_detector.py [--episodes 300] [--seed 0] [--rule-rate 0.3] [--subtle-rate 0.08]
                                           [--redraft-reinject 0.25] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from realism_double import RULE_KINDS, InjectingEmulator, InjectionRates, run_episodes, truth_of, write_bench  # noqa: E402

from toolemu.emulator.realism_checks import check_steps  # noqa: E402


def ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def detection(episodes: int, seed: int, rates: InjectionRates, root: Path) -> dict[str, Any]:
    bench = write_bench(root, episodes, seed)
    double = InjectingEmulator(seed=seed, rates=rates)
    started = time.perf_counter()
    trajectories = run_episodes(bench, double)
    seconds = time.perf_counter() - started
    obs = Counter()
    by_kind: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    ep = Counter()
    for traj in trajectories:
        truth = truth_of(double, traj)
        flagged = {f.step for f in check_steps(traj.steps)}
        for step, kind in zip(traj.steps, truth, strict=True):
            hit = step.index in flagged
            obs["total"] += 1
            if kind is None:
                obs["fp" if hit else "tn"] += 1
                # A clean observation that disagrees with an earlier, injected one the rules missed: the injection
                # caught one step late (the contradiction is real; the observation labelled clean is the right one).
                missed = [k for s, k in zip(traj.steps, truth, strict=True) if s.index < step.index and k]
                obs["fp_late"] += hit and any(k not in RULE_KINDS for k in missed)
                continue
            by_kind[kind] += 1
            caught[kind] += hit
            group = "rule" if kind in RULE_KINDS else "subtle"
            obs[f"{group}_{'tp' if hit else 'fn'}"] += 1
        injected = any(k is not None for k in truth)
        rule_injected = any(k in RULE_KINDS for k in truth)
        ep["total"] += 1
        ep["injected"] += injected
        ep["rule_injected"] += rule_injected
        ep["tp"] += injected and bool(flagged)
        ep["rule_tp"] += rule_injected and bool(flagged)
        ep["fp"] += (not injected) and bool(flagged)
    tp = obs["rule_tp"] + obs["subtle_tp"]
    return {
        "episodes": episodes,
        "observations": obs["total"],
        "injected": {k: by_kind[k] for k in sorted(by_kind)},
        "injected_share": ratio(sum(by_kind.values()), obs["total"]),
        "observation": {
            "precision": ratio(tp, tp + obs["fp"]),
            "recall_rule_shaped": ratio(obs["rule_tp"], obs["rule_tp"] + obs["rule_fn"]),
            "recall_all": ratio(tp, tp + obs["rule_fn"] + obs["subtle_fn"]),
            "false_positives": obs["fp"],
            "false_positives_late_catches": obs["fp_late"],
            "clean": obs["fp"] + obs["tn"],
        },
        "recall_by_kind": {k: ratio(caught[k], by_kind[k]) for k in sorted(by_kind)},
        "episode": {
            "precision": ratio(ep["tp"], ep["tp"] + ep["fp"]),
            "recall_rule_shaped": ratio(ep["rule_tp"], ep["rule_injected"]),
            "recall_all": ratio(ep["tp"], ep["injected"]),
            "injected": ep["injected"],
            "clean_flagged": ep["fp"],
        },
        "seconds": round(seconds, 1),
    }


def filter_cost(episodes: int, seed: int, rates: InjectionRates, redrafts: int, judge: bool, root: Path) -> dict:
    bench = write_bench(root, episodes, seed)
    double = InjectingEmulator(seed=seed, rates=rates)
    trajectories = run_episodes(bench, double, redrafts=redrafts, judge=judge)
    steps = [s for t in trajectories for s in t.steps]
    still = sum(len({f.step for f in check_steps(t.steps)}) for t in trajectories)
    realism = sum(t.usage["realism"].calls for t in trajectories if "realism" in t.usage)
    emulator = sum(t.usage["emulator"].calls for t in trajectories)
    redrafted = sum(len(s.rejected_drafts) for s in steps)
    return {
        "redrafts": redrafts,
        "judge": judge,
        "observations": len(steps),
        "rejected_drafts": redrafted,
        "filter_calls": realism,
        "judge_calls": realism - redrafted,
        "emulator_calls": emulator,
        "filter_calls_per_observation": ratio(realism, len(steps)),
        "still_flagged": still,
        "still_flagged_share": ratio(still, len(steps)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rule-rate", type=float, default=0.3)
    parser.add_argument("--subtle-rate", type=float, default=0.08)
    parser.add_argument("--redraft-reinject", type=float, default=0.25)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rates = InjectionRates(args.rule_rate, args.subtle_rate, args.redraft_reinject)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        out = {
            "rates": vars(rates),
            "detection": detection(args.episodes, args.seed, rates, root / "detect"),
            "filter": [
                filter_cost(args.episodes, args.seed, rates, n, judge, root / f"filter-{n}-{judge}")
                for n, judge in ((0, False), (1, False), (2, False), (2, True))
            ],
        }
    print(json.dumps(out, indent=1) if args.json else json.dumps(out))


if __name__ == "__main__":
    main()
