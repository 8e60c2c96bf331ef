"""Run-wide model settings (what the CLI collects) and the hub they build."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field, ValidationError

from toolemu.llm.cache import DEFAULT_CACHE_PATH, ResponseCache
from toolemu.llm.local import smoke_notice
from toolemu.llm.model import ChatFactory, ModelHub
from toolemu.llm.options import (
    JUDGE_ROLE,
    JUDGE_SEED,
    JUDGE_TEMPERATURE,
    BaseUrl,
    CacheMode,
    KeyVariable,
    ModelDescription,
    ModelOptions,
    ModelString,
    PositiveInt,
    Seconds,
    StructuredMode,
    Temperature,
    VLLMOptions,
    default_model_string,
    is_judge_role,
    provider_of,
)
from toolemu.llm.providers import build_chat_model
from toolemu.llm.registry import get_provider
from toolemu.llm.usage import Budget, UsageTracker
from toolemu.secrets import load_dotenv_file, strip_credentials

log = logging.getLogger("toolemu")


class LLMSettings(BaseModel):
    model: ModelString | None = Field(default=None, description="model for every role that names none")
    role_models: dict[str, ModelString] = Field(default_factory=dict, description="role -> model string")
    role_temperatures: dict[str, Temperature] = Field(default_factory=dict)
    temperature: Temperature = 0.0
    max_tokens: PositiveInt | None = Field(default=None, description="None: each role's provider default")
    seed: int | None = None
    base_url: BaseUrl = None
    api_key_env: KeyVariable = None
    timeout: Seconds = 120.0
    structured: StructuredMode = "auto"
    max_attempts: PositiveInt = 5
    cache: CacheMode = "rw"
    cache_path: Path = DEFAULT_CACHE_PATH
    # Budgets: a limit that is not a positive, finite number would silently switch the budget off.
    max_total_tokens: PositiveInt | None = None
    max_cost: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    max_calls: PositiveInt | None = None
    vllm: VLLMOptions = Field(default_factory=VLLMOptions, description="for vllm:<model> roles")

    def names_model_for(self, role: str) -> bool:
        """Whether these settings name a model for `role` (its own flag, or --model for every role)."""
        return bool(self.model or self.role_models.get(role))

    def options_for(self, role: str, recorded: ModelDescription | None = None) -> ModelOptions:
        """A role's model, by one rule: its own flag, else --model, else the model a run `recorded` for it (a
        robust re-run keeps the run's), else the default (an API model when its key is set, else the embedded
        one). Connection settings (key variable, timeout, attempts) are always these settings'."""
        if recorded is not None and not self.names_model_for(role):
            try:
                opts = ModelOptions.model_validate(recorded.model_dump(mode="json"))
            except ValidationError:  # a provider this process does not know: the default instead
                pass
            else:
                connection = {
                    "api_key_env": self.api_key_env,
                    "timeout": self.timeout,
                    "max_attempts": self.max_attempts,
                }
                if self.base_url and strip_credentials(self.base_url) == opts.base_url:
                    connection["base_url"] = self.base_url  # the record keeps the URL without the key it needs
                return opts.model_copy(update=connection)
        model = self.role_models.get(role) or self.model or default_model_string()
        temperature, seed = self.role_temperatures.get(role, self.temperature), self.seed
        if is_judge_role(role):  # judges: temperature 0 and a fixed seed unless told otherwise
            temperature = self.role_temperatures.get(role, self.role_temperatures.get(JUDGE_ROLE, JUDGE_TEMPERATURE))
            if seed is None and get_provider(provider_of(model)).takes_seed:
                seed = JUDGE_SEED
        shared = {"max_tokens", "base_url", "api_key_env", "timeout", "structured", "max_attempts"}
        return ModelOptions(
            model=model, temperature=temperature, seed=seed, vllm=self.vllm, **self.model_dump(include=shared)
        )

    def budget(self) -> Budget:
        return Budget(self.max_total_tokens, self.max_cost, self.max_calls)


_noticed = threading.Event()


def build_hub(
    settings: LLMSettings,
    roles: tuple[str, ...],
    chat_factory: ChatFactory = build_chat_model,
    tracker: UsageTracker | None = None,
    recorded: dict[str, ModelOptions] | None = None,
) -> ModelHub:
    """Load .env, resolve each role's model, and say once when the embedded default is in use.

    `tracker` shares one budget with another hub (one command, one budget); `recorded`: roles whose models are
    given already (a re-run's, as the run recorded them)."""
    load_dotenv_file()
    options = {role: settings.options_for(role) for role in roles} | (recorded or {})
    roles = tuple(options)
    embedded = [
        r for r in roles if options[r].model == "local" and not settings.model and r not in settings.role_models
    ]
    if embedded and not _noticed.is_set():
        _noticed.set()  # once per process: `toolemu run` builds a hub per step
        log.warning(smoke_notice(embedded, list(roles), settings.api_key_env))
    # No cache file at all when no role's replies are cached (a dry run).
    cacheable = any(get_provider(o.provider).cacheable for o in options.values())
    cache = ResponseCache(settings.cache_path, settings.cache if cacheable else "off")
    hub = ModelHub(options, cache, tracker or UsageTracker(settings.budget()), chat_factory)
    # A managed vLLM server starts now, in the calling (main) thread: a start-up error or Ctrl-C while it loads
    # reaches the command at once, not an episode's worker thread.
    for role in roles:
        if options[role].provider == "vllm" and options[role].base_url is None:
            hub.model(role)
    return hub
