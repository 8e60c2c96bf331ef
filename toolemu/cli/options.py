"""The model-layer options every model-using command shares, as typer annotations."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from toolemu.errors import InputError
from toolemu.llm import LLMSettings
from toolemu.llm.cache import DEFAULT_CACHE_PATH

_M = "Model"
Model = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="Model for every role: openai:<m>, anthropic:<m>, vllm:<hf-id-or-path>[+<lora>], local, local:<file.gguf>",
        rich_help_panel=_M,
    ),
]
Temperature = Annotated[float, typer.Option(help="Sampling temperature.", rich_help_panel=_M)]
MaxTokens = Annotated[int, typer.Option(help="Max tokens per reply.", rich_help_panel=_M)]
# Unset means "as many as the command's reply schema can need", so no structured reply is cut off.
MaxTokensAuto = Annotated[
    int | None,
    typer.Option(help="Max tokens per reply (default: enough for the reply schema).", rich_help_panel=_M),
]
# Unset means the backend's default (toolemu.llm.registry.Provider.default_max_tokens).
MaxTokensBackend = Annotated[
    int | None,
    typer.Option(
        help="Max tokens per reply (default: the backend's, 4096 for API and vLLM models, 512 for the embedded one). "
        "A reply cut off at the limit is asked again with twice the room, up to 4x; never used cut off.",
        rich_help_panel=_M,
    ),
]
Seed = Annotated[
    int | None,
    typer.Option(
        "--seed",
        "--random-seed",
        "-seed",
        help="Seed for sampling (where the backend takes one) and for --shuffle.",
        rich_help_panel=_M,
    ),
]
BaseUrl = Annotated[
    str | None,
    typer.Option(help="OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenRouter).", rich_help_panel=_M),
]
ApiKeyEnv = Annotated[
    str | None, typer.Option(help="Name of the environment variable holding the API key.", rich_help_panel=_M)
]
Timeout = Annotated[float, typer.Option(help="Seconds per model request.", rich_help_panel=_M)]
Structured = Annotated[
    str,
    typer.Option(
        help="Constrained decoding: auto, json_schema, json_object (llama.cpp server), prompt.",
        rich_help_panel=_M,
    ),
]
Cache = Annotated[str, typer.Option(help="Response cache: rw, ro or off.", rich_help_panel=_M)]
CachePath = Annotated[Path, typer.Option(help="SQLite file of the response cache.", rich_help_panel=_M)]
MaxTotalTokens = Annotated[int | None, typer.Option(help="Stop new work past this many tokens.", rich_help_panel=_M)]
MaxCost = Annotated[float | None, typer.Option(help="Stop new work past this cost in USD.", rich_help_panel=_M)]
MaxCalls = Annotated[int | None, typer.Option(help="Stop new work past this many model calls.", rich_help_panel=_M)]

# How `vllm:<model>` starts its `vllm serve` (ignored with --base-url, which connects to a running server).
_V = "vLLM server (vllm:<model>)"
VllmTensorParallelSize = Annotated[int | None, typer.Option(help="GPUs to shard the model over.", rich_help_panel=_V)]
VllmQuantization = Annotated[
    str | None, typer.Option(help="Quantization method: awq, gptq, fp8, bitsandbytes, ...", rich_help_panel=_V)
]
VllmMaxModelLen = Annotated[int | None, typer.Option(help="Context length in tokens.", rich_help_panel=_V)]
VllmGpuMemoryUtilization = Annotated[
    float | None, typer.Option(help="Fraction of GPU memory vLLM may use (0-1].", rich_help_panel=_V)
]
VllmDtype = Annotated[
    str | None, typer.Option(help="Weights dtype: auto, bfloat16, float16, float32.", rich_help_panel=_V)
]
VllmArg = Annotated[
    list[str] | None,
    typer.Option(
        "--vllm-arg",
        metavar="<str>",
        help="More `vllm serve` arguments, verbatim (repeatable; shell-split): --vllm-arg='--enforce-eager'.",
        rich_help_panel=_V,
    ),
]
VllmStartupTimeout = Annotated[
    float | None, typer.Option(help="Seconds to wait for the server to be healthy (default 900).", rich_help_panel=_V)
]
VllmLogDir = Annotated[
    Path | None,
    typer.Option(
        help="Folder for the server's log (default: $TOOLEMU_VLLM_LOG_DIR or a temp folder).", rich_help_panel=_V
    ),
]

DEFAULT_CACHE = DEFAULT_CACHE_PATH


# The flags whose names are not their field's: role_models.<role> and role_temperatures.<role>.
_ROLE_MODEL_FLAGS = {"emulator": "--simulator-model"}


def _flag_of(loc: tuple[Any, ...]) -> str | None:
    names = [str(part) for part in loc if isinstance(part, str)]
    if not names:
        return None
    if names[0] == "role_models" and len(names) > 1:
        return _ROLE_MODEL_FLAGS.get(names[1], f"--{names[1]}-model")
    if names[0] == "role_temperatures" and len(names) > 1:
        return f"--{names[1]}-temperature"
    if names[0] == "vllm" and names[1:] == ["args"]:
        return "--vllm-arg"
    return "--" + "-".join(names).replace("_", "-")


def flag_error(exc: ValidationError) -> InputError:
    """A pydantic error on command-line values as one line naming the flag (never echoing the value: it may be a
    key typed in the wrong place)."""
    err = exc.errors()[0]
    message = str(err["ctx"]["error"]) if "error" in err.get("ctx", {}) else err["msg"]
    message = message.replace("Input should be", "expected")
    return InputError.single("command line", message, field=_flag_of(tuple(err["loc"])))


def llm_settings(**values: object) -> LLMSettings:
    """Collect a command's model options; a bad value is one clear error line."""
    given = {k: v for k, v in values.items() if v is not None}
    # --vllm-* flags -> LLMSettings.vllm (VLLMOptions); --vllm-arg -> its `args`
    vllm = {k.removeprefix("vllm_"): given.pop(k) for k in [k for k in given if k.startswith("vllm_")]}
    if "arg" in vllm:
        vllm["args"] = tuple(vllm.pop("arg"))
    try:
        return LLMSettings(**given, **({"vllm": vllm} if vllm else {}))
    except ValidationError as exc:
        raise flag_error(exc) from None


ModelFlags = dict[str, Any]  # the raw values of the shared model options, keyed like LLMSettings' fields

_SHARED: list[tuple[str, Any, Any]] = [
    ("model", Model, None),
    ("temperature", Temperature, 0.0),
    ("seed", Seed, None),
    ("base_url", BaseUrl, None),
    ("api_key_env", ApiKeyEnv, None),
    ("timeout", Timeout, 120.0),
    ("structured", Structured, "auto"),
    ("cache", Cache, "rw"),
    ("cache_path", CachePath, DEFAULT_CACHE),
    ("max_total_tokens", MaxTotalTokens, None),
    ("max_cost", MaxCost, None),
    ("max_calls", MaxCalls, None),
    ("vllm_tensor_parallel_size", VllmTensorParallelSize, None),
    ("vllm_quantization", VllmQuantization, None),
    ("vllm_max_model_len", VllmMaxModelLen, None),
    ("vllm_gpu_memory_utilization", VllmGpuMemoryUtilization, None),
    ("vllm_dtype", VllmDtype, None),
    ("vllm_arg", VllmArg, None),
    ("vllm_startup_timeout", VllmStartupTimeout, None),
    ("vllm_log_dir", VllmLogDir, None),
]


OptionSpec = tuple[str, Any, Any]  # (keyword name, Annotated typer option, default)


@dataclass(frozen=True)
class OptionGroup:
    """Options several commands share. A command decorated with `with_options(group, ...)` receives each group's
    values as one dict keyword argument, named `<group.name>_flags`."""

    name: str
    options: list[OptionSpec]

    @property
    def keyword(self) -> str:
        return f"{self.name}_flags"


def with_options(*groups: OptionGroup) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Append the groups' options to a typer command's signature (typer has no option groups of its own)."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        hints = typing.get_type_hints(fn, include_extras=True)  # resolved in fn's module, not this one
        keywords = {g.keyword for g in groups}
        own = [
            p.replace(annotation=hints.get(p.name, p.annotation))
            for p in inspect.signature(fn).parameters.values()
            if p.name not in keywords
        ]
        added = [
            inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a)
            for g in groups
            for n, a, d in g.options
        ]

        @functools.wraps(fn)
        def command(*args: Any, **kwargs: Any) -> Any:
            for g in groups:
                kwargs[g.keyword] = {name: kwargs.pop(name) for name, _, _ in g.options}
            return fn(*args, **kwargs)

        command.__signature__ = inspect.Signature([*own, *added])  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in [*own, *added]}
        return command

    return decorate


def model_group(max_tokens: int | None = 512, *, per_backend: bool = False) -> OptionGroup:
    """The model options; `max_tokens=None` means the command works out its own default, `per_backend` that each
    role's backend does (Provider.default_max_tokens)."""
    if per_backend:
        return OptionGroup("model", [*_SHARED, ("max_tokens", MaxTokensBackend, None)])
    return OptionGroup(
        "model", [*_SHARED, ("max_tokens", MaxTokens if max_tokens is not None else MaxTokensAuto, max_tokens)]
    )


def with_model_options(max_tokens: int | None = 512) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a typer command the shared model options; it receives them as `model_flags: ModelFlags`."""
    return with_options(model_group(max_tokens))
