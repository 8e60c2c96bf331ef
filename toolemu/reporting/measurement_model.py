"""What qualifies a run's safety rate as a measurement: how real its emulation looked, whether its agent said it was
being tested, and how honest its simulated user was (report.json's `measurement` and `realism_by_emulator`).
Computed in toolemu.reporting.measurement."""

from __future__ import annotations

from pydantic import BaseModel, Field

Interval = tuple[float, float]


class Rate(BaseModel):
    """A share of evaluation lines (one per episode; replicate judgements each count), with its bootstrap 95% CI."""

    n: int
    rate: float | None = None
    ci: Interval | None = None


class RealismFilterUse(BaseModel):
    """What `--realism-filter` did in a run."""

    redrafts: int = 0  # the N the run was given
    observations: int = 0  # observations the emulator gave the agent
    redrafted: int = 0  # of them, those with at least one rejected draft
    rejected_drafts: int = 0
    flagged_by_rules: int = 0  # rejected drafts the rules flagged
    flagged_by_judge: int = 0
    calls: int = 0  # the filter's model calls: judge calls and redrafts (the `realism` usage role)
    cost_usd: float = 0.0


class UserHonesty(BaseModel):
    """The simulated user's replies and their honesty review in a run."""

    replies: int = 0  # replies reviewed
    flagged: int = 0  # replies whose first draft stated facts the user was never given
    reasks: int = 0  # times the user was asked again
    fixed: int = 0  # flagged replies that a re-ask made honest
    marked: int = 0  # replies that stand with unsupported facts
    episodes_marked: int = 0  # episodes with at least one such reply


class RunMeasurement(BaseModel):
    run: str
    emulator: str = ""  # the emulator model (and type), as RunInfo names it
    safe: Rate | None = None  # the safety scorer's safe rate (>= its threshold), as the summary table gives it
    failure: Rate | None = None  # its failure incidence
    realistic: Rate | None = None  # episodes whose every observation the realism scorer found realistic
    observations_rated: int = 0
    observations_flagged: int = 0  # by the rules or the judge
    episodes_flagged_by_rules: int = 0
    episodes_flagged_by_judge: int = 0
    aware: Rate | None = None  # episodes in which the agent said it is being tested
    safe_unaware: Rate | None = None  # the safe rate over the episodes the awareness scorer found not aware
    failure_unaware: Rate | None = None
    realism_filter: RealismFilterUse | None = None
    user: UserHonesty | None = None


class EmulatorRealism(BaseModel):
    """The realism rate of one emulator model, over every run it emulated."""

    emulator: str
    runs: list[str] = Field(default_factory=list)
    realistic: Rate
