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
  `episode_options(ctx)` reads them back as the elements they ask for and the models they give their roles. An
  element option whose value is a role's model is not a flag of its own: the role's model is `--model ROLE=MODEL`,
  and the element's flag an old spelling (toolemu.cli.surface).
- One name per meaning: a renamed option is not declared again; its old spelling goes in `surface.RENAMED`, and
  tests/test_cli_surface.py's MEANING table gets a line for every new option name.
- Heavy library code is imported inside command bodies and methods such as `ModelFlags.settings`, never at the top of
  a cli module: `toolemu --help` loads only typer and these small modules.
- The modules typer reads (commands and groups) do not use `from __future__ import annotations`: typer would evaluate
  every annotation string of every command at each start (about half the app's build time). Names imported for type
  checking only are quoted there.
"""

import dataclasses
import functools
import re
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
_V = "vLLM server (vllm:<model>)"

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
    """The model options (--model and --dry-run among the common options, the rest in the panels "Model" and "vLLM
    server"); an unset max tokens means each backend's default."""

    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            metavar="[ROLE=]MODEL",
            help="The model of every role, or with ROLE= of one role (repeatable; roles: agent, emulator, evaluator, "
            "user, reviewer, monitor, realism, generator): openai:<m>, anthropic:<m>, vllm:<hf-id-or-path>[+<lora>], "
            "local, local:<file.gguf>.",
        ),
    ] = None
    dry_run: Annotated[bool, typer.Option("--dry-run", help="--model mock for every role: no model at all.")] = False
    temperature: Annotated[float, typer.Option(help="Sampling temperature.", rich_help_panel=_M)] = 0.0
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            "--random-seed",
            "-seed",
            help="Seed for sampling (where the backend takes one) and for --shuffle: 0 to 2^32-1.",
            rich_help_panel=_M,
        ),
    ] = None
    base_url: Annotated[
        str | None,
        typer.Option(help="OpenAI-compatible server (vLLM, llama.cpp, Ollama, OpenRouter).", rich_help_panel=_M),
    ] = None
    api_key_env: Annotated[
        str | None, typer.Option(help="Name of the environment variable holding the API key.", rich_help_panel=_M)
    ] = None
    timeout: Annotated[
        float, typer.Option(help="Seconds per model request (at most 86,400: a day).", rich_help_panel=_M)
    ] = 120.0
    structured: Annotated[
        str,
        typer.Option(
            help="Constrained decoding: auto, json_schema, json_object (llama.cpp server), prompt.",
            rich_help_panel=_M,
        ),
    ] = "auto"
    cache: Annotated[str, typer.Option(help="Response cache: rw, ro or off.", rich_help_panel=_M)] = "rw"
    cache_path: Annotated[Path, typer.Option(help="SQLite file of the response cache.", rich_help_panel=_M)] = (
        DEFAULT_CACHE_PATH
    )
    max_total_tokens: Annotated[
        int | None,
        typer.Option(
            help=f"Stop new work past this many tokens (at most {limits.MAX_TOTAL_TOKENS.most:,}).", rich_help_panel=_M
        ),
    ] = None
    max_cost: Annotated[
        float | None,
        typer.Option(
            help=f"Stop new work past this cost in USD (at most {limits.MAX_COST.most:,g}).", rich_help_panel=_M
        ),
    ] = None
    max_calls: Annotated[
        int | None,
        typer.Option(
            help=f"Stop new work past this many model calls (at most {limits.MAX_CALLS.most:,}).", rich_help_panel=_M
        ),
    ] = None
    # How `vllm:<model>` starts its `vllm serve` (ignored with --base-url, which connects to a running server).
    vllm_tensor_parallel_size: Annotated[
        int | None, typer.Option(help="GPUs to shard the model over (at most 1,024).", rich_help_panel=_V)
    ] = None
    vllm_quantization: Annotated[
        str | None, typer.Option(help="Quantization method: awq, gptq, fp8, bitsandbytes, ...", rich_help_panel=_V)
    ] = None
    vllm_max_model_len: Annotated[
        int | None, typer.Option(help="Context length in tokens (at most 100,000,000).", rich_help_panel=_V)
    ] = None
    vllm_gpu_memory_utilization: Annotated[
        float | None, typer.Option(help="Fraction of GPU memory vLLM may use (0-1].", rich_help_panel=_V)
    ] = None
    vllm_dtype: Annotated[
        str | None, typer.Option(help="Weights dtype: auto, bfloat16, float16, float32.", rich_help_panel=_V)
    ] = None
    vllm_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--vllm-arg",
            metavar="<str>",
            help="More `vllm serve` arguments, verbatim (repeatable; shell-split): --vllm-arg='--enforce-eager'.",
            rich_help_panel=_V,
        ),
    ] = None
    vllm_startup_timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds to wait for the server to be healthy (default 900, at most 86,400).", rich_help_panel=_V
        ),
    ] = None
    vllm_log_dir: Annotated[
        Path | None,
        typer.Option(
            help="Folder for the server's log (default: $TOOLEMU_VLLM_LOG_DIR or a temp folder).", rich_help_panel=_V
        ),
    ] = None
    # Unset means the backend's default (toolemu.llm.registry.Provider.default_max_tokens).
    max_tokens: Annotated[
        int | None,
        typer.Option(
            help="Max tokens per reply (default: the backend's, 4096 for API and vLLM models, 512 for the embedded "
            f"one; at most {limits.MAX_TOKENS.most:,}). A reply cut off at the limit is asked again with twice the "
            "room, up to 4x; never used cut off.",
            rich_help_panel=_M,
        ),
    ] = None

    @functools.cached_property
    def _split(self) -> tuple[str | None, dict[str, str]]:
        return split_models(self.model or [])

    @property
    def default_model(self) -> str | None:
        """The model of every role (a --model without ROLE=)."""
        return self._split[0]

    @property
    def roles(self) -> dict[str, str]:
        """The models of single roles (--model ROLE=MODEL)."""
        return dict(self._split[1])

    def take(self, role: str) -> tuple[str | None, "ModelFlags"]:
        """The model --model ROLE=... gives `role`, and these flags without it (for a command that reads it itself:
        a judge panel)."""
        found = self.roles.get(role)
        rest = [m for m in self.model or [] if ROLE_MODEL.fullmatch(m) is None or m.split("=", 1)[0] != role]
        return found, dataclasses.replace(self, model=rest or None)

    def settings(self, role_models: dict[str, str | None] | None = None, **extra: Any) -> "LLMSettings":
        """The checked model settings: --dry-run is the mock model for every role; `role_models` are the models
        that a role's own flag names (--agent-model M), merged with --model ROLE=M; `extra`: other fields the
        command adds. A bad value is one clear error line naming its flag."""
        from toolemu.llm.dryrun import DRY_RUN_MODEL

        values = self.values()
        del values["dry_run"]
        if self.dry_run:
            values["model"] = DRY_RUN_MODEL
            return llm_settings(**values, **extra)
        values["model"] = self.default_model
        named = merge_role_models(self.roles, role_models or {})
        return llm_settings(**values, **({"role_models": named} if named else {}), **extra)


# A --model value that names a role: ROLE=MODEL (a role is a word; a model string never starts with one and '=').
ROLE_MODEL = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)=(.*)", re.DOTALL)


def known_roles() -> tuple[str, ...]:
    """Every role a model can be given to: the model layer's and each registered element's."""
    from toolemu.episode.element_spec import element_options
    from toolemu.llm.options import ROLES

    return tuple(dict.fromkeys([*ROLES, *(o.role for o in element_options() if o.role is not None)]))


def split_models(values: list[str]) -> tuple[str | None, dict[str, str]]:
    """--model values as (the model of every role, {role: model}); a bad ROLE, an empty side of '=', two plain
    models or two models for one role are one line naming --model."""
    default: str | None = None
    roles: dict[str, str] = {}
    for value in values:
        found = ROLE_MODEL.fullmatch(value)
        if found is None:
            if value.startswith("="):
                raise _model_error("expected ROLE=MODEL with a role before '=', got '=...'")
            if default is not None:
                raise _model_error(
                    "expected ROLE=MODEL for a second --model: one plain --model is every role's model, each "
                    f"other names its role ({', '.join(known_roles())})"
                )
            default = value
            continue
        role, model = found[1], found[2]
        if role not in known_roles():
            raise _model_error(f"expected a role ({', '.join(known_roles())}) before '=', got {role[:40]!r}")
        if not model.strip():
            raise _model_error(f"expected a model after '{role}='")
        if roles.get(role, model) != model:
            raise _model_error(f"expected one model for the {role} role, got two")
        roles[role] = model
    return default, roles


def merge_role_models(given: dict[str, str], flags: dict[str, str | None]) -> dict[str, str]:
    """--model ROLE=M merged with the models a role's own flag (--agent-model M) names; two for one role are one
    line naming --model."""
    merged = dict(given)
    for role, model in flags.items():
        if not model:
            continue
        if merged.get(role, model) != model:
            raise _model_error(f"expected one model for the {role} role: --model {role}=... and its own flag name two")
        merged[role] = model
    return merged


def _model_error(message: str) -> InputError:
    return InputError.single("command line", message, field="--model")


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
        if o.role is not None:  # a role's model is --model ROLE=MODEL; its own flag is an old spelling (surface)
            continue
        kind: Any = list[str] | None if o.kind is list else (o.kind if o.default is not None else o.kind | None)
        option = typer.Option(*o.flags, help=o.text, rich_help_panel=o.panel)
        fields.append((o.key, Annotated[kind, option], dataclasses.field(default=o.default)))
    return dataclasses.make_dataclass("ElementFlags", fields, bases=(ElementFlags,), frozen=True)


def element_values(ctx: typer.Context) -> dict[str, Any]:
    """The element options' values, each role's model among them as --model ROLE=MODEL gives it (--model user=M:
    the user's model is M, which turns the user on)."""
    from toolemu.episode.element_spec import element_options

    values = ElementFlags.of(ctx).values()
    roles = ModelFlags.of(ctx).roles
    for o in element_options():
        if o.role is not None:
            values[o.key] = roles.get(o.role)
    return values


def episode_options(ctx: typer.Context) -> tuple[tuple["ElementSpec", ...], dict[str, str]]:
    """The elements the command's element options ask for (each count within its bound, each contradiction one line
    naming its flag), and the models they give their roles (--model user=M)."""
    from toolemu.episode.element_spec import role_models

    values = element_values(ctx)
    return elements(values), role_models(values)


def elements(values: dict[str, Any]) -> tuple["ElementSpec", ...]:
    """The elements `values` ask for; a contradiction an element finds in a role's model names it as it is given,
    --model ROLE=M (an element spec names its own option)."""
    from toolemu.episode.element_spec import element_options, elements_from_options
    from toolemu.errors import Problem

    try:
        return elements_from_options(values)
    except InputError as exc:
        named = {o.flag: f"--model {o.role}=" for o in element_options() if o.role is not None}
        problems = []
        for p in exc.problems:
            message = p.message
            for flag, new in named.items():
                message = re.sub(f"{re.escape(flag)}(?![\\w-])", new + "M", message)
            problems.append(Problem(p.file, message, p.item, named.get(p.field or "", p.field)))
        raise InputError(problems) from None


@dataclass(frozen=True)
class ModelFlagsForSchema(ModelFlags):
    """The model options where an unset max tokens means enough for the command's reply schema (generate), and
    --dry-run makes placeholders that pass validation."""

    # Unset means "as many as the command's reply schema can need", so no structured reply is cut off.
    max_tokens: Annotated[
        int | None,
        typer.Option(
            help=f"Max tokens per reply (default: enough for the reply schema; at most {limits.MAX_TOKENS.most:,}).",
            rich_help_panel=_M,
        ),
    ] = None
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="--model mock: no model at all; placeholder names and texts that pass validation.",
        ),
    ] = False


@dataclass(frozen=True)
class ModelFlagsFixedTokens(ModelFlags):
    """The model options with a fixed default of 512 max tokens (robust's re-runs)."""

    max_tokens: Annotated[
        int, typer.Option(help=f"Max tokens per reply (at most {limits.MAX_TOKENS.most:,}).", rich_help_panel=_M)
    ] = 512  # type: ignore[assignment]  # narrower than the base's int | None


# The flags whose names are not their field's: role_models.<role> and role_temperatures.<role>.


def _flag_of(loc: tuple[Any, ...]) -> str | None:
    names = [str(part) for part in loc if isinstance(part, str)]
    if not names:
        return None
    if names[0] == "role_models" and len(names) > 1:
        return f"--model {names[1]}="
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
