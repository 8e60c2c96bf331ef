"""Evaluation records (one scorer's verdict on one trajectory) and the generic Score they carry.

The file layout is ToolEmu's: `<trajectories stem>_eval_<eval_type>.jsonl`, with ToolEmu's fields ("Evaluator
Thought", "Overall Qualitative Label", "Overall Quantitative Score", "Evaluator Log Summary", "eval_scores",
"eval_id"), so its `read_eval_results` reads ours. Every scorer, LLM judge or deterministic check, writes the same
record; `Evaluation.score()` is the typed view the report and the library use.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolemu import SCHEMA_VERSION
from toolemu.log.records import EpisodeError

# skipped: the episode itself errored, so there is nothing to judge; not_applicable: the scorer does not apply to
# this case (e.g. the attack scorer on a case without a threat).
EvalStatus = Literal["ok", "error", "skipped", "not_applicable"]
ScoreStatus = Literal["ok", "error", "skipped", "not_applicable", "missing"]


class Sample(BaseModel):
    thought: str
    label: str
    score: float
    summary: str


class Score(BaseModel):
    """A scorer's named verdict on one trajectory: what every report, table and threshold reads."""

    scorer: str  # the registered name, e.g. "safety"
    metric: str  # the value's name, e.g. "ToolCallRisk"
    status: ScoreStatus
    value: float | None = None
    label: str | None = None
    explanation: str = ""  # the scorer's reasoning
    summary: str = ""
    samples: int = 0
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    scorer_identity: dict[str, Any] = Field(default_factory=dict)  # which scorer (and model) produced it

    @property
    def scored(self) -> bool:
        return self.status == "ok" and self.value is not None


class Evaluation(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")

    # ToolEmu's fields.
    evaluator_thought: str = Field("", alias="Evaluator Thought")
    label: str | None = Field(None, alias="Overall Qualitative Label")
    score: float | None = Field(None, alias="Overall Quantitative Score")
    log_summary: str = Field("", alias="Evaluator Log Summary")
    eval_scores: dict[str, float] | None = None  # absent on failures, as ToolEmu's readers expect
    eval_id: int = 0  # the trajectory's position in its file
    # Ours.
    schema_version: str = SCHEMA_VERSION
    eval_type: str
    scorer: str = ""  # the registered scorer's name ("" in records written before scorers had names)
    run_id: str = ""
    case_name: str = ""
    case_idx: int | None = None
    trial: int = 0
    trajectory_started_at: str = ""  # ties the judgement to one version of the episode (resume re-runs)
    status: EvalStatus
    error: EpisodeError | None = None
    samples: list[Sample] = Field(default_factory=list)
    sample_errors: list[EpisodeError] = Field(default_factory=list)
    evaluator: dict[str, Any] = Field(default_factory=dict)  # the judge model's settings, when it has one
    judge_id: str = ""  # hash of `judge` ("" in records written before judges had ids)
    judge: dict[str, Any] = Field(default_factory=dict)  # what the id hashes: model, parameters, prompt, version
    metadata: dict[str, Any] = Field(default_factory=dict)  # scorer-specific: e.g. a deterministic verdict
    usage: dict[str, Any] = Field(default_factory=dict)
    cost_usd: float = 0.0
    started_at: str = ""
    finished_at: str = ""

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.case_name, self.trial, self.trajectory_started_at)

    @property
    def evaluator_model(self) -> str:
        model = self.evaluator.get("model")
        return model if isinstance(model, str) else ""

    def to_record(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", by_alias=True)
        if data["eval_scores"] is None:
            del data["eval_scores"]
        if data["error"] is None:
            del data["error"]  # ToolEmu's records have an `error` key only when the judgement failed
        return data

    def value_of(self, metric: str) -> float | None:
        raw = (self.eval_scores or {}).get(metric)
        try:
            value = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        return value if math.isfinite(value) else None

    def to_score(self, scorer: str, metric: str) -> Score:
        identity = {"scorer": scorer, **({"model": self.evaluator_model} if self.evaluator_model else {})}
        if self.judge_id:
            identity["judge_id"] = self.judge_id
        if self.status in ("skipped", "not_applicable"):
            return Score(
                scorer=scorer,
                metric=metric,
                status=self.status,
                error=_error_text(self.error),
                scorer_identity=identity,
            )
        value = self.value_of(metric)
        if value is None:
            reason = _error_text(self.error) or f"no {metric} score in the evaluator's reply"
            return Score(
                scorer=scorer,
                metric=metric,
                status="error",
                error=reason,
                explanation=self.evaluator_thought,
                scorer_identity=identity,
            )
        return Score(
            scorer=scorer,
            metric=metric,
            status="ok",
            value=value,
            label=self.label or None,
            explanation=self.evaluator_thought,
            summary=self.log_summary,
            samples=len(self.samples) or 1,
            metadata=self.metadata,
            scorer_identity=identity,
        )


def _error_text(error: EpisodeError | None) -> str | None:
    return f"{error.type}: {error.message}" if error else None
