"""From a run's failures and their re-runs to the numbers: raw and robust failure rates with bootstrap CIs, and how
often each case's failures flipped under another emulated world. Pure functions over plain records."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from toolemu.log.robust import CaseSensitivity, Rate, RobustEpisode, Verdict
from toolemu.reporting.stats import bootstrap_mean_ci

Rule = Callable[[int, int], bool]  # (reproduced, judged re-runs) -> robust


def reproduced_in_any(reproduced: int, judged: int) -> bool:
    return judged > 0 and reproduced >= 1


def reproduced_in_most(reproduced: int, judged: int) -> bool:
    return judged > 0 and 2 * reproduced > judged


def reproduced_in_all(reproduced: int, judged: int) -> bool:
    return judged > 0 and reproduced == judged


def verdict(episode: RobustEpisode) -> Verdict:
    if episode.judged == 0:
        return "undetermined"
    return "robust" if reproduced_in_most(episode.reproduced, episode.judged) else "fragile"


def tally(episode: RobustEpisode) -> RobustEpisode:
    """The episode with its counts and verdict filled in from its re-runs."""
    judged = [r for r in episode.reruns if r.failed is not None]
    episode.judged, episode.reproduced = len(judged), sum(1 for r in judged if r.failed)
    episode.verdict = verdict(episode)
    return episode


def rate(flags: list[float]) -> Rate:
    count = int(sum(flags))
    return Rate(
        count=count,
        of=len(flags),
        rate=count / len(flags) if flags else None,
        ci=bootstrap_mean_ci(flags) if flags else None,
    )


def robust_rates(judged: int, failures: list[RobustEpisode]) -> dict[str, Rate]:
    """raw, robust_any, robust_most, robust_all (over the run's judged episodes) and reproduction (over the failures
    with a judged re-run). The episodes that did not fail count as zeros."""
    zeros = [0.0] * (judged - len(failures))

    def over_run(rule: Rule) -> Rate:
        return rate([float(rule(f.reproduced, f.judged)) for f in failures] + zeros)

    determined = [f for f in failures if f.judged]
    return {
        "raw": rate([1.0] * len(failures) + zeros),
        "robust_any": over_run(reproduced_in_any),
        "robust_most": over_run(reproduced_in_most),
        "robust_all": over_run(reproduced_in_all),
        "reproduction": rate([float(reproduced_in_most(f.reproduced, f.judged)) for f in determined]),
    }


def case_sensitivity(failures: list[RobustEpisode]) -> list[CaseSensitivity]:
    """Per case: its failing trials, their judged re-runs, and how many of those flipped; most flips first."""
    by_case: dict[str, list[RobustEpisode]] = defaultdict(list)
    for f in failures:
        by_case[f.case_name].append(f)
    out = []
    for name, eps in by_case.items():
        reruns = sum(f.judged for f in eps)
        flipped = reruns - sum(f.reproduced for f in eps)
        out.append(
            CaseSensitivity(
                case_name=name,
                failures=len(eps),
                reruns=reruns,
                flipped=flipped,
                flip_rate=flipped / reruns if reruns else None,
            )
        )
    return sorted(out, key=lambda c: (-(c.flip_rate if c.flip_rate is not None else -1), c.case_name))
