"""Options that several commands share, as typed groups; the model options every model-using command takes.

The pattern, for a new shared option or a new group:

- A group is a frozen dataclass that subclasses `OptionGroup`. Each field is one option: its type is
  `Annotated[<type>, typer.Option(...)]` (flag names, help, help panel) and its default is the option's default.
  Typer reads the group as it reads a command, from the dataclass's own constructor, so nothing rewrites a signature.
- A command takes groups with `@takes(ModelFlags, BatchFlags, ...)`, declares `ctx: typer.Context` among its own
  parameters, and reads each group's values as one typed object: `model = ModelFlags.of(ctx)`. Its own options stay
  ordinary typer parameters; `--help` lists them first, then each group's, in the order `takes` names them.
- Register it: a top-level command is one line in `toolemu.cli.app.COMMANDS` ("module:function", loaded only when
  run), a sub-app's command is `@command(sub_app)` (toolemu.cli.command); both give typer the command class that
  joins the groups' options to the command's own. A new sub-app is `new_app(...)` and one line in COMMANDS.
- A new option every model-using command shares is one field here; a variant of a group (another default for one
  option) is a subclass that redefines that field, as `ModelFlagsForSchema` does, and `ModelFlags.of(ctx)` returns it.
- An episode element's options are declared once, on its element spec (`toolemu.episode.element_spec.Option`):
  `ElementFlags` is the group of every registered element's options, made when a command is built (`concrete`), and
  `episode_options(ctx)` reads them back as the elements they ask for and the models they give their roles.
- Heavy library code is imported inside command bodies and methods such as `ModelFlags.settings`, never at the top of
  a cli module: `toolemu --help` loads only typer and these small modules.
- The modules typer reads (commands and groups) do not use `from __future__ import annotations`: typer would evaluate
  every annotation string of every command at each start (about half the app's build time). Names imported for type
  checking only are quoted there.
"""

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

import typer

from toolemu.cli import limits
from toolemu.errors import InputError, first_error
from toolemu.paths import DEFAULT_CACHE_PATH

if TYPE_CHECKING:
    from pydantic import ValidationError

    from toolemu.episode.element_spec import ElementSpec, Option
    from toolemu.llm import LLMSettings

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
MaxTokens = Annotated[
    int, typer.Option(help=f"Max tokens per reply (at most {limits.MAX_TOKENS.most:,}).", rich_help_panel=_M)
]
# Unset means "as many as the command's reply schema can need", so no structured reply is cut off.
MaxTokensAuto = Annotated[
    int | None,
    typer.Option(
        help=f"Max tokens per reply (default: enough for the reply schema; at most {limits.MAX_TOKENS.most:,}).",
        rich_help_panel=_M,
    ),
]
# Unset means the backend's default (toolemu.llm.registry.Provider.default_max_tokens).
MaxTokensBackend = Annotated[
    int | None,
    typer.Option(
        help="Max tokens per reply (default: the backend's, 4096 for API and vLLM models, 512 for the embedded one; "
        f"at most {limits.MAX_TOKENS.most:,}). A reply cut off at the limit is asked again with twice the room, up "
        "to 4x; never used cut off.",
        rich_help_panel=_M,
    ),
]
Seed = Annotated[
    int | None,
    typer.Option(
        "--seed",
        "--random-seed",
        "-seed",
        help="Seed for sampling (where the backend takes one) and for --shuffle: 0 to 2^32-1.",
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
Timeout = Annotated[float, typer.Option(help="Seconds per model request (at most 86,400: a day).", rich_help_panel=_M)]
Structured = Annotated[
    str,
    typer.Option(
        help="Constrained decoding: auto, json_schema, json_object (llama.cpp server), prompt.",
        rich_help_panel=_M,
    ),
]
Cache = Annotated[str, typer.Option(help="Response cache: rw, ro or off.", rich_help_panel=_M)]
CachePath = Annotated[Path, typer.Option(help="SQLite file of the response cache.", rich_help_panel=_M)]
MaxTotalTokens = Annotated[
    int | None,
    typer.Option(
        help=f"Stop new work past this many tokens (at most {limits.MAX_TOTAL_TOKENS.most:,}).", rich_help_panel=_M
    ),
]
MaxCost = Annotated[
    float | None,
    typer.Option(help=f"Stop new work past this cost in USD (at most {limits.MAX_COST.most:,g}).", rich_help_panel=_M),
]
MaxCalls = Annotated[
    int | None,
    typer.Option(
        help=f"Stop new work past this many model calls (at most {limits.MAX_CALLS.most:,}).", rich_help_panel=_M
    ),
]

# How `vllm:<model>` starts its `vllm serve` (ignored with --base-url, which connects to a running server).
_V = "vLLM server (vllm:<model>)"
VllmTensorParallelSize = Annotated[
    int | None, typer.Option(help="GPUs to shard the model over (at most 1,024).", rich_help_panel=_V)
]
VllmQuantization = Annotated[
    str | None, typer.Option(help="Quantization method: awq, gptq, fp8, bitsandbytes, ...", rich_help_panel=_V)
]
VllmMaxModelLen = Annotated[
    int | None, typer.Option(help="Context length in tokens (at most 100,000,000).", rich_help_panel=_V)
]
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
    float | None,
    typer.Option(
        help="Seconds to wait for the server to be healthy (default 900, at most 86,400).", rich_help_panel=_V
    ),
]
VllmLogDir = Annotated[
    Path | None,
    typer.Option(
        help="Folder for the server's log (default: $TOOLEMU_VLLM_LOG_DIR or a temp folder).", rich_help_panel=_V
    ),
]

Group = TypeVar("Group", bound="OptionGroup")
Fn = TypeVar("Fn", bound=Callable[..., Any])

_GROUPS_ATTRIBUTE = "__toolemu_option_groups__"


@dataclass(frozen=True)
class OptionGroup:
    """Options several commands share, as one typed object (a frozen dataclass of them; see the module's pattern)."""

    _meta_prefix: ClassVar[str] = "toolemu.options."

    @classmethod
    def family(cls) -> type["OptionGroup"]:
        """The group this one is a variant of (itself, or the base that its variants redefine fields of)."""
        return next(c for c in cls.__mro__ if OptionGroup in c.__bases__)

    @classmethod
    def of(cls: type[Group], ctx: typer.Context) -> Group:
        """The group's values for the running command."""
        found = ctx.meta.get(cls._meta_prefix + cls.family().__qualname__)
        if not isinstance(found, cls):
            raise TypeError(f"`{ctx.command_path}` does not take {cls.__name__}: name it in @takes(...)")
        return found

    def store(self, ctx: typer.Context) -> None:
        ctx.meta[self._meta_prefix + self.family().__qualname__] = self

    def values(self) -> dict[str, Any]:
        """The options by field name (a shallow copy)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def concrete(cls) -> type["OptionGroup"]:
        """The group a command is built with (a group made from registrations gives its class of the moment)."""
        return cls


def takes(*groups: type[OptionGroup]) -> Callable[[Fn], Fn]:
    """Give a command these option groups (it reads each with `Group.of(ctx)`); the function itself is unchanged."""

    def mark(fn: Fn) -> Fn:
        setattr(fn, _GROUPS_ATTRIBUTE, groups)
        return fn

    return mark


def groups_of(fn: Callable[..., Any]) -> tuple[type[OptionGroup], ...]:
    return getattr(fn, _GROUPS_ATTRIBUTE, ())


@dataclass(frozen=True)
class ModelFlags(OptionGroup):
    """The model options (panels "Model" and "vLLM server"); an unset max tokens means each backend's default."""

    model: Model = None
    temperature: Temperature = 0.0
    seed: Seed = None
    base_url: BaseUrl = None
    api_key_env: ApiKeyEnv = None
    timeout: Timeout = 120.0
    structured: Structured = "auto"
    cache: Cache = "rw"
    cache_path: CachePath = DEFAULT_CACHE_PATH
    max_total_tokens: MaxTotalTokens = None
    max_cost: MaxCost = None
    max_calls: MaxCalls = None
    vllm_tensor_parallel_size: VllmTensorParallelSize = None
    vllm_quantization: VllmQuantization = None
    vllm_max_model_len: VllmMaxModelLen = None
    vllm_gpu_memory_utilization: VllmGpuMemoryUtilization = None
    vllm_dtype: VllmDtype = None
    vllm_arg: VllmArg = None
    vllm_startup_timeout: VllmStartupTimeout = None
    vllm_log_dir: VllmLogDir = None
    max_tokens: MaxTokensBackend = None

    def settings(self, **extra: Any) -> "LLMSettings":
        """The checked model settings (`extra`: fields the command adds, such as role_models); a bad value is one
        clear error line naming its flag."""
        return llm_settings(**self.values(), **extra)


@dataclass(frozen=True)
class ElementFlags(OptionGroup):
    """The options of every registered episode element, each declared once on its element spec; the group is made
    when a command is built, so an element registered by then has its options on every command that takes it."""

    @classmethod
    def concrete(cls) -> type[OptionGroup]:
        from toolemu.episode.element_spec import element_options

        return _element_group(tuple(element_options()))


@functools.cache
def _element_group(options: tuple["Option", ...]) -> type[ElementFlags]:
    fields = []
    for o in options:
        kind: Any = list[str] | None if o.kind is list else (o.kind if o.default is not None else o.kind | None)
        option = typer.Option(*o.flags, help=o.text, rich_help_panel=o.panel)
        fields.append((o.key, Annotated[kind, option], dataclasses.field(default=o.default)))
    return dataclasses.make_dataclass("ElementFlags", fields, bases=(ElementFlags,), frozen=True)


def episode_options(ctx: typer.Context) -> tuple[tuple["ElementSpec", ...], dict[str, str]]:
    """The elements the command's element options ask for (each count within its bound, each contradiction one line
    naming its flag), and the models they give their roles (--user-model M)."""
    from toolemu.episode.element_spec import elements_from_options, role_models

    values = ElementFlags.of(ctx).values()
    return elements_from_options(values), role_models(values)


GenerateDryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="--model mock: no model at all; placeholder names and texts that pass validation.",
        rich_help_panel=_M,
    ),
]


@dataclass(frozen=True)
class ModelFlagsForSchema(ModelFlags):
    """The model options where an unset max tokens means enough for the command's reply schema (generate), and
    --dry-run, the mock model in place of any other (as `toolemu run --dry-run`)."""

    max_tokens: MaxTokensAuto = None
    dry_run: GenerateDryRun = False

    def settings(self, **extra: Any) -> "LLMSettings":
        from toolemu.llm.dryrun import DRY_RUN_MODEL

        values = self.values()
        if values.pop("dry_run"):
            values["model"] = DRY_RUN_MODEL
        return llm_settings(**values, **extra)


@dataclass(frozen=True)
class ModelFlagsFixedTokens(ModelFlags):
    """The model options with a fixed default of 512 max tokens (robust's re-runs)."""

    max_tokens: MaxTokens = 512  # type: ignore[assignment]  # narrower than the base's int | None


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


def flag_error(exc: "ValidationError") -> InputError:
    """A pydantic error on command-line values as one line naming the flag (never echoing the value: it may be a
    key typed in the wrong place)."""
    _, message = first_error(exc)
    message = message.replace("Input should be", "expected")
    return InputError.single("command line", message, field=_flag_of(tuple(exc.errors()[0]["loc"])))


def llm_settings(**values: object) -> "LLMSettings":
    """Collect a command's model options; a bad value is one clear error line."""
    from pydantic import ValidationError  # the model layer's types load when a command runs, not for --help

    from toolemu.llm import LLMSettings

    given = {k: v for k, v in values.items() if v is not None}
    for name, bound in limits.MODEL_FIELDS.items():
        bound.check(given.get(name))
    # --vllm-* flags -> LLMSettings.vllm (VLLMOptions); --vllm-arg -> its `args`
    vllm = {k.removeprefix("vllm_"): given.pop(k) for k in [k for k in given if k.startswith("vllm_")]}
    for name, bound in limits.VLLM_FIELDS.items():
        bound.check(vllm.get(name))
    if "arg" in vllm:
        vllm["args"] = tuple(vllm.pop("arg"))
    try:
        return LLMSettings(**given, **({"vllm": vllm} if vllm else {}))
    except ValidationError as exc:
        raise flag_error(exc) from None
