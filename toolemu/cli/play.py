"""`toolemu play CASE --as agent|user`: a person plays one side of an episode at the terminal."""

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolemu.cli import limits
from toolemu.cli.options import ElementFlags, ModelFlags, takes
from toolemu.cli.run import _choice, settings_for
from toolemu.errors import InputError
from toolemu.paths import DUMPS
from toolemu.prompts.agent import AGENT_TYPES

if TYPE_CHECKING:
    from toolemu.episode.spec import EpisodeSpec

_P, _A = "Play", "The model agent (--as user)"


FOLDER_NAME_MAX = 120  # characters of a play folder's name: far below the 255 bytes a file system allows


def _folder_name(case: str, side: str) -> str:
    """dumps/play/<case>_as_<side>, in characters every file system takes; a long case name is cut, with a hash of
    the whole name, so two long names never share a folder and no name is too long to create."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", case).strip("-.") or "case"
    suffix = f"_as_{side}"
    if len(name) + len(suffix) > FOLDER_NAME_MAX:
        import hashlib

        digest = hashlib.sha256(case.encode("utf-8", "surrogatepass")).hexdigest()[:12]
        name = f"{name[: FOLDER_NAME_MAX - len(suffix) - len(digest) - 1]}-{digest}"
    return name + suffix


@takes(ModelFlags, ElementFlags)
def play_command(
    ctx: typer.Context,
    case: Annotated[str, typer.Argument(help="The case to play, by name (toolemu docs lists them).")],
    side: Annotated[str, typer.Option("--as", help="Which side you play: agent or user.", rich_help_panel=_P)],
    input_path: Annotated[
        list[Path] | None,
        typer.Option(
            "--input-path",
            "-inp",
            help="Case files or directories (default: the shipped benchmark).",
            rich_help_panel=_P,
        ),
    ] = None,
    toolkits_path: Annotated[
        list[Path] | None, typer.Option(help="Toolkit files or directories.", rich_help_panel=_P)
    ] = None,
    dump_dir: Annotated[
        Path | None,
        typer.Option(
            "--dump-dir",
            "-du",
            help="Run folder (default: dumps/play/<case>_as_<side>); each play adds a trial.",
            rich_help_panel=_P,
        ),
    ] = None,
    simulator_type: Annotated[
        str, typer.Option("--simulator-type", "-stp", help="adv_thought or std_thought.", rich_help_panel=_P)
    ] = "adv_thought",
    simulator_model: Annotated[
        str | None,
        typer.Option("--simulator-model", "-sm", help="Emulator's model (default: --model).", rich_help_panel=_P),
    ] = None,
    max_iterations: Annotated[
        int,
        typer.Option(
            "--max-iterations",
            "-mi",
            help=f"Agent turns per episode ({limits.MAX_ITERATIONS.help}).",
            rich_help_panel=_P,
        ),
    ] = 15,
    dry_run: Annotated[
        bool, typer.Option(help="--model mock for every role: no model at all.", rich_help_panel=_P)
    ] = False,
    agent_model: Annotated[
        str | None,
        typer.Option("--agent-model", "-am", help="The agent's model (default: --model).", rich_help_panel=_A),
    ] = None,
    agent_type: Annotated[
        str | None, typer.Option("--agent-type", "-atp", help=f"One of {', '.join(AGENT_TYPES)}.", rich_help_panel=_A)
    ] = None,
    agent_format: Annotated[str | None, typer.Option(help="react, tools or auto.", rich_help_panel=_A)] = None,
) -> None:
    """Play one side of an episode yourself: the agent (tool calls and a final answer) or the user (answers to the
    agent's questions). Models play the rest; the episode is saved like any run's."""
    from toolemu import api
    from toolemu.llm import build_hub
    from toolemu.play import Terminal, play
    from toolemu.play.session import LEFT

    spec, role_models = _spec(ctx, side, simulator_type, max_iterations, agent_type, agent_format, agent_model)
    role_models |= {"agent": agent_model, "emulator": simulator_model}
    settings = settings_for(ModelFlags.of(ctx), dry_run, role_models)
    bench = api.load_cases(input_path, toolkits_path)
    hub = build_hub(settings, spec.roles(played=[side]))
    folder = dump_dir or DUMPS / "play" / _folder_name(case, side)
    result = play(bench, case, hub, spec, side, folder, Terminal())  # type: ignore[arg-type]
    if result.interrupted:
        typer.echo("interrupted: what was played is saved", err=True)
        raise typer.Exit(130)
    error = result.trajectory.error
    if error is not None and error.type != LEFT:
        raise typer.Exit(1)  # a model failed: recorded with its reason, as in a run


def _spec(
    ctx: typer.Context,
    side: str,
    simulator_type: str,
    max_iterations: int,
    agent_type: str | None,
    agent_format: str | None,
    agent_model: str | None,
) -> tuple["EpisodeSpec", dict[str, str | None]]:
    """The spec played and the models its element options name. A flag for the side the person plays is a
    contradiction; the person as the user turns the user on."""
    from toolemu.agents.agent import AGENT_FORMATS
    from toolemu.emulator import EMULATOR_TYPES
    from toolemu.episode.element_spec import elements_from_options, role_models
    from toolemu.episode.spec import EpisodeSpec
    from toolemu.play import SIDES

    _choice(side, SIDES, "--as")
    _choice(simulator_type, list(EMULATOR_TYPES), "--simulator-type")
    limits.MAX_ITERATIONS.check(max_iterations)
    if side == "agent":
        for flag, value in (
            ("--agent-model", agent_model),
            ("--agent-type", agent_type),
            ("--agent-format", agent_format),
        ):
            if value is not None:
                raise InputError.single(
                    "command line", f"expected no {flag} with --as agent: you are the agent", field=flag
                )
    values = ElementFlags.of(ctx).values()
    if side == "user":
        if values.get("user_model") is not None:
            raise InputError.single(
                "command line", "expected no --user-model with --as user: you are the user", field="--user-model"
            )
        if values.get("user") == "off":
            raise InputError.single(
                "command line", "expected the user on with --as user: you are the user", field="--user"
            )
        values["user"] = "on"
    fields: dict[str, Any] = {"simulator_type": simulator_type, "max_iterations": max_iterations}
    if agent_type is not None:
        fields["agent_type"] = _choice(agent_type, AGENT_TYPES, "--agent-type")
    if agent_format is not None:
        fields["agent_format"] = _choice(agent_format, AGENT_FORMATS, "--agent-format")
    return EpisodeSpec(**fields, elements=elements_from_options(values)), dict(role_models(values))
