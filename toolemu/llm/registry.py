"""The provider registry: the part before ':' in a model string names a Provider, which builds the chat model
and says how the backend behaves (structured output, native tools, keys, price, caching).

The built-in providers are defined in `toolemu.llm.providers` and registered in `toolemu.builtins` on the first
lookup; `mock` (scripted replies, no model at all) is one of them, so a dry run is just `--model mock`. Another
provider is a `register_provider(Provider(...))` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from toolemu.registration import ensure_builtins

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from toolemu.llm.options import ModelOptions
    from toolemu.llm.served import DirectChat

    ChatModel = BaseChatModel | DirectChat  # a LangChain chat model, or a served model asked directly

# grammar: llama.cpp's JSON-schema grammar (the embedded runtime); tool: a forced tool call whose input schema is
# the reply schema (Anthropic); json_schema / json_object: response_format; prompt: the schema in the prompt.
StructuredAuto = Literal["grammar", "json_schema", "json_object", "tool", "prompt"]


@dataclass(frozen=True)
class Provider:
    name: str
    build: Callable[[ModelOptions, str], ChatModel]  # (options, role) -> chat model
    example: str  # shown in help and errors, e.g. "openai:<model>"
    needs_model_name: bool = True
    key_env: str | None = None  # the variable that holds its key, unless --api-key-env names another
    # The provider's own API host: its key variable is sent there only, never to another server a --base-url names
    # (a proxy or a local server gets a key only through --api-key-env).
    home: str | None = None
    paid: bool = False  # a run asks before spending money (unless --auto)
    free: bool = False  # no price per token (own hardware, or no model at all)
    native_tools: bool = False  # the agent's `tools` format uses the API's tool calling
    auto_agent_format: Literal["react", "tools"] = "react"
    structured_auto: StructuredAuto = "prompt"  # how `--structured auto` asks this backend for a schema
    enforces_any_schema: bool = False  # its json_schema mode enforces any schema, not only strict ones
    # Length and count caps in reply schemas keep a small grammar-constrained model finite; a strong model's long
    # output must never be clipped or rejected by them, so only such backends get them (see ModelOptions).
    needs_bounded_schemas: bool = False
    default_max_tokens: int = 4096  # the reply limit when --max-tokens is not given
    cacheable: bool = True  # replies go through the response cache
    takes_seed: bool = False  # the backend honours a sampling seed (judges get one by default: JUDGE_SEED)
    listed: bool = True  # named in help and errors (test-only providers are not)


_PROVIDERS: dict[str, Provider] = {}


def register_provider(provider: Provider) -> Provider:
    ensure_builtins("providers")  # the built-ins first, so one's own of the same name replaces it
    _PROVIDERS[provider.name] = provider
    return provider


def get_provider(name: str) -> Provider:
    ensure_builtins("providers")
    try:
        return _PROVIDERS[name]
    except KeyError:
        raise ValueError(unknown_model_message(name)) from None


def provider_names() -> list[str]:
    ensure_builtins("providers")
    return list(_PROVIDERS)


def unknown_model_message(model: str) -> str:
    ensure_builtins("providers")
    examples = ", ".join(p.example for p in _PROVIDERS.values() if p.listed)
    return f"unknown model string '{model}': expected one of {examples}"
