"""A role's model as records keep it: `ModelDescription` (what `ModelOptions.describe()` gives, in run.json, each
trajectory and each evaluation) and the `vllm serve` settings it may name. Part of the record schema, so here; the
model settings that make them (`ModelOptions`) are toolemu.llm's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from toolemu.secrets import register_url_secrets, strip_credentials


class VLLMOptions(BaseModel):
    """How a managed `vllm serve` is started for a `vllm:<model>` role (unused with --base-url)."""

    model_config = ConfigDict(frozen=True)

    tensor_parallel_size: int | None = Field(default=None, ge=1)
    quantization: str | None = None
    max_model_len: int | None = Field(default=None, ge=1)
    gpu_memory_utilization: float | None = Field(default=None, gt=0, le=1)
    dtype: str | None = None
    args: tuple[str, ...] = Field(default=(), description="more `vllm serve` arguments, passed through verbatim")
    startup_timeout: float = Field(default=900.0, gt=0, description="seconds to wait for the server to be healthy")
    log_dir: Path | None = Field(default=None, description="where the server's log goes (default: a temp dir)")

    def describe(self) -> dict[str, Any]:
        """The settings that can change replies (not where the log goes or how long we wait)."""
        return self.model_dump(exclude={"startup_timeout", "log_dir"}, exclude_defaults=True)


class ModelDescription(BaseModel):
    """A role's model as records keep it (`ModelOptions.describe()`): what identifies it and decides its replies,
    never a secret. Read leniently: a record may name a provider this process does not know, or only a model."""

    model_config = ConfigDict(extra="allow")

    model: str = ""
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    base_url: str | None = None
    structured: str | None = None
    vllm: VLLMOptions | None = None  # a `vllm serve` the run started: its settings shape the replies

    @field_validator("base_url")
    @classmethod
    def _without_credentials(cls, url: str | None) -> str | None:
        """A record an older version wrote with a key in its URL is read (and written again) without it."""
        if url is None:
            return None
        register_url_secrets(url)
        return strip_credentials(url)

    @model_serializer(mode="wrap")
    def _as_recorded(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The keys the record had (a person's seat records only its model), vllm as `VLLMOptions.describe()`."""
        data = {k: v for k, v in handler(self).items() if k in self.model_fields_set or k in (self.model_extra or {})}
        if self.vllm is not None and "vllm" in data:
            data["vllm"] = self.vllm.describe()
        return data
