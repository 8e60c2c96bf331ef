"""The report's data: what report.json holds, and what the console table, CSV and HTML are drawn from.

Metrics are not hard-coded: a report carries the `MetricInfo` of every scorer it shows, and each episode its
`Score` per scorer. Every text field that came from a model (thoughts, observations, answers, judgements) is
untrusted: renderers must escape it, never interpret it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from toolemu import SCHEMA_VERSION
from toolemu.log import Score, Step
from toolemu.scorers.base import MetricInfo

# Episode statuses; "unknown" for ToolEmu dumps, which do not record one.
EPISODE_STATUSES = ("final_answer", "quit", "max_iterations", "token_limit", "error", "unknown")
GroupBy = Literal["all", "toolkit", "risk_category", "trial", "threat"]
NO_THREAT = "(no threat)"
ANY_THREAT = "(any threat)"


class EpisodeView(BaseModel):
    """One (case, trial) of one run, as the trace viewer shows it."""

    run: str  # the run's label (one per dump); "per agent" groups by it
    case_name: str
    case_idx: int
    trial: int
    toolkits: list[str]
    risk_categories: list[str]
    threat: str | None = None  # the case's threat kind, for security cases
    status: str  # one of EPISODE_STATUSES
    instruction: str
    final_answer: str = ""
    error: str | None = None
    steps: list[Step] = Field(default_factory=list)
    scores: dict[str, Score] = Field(default_factory=dict)  # by scorer name; absent: the run has no such scorer
    # Every evaluation line, by scorer, where a trajectory was judged more than once (ToolEmu's --num-replicates):
    # `scores` holds their mean, and the statistics pool these lines one by one, as ToolEmu's reader does.
    replicates: dict[str, list[Score]] = Field(default_factory=dict)

    def evaluation_lines(self, scorer: str) -> list[Score]:
        """The scorer's judgements of this episode as the statistics count them: each replicate, else the one."""
        if scorer in self.replicates:
            return self.replicates[scorer]
        score = self.scores.get(scorer)
        return [score] if score is not None else []

    @property
    def denied_calls(self) -> int:
        return sum(1 for s in self.steps if s.blocked)


class MetricStats(BaseModel):
    """ToolEmu's numbers for one scorer over a group, plus CIs and the failed-evaluation count."""

    scorer: str
    n: int  # scored evaluation lines: one per episode, or each replicate (pooled as ToolEmu pools them)
    mean: float | None = None
    std: float | None = None  # population std, as numpy's default
    mean_ci: tuple[float, float] | None = None  # bootstrap 95%
    histogram: dict[str, int] = Field(default_factory=dict)  # value (as text) -> count
    binarized_rate: float | None = None  # share of values >= the scorer's threshold
    binarized_ci: tuple[float, float] | None = None
    failure_incidence: float | None = None  # where the scorer defines failures (safety: share <= 1)
    failure_ci: tuple[float, float] | None = None
    eval_failed: int = 0  # evaluations that errored or are missing: counted, never dropped
    not_applicable: int = 0  # episodes outside the scorer's scope


class GateStats(BaseModel):
    """What gates decided over a group's tool calls."""

    calls: int = 0
    allowed: int = 0  # every gate allowed (or no gate spoke)
    warned: int = 0
    denied_pre_call: int = 0  # blocked before the tool ran
    denied_post_call: int = 0  # the tool ran, its output was withheld
    episodes_with_denials: int = 0
    top_reasons: list[tuple[str, int]] = Field(default_factory=list)  # "gate: reason" -> count, most first


class GroupStats(BaseModel):
    run: str
    by: GroupBy
    key: str  # "all", a toolkit name, a risk category, a trial number or a threat kind
    episodes: int
    status_counts: dict[str, int]  # over EPISODE_STATUSES
    metrics: dict[str, MetricStats]  # by scorer name
    gates: GateStats = Field(default_factory=GateStats)
    # Rates over the episodes no gate stopped: what the agent did where the gates let it act.
    ungated: dict[str, MetricStats] = Field(default_factory=dict)


class PassK(BaseModel):
    """pass^k for k = 1..n trials: the mean over cases of C(c, k) / C(n, k)."""

    run: str
    scorer: str
    trials: int  # n
    cases: int
    values: list[float | None]  # values[k-1] = pass^k; None where no case has k scored trials


class PairedDiff(BaseModel):
    """Run b minus run a on the cases (and trials) both scored."""

    a: str
    b: str
    scorer: str
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
    scorers: list[str] = Field(default_factory=list)  # the scorers this run has evaluations for
    notes: list[str] = Field(default_factory=list)  # unreadable lines, orphan evaluations: reported, not dropped


class Report(BaseModel):
    schema_version: str = SCHEMA_VERSION
    generated_at: str
    scorers: list[MetricInfo]  # every scorer shown, in display order
    runs: list[RunInfo]
    groups: list[GroupStats]
    pass_k: list[PassK] = Field(default_factory=list)
    paired: list[PairedDiff] = Field(default_factory=list)
    episodes: list[EpisodeView] = Field(default_factory=list)

    def scorer(self, name: str) -> MetricInfo | None:
        return next((s for s in self.scorers if s.name == name), None)

    def overall(self, run: str) -> GroupStats | None:
        return next((g for g in self.groups if g.run == run and g.by == "all"), None)
