"""`toolemu generate ...`: the generation pipeline, one subcommand per step.

names -> toolkits -> cases, and `complete` for a partial case. Every command takes the same model options
as `toolemu chat`; the model answers as the "generator" role. `--dry-run` uses the mock model instead, whose
placeholder names and texts pass validation: the pipeline tried end to end with no model.
"""

import dataclasses
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolemu.cli import limits
from toolemu.cli.command import command, new_app
from toolemu.cli.options import ModelFlags, ModelFlagsForSchema, takes
from toolemu.cli.run_options import ToolkitFlags
from toolemu.errors import InputError

if TYPE_CHECKING:
    from toolemu.generation.names import ToolkitIdea
    from toolemu.generation.schemas import Schema
    from toolemu.llm import LLMSettings, ModelHub

generate_app = new_app("Generate toolkits and test cases with a model; every file is validated before it is written.")
log = logging.getLogger("toolemu")

Out = Annotated[Path | None, typer.Option("--out", help="Where to write.")]
ToolkitNames = Annotated[list[str] | None, typer.Option("--toolkit", help="A toolkit the case uses (repeat).")]
Mode = Annotated[str, typer.Option(help="standard, or redteam: underspecified so a risky action is likely.")]
Threat = Annotated[
    str | None,
    # "auto" is toolemu.generation.AUTO_THREAT, named here so that --help loads no generation code (a test checks it)
    typer.Option(help="Add a security scenario: auto or a threat kind (prompt_injection, ...)."),
]
Append = Annotated[bool, typer.Option(help="Keep the cases already in --out and add these.")]


def build_hub(settings: "LLMSettings", roles: tuple[str, ...]) -> "ModelHub":
    """The model layer's hub (loaded when a command runs); a name of this module's own, which tests replace."""
    from toolemu.llm import build_hub as build

    return build(settings, roles)


def _hub(flags: ModelFlags, schemas: list["Schema"]) -> "ModelHub":
    """The generator's model from a command's model options; max tokens default to what the schemas need."""
    from toolemu.generation import reply_token_bound
    from toolemu.generation.call import ROLE

    needed = max(reply_token_bound(s) for s in schemas)
    return build_hub(dataclasses.replace(flags, max_tokens=flags.max_tokens or needed).settings(), (ROLE,))


def _usage(hub: "ModelHub") -> None:
    from toolemu.generation.call import ROLE

    u = hub.tracker.total()
    log.info(
        "%s: %d calls (%d cached), %d prompt + %d completion tokens",
        hub.model(ROLE).options.model,
        u.calls,
        u.cache_hits,
        u.prompt_tokens,
        u.completion_tokens,
    )


@command(generate_app)
def domains() -> None:
    """List the built-in taxonomy of domains (no model call)."""
    from toolemu.generation import DOMAINS

    for d in DOMAINS:
        typer.echo(f"{d.name}: {d.description}")


@command(generate_app)
@takes(ModelFlagsForSchema)
def names(
    ctx: typer.Context,
    domain: Annotated[
        list[str] | None,
        typer.Option(help="A built-in domain, or your own as 'Name: what it covers' (repeat; default: all)."),
    ] = None,
    per_domain: Annotated[int, typer.Option(help=f"Toolkit names per domain ({limits.PER_DOMAIN.help}).")] = 2,
    avoid: Annotated[
        list[Path] | None, typer.Option(help="Toolkit files or directories whose names must not be reused.")
    ] = None,
    out: Out = None,
) -> None:
    """Step 1: toolkit names from the taxonomy -> a JSON list of {name, category, description}."""
    from toolemu.generation import DEFAULT_DIR, generate_toolkit_names, resolve_domains, write_names
    from toolemu.generation.names import names_schema
    from toolemu.specs import load_benchmark

    limits.PER_DOMAIN.check(per_domain)
    chosen = resolve_domains(domain or [])
    taken = list(load_benchmark(avoid).toolkits) if avoid else []
    hub = _hub(ModelFlagsForSchema.of(ctx), [names_schema(max(per_domain, 1))])
    ideas = generate_toolkit_names(hub, chosen, per_domain, taken)
    path = write_names(out or DEFAULT_DIR / "toolkit_names.json", ideas)
    typer.echo(f"wrote {path}: {len(ideas)} toolkit names")
    _usage(hub)


def _ideas(names_file: Path | None, name: list[str] | None, category: str) -> list["ToolkitIdea"]:
    from toolemu.generation import read_names
    from toolemu.generation.names import ToolkitIdea
    from toolemu.generation.text import camel, clean

    ideas = read_names(names_file) if names_file else []
    for entry in name or []:
        head, _, tail = entry.partition(":")
        kit = camel(head, "")
        if not kit:
            raise InputError.single("command line", f"expected a toolkit name, got '{entry}'", field="--name")
        ideas.append(ToolkitIdea(name=kit, category=category, description=clean(tail) or clean(head)))
    if not ideas:
        raise InputError.single("command line", "expected --names FILE or at least one --name")
    return ideas


@command(generate_app)
@takes(ModelFlagsForSchema)
def toolkits(
    ctx: typer.Context,
    names_file: Annotated[Path | None, typer.Option("--names", help="A names file from step 1.")] = None,
    name: Annotated[
        list[str] | None, typer.Option(help="A toolkit to write, as 'Name' or 'Name: what it does' (repeat).")
    ] = None,
    category: Annotated[str, typer.Option(help="Domain of the --name toolkits.")] = "General",
    min_tools: Annotated[int, typer.Option(help=f"Fewest tools per toolkit ({limits.MIN_TOOLS.help}).")] = 3,
    max_tools: Annotated[int, typer.Option(help=f"Most tools per toolkit ({limits.MAX_TOOLS.help}).")] = 6,
    out: Annotated[Path | None, typer.Option("--out", help="Directory for <Toolkit>.json files.")] = None,
) -> None:
    """Step 2: toolkit specs from names -> one ToolEmu-format <Toolkit>.json per toolkit."""
    from toolemu.generation import DEFAULT_DIR, generate_toolkit, toolkit_schemas, write_toolkits

    limits.MIN_TOOLS.check(min_tools)
    limits.MAX_TOOLS.check(max_tools)
    if min_tools > max_tools:
        message = f"expected 1 <= min tools <= max tools, got {min_tools} and {max_tools}"
        raise InputError.single("command line", message, field="--min-tools")
    ideas = _ideas(names_file, name, category)
    hub = _hub(ModelFlagsForSchema.of(ctx), toolkit_schemas(max(min_tools, 1), max(max_tools, min_tools, 1)))
    out_dir = out or DEFAULT_DIR / "toolkits"
    for idea in ideas:
        # Written one by one: a failure later on keeps the toolkits already made.
        kit = generate_toolkit(hub, idea, min_tools, max_tools)
        (path,) = write_toolkits(out_dir, [kit])
        typer.echo(f"wrote {path}: {len(kit.tools)} tools")
    _usage(hub)


@command(generate_app)
@takes(ModelFlagsForSchema, ToolkitFlags)
def cases(
    ctx: typer.Context,
    toolkit: ToolkitNames = None,
    count: Annotated[
        int, typer.Option(help=f"Cases per toolkit (or per --toolkit set; {limits.CASES_PER_TOOLKIT.help}).")
    ] = 2,
    mode: Mode = "standard",
    threat: Threat = None,
    out: Annotated[Path | None, typer.Option("--out", help="JSON file for the cases.")] = None,
    append: Append = False,
) -> None:
    """Step 3: test cases for toolkits -> a JSON array of ToolEmu-format cases.

    With --toolkit, every case uses those toolkits together; without, each loaded toolkit gets its own.
    """
    from toolemu.generation import DEFAULT_DIR, case_schema, check_options, generate_cases, select_toolkits, write_cases
    from toolemu.generation.output import existing_cases
    from toolemu.specs import load_toolkits

    limits.CASES_PER_TOOLKIT.check(count)
    check_options(mode, threat)
    known = load_toolkits(ToolkitFlags.of(ctx).toolkits_path)
    groups = [select_toolkits(toolkit, known)] if toolkit else [[k] for k in known.values()]
    hub = _hub(ModelFlagsForSchema.of(ctx), [case_schema(g, "redteam", threat) for g in groups])
    path = out or DEFAULT_DIR / "cases.json"
    for i, group in enumerate(groups):
        before = existing_cases(path, known) if append or i else []
        made = generate_cases(
            hub,
            group,
            count,
            mode,  # type: ignore[arg-type]
            threat,
            [c.name for c in before],
            [c.user_instruction for c in before],
        )
        # Written per group, appending after the first: a later failure keeps what was made.
        write_cases(path, made, known, append=append or i > 0)
        typer.echo(f"wrote {path}: {len(made)} cases for {', '.join(k.toolkit for k in group)}")
    _usage(hub)


def _partial(instruction: str | None, partial: Path | None, toolkit: list[str] | None) -> dict[str, Any]:
    from toolemu.specs.load import read_json_items

    data: dict[str, Any] = {}
    if partial is not None:
        item = read_json_items(partial)[0]
        if not isinstance(item, dict):
            raise InputError.single(partial, f"expected a JSON object, got {type(item).__name__}")
        data.update(item)
    if instruction:
        data["User Instruction"] = instruction
    if toolkit:
        data["Toolkits"] = toolkit
    if not data.get("User Instruction"):
        raise InputError.single("command line", "expected an INSTRUCTION or a --partial file that has one")
    if not data.get("Toolkits"):
        raise InputError.single("command line", "expected --toolkit NAME or 'Toolkits' in the --partial file")
    return data


@command(generate_app)
@takes(ModelFlagsForSchema, ToolkitFlags)
def complete(
    ctx: typer.Context,
    instruction: Annotated[str | None, typer.Argument(help="The user's instruction to the agent.")] = None,
    toolkit: ToolkitNames = None,
    partial: Annotated[
        Path | None,
        typer.Option(help="A partial case (JSON object): its keys are kept, the missing ones filled in."),
    ] = None,
    mode: Mode = "standard",
    threat: Threat = None,
    out: Annotated[Path | None, typer.Option("--out", help="JSON file for the case.")] = None,
    append: Append = False,
) -> None:
    """Step 4: complete a partial case (an instruction and its toolkits) -> a JSON array with the case."""
    from toolemu.generation import (
        AUTO_THREAT,
        DEFAULT_DIR,
        case_schema,
        check_options,
        complete_case,
        select_toolkits,
        write_cases,
    )
    from toolemu.generation.output import existing_cases
    from toolemu.specs import load_toolkits

    check_options(mode, threat)
    data = _partial(instruction, partial, toolkit)
    known = load_toolkits(ToolkitFlags.of(ctx).toolkits_path)
    group = select_toolkits(list(data["Toolkits"]), known)
    path = out or DEFAULT_DIR / "completed_cases.json"
    before = existing_cases(path, known) if append else []
    hub = _hub(ModelFlagsForSchema.of(ctx), [case_schema(group, "redteam", threat or AUTO_THREAT)])
    case = complete_case(hub, data, known, mode, threat, [c.name for c in before])  # type: ignore[arg-type]
    write_cases(path, [case], known, append=append)
    typer.echo(json.dumps(case.to_json(), ensure_ascii=False, indent=2))
    typer.echo(f"wrote {path}: case {case.name}")
    _usage(hub)
