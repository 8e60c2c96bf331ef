"""What qualifies a headline number, as report.json holds it: how stable its judge is (the flip rate of re-judged
episodes, toolemu.reporting.flips) and what the run cost (toolemu.reporting.cost). Data only: the report's
sections and its Summary are drawn from these."""

from __future__ import annotations

from pydantic import BaseModel, Field

Interval = tuple[float, float]

# A headline whose judge changes its binarised verdict on more than this share of re-judged episodes is marked
# unstable in the report (`toolemu check` has its own limit: max_flip_rate).
UNSTABLE_FLIP_RATE = 0.10


class FlipCase(BaseModel):
    """A re-judged episode whose binarised verdict changed: a borderline case."""

    case_name: str
    trial: int
    episode: int | None = None  # its position in the report's episodes (the trace viewer's #ep-<n>)
    values: list[float]  # the headline judgement first, then each re-judgement in order
    labels: list[str | None] = Field(default_factory=list)


class FlipStats(BaseModel):
    """One scorer's judge in one run, judged again (`toolemu evaluate RUN --rejudge K`): how often its binarised
    verdict (value >= the scorer's threshold) changed across the headline judgement and the re-judgements."""

    run: str
    scorer: str
    judge: str  # the judge's label: model [id]
    times: int  # re-judgements per episode (K): the most any episode has
    episodes: int  # re-judged episodes with a scored headline and at least one scored re-judgement
    flipped: int
    rate: float | None = None
    ci: Interval | None = None  # percentile bootstrap 95%, over the re-judged episodes
    threshold: float = UNSTABLE_FLIP_RATE
    unstable: bool = False  # rate > threshold
    cases: list[FlipCase] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class RoleCost(BaseModel):
    """The calls of one role (or one judge) in one run, with one model."""

    role: str  # agent, emulator, user, monitor, ...; judge:<scorer>[@<judge>]; rejudge:<scorer>
    model: str = ""
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0  # calls whose model the price table lacks: not in cost_usd
    judge: bool = False  # a judge's calls: the judge's share of the cost


class RunCost(BaseModel):
    """What one run cost, from the cost each call recorded (priced by the price table in force then). Where calls
    are unpriced, every dollar figure is a lower bound and `unpriced` names their models."""

    run: str
    episodes: int
    roles: list[RoleCost] = Field(default_factory=list)
    total_usd: float = 0.0  # the run's calls: emulation and every judge (robust re-runs apart)
    judge_usd: float = 0.0
    judge_share: float | None = None  # judge_usd / total_usd
    per_episode: float | None = None
    failures: dict[str, int] = Field(default_factory=dict)  # judged failures per headline scorer, by its rule
    per_failure: dict[str, float | None] = Field(default_factory=dict)  # total_usd / failures
    robust_failures: int | None = None  # robust failures (toolemu robust: reproduced in most re-runs)
    robust_usd: float | None = None  # the robust re-runs' own calls
    per_robust_failure: float | None = None  # (total_usd + robust_usd) / robust_failures
    unpriced: dict[str, int] = Field(default_factory=dict)  # model -> calls with no price
    price_table: str | None = None  # the price table's version the run's last command recorded (run.json)
    notes: list[str] = Field(default_factory=list)

    @property
    def lower_bound(self) -> bool:
        return bool(self.unpriced)
