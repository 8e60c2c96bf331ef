"""The part of Inspect's eval log format (version 2, the `.json` log file) that a toolemu run fills.

These models are ours, written from the format's field names, so that inspect-ai is not a runtime dependency; the
tests read the files back with inspect-ai's own `read_eval_log`. Fields are named exactly as Inspect names them.
An unscored value is NaN (Inspect's "unscored" sentinel, written as the JSON constant NaN, as Inspect writes it),
with the reason in `reason`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel as PydanticModel
from pydantic import ConfigDict, Field

LOG_VERSION = 2  # Inspect's log schema version


class BaseModel(PydanticModel):
    # As Inspect writes them: a NaN score stays NaN (null is no Score value Inspect accepts). Set on every model,
    # since pydantic applies it per model here.
    model_config = ConfigDict(ser_json_inf_nan="constants")


class ToolCall(BaseModel):
    id: str
    function: str
    arguments: dict[str, Any]
    type: Literal["function"] = "function"
    parse_error: str | None = None  # the agent's input was not a JSON object: it is here as text


class ToolCallError(BaseModel):
    type: Literal["parsing", "approval", "unknown"]
    message: str


class ChatMessage(BaseModel):
    """Inspect's ChatMessageUser / ChatMessageAssistant / ChatMessageTool, told apart by `role`."""

    id: str
    role: Literal["user", "assistant", "tool"]
    content: str
    source: Literal["input", "generate"] | None = None
    metadata: dict[str, Any] | None = None
    tool_calls: list[ToolCall] | None = None  # assistant
    model: str | None = None  # assistant
    tool_call_id: str | None = None  # tool
    function: str | None = None  # tool
    error: ToolCallError | None = None  # tool


class ModelUsage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    total_cost: float | None = None


class ChatCompletionChoice(BaseModel):
    message: ChatMessage
    stop_reason: Literal["stop", "max_tokens", "unknown"] = "stop"


class ModelOutput(BaseModel):
    model: str = ""
    choices: list[ChatCompletionChoice] = Field(default_factory=list)
    completion: str = ""
    usage: ModelUsage | None = None
    error: str | None = None


class Score(BaseModel):
    value: float  # NaN: unscored (see `reason`)
    answer: str | None = None
    explanation: str | None = None
    reason: str | None = None
    metadata: dict[str, Any] | None = None


class EvalError(BaseModel):
    message: str
    traceback: str = ""
    traceback_ansi: str = ""


class EvalSampleLimit(BaseModel):
    type: Literal["turn", "custom"]
    limit: float


class EvalSample(BaseModel):
    id: str
    epoch: int  # 1-based: the trial + 1
    input: str
    target: str | list[str]
    messages: list[ChatMessage] = Field(default_factory=list)
    output: ModelOutput = Field(default_factory=ModelOutput)
    scores: dict[str, Score] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    model_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    role_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    started_at: str | None = None
    completed_at: str | None = None
    total_time: float | None = None
    uuid: str | None = None
    error: EvalError | None = None
    limit: EvalSampleLimit | None = None


class GenerateConfig(BaseModel):
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None


class ModelConfig(BaseModel):
    model: str
    config: GenerateConfig = Field(default_factory=GenerateConfig)
    base_url: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)


class EvalDataset(BaseModel):
    name: str | None = None
    location: str | None = None
    samples: int | None = None
    sample_ids: list[str] | None = None
    shuffled: bool | None = None


class EvalConfig(BaseModel):
    epochs: int | None = None
    limit: int | None = None
    sample_id: list[str] | None = None


class EvalSpec(BaseModel):
    eval_id: str
    run_id: str
    created: str
    task: str
    task_id: str
    task_version: int | str = 0
    task_display_name: str | None = None
    task_args: dict[str, Any] = Field(default_factory=dict)
    solver: str | None = None
    solver_args: dict[str, Any] | None = None
    dataset: EvalDataset
    model: str
    model_generate_config: GenerateConfig = Field(default_factory=GenerateConfig)
    model_base_url: str | None = None
    model_args: dict[str, Any] = Field(default_factory=dict)
    model_roles: dict[str, ModelConfig] | None = None
    config: EvalConfig
    packages: dict[str, str] = Field(default_factory=dict)
    metadata: dict[str, Any] | None = None


class EvalPlanStep(BaseModel):
    solver: str
    params: dict[str, Any] = Field(default_factory=dict)


class EvalPlan(BaseModel):
    name: str = "plan"
    steps: list[EvalPlanStep] = Field(default_factory=list)
    config: GenerateConfig = Field(default_factory=GenerateConfig)


class EvalMetric(BaseModel):
    name: str
    value: float
    params: dict[str, Any] = Field(default_factory=dict)


class EvalScore(BaseModel):
    name: str
    scorer: str
    scored_samples: int | None = None
    unscored_samples: int | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    metrics: dict[str, EvalMetric] = Field(default_factory=dict)
    metadata: dict[str, Any] | None = None


class EvalResults(BaseModel):
    total_samples: int = 0
    completed_samples: int = 0
    scores: list[EvalScore] = Field(default_factory=list)


class EvalStats(BaseModel):
    started_at: str = ""
    completed_at: str = ""
    model_usage: dict[str, ModelUsage] = Field(default_factory=dict)
    role_usage: dict[str, ModelUsage] = Field(default_factory=dict)


class EvalLog(BaseModel):
    version: int = LOG_VERSION
    status: Literal["started", "success", "cancelled", "error"]
    eval: EvalSpec
    plan: EvalPlan = Field(default_factory=EvalPlan)
    results: EvalResults | None = None
    stats: EvalStats = Field(default_factory=EvalStats)
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    samples: list[EvalSample] | None = None
