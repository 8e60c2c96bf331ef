"""submission.json: what a submission claims, checked again by `toolemu submit validate`.

Its JSON schema is docs/submission.schema.json; a test keeps it current. To rewrite it after a change:

    python -c "from toolemu.submission.model import schema_json as s; print(s(), end='')" \
        > docs/submission.schema.json
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolemu.reporting.model import MetricStats
from toolemu.scorers import DEFAULT_SCORERS, registered_infos
from toolemu.scorers.base import MetricInfo

SUBMISSION_FILE = "submission.json"
MANIFEST_FILE = "MANIFEST.sha256"
RUNS_DIR = "runs"
SUBMISSION_SCHEMA_VERSION = "1"


def submitted_scorers(judged_by: Iterable[MetricInfo]) -> list[MetricInfo]:
    """The scorers a submission holds, each for every episode: those that declare themselves submitted
    (`MetricInfo.submitted`) and that `toolemu evaluate` runs by default (safety, helpfulness, attack), and any other
    submitted scorer the runs were judged by (`judged_by`); in the report's order."""
    found = {i.name: i for i in registered_infos() if i.submitted and i.name in DEFAULT_SCORERS}
    found |= {i.name: i for i in judged_by if i.submitted and i.name not in found}
    return sorted(found.values(), key=lambda i: (i.order, i.name))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BenchmarkSummary(Strict):
    version: str = Field(description="A released benchmark version (assets/CHANGELOG.md records its hash).")
    hash: str = Field(description="The benchmark's content hash, sha256:<hex>.")
    cases: int = Field(description="How many cases the version has; every one is in the submission.")


class RoleSettings(Strict):
    """A role's model and the settings that change what it does."""

    model: str
    settings: dict[str, Any] = Field(
        default_factory=dict, description="The role's model parameters (temperature, max_tokens, seed, ...)."
    )


class SubmissionSettings(Strict):
    agent: RoleSettings
    agent_type: str
    agent_format: str
    emulator: RoleSettings
    simulator_type: str
    evaluator: RoleSettings
    max_iterations: int | None = None
    gates: list[str] = Field(default_factory=list)


class SubmittedRun(Strict):
    label: str = Field(description="The run's folder name under runs/.")
    run_id: str
    path: str = Field(description="The run's folder, relative to the submission: runs/<label>.")
    episodes: int


class Submission(Strict):
    """One agent's results on one benchmark version: every case, the same number of trials each, one set of agent,
    emulator and judge settings."""

    schema_version: Literal["1"] = SUBMISSION_SCHEMA_VERSION
    toolemu_version: str
    created_at: str
    benchmark: BenchmarkSummary
    settings: SubmissionSettings
    trials: int = Field(description="Trials per case; every case has trials 0 .. trials-1, each once.")
    episodes: int = Field(description="cases x trials.")
    status_counts: dict[str, int] = Field(description="Episodes by how they ended (final_answer, quit, ...).")
    runs: list[SubmittedRun]
    metrics: dict[str, MetricStats] = Field(
        description="Per submitted scorer (safety, helpfulness, attack, and any scorer whose MetricInfo declares "
        "itself submitted): n, mean with its bootstrap 95% CI, std, histogram, the binarised rate with its CI (safe / "
        "helpful / attack success), failure incidence (where the scorer declares a failure rule: safety <= 1), failed "
        "judgements and cases outside the scorer's scope, over all episodes, as toolemu's report computes them."
    )
    pass_k: dict[str, list[float | None]] = Field(
        description="Per scorer: pass^k for k = 1..trials (the chance that k trials of a case all pass)."
    )
    manifest: str = Field(MANIFEST_FILE, description="sha256 sums of every file of the submission.")


def schema_json() -> str:
    return json.dumps(Submission.model_json_schema(), indent=2, ensure_ascii=False) + "\n"
