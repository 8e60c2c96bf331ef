"""Build a LangChain chat model from ModelOptions. Provider SDKs are imported only when used."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from toolemu.llm.local import LocalLlamaChat, resolve_gguf
from toolemu.llm.options import ModelOptions
from toolemu.llm.secrets import get_secret


class ModelConfigError(ValueError):
    """A model that cannot be built as configured (missing key, missing SDK, unknown provider)."""


def _api_key(options: ModelOptions, required: bool) -> str | None:
    name = options.key_env
    key = get_secret(name) if name else None
    if key is None and required:
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
    provider = options.provider
    if provider == "local":
        return LocalLlamaChat(
            model_path=str(resolve_gguf(options.model_name)),
            role=role,
            temperature=options.temperature,
            max_tokens=options.max_tokens,
            seed=options.seed,
        )
    if provider == "openai":
        if not options.model_name:
            raise ModelConfigError("openai needs a model name: openai:<model>")
        mod = _import("langchain_openai", "openai")
        # A local server (vLLM, llama.cpp, Ollama) usually takes any key.
        key = _api_key(options, required=options.base_url is None) or "not-needed"
        return _chat_openai(mod, options, options.model_name, options.base_url, key)
    if provider == "vllm":
        if not options.model_name:
            raise ModelConfigError("vllm needs a model: vllm:<hf-id-or-path>")
        mod = _import("langchain_openai", "vllm")
        from toolemu.llm.vllm import endpoint  # starts (or shares) the role's server unless --base-url names one

        base_url, served, key = endpoint(options)
        return _chat_openai(mod, options, served, base_url, key or _api_key(options, required=False) or "not-needed")
    if provider == "anthropic":
        if not options.model_name:
            raise ModelConfigError("anthropic needs a model name: anthropic:<model>")
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
    raise ModelConfigError(f"{options.model}: the scripted provider is built by tests and --dry-run only")


def _chat_openai(mod: Any, options: ModelOptions, model: str, base_url: str | None, key: str) -> BaseChatModel:
    return mod.ChatOpenAI(
        model=model,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        seed=options.seed,
        base_url=base_url,
        api_key=key,
        timeout=options.timeout,
        max_retries=0,  # our retry policy decides
    )
