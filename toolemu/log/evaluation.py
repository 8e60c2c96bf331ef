"""Evaluation records (one scorer's verdict on one trajectory) and the generic Score they carry.

The file layout is ToolEmu's: `<trajectories stem>_eval_<eval_type>.jsonl`, with ToolEmu's fields ("Evaluator
Thought", "Overall Qualitative Label", "Overall Quantitative Score", "Evaluator Log Summary", "eval_scores",
"eval_id"), so its `read_eval_results` reads ours. Every scorer, LLM judge or deterministic check, writes the same
record; `Evaluation.score()` is the typed view the report and the library use.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from toolemu.errors import InputError
from toolemu.log.model import ModelDescription
from toolemu.log.records import EpisodeError, Int64
from toolemu.log.usage import Cost, Usage
from toolemu.version import SCHEMA_VERSION

# skipped: the episode itself errored, so there is nothing to judge; not_applicable: the scorer does not apply to
# this case (e.g. the attack scorer on a case without a threat).
EvalStatus = Literal["ok", "error", "skipped", "not_applicable"]
ScoreStatus = Literal["ok", "error", "skipped", "not_applicable", "missing"]


MAX_SAMPLES = 100  # a judge's samples per trajectory, as its records say (the CLI's --num-eval-samples bound)
ID_LENGTH = 12  # hex digits: short enough to read in a table, long enough never to collide in practice


def short_hash(data: Any, length: int = ID_LENGTH) -> str:
    """sha256 of canonical JSON (sorted keys, no spaces): the same data gives the same hash in any process."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


class JudgeIdentity(BaseModel):
    """Which judge made a verdict: the parts that decide its verdicts; `id` is their hash.

    An LLM judge is its model (`ModelOptions.describe()`, which holds no secret), its parameters (the rest of that,
    plus the samples drawn per trajectory), its prompt (a hash of the system text, the reply schema and the task
    template) and the record schema version; a deterministic scorer is its name and version."""

    model_config = ConfigDict(frozen=True)

    scorer: str
    version: str
    kind: Literal["llm", "deterministic"]
    model: str = ""  # e.g. openai:gpt-4o-mini ("" for a deterministic scorer)
    parameters: dict[str, Any] = {}  # the rest of ModelOptions.describe(), plus samples
    prompt: str = ""
    schema_version: str = SCHEMA_VERSION

    @property
    def id(self) -> str:
        return short_hash(self.model_dump(mode="json"))

    @property
    def label(self) -> str:
        """For people: the model (or the scorer) and the id."""
        return f"{self.model or self.scorer} [{self.id}]"

    @property
    def samples(self) -> int | None:
        """How many verdicts it drew per trajectory, where it says (an LLM judge's parameters do)."""
        value = self.parameters.get("samples")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def display_model(self) -> str:
        """The judge's model, or for a deterministic scorer its name."""
        return self.model or (f"{self.scorer} (deterministic)" if self.kind == "deterministic" else "")


def _none_if_empty(value: Any) -> Any:
    return None if value == {} else value


class JudgeSampling(BaseModel):
    """How an LLM judge drew its verdicts: the temperature and seed its provider was sent (None: the provider's own
    default temperature, or a provider that takes no seed) and the samples it drew per trajectory."""

    temperature: float | None = None
    seed: int | None = None
    samples: int = 1


class Sample(BaseModel):
    thought: str
    label: str
    score: float
    summary: str


class Score(BaseModel):
    """A scorer's verdict on one trajectory. A scorer returns the first fields (value, label, explanation, metadata;
    an LLM judge adds its summary); the scoring runner writes it as an Evaluation, and every report, table and
    threshold reads it back (`Evaluation.to_score`) with its status and who judged it."""

    value: float | None = None
    label: str | None = None
    explanation: str = ""  # the scorer's reasoning
    metadata: dict[str, Any] = Field(default_factory=dict)
    summary: str = ""
    # As a record is read back:
    scorer: str = ""  # the registered name, e.g. "safety"
    metric: str = ""  # the value's name, e.g. "ToolCallRisk"
    status: ScoreStatus = "ok"
    samples: int = 0
    error: str | None = None
    judge_id: str = ""  # the judge's identity hash ("" in records written before judges had ids)
    judge: JudgeIdentity | None = None  # which judge made it (records before judge ids: the evaluator's model only)

    @property
    def scored(self) -> bool:
        return self.status == "ok" and self.value is not None

    @property
    def judge_model(self) -> str:
        return self.judge.model if self.judge is not None else ""


class Evaluation(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")

    # ToolEmu's fields.
    evaluator_thought: str = Field("", alias="Evaluator Thought")
    label: str | None = Field(None, alias="Overall Qualitative Label")
    score: float | None = Field(None, alias="Overall Quantitative Score")
    log_summary: str = Field("", alias="Evaluator Log Summary")
    eval_scores: dict[str, float] | None = None  # absent on failures, as ToolEmu's readers expect
    eval_id: Int64 = 0  # the trajectory's position in its file
    # Ours.
    schema_version: str = SCHEMA_VERSION
    eval_type: str
    scorer: str = ""  # the registered scorer's name ("" in records written before scorers had names)
    run_id: str = ""
    case_name: str = ""
    case_idx: Int64 | None = None
    trial: Int64 = 0
    trajectory_started_at: str = ""  # ties the judgement to one version of the episode (resume re-runs)
    status: EvalStatus
    error: EpisodeError | None = None
    samples: list[Sample] = Field(default_factory=list)
    sample_errors: list[EpisodeError] = Field(default_factory=list)
    evaluator: ModelDescription | None = None  # the judge model's settings, when it has one
    judge_id: str = ""  # hash of `judge` ("" in records written before judges had ids)
    judge: JudgeIdentity | None = None  # what the id hashes: model, parameters, prompt, version
    metadata: dict[str, Any] = Field(default_factory=dict)  # scorer-specific: e.g. a deterministic verdict
    usage: Usage = Field(default_factory=Usage)
    cost_usd: Cost = 0.0
    started_at: str = ""
    finished_at: str = ""
    # An LLM judge's sampling (absent for a deterministic scorer, and in records written before it was kept).
    sampling: JudgeSampling | None = Field(default=None, exclude_if=lambda v: v is None)
    # 0: the headline judgement; k >= 1: the k-th re-judgement (`toolemu evaluate --rejudge`), kept in its own
    # `_eval_<type>#rejudge.jsonl` so that the headline numbers never pool it. Absent when 0.
    rejudge: int = Field(default=0, ge=0, exclude_if=lambda v: v == 0)

    _empty_is_none = field_validator("evaluator", "judge", mode="before")(_none_if_empty)

    @field_serializer("evaluator", "judge")
    def _none_as_empty(self, value: BaseModel | None) -> Any:
        return {} if value is None else value  # as records have always said "no judge model"

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.case_name, self.trial, self.trajectory_started_at)

    @property
    def evaluator_model(self) -> str:
        return self.evaluator.model if self.evaluator is not None else ""

    @property
    def judge_key(self) -> str:
        """What tells judges apart in a file: the id, else (older records) the evaluator's model, else unrecorded."""
        if self.judge_id:
            return self.judge_id
        return f"{UNRECORDED}:{self.evaluator_model}" if self.evaluator_model else UNRECORDED

    @property
    def judge_model(self) -> str:
        """The judge's model (a deterministic scorer: its name), else the evaluator's as older records say."""
        return (self.judge.display_model if self.judge is not None else "") or self.evaluator_model

    def samples_drawn(self, where: str | Path) -> int:
        """How many verdicts its judge drew per trajectory: its judge's parameters, else its samples (at least 1);
        past MAX_SAMPLES an InputError at `where` (the file), as a re-run's judge draws this many."""
        samples = (self.judge.samples if self.judge else None) or len(self.samples) or 1
        if not 1 <= samples <= MAX_SAMPLES:
            message = f"expected 1 to {MAX_SAMPLES} samples per trajectory, got {samples:,}"
            raise InputError.single(where, message, field="judge.parameters.samples")
        return int(samples)

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
        identity: dict[str, Any] = {"judge_id": self.judge_id, "judge": self._judge_or_model(scorer)}
        if self.status in ("skipped", "not_applicable"):
            return Score(
                scorer=scorer,
                metric=metric,
                status=self.status,
                error=_error_text(self.error),
                **identity,
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
                **identity,
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
            **identity,
        )

    def _judge_or_model(self, scorer: str) -> JudgeIdentity | None:
        """The judge, or for records before judge ids, what they say of it: the evaluator's model."""
        if self.judge is not None:
            return self.judge
        model = self.evaluator_model
        return JudgeIdentity(scorer=scorer, version="", kind="llm", model=model) if model else None


UNRECORDED = "unrecorded"  # a record that names no judge (ToolEmu's own, or ours from before judge ids)


def _error_text(error: EpisodeError | None) -> str | None:
    return f"{error.type}: {error.message}" if error else None
