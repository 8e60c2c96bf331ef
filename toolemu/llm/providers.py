"""The built-in providers: each builds a LangChain chat model from ModelOptions, and says how its backend behaves
(`BUILT_IN`, registered by `toolemu.builtins`). Provider SDKs are imported only when used."""

from __future__ import annotations

import importlib.util
import re
import socket
from functools import cache
from typing import Any

from langchain_core.language_models import BaseChatModel

from toolemu.llm.dryrun import dry_run_factory
from toolemu.llm.local import LocalLlamaChat, resolve_gguf
from toolemu.llm.options import ModelOptions
from toolemu.llm.registry import Provider, get_provider
from toolemu.llm.served import DirectChat, direct_eligible
from toolemu.secrets import get_secret


class ModelConfigError(ValueError):
    """A model that cannot be built as configured (missing key, missing SDK, unknown provider)."""


def _api_key(options: ModelOptions, required: bool) -> str | None:
    name = options.key_env
    key = get_secret(name) if name else None
    if key is None and required:
        if name is None:  # --base-url names a server other than the provider's own API
            raise ModelConfigError(
                f"{options.model} at --base-url needs an API key: name its variable with --api-key-env (the "
                f"provider's own key is sent to its own API only, never to another server)"
            )
        raise ModelConfigError(
            f"{options.model} needs an API key: set {name} in the environment or in .env "
            "(or name another variable with --api-key-env)"
        )
    return key


def _import(module: str, extra: str) -> Any:
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        raise ModelConfigError(f"the {extra} provider needs its SDK: pip install 'toolemu[{extra}]'") from None


def build_chat_model(options: ModelOptions, role: str) -> BaseChatModel:
    """The chat model of one role, built by its provider."""
    provider = get_provider(options.provider)
    if provider.needs_model_name and not options.model_name:
        raise ModelConfigError(f"{options.provider} needs a model name: {provider.example}")
    return provider.build(options, role)


def _local(options: ModelOptions, role: str) -> BaseChatModel:
    return LocalLlamaChat(
        model_path=str(resolve_gguf(options.model_name)),
        role=role,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        seed=options.seed,
    )


def _openai(options: ModelOptions, role: str) -> BaseChatModel | DirectChat:
    # A local server (vLLM, llama.cpp, Ollama) usually takes any key.
    key = _api_key(options, required=options.base_url is None) or "not-needed"
    return _chat_openai("openai", options, options.model_name, options.base_url, key)


def _vllm(options: ModelOptions, role: str) -> BaseChatModel | DirectChat:
    _import("langchain_openai", "vllm")
    from toolemu.llm.vllm import endpoint  # starts (or shares) the role's server unless --base-url names one

    base_url, served, key = endpoint(options)
    return _chat_openai("vllm", options, served, base_url, key or _api_key(options, required=False) or "not-needed")


def _anthropic(options: ModelOptions, role: str) -> BaseChatModel:
    mod = _import("langchain_anthropic", "anthropic")
    kwargs: dict[str, Any] = {}
    if options.base_url:
        kwargs["base_url"] = options.base_url
    return mod.ChatAnthropic(
        model=options.model_name,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        api_key=_api_key(options, required=True),
        timeout=options.timeout,
        max_retries=0,
        **kwargs,
    )


# OpenAI's o-series reasoning models take only the default temperature (langchain-openai handles gpt-5 itself).
_DEFAULT_TEMPERATURE_ONLY = re.compile(r"^o\d")


@cache
def _reasoning_chat_openai(mod: Any) -> Any:
    """ChatOpenAI that keeps the reasoning an OpenAI-compatible server sends beside the answer (vLLM's
    `reasoning_content`, some routers' `reasoning`): langchain-openai drops it, and a step should record it."""

    class ReasoningChatOpenAI(mod.ChatOpenAI):  # type: ignore[name-defined,misc]
        def _create_chat_result(self, response: Any, generation_info: dict[str, Any] | None = None) -> Any:
            result = super()._create_chat_result(response, generation_info)
            raw = response if isinstance(response, dict) else response.model_dump()
            for generation, choice in zip(result.generations, raw.get("choices") or [], strict=False):
                message = choice.get("message") or {}
                reasoning = message.get("reasoning_content") or message.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    generation.message.additional_kwargs["reasoning_content"] = reasoning
            return result

    return ReasoningChatOpenAI


def _fixed_temperature(options: ModelOptions, model: str, base_url: str | None) -> bool:
    return options.provider == "openai" and base_url is None and bool(_DEFAULT_TEMPERATURE_ONLY.match(model))


def sent_sampling(options: ModelOptions) -> tuple[float | None, int | None]:
    """The temperature and seed a role's backend is actually sent: None for a temperature the model fixes itself
    (OpenAI's o-series) and for a seed the provider does not take. What a judge's record keeps of its sampling."""
    temperature = None if _fixed_temperature(options, options.model_name, options.base_url) else options.temperature
    return temperature, options.seed if get_provider(options.provider).takes_seed else None


def keepalive_options() -> list[tuple[int, int, int]]:
    """TCP keepalive on every connection (what langchain-openai sets on its own pool): a silent peer is noticed."""
    options = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)]
    for name, value in (("TCP_KEEPIDLE", 60), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3)):
        if hasattr(socket, name):
            options.append((socket.IPPROTO_TCP, getattr(socket, name), value))
    return options


@cache
def _http_client(base_url: str | None, timeout: float | None) -> Any:
    """One connection pool per server for every role of the process, with no cap of its own: the run's workers
    bound how many requests are open at once, and each keeps its connection. The pool langchain-openai gives the
    SDK keeps at most 100 connections alive and opens at most 1,000: past 100 workers it closed connections as
    replies came and opened new ones for the next requests (256 workers: 279 to 317 connections a run), and past
    1,000 workers the rest queued for a connection."""
    import importlib
    import urllib.request

    import openai

    # The HTTP library the SDK is built on (httpx2 from openai 3 on, httpx before): its pool objects must be its own.
    httpx = importlib.import_module(openai.DefaultHttpxClient.__mro__[1].__module__.partition(".")[0])
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None, keepalive_expiry=5.0)
    url = base_url or "https://api.openai.com/v1"
    if urllib.request.getproxies():  # a transport of our own would turn off the environment's proxies
        return openai.DefaultHttpxClient(base_url=url, timeout=timeout, limits=limits)
    transport = httpx.HTTPTransport(limits=limits, socket_options=keepalive_options())
    return openai.DefaultHttpxClient(base_url=url, timeout=timeout, transport=transport)


def _chat_openai(
    extra: str, options: ModelOptions, model: str, base_url: str | None, key: str
) -> BaseChatModel | DirectChat:
    fixed_temperature = _fixed_temperature(options, model, base_url)
    temperature = None if fixed_temperature else options.temperature
    if direct_eligible(base_url):  # a served model on plain http: asked without the SDK (toolemu.llm.served)
        # urllib3 asks; the SDK's classes are its errors (imported when one happens)
        if importlib.util.find_spec("openai") is None or importlib.util.find_spec("urllib3") is None:
            raise ModelConfigError(f"the {extra} provider needs its SDK: pip install 'toolemu[{extra}]'")
        return DirectChat(base_url, model, key, temperature, options.seed, options.timeout, options.max_tokens)  # type: ignore[arg-type]
    return _reasoning_chat_openai(_import("langchain_openai", extra))(
        model=model,
        temperature=temperature,
        max_tokens=options.max_tokens,
        seed=options.seed,
        base_url=base_url,
        api_key=key,
        timeout=options.timeout,
        max_retries=0,  # our retry policy decides
        http_client=_http_client(base_url, options.timeout),
    )


LOCAL = Provider(
    "local",
    _local,
    "local or local:<file.gguf>",
    needs_model_name=False,
    free=True,
    auto_agent_format="tools",  # a JSON reply that names the tool: llama.cpp's function calling is broken
    takes_seed=True,
    structured_auto="grammar",
    needs_bounded_schemas=True,  # a 135M model under a grammar runs on until its caps stop it
    default_max_tokens=512,  # enough for its capped replies; a cut-off one is asked again with more room
)
OPENAI = Provider(
    "openai",
    _openai,
    "openai:<model>",
    key_env="OPENAI_API_KEY",
    home="api.openai.com",
    paid=True,
    takes_seed=True,
    native_tools=True,
    structured_auto="json_schema",
)
ANTHROPIC = Provider(
    "anthropic",
    _anthropic,
    "anthropic:<model>",
    key_env="ANTHROPIC_API_KEY",
    home="api.anthropic.com",
    paid=True,
    native_tools=True,
    structured_auto="tool",  # a forced tool whose input schema is the reply schema
)
VLLM = Provider(
    "vllm",
    _vllm,
    "vllm:<hf-id-or-path>[+<lora>]",
    free=True,
    takes_seed=True,
    structured_auto="json_schema",
    enforces_any_schema=True,  # guided decoding
)
# Scripted replies, no model at all: a dry run is `--model mock`. The schema reaches the responder in the request
# (json_object), and nothing is cached: replies cost nothing and would only crowd the cache.
MOCK = Provider(
    "mock",
    dry_run_factory,
    "mock",
    needs_model_name=False,
    free=True,
    auto_agent_format="tools",
    structured_auto="json_object",
    cacheable=False,
    default_max_tokens=512,
)
# Tests hand their own scripted chat models to a ModelHub; this entry says how such a backend behaves: a plain chat
# API (the schema goes into the prompt) whose replies are cached like any other.
SCRIPTED = Provider(
    "scripted",
    dry_run_factory,
    "scripted:<name>",
    needs_model_name=False,
    free=True,
    auto_agent_format="tools",
    listed=False,
)

BUILT_IN = (LOCAL, OPENAI, ANTHROPIC, VLLM, MOCK, SCRIPTED)  # registered by toolemu.builtins
