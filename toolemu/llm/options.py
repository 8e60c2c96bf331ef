"""Model strings and the parameters that configure a chat model for one role."""

from __future__ import annotations

import os
import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    model_validator,
)

from toolemu.llm.registry import get_provider, provider_names, unknown_model_message
from toolemu.log.model import ModelDescription, VLLMOptions
from toolemu.secrets import register_url_secrets, strip_credentials

StructuredMode = Literal["auto", "json_schema", "json_object", "tool", "prompt"]
CacheMode = Literal["rw", "ro", "off"]

# A reply cut off at max_tokens is asked again with twice the room, at most this many times (4x in all).
REPLY_GROWTH = 2

ROLES = ("agent", "emulator", "evaluator", "generator", "monitor", "user")

# Judges: the evaluator role, and a panel's other judges (evaluator@<slug>). They sample at temperature 0 unless
# their own temperature is given (--evaluator-temperature; --temperature is the other roles'), and with a fixed
# seed where the provider takes one, so that judging again gives the same verdict wherever the backend allows.
JUDGE_ROLE = "evaluator"
JUDGE_TEMPERATURE = 0.0
JUDGE_SEED = 0


def is_judge_role(role: str) -> bool:
    return role == JUDGE_ROLE or role.startswith(JUDGE_ROLE + "@")


def _http_url(url: str | None) -> str | None:
    if url is None:
        return None
    register_url_secrets(url)  # a key in its userinfo or query is scrubbed from all we write, even if it is refused
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in 0-65535
    except ValueError as exc:
        raise ValueError(f"expected an http(s) URL such as http://127.0.0.1:8000/v1 ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        raise ValueError("expected an http(s) URL such as http://127.0.0.1:8000/v1")
    return url


def _variable_name(name: str | None) -> str | None:
    # The value is never echoed: someone may have passed the key itself instead of its variable's name.
    if name is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError("expected the name of an environment variable (letters, digits, _), not a key")
    return name


# The checked parameter types, shared by the run-wide settings and each role's options (NaN and inf are refused).
Temperature = Annotated[float, Field(ge=0, le=2, allow_inf_nan=False)]
PositiveInt = Annotated[int, Field(ge=1)]
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
BaseUrl = Annotated[str | None, AfterValidator(_http_url)]
KeyVariable = Annotated[str | None, AfterValidator(_variable_name)]

# Used when a role names no model but an API key is present in the environment.
DEFAULT_API_MODELS = {
    "OPENAI_API_KEY": "openai:gpt-4o-mini",
    "ANTHROPIC_API_KEY": "anthropic:claude-3-5-haiku-latest",
}


def provider_of(model: str) -> str:
    """The registered provider a model string names ('openai' in 'openai:gpt-4o-mini')."""
    head = model.split(":", 1)[0]
    if head in provider_names():
        return head
    raise ValueError(unknown_model_message(model))


def _known_model(model: str) -> str:
    provider_of(model)
    return model


ModelString = Annotated[str, AfterValidator(_known_model)]  # a bad one is named with its role's flag


class ModelOptions(BaseModel):
    """What decides one role's model: the model string plus sampling and connection parameters."""

    model_config = ConfigDict(frozen=True)

    model: ModelString = Field(
        description="provider:model, e.g. openai:gpt-4o-mini, anthropic:..., vllm:<hf-id>, local, local:x.gguf"
    )
    temperature: Temperature = 0.0
    max_tokens: int = Field(default=0, ge=1, description="the reply limit; unset: the provider's default")
    seed: int | None = None
    base_url: BaseUrl = None
    api_key_env: KeyVariable = None
    timeout: Seconds = 120.0
    structured: StructuredMode = "auto"
    max_attempts: int = Field(default=5, ge=1, description="attempts per call on transient errors")
    vllm: VLLMOptions = Field(default_factory=VLLMOptions)

    @model_validator(mode="before")
    @classmethod
    def _default_max_tokens(cls, data: Any) -> Any:
        """No limit given: the provider's (room for a strong model's long replies; less for the embedded one)."""
        if isinstance(data, dict) and data.get("max_tokens") is None and isinstance(data.get("model"), str):
            head = data["model"].split(":", 1)[0]
            if head in provider_names():
                return {**data, "max_tokens": get_provider(head).default_max_tokens}
        return data

    @property
    def provider(self) -> str:
        return provider_of(self.model)

    @property
    def model_name(self) -> str:
        """The part after 'provider:' ('' for plain 'local')."""
        return self.model.split(":", 1)[1] if ":" in self.model else ""

    @property
    def structured_mode(self) -> str:
        """How a reply schema reaches this backend (see StructuredAuto); the embedded runtime always uses its
        grammar."""
        auto = get_provider(self.provider).structured_auto
        return auto if auto == "grammar" or self.structured == "auto" else self.structured

    @property
    def bounded_schemas(self) -> bool:
        """Whether reply schemas carry length and count caps. The one place this is decided: backends that decode
        a grammar with a small model (the embedded runtime, a llama.cpp server's json_object) need them to stay
        finite; every other backend gets the full schema, so a strong model's long output is never rejected."""
        return get_provider(self.provider).needs_bounded_schemas or self.structured_mode == "json_object"

    @property
    def reply_token_ceiling(self) -> int:
        """The most tokens one reply may take: max_tokens, doubled at most REPLY_GROWTH times for a cut-off one.
        The safety limit a strong backend's prompt states (it has no caps in its schemas)."""
        return self.max_tokens * 2**REPLY_GROWTH

    @property
    def key_env(self) -> str | None:
        """The variable whose key goes with each request: --api-key-env, else the provider's own, but only to the
        provider's own API (a --base-url elsewhere gets the provider's key only when --api-key-env names it)."""
        if self.api_key_env:
            return self.api_key_env
        provider = get_provider(self.provider)
        if self.base_url is None or urlsplit(self.base_url).hostname == provider.home:
            return provider.key_env
        return None

    def describe(self) -> dict[str, object]:
        """Everything that identifies the model and decides its replies; never a secret (the server's URL without
        the credentials it may carry). Cache keys and the emulator's configuration id hash it: its form stays as it
        is, and a URL without credentials is kept as given."""
        described = self.model_dump(exclude={"api_key_env", "timeout", "max_attempts", "vllm"})
        if self.base_url is not None:
            described["base_url"] = strip_credentials(self.base_url)
        if self.provider == "vllm" and self.base_url is None:
            described["vllm"] = self.vllm.describe()  # a server we start: its settings shape the replies
        return described

    def description(self) -> ModelDescription:
        """`describe()`, typed: what a record keeps of this role's model."""
        return ModelDescription.model_validate(self.describe())


def default_model_string(environ: dict[str, str] | None = None) -> str:
    """The model for a role that names none: an API model when a key is set, else the embedded one."""
    env = os.environ if environ is None else environ
    for key, model in DEFAULT_API_MODELS.items():
        if env.get(key):
            return model
    return "local"
