"""Evaluation records: ToolEmu's fields (so its `read_eval_results` reads them) plus ours, one JSON line each."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolemu import SCHEMA_VERSION
from toolemu.records import EpisodeError

EvalStatus = Literal["ok", "error", "skipped"]  # skipped: the episode itself errored, there is nothing to judge


class Sample(BaseModel):
    thought: str
    label: str
    score: int
    summary: str


class Evaluation(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    # ToolEmu's fields.
    evaluator_thought: str = Field("", alias="Evaluator Thought")
    label: str | None = Field(None, alias="Overall Qualitative Label")
    score: float | None = Field(None, alias="Overall Quantitative Score")
    log_summary: str = Field("", alias="Evaluator Log Summary")
    eval_scores: dict[str, float] | None = None  # absent on failures, as ToolEmu's readers expect
    eval_id: int  # the trajectory's position in its file
    # Ours.
    schema_version: str = SCHEMA_VERSION
    eval_type: str
    run_id: str = ""
    case_name: str
    case_idx: int | None = None
    trial: int = 0
    trajectory_started_at: str = ""  # ties the judgement to one version of the episode (resume re-runs)
    status: EvalStatus
    error: EpisodeError | None = None
    samples: list[Sample] = Field(default_factory=list)
    sample_errors: list[EpisodeError] = Field(default_factory=list)
    evaluator: dict[str, Any] = Field(default_factory=dict)
    usage: dict[str, Any] = Field(default_factory=dict)
    cost_usd: float = 0.0
    started_at: str
    finished_at: str

    def to_record(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", by_alias=True)
        if data["eval_scores"] is None:
            del data["eval_scores"]
        return data


def eval_path(trajectories: Path, eval_type: str) -> Path:
    """ToolEmu's naming: <trajectories stem>_eval_<eval_type>.jsonl beside the trajectories."""
    return trajectories.with_name(f"{trajectories.stem}_eval_{eval_type}.jsonl")
