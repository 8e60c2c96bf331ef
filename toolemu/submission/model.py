"""submission.json: what a submission claims, checked again by `toolemu submit validate`.

The schema is closed: every object forbids keys it does not name, numbers are JSON numbers (never strings or
booleans: `validate` reads the file in pydantic's strict mode), finite, and counts are whole and not negative; every
text and list has a bound. Its JSON schema is docs/submission.schema.json; a test keeps it current. To rewrite it
after a change:

    python -c "from toolemu.submission.model import schema_json as s; print(s(), end='')" \
        > docs/submission.schema.json
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from toolemu.scorers import DEFAULT_SCORERS, registered_infos
from toolemu.scorers.base import MetricInfo

SUBMISSION_FILE = "submission.json"
MANIFEST_FILE = "MANIFEST.sha256"
RUNS_DIR = "runs"
SUBMISSION_SCHEMA_VERSION = "2"  # 2: the closed schema, each run's files listed

MAX_COUNT = 2**53  # the largest integer every JSON reader holds exactly
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # folder names, labels, scorer and agent type names
NAME_RULE = "a name of letters, digits, '.', '_' and '-' that starts with a letter or digit (at most 64)"
RECORD_FILE_PATTERN = r"^(run\.json|trajectories[A-Za-z0-9._@-]{0,160}\.jsonl)$"  # toolemu.submission.files decides
PRINTABLE = r"^[^\x00-\x1f\x7f]*$"  # no control characters: each text stays on its line
HASH_PATTERN = r"^sha256:[0-9a-f]{64}$"
VERSION_PATTERN = r"^[0-9][0-9A-Za-z.+_-]{0,63}$"
# What each pattern asks for, in words (a refusal says this, not the expression).
PATTERNS = {
    NAME_PATTERN: NAME_RULE,
    PRINTABLE: "a text with no control characters",
    HASH_PATTERN: "sha256:<64 hex digits>",
    VERSION_PATTERN: "a version (0.1.0)",
    RECORD_FILE_PATTERN: "a record file name (run.json or trajectories*.jsonl)",
}

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
Text = Annotated[str, StringConstraints(max_length=300, pattern=PRINTABLE)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Share = Annotated[float, Field(ge=0.0, le=1.0)]  # a rate, an incidence, pass^k, or an end of their CIs
Number = Annotated[float, Field(ge=-1e12, le=1e12)]  # a mean or a std on a scorer's scale
Hash = Annotated[str, StringConstraints(pattern=HASH_PATTERN)]
RecordFile = Annotated[str, StringConstraints(pattern=RECORD_FILE_PATTERN)]


def _iso_time(value: str) -> str:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if len(value) > 40 or parsed is None or parsed.tzinfo is None:
        raise ValueError("an ISO 8601 time with its offset (2025-01-31T12:00:00+00:00)")
    return value


Time = Annotated[str, AfterValidator(_iso_time)]
Version = Annotated[str, StringConstraints(pattern=VERSION_PATTERN)]


def submitted_scorers(judged_by: Iterable[MetricInfo]) -> list[MetricInfo]:
    """The scorers a submission holds, each for every episode: those that declare themselves submitted
    (`MetricInfo.submitted`) and that `toolemu evaluate` runs by default (safety, helpfulness, attack), and any other
    submitted scorer the runs were judged by (`judged_by`); in the report's order."""
    found = {i.name: i for i in registered_infos() if i.submitted and i.name in DEFAULT_SCORERS}
    found |= {i.name: i for i in judged_by if i.submitted and i.name not in found}
    return sorted(found.values(), key=lambda i: (i.order, i.name))


class Closed(BaseModel):
    """Unknown keys are refused and NaN or infinity is no number; `validate` also reads in strict mode."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class BenchmarkSummary(Closed):
    version: Version = Field(description="A released benchmark version (assets/CHANGELOG.md records its hash).")
    hash: Hash = Field(description="The benchmark's content hash, sha256:<hex>.")
    cases: Count = Field(description="How many cases the version has; every one is in the submission.")


class ModelSettings(Closed):
    """The parameters of a role's model that change what it does (null: not set)."""

    temperature: Annotated[float, Field(ge=0.0, le=100.0)] | None = None
    max_tokens: Count | None = None
    seed: Annotated[int, Field(ge=-(2**63), le=2**64)] | None = None
    base_url: Text | None = None
    structured: Text | None = None


class RoleSettings(Closed):
    """A role's model and the settings that change what it does."""

    model: Text
    settings: ModelSettings = Field(default_factory=ModelSettings)


class SubmissionSettings(Closed):
    agent: RoleSettings
    agent_type: Name
    agent_format: Name
    emulator: RoleSettings
    simulator_type: Name
    evaluator: RoleSettings
    max_iterations: Count | None = None
    gates: list[Text] = Field(default_factory=list, max_length=100)


class SubmittedRun(Closed):
    label: Name = Field(description="The run's folder name under runs/.")
    run_id: Text
    path: Text = Field(description="The run's folder, relative to the submission: runs/<label>.")
    episodes: Count
    files: list[RecordFile] = Field(
        max_length=200,
        description="Every file of the run's folder, sorted: run.json, trajectories.jsonl and the evaluation (and "
        "set-aside errors) files beside it. The folder holds exactly these.",
    )

    @model_validator(mode="after")
    def _where(self) -> SubmittedRun:
        if self.path != f"{RUNS_DIR}/{self.label}":
            raise ValueError(f"path {RUNS_DIR}/{self.label} (its label under {RUNS_DIR}/)")
        if self.files != sorted(set(self.files)) or not {"run.json", "trajectories.jsonl"} <= set(self.files):
            raise ValueError("files sorted, each once, with run.json and trajectories.jsonl among them")
        return self


class SubmittedMetric(Closed):
    """One scorer's numbers over all the submission's episodes (toolemu.reporting's MetricStats, closed)."""

    scorer: Name
    n: Count = Field(description="Scored evaluations: one per episode.")
    mean: Number | None = None
    std: Number | None = Field(None, description="Population std, as numpy's default.")
    mean_ci: tuple[Number, Number] | None = Field(None, description="Bootstrap 95% CI of the mean.")
    histogram: dict[Annotated[str, StringConstraints(max_length=32, pattern=PRINTABLE)], Count] = Field(
        default_factory=dict, max_length=1000, description="Value (as text) -> count."
    )
    binarized_rate: Share | None = Field(None, description="The share of values >= the scorer's threshold.")
    binarized_ci: tuple[Share, Share] | None = None
    failure_incidence: Share | None = Field(None, description="Where the scorer declares failures (safety <= 1).")
    failure_ci: tuple[Share, Share] | None = None
    eval_failed: Count = Field(0, description="Evaluations that errored or are missing: counted, never dropped.")
    not_applicable: Count = Field(0, description="Episodes outside the scorer's scope.")
    judges: dict[Annotated[str, StringConstraints(max_length=200, pattern=PRINTABLE)], Count] = Field(
        default_factory=dict, max_length=100, description="Judge id -> scored verdicts behind these numbers."
    )


class Submission(Closed):
    """One agent's results on one benchmark version: every case, the same number of trials each, one set of agent,
    emulator and judge settings."""

    schema_version: Literal["2"] = SUBMISSION_SCHEMA_VERSION
    toolemu_version: Version
    created_at: Time = Field(description="When prepare wrote it: an ISO 8601 time with its offset.")
    benchmark: BenchmarkSummary
    settings: SubmissionSettings
    trials: Count = Field(description="Trials per case; every case has trials 0 .. trials-1, each once.")
    episodes: Count = Field(description="cases x trials.")
    status_counts: dict[Name, Count] = Field(
        max_length=20, description="Episodes by how they ended (final_answer, quit, ...)."
    )
    runs: list[SubmittedRun] = Field(min_length=1, max_length=1000)
    metrics: dict[Name, SubmittedMetric] = Field(
        max_length=50,
        description="Per submitted scorer (safety, helpfulness, attack, and any scorer whose MetricInfo declares "
        "itself submitted): n, mean with its bootstrap 95% CI, std, histogram, the binarised rate with its CI (safe / "
        "helpful / attack success), failure incidence (where the scorer declares a failure rule: safety <= 1), failed "
        "judgements and cases outside the scorer's scope, over all episodes, as toolemu's report computes them.",
    )
    pass_k: dict[Name, Annotated[list[Share | None], Field(max_length=10_000)]] = Field(
        max_length=50, description="Per scorer: pass^k for k = 1..trials (the chance that k trials of a case all pass)."
    )
    manifest: Literal["MANIFEST.sha256"] = Field(MANIFEST_FILE, description="sha256 sums of every other file.")

    @model_validator(mode="after")
    def _labels_once(self) -> Submission:
        labels = [run.label for run in self.runs]
        if len(set(labels)) != len(labels):
            raise ValueError("each run label once")
        return self


def schema_json() -> str:
    return json.dumps(Submission.model_json_schema(), indent=2, ensure_ascii=False) + "\n"
