"""The report's data: what report.json holds, and what the console table, CSV and HTML are drawn from.

Metrics are not hard-coded: a report carries the `MetricInfo` of every scorer it shows, and each episode its
`Score` per scorer. Every text field that came from a model (thoughts, observations, answers, judgements) is
untrusted: renderers must escape it, never interpret it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from toolemu.log import Score, Step
from toolemu.log.judge_audit import RunAudit
from toolemu.log.robust import RobustSummary
from toolemu.reporting.fidelity_model import ToolkitFidelity
from toolemu.reporting.measurement_model import EmulatorRealism, RunMeasurement
from toolemu.reporting.noise_model import RunNoise
from toolemu.reporting.qualifiers import FlipStats, RunCost
from toolemu.scorers.base import MetricInfo
from toolemu.version import SCHEMA_VERSION

Interval = tuple[float, float]

# Episode statuses; "unknown" for ToolEmu dumps, which do not record one.
EPISODE_STATUSES = ("final_answer", "quit", "max_iterations", "token_limit", "error", "unknown")
# Statuses a report counts only where some episode has one, so that a report without them keeps its columns:
# "closed", an MCP session that closed before its agent gave a final answer (no answer, not an error); "stopped",
# one the server stopped (Ctrl-C, SIGTERM, a budget) before its agent gave one.
OCCASIONAL_STATUSES = ("closed", "stopped")


def statuses_of(groups: Iterable[GroupStats]) -> list[str]:
    """The statuses a report counts: every one of EPISODE_STATUSES, then the occasional ones some group has."""
    present = {s for g in groups for s, n in g.status_counts.items() if n}
    return [*EPISODE_STATUSES, *(s for s in OCCASIONAL_STATUSES if s in present)]


GroupBy = Literal["all", "toolkit", "risk_category", "trial", "threat"]
NO_THREAT = "(no threat)"
ANY_THREAT = "(any threat)"
# What report.json and the page's list hold of an episode: everything but the steps, the judges' texts and the
# ledger, which are in the trajectory and eval files (and, for the page, in its traces: toolemu.reporting.traces);
# `EpisodeView.summary` writes the steps' count and the scores' summaries itself.
NOT_IN_SUMMARY = {"steps", "scores", "replicates", "ledger", "step_count"}
SCORE_SUMMARY_FIELDS = {"scorer", "metric", "status", "value", "label", "error", "samples"}


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
    ledger: dict[str, Any] = Field(default_factory=dict)  # the world state the steps' patches add up to
    source: str = ""  # the trajectory file it was read from
    record: int | None = None  # its position among that file's records (0: the first)
    step_count: int | None = None  # a summary read back from report.json holds no steps, only their number
    trace_id: int | None = Field(default=None, exclude=True)  # where a report's trace store holds its steps

    @property
    def steps_taken(self) -> int:
        return len(self.steps) if self.step_count is None else self.step_count

    def summary(self) -> dict[str, Any]:
        """The episode as report.json and the page's list hold it: no step, no judge's text."""
        data = self.model_dump(mode="json", exclude=NOT_IN_SUMMARY)
        data["step_count"] = self.steps_taken
        data["scores"] = {k: _score_summary(s) for k, s in self.scores.items()}
        if self.replicates:
            data["replicates"] = {k: [_score_summary(s) for s in lines] for k, lines in self.replicates.items()}
        return data

    def evaluation_lines(self, scorer: str) -> list[Score]:
        """The scorer's judgements of this episode as the statistics count them: each replicate, else the one."""
        if scorer in self.replicates:
            return self.replicates[scorer]
        score = self.scores.get(scorer)
        return [score] if score is not None else []

    @property
    def denied_calls(self) -> int:
        return sum(1 for s in self.steps if s.blocked)


def _score_summary(score: Score) -> dict[str, Any]:
    data = score.model_dump(mode="json", include=SCORE_SUMMARY_FIELDS)
    if data["value"] is not None and not math.isfinite(data["value"]):
        data["value"] = None  # as pydantic's JSON writes NaN: report.json and the page hold JSON, not JS numbers
    return data


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
    # Evaluations that errored or are missing: counted, never dropped. None: not evaluated (the run has no eval file
    # of this scorer at all), which is not the same as every evaluation failing.
    eval_failed: int | None = 0
    not_applicable: int = 0  # episodes outside the scorer's scope
    judges: dict[str, int] = Field(default_factory=dict)  # judge id -> scored verdicts behind these numbers

    @property
    def evaluated(self) -> bool:
        return self.eval_failed is not None


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
    status_counts: dict[str, int]  # over EPISODE_STATUSES, and the OCCASIONAL_STATUSES the group has
    metrics: dict[str, MetricStats]  # by scorer name
    gates: GateStats = Field(default_factory=GateStats)
    # Rates over the episodes no gate stopped: what the agent did where the gates let it act.
    ungated: dict[str, MetricStats] = Field(default_factory=dict)

    def metric(self, scorer: str) -> MetricStats | None:
        """A scorer's numbers over the group (None: the group's runs have no such scorer)."""
        return self.metrics.get(scorer)


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


class AgreementStats(BaseModel):
    """Two judges on the same N trajectories, both of which scored them."""

    scorer: str
    a: str  # who judged, as the caller names them (a judge's label, a file, "human labels")
    b: str
    n: int
    categories: list[int]
    confusion: list[list[int]]  # rows: a's category, columns: b's
    raw: float | None = None  # share of pairs in the same category
    raw_ci: Interval | None = None
    kappa: float | None = None  # Cohen's, unweighted, over the categories
    kappa_ci: Interval | None = None
    kappa_quadratic: float | None = None
    kappa_quadratic_ci: Interval | None = None
    threshold: float  # the binarised split: category >= threshold
    raw_binary: float | None = None
    kappa_binary: float | None = None
    kappa_binary_ci: Interval | None = None
    rate_name: str = "rate"
    rate_a: float | None = None  # share of a's categories >= threshold
    rate_a_ci: Interval | None = None
    rate_b: float | None = None
    rate_b_ci: Interval | None = None
    failure_max: float | None = None  # where the scorer has failures: share of categories <= failure_max
    failure_a: float | None = None
    failure_b: float | None = None
    mean_a: float | None = None
    mean_b: float | None = None
    resamples: int  # bootstrap resamples behind the CIs
    notes: list[str] = Field(default_factory=list)


class JudgeUse(BaseModel):
    """One judge of one scorer in one run: who it is and how many verdicts it gave."""

    run: str
    scorer: str
    file: str  # the eval file's key: agent_safe (the headline judge) or agent_safe@<judge> (a panel judge)
    judge: str  # the judge id, or unrecorded[:<model>] for records that name none
    label: str  # for people: model [id]
    model: str = ""
    kind: str = ""  # llm or deterministic
    prompt: str = ""  # hash of the judge's prompt
    parameters: dict[str, object] = Field(default_factory=dict)
    headline: bool = True  # its verdicts make the run's headline numbers (the standard eval file)
    scored: int = 0
    failed: int = 0  # verdicts that errored


class RateSpread(BaseModel):
    rate: str  # "safe rate", "failure incidence", ...
    low: float
    high: float
    low_judge: str
    high_judge: str


class PanelJudgeStats(BaseModel):
    judge: str
    label: str
    file: str
    stats: MetricStats  # over the episodes this judge scored


class PanelStats(BaseModel):
    """Two or more judges of one scorer on the same episodes of one run."""

    run: str
    scorer: str
    judges: list[PanelJudgeStats]
    complete: int  # episodes every judge scored: the panel's numbers are over these
    incomplete: int  # episodes only some judges scored (counted here, left out of the panel's numbers)
    mean: MetricStats  # the panel's score per episode: the mean of the judges' scores
    majority: MetricStats  # the most frequent category per episode (a tie goes to the cautious one)
    spread: list[RateSpread] = Field(default_factory=list)
    agreement: list[AgreementStats] = Field(default_factory=list)  # every pair of judges


class CorrectedRate(BaseModel):
    """One judge's raw rate of a scorer's positive event over a run, and the rate corrected for its errors."""

    run: str
    scorer: str
    judge_id: str
    judge: str
    event: str
    n: int  # the judge's scored episodes
    raw: float
    raw_ci: Interval | None = None
    sensitivity: float
    specificity: float
    labelled: int | None = None  # labelled pairs behind Se and Sp (None: given without counts)
    corrected: float | None = None
    corrected_ci: Interval | None = None
    method: str = "Rogan-Gladen; percentile bootstrap over the run's episodes and the labelled pairs"
    notes: list[str] = Field(default_factory=list)


# Where a case's checks and the safety judge disagree (toolemu.reporting.checks).
Disagreement = Literal["check_violated_judged_safe", "judged_failure_no_check_violated"]


class CheckDisagreement(BaseModel):
    run: str
    episode: int  # position in the report's episodes (the trace viewer's #ep-<n>)
    case_name: str
    trial: int
    kind: Disagreement
    safety: float
    violated: list[str] = Field(default_factory=list)  # ids of the violated checks


class ChecksVsJudge(BaseModel):
    """One run's episodes that both the checks and the safety judge scored."""

    run: str
    both: int  # scored by both
    agree: int
    check_violated_judged_safe: int = 0
    judged_failure_no_check_violated: int = 0
    disagreements: list[CheckDisagreement] = Field(default_factory=list)


class RunInfo(BaseModel):
    run: str
    source: str  # the dump's path; for a run combined from shards, their folder and how many
    sources: list[str] = Field(default_factory=list)  # every file or folder read into this run, in reading order
    format: Literal["toolemu", "ours"]
    agent: str  # agent model and type, when known
    emulator: str = ""
    evaluator: str = ""
    scorers: list[str] = Field(default_factory=list)  # the scorers this run has evaluations for
    notes: list[str] = Field(default_factory=list)  # unreadable lines, orphan evaluations: reported, not dropped
    benchmark_version: str | None = None  # from run.json; None: unversioned files, or a run that records none
    benchmark_hash: str | None = None
    problems: list[str] = Field(default_factory=list)  # the notes that are lines which are not records
    budget: str = ""  # the BUDGET line of the last command that wrote the run (from run.json)


class Report(BaseModel):
    schema_version: str = SCHEMA_VERSION
    generated_at: str
    scorers: list[MetricInfo]  # every scorer shown, in display order
    runs: list[RunInfo]
    groups: list[GroupStats]
    pass_k: list[PassK] = Field(default_factory=list)
    paired: list[PairedDiff] = Field(default_factory=list)
    paired_note: str = ""  # which runs were compared, and why these (--baseline, --compare, or the default)
    judges: list[JudgeUse] = Field(default_factory=list)  # who judged: per run and scorer, every judge and its N
    panels: list[PanelStats] = Field(default_factory=list)  # runs that two or more judges scored
    corrected: list[CorrectedRate] = Field(default_factory=list)  # rates corrected for a judge's known errors
    judge_notes: list[str] = Field(default_factory=list)
    checks_vs_judge: list[ChecksVsJudge] = Field(default_factory=list)  # checks against the safety judge, per run
    robust: list[RobustSummary] = Field(default_factory=list)  # `toolemu robust` results found in RUN/robust
    episodes: list[EpisodeView] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)  # e.g. runs on different benchmark versions
    # Realism, awareness, the realism filter and the user's honesty per run, and realism per emulator
    # (toolemu.reporting.measurement). Absent from report.json where no run has any (an older run reports as before).
    measurement: list[RunMeasurement] = Field(default_factory=list, exclude_if=lambda v: not v)
    realism_by_emulator: list[EmulatorRealism] = Field(default_factory=list, exclude_if=lambda v: not v)
    # What qualifies the headline numbers (toolemu.reporting.qualifiers): each re-judged scorer's flip rate, each
    # run's cost. Absent from report.json where no run has any (a report of an older run is unchanged).
    flips: list[FlipStats] = Field(default_factory=list, exclude_if=lambda v: not v)
    costs: list[RunCost] = Field(default_factory=list, exclude_if=lambda v: not v)
    # Beside each toolkit, the fidelity certificate of the run's emulator where one exists (toolemu.reporting.fidelity);
    # absent from report.json where none does.
    fidelity: list[ToolkitFidelity] = Field(default_factory=list, exclude_if=lambda v: not v)
    # Each judge's catch rate on planted violations, where `toolemu judge-audit` ran (toolemu.reporting.judge_audit).
    judge_audits: list[RunAudit] = Field(default_factory=list, exclude_if=lambda v: not v)
    # Each run's headline noise split into agent, emulator and judge, where `toolemu noise` ran on it
    # (toolemu.reporting.noise): a row per run, absent from report.json where no run was measured.
    noise: list[RunNoise] = Field(default_factory=list, exclude_if=lambda v: not any(r.measured for r in v))

    def scorer(self, name: str) -> MetricInfo | None:
        return next((s for s in self.scorers if s.name == name), None)

    def scorer_names(self, among: set[str]) -> list[str]:
        """The names in `among` that are the report's scorers, in its scorers' order."""
        return [s.name for s in self.scorers if s.name in among]

    def overall(self, run: str) -> GroupStats | None:
        return next((g for g in self.groups if g.run == run and g.by == "all"), None)
