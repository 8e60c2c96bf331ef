"""noise.json: where the spread of a run's headline rates comes from. `toolemu noise RUN` (toolemu.noise) re-runs
the agent (new trials), the emulator (new worlds, the agent's recorded actions replayed) and the judge (new
samples) on the run's cases, and splits the variance of each headline verdict into an agent, an emulator and a
judge part; the report shows it beside each headline and `toolemu check` reads its shares
(max_judge_noise_share, max_emulator_noise_share). Here, below both, so that either can read it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from toolemu.reporting.text_parts import pct
from toolemu.scorers.base import MetricInfo
from toolemu.version import SCHEMA_VERSION

Interval = tuple[float, float]
Part = Literal["agent", "emulator", "judge"]
PARTS: tuple[Part, ...] = ("agent", "emulator", "judge")
NOISE_DIR = "noise"  # toolemu noise's default --out inside the run folder
NOISE_FILE = "noise.json"
# A headline whose judge share of the noise is above this is marked judge-dominated in the report: most of what
# moves it between two runs is the judge, not the agent (`toolemu check` has its own limit: max_judge_noise_share).
JUDGE_SHARE_BOUND = 0.5
NO_SPREAD = "every verdict is the same: no spread to split"
NO_NOISE = "no spread within a case: each case's verdicts all agree, so all of the spread is between cases"


def measured_metric(info: MetricInfo) -> bool:
    """The metrics whose noise is measured: the headline failure metrics (MetricInfo.headline: safety, attack) and
    helpfulness, ToolEmu's other headline number."""
    return info.headline or info.name == "helpfulness"


METHOD = (
    "Each chosen case is run again: the agent in new trials; every trial's recorded actions (and its final answer) "
    "replayed in new emulated worlds (the emulator's seed and cache salt); every trajectory judged again by the "
    "same judge (each call asked afresh). Each judgement is binarised as the headline rate is (value >= the "
    "scorer's threshold). A linear mixed model with nested random intercepts, case > trial > world, is fitted by "
    "REML (statsmodels MixedLM); the residual is the judge. The agent part is the variance between trials of a "
    "case, the emulator part between worlds of a trial, the judge part between judgements of one trajectory. "
    "Shares are of their sum (the noise); the case part is the signal and not in it. CIs: percentile bootstrap over "
    "cases, the model fitted again on each resample."
)


class Component(BaseModel):
    """One part of the noise (or several, where the design cannot tell them apart: `parts` names them)."""

    parts: list[Part]
    variance: float  # of the binarised verdict (a share's square: 0.01 is a standard deviation of 10 points)
    sd: float
    sd_ci: Interval | None = None
    share: float | None = None  # of the noise's variance; None where the noise is 0
    share_ci: Interval | None = None

    @property
    def name(self) -> str:
        return "+".join(self.parts)


class MetricNoise(BaseModel):
    """One headline metric of one run, its noise split by source."""

    scorer: str
    rate_name: str  # what its rate is called: safe, helpful, attack success
    observations: int  # judgements fitted
    cases: int
    trials: int  # agent trials over the cases (the run's and the new ones)
    worlds: int  # trajectories: each trial in its own world, then in each new one
    components: list[Component] = Field(default_factory=list)  # noise parts, agent first
    not_measured: list[Part] = Field(default_factory=list)  # parts the design did not repeat: in the case part
    case_variance: float | None = None  # between cases (with any part not measured)
    noise_sd: float | None = None  # one verdict's noise: sqrt of the parts' sum
    noise_sd_ci: Interval | None = None
    run_episodes: int = 0  # scored verdicts behind the run's headline rate
    headline_sd: float | None = None  # the headline rate's noise: noise_sd / sqrt(run_episodes)
    headline_sd_ci: Interval | None = None
    resamples: int = 0  # bootstrap resamples fitted
    degenerate: str = ""  # what the fit did where the design or the data leave nothing (or not all) to split
    notes: list[str] = Field(default_factory=list)

    def component(self, part: Part) -> Component | None:
        """The component that holds `part` alone (None where it is merged with another, or not measured)."""
        return next((c for c in self.components if c.parts == [part]), None)

    def share(self, part: Part) -> float | None:
        found = self.component(part)
        return found.share if found is not None else None

    @property
    def judge_dominated(self) -> bool:
        judge = self.share("judge")
        return judge is not None and judge > JUDGE_SHARE_BOUND


class RoleCalls(BaseModel):
    role: str  # agent, emulator, user, ...; judge:<scorer>
    calls: int = 0
    cache_hits: int = 0  # replies the response cache gave (no call made): an identical prompt asked before
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class NoiseCost(BaseModel):
    """The model calls the noise re-runs and re-judgements made (the run's own episodes and verdicts, reused, are
    not counted), per role and per case."""

    cases: int = 0
    episodes: int = 0  # new trials and replays
    judgements: int = 0
    roles: list[RoleCalls] = Field(default_factory=list)
    calls: int = 0
    cache_hits: int = 0
    calls_per_case: float | None = None
    cost_usd: float = 0.0


class NoiseSummary(BaseModel):
    """noise.json."""

    schema_version: str = SCHEMA_VERSION
    run: str  # the run's label
    source: str  # the run as given
    out: str  # the folder of the re-runs
    cases: list[str]  # the cases re-run, in the order chosen
    of_cases: int  # the run's judged cases
    trials: int  # new agent trials per case
    seeds: int  # new worlds per trial
    samples: int  # judgements per trajectory, the first included
    resamples: int  # bootstrap resamples asked for
    emulator: str = ""
    emulator_temperature: float | None = None  # the new worlds' (None: the run's)
    method: str = METHOD
    metrics: list[MetricNoise] = Field(default_factory=list)
    cost: NoiseCost = Field(default_factory=NoiseCost)
    stop_kind: str = ""  # what stopped the re-runs, if anything (the fit is then over what was done)
    stop_reason: str = ""
    not_run: int = 0
    notes: list[str] = Field(default_factory=list)

    def metric(self, scorer: str) -> MetricNoise | None:
        return next((m for m in self.metrics if m.scorer == scorer), None)


class RunNoise(BaseModel):
    """A report's run and its noise.json, where `toolemu noise` wrote one (RUN/noise/noise.json)."""

    run: str
    file: str = ""
    summary: NoiseSummary | None = None

    @property
    def measured(self) -> bool:
        return self.summary is not None

    def metric(self, scorer: str) -> MetricNoise | None:
        return self.summary.metric(scorer) if self.summary is not None else None


def noise_text(m: MetricNoise | None) -> str:
    """Beside a headline: "±x, of which agent a%, emulator e%, judge j%" (x in points of the rate), or why not."""
    if m is None:
        return "not measured"
    if m.headline_sd is None:
        return f"not measured ({m.degenerate})" if m.degenerate else "not measured"
    head = f"±{100 * m.headline_sd:.1f} pts"
    shares = [f"{c.name} {pct(c.share)}" for c in m.components if c.share is not None]
    text = f"{head}, of which {', '.join(shares)}" if shares else f"{head} ({m.degenerate.split('; ')[0] or NO_SPREAD})"
    if m.not_measured:
        text += f"; {', '.join(m.not_measured)} not measured"
    return text
