"""The report's data: what report.json holds, and what the console table, CSV and HTML are drawn from.

Every text field that came from a model (thoughts, observations, answers, judgements) is untrusted: renderers
must escape it, never interpret it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from toolemu import SCHEMA_VERSION

Metric = Literal["ToolCallRisk", "Helpfulness"]
METRICS: tuple[Metric, ...] = ("ToolCallRisk", "Helpfulness")
# Episode statuses; "unknown" for ToolEmu dumps, which do not record one.
EPISODE_STATUSES = ("final_answer", "quit", "max_iterations", "error", "unknown")


class Judgement(BaseModel):
    """One evaluator's verdict on one episode (the aggregate when several samples were drawn)."""

    # missing: no evaluation record; skipped: the episode errored, so there was nothing to judge
    status: Literal["ok", "error", "missing", "skipped"]
    score: float | None = None  # 0..3; the mean over samples
    label: str | None = None  # the majority label
    thought: str = ""
    summary: str = ""
    samples: int = 0
    error: str | None = None


class StepView(BaseModel):
    thought: str = ""
    tool: str
    tool_input: str  # JSON text
    observation: str  # JSON text
    emulator_thought: str = ""  # shown behind a toggle
    emulator_summary: str = ""


class EpisodeView(BaseModel):
    """One (case, trial) of one run, as the trace viewer shows it."""

    run: str  # the run's label (one per dump); "per agent" groups by it
    case_name: str
    case_idx: int
    trial: int
    toolkits: list[str]
    risk_categories: list[str]
    status: str  # one of EPISODE_STATUSES
    instruction: str
    final_answer: str = ""
    error: str | None = None
    steps: list[StepView] = Field(default_factory=list)
    safety: Judgement
    helpfulness: Judgement


class MetricStats(BaseModel):
    """ToolEmu's numbers for one metric over a group, plus CIs and the failed-evaluation count."""

    metric: Metric
    n: int  # scored episodes
    mean: float | None = None
    std: float | None = None  # population std, as numpy's default
    mean_ci: tuple[float, float] | None = None  # bootstrap 95%
    histogram: dict[str, int] = Field(default_factory=dict)  # score (as text) -> count
    binarized_rate: float | None = None  # share of scores >= 2
    binarized_ci: tuple[float, float] | None = None
    failure_incidence: float | None = None  # ToolCallRisk only: share of scores <= 1
    failure_ci: tuple[float, float] | None = None
    eval_failed: int = 0  # evaluations that errored or are missing: counted, never dropped


class GroupStats(BaseModel):
    run: str
    by: Literal["all", "toolkit", "risk_category", "trial"]
    key: str  # "all", a toolkit name, a risk category, or a trial number
    episodes: int
    status_counts: dict[str, int]  # over EPISODE_STATUSES
    safety: MetricStats
    helpfulness: MetricStats


class PassK(BaseModel):
    """pass^k for k = 1..n trials: the mean over cases of C(c, k) / C(n, k)."""

    run: str
    metric: Metric
    trials: int  # n
    cases: int
    values: list[float | None]  # values[k-1] = pass^k; None where no case has k scored trials


class PairedDiff(BaseModel):
    """Run b minus run a on the cases (and trials) both scored."""

    a: str
    b: str
    metric: Metric
    pairs: int
    mean_diff: float | None = None
    ci: tuple[float, float] | None = None


class RunInfo(BaseModel):
    run: str
    source: str  # the dump's path
    format: Literal["toolemu", "ours"]
    agent: str  # agent model and type, when known
    emulator: str = ""
    evaluator: str = ""


class Report(BaseModel):
    schema_version: str = SCHEMA_VERSION
    generated_at: str
    runs: list[RunInfo]
    groups: list[GroupStats]
    pass_k: list[PassK] = Field(default_factory=list)
    paired: list[PairedDiff] = Field(default_factory=list)
    episodes: list[EpisodeView] = Field(default_factory=list)
