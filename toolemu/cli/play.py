"""`toolemu play CASE --as agent|user`: a person plays one side of an episode at the terminal."""

import re
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolemu.cli import limits
from toolemu.cli.options import ElementFlags, ModelFlags, element_values, elements, takes
from toolemu.cli.run import settings_for
from toolemu.cli.run_options import (
    AgentFlags,
    AgentModelFlags,
    CaseFlags,
    EmulatorModelFlags,
    EpisodeFlags,
    ToolkitFlags,
    alias_models,
)
from toolemu.errors import InputError, one_of
from toolemu.paths import DEFAULT_MAX_ITERATIONS, DUMPS
from toolemu.prompts.agent import AGENT_TYPES

if TYPE_CHECKING:
    from toolemu.episode.spec import EpisodeSpec


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


@takes(CaseFlags, EpisodeFlags, ToolkitFlags, AgentFlags, ElementFlags, ModelFlags, AgentModelFlags, EmulatorModelFlags)
def play_command(
    ctx: typer.Context,
    case: Annotated[str, typer.Argument(help="The case to play, by name (toolemu docs lists them).")],
    side: Annotated[str, typer.Option("--as", help="Which side you play: agent or user.")],
) -> None:
    """Play one side of an episode yourself: the agent (tool calls and a final answer) or the user (answers to the
    agent's questions). Models play the rest; the episode is saved like any run's."""
    from toolemu import api
    from toolemu.llm import build_hub
    from toolemu.play import Terminal, play
    from toolemu.play.session import LEFT

    agent, episode = AgentFlags.of(ctx), EpisodeFlags.of(ctx)
    spec, role_models = _spec(ctx, side)
    role_models |= alias_models(ctx, "agent", "emulator")
    temperatures = {"agent": agent.agent_temperature} if agent.agent_temperature is not None else {}
    settings = settings_for(ModelFlags.of(ctx), role_models, role_temperatures=temperatures)
    bench = api.load_cases(CaseFlags.of(ctx).input_path, ToolkitFlags.of(ctx).toolkits_path)
    hub = build_hub(settings, spec.roles(played=[side]))
    folder = episode.dump_dir or DUMPS / "play" / _folder_name(case, side)
    result = play(bench, case, hub, spec, side, folder, Terminal())  # type: ignore[arg-type]
    if result.interrupted:
        typer.echo("interrupted: what was played is saved", err=True)
        raise typer.Exit(130)
    error = result.trajectory.error
    if error is not None and error.type != LEFT:
        raise typer.Exit(1)  # a model failed: recorded with its reason, as in a run


def _spec(ctx: typer.Context, side: str) -> tuple["EpisodeSpec", dict[str, str | None]]:
    """The spec played and the models its element options name. A flag for the side the person plays is a
    contradiction; the person as the user turns the user on."""
    from toolemu.agents.agent import AGENT_FORMATS
    from toolemu.emulator import EMULATOR_TYPES
    from toolemu.episode.element_spec import role_models
    from toolemu.episode.spec import EpisodeSpec
    from toolemu.play import SIDES

    agent, episode, model = AgentFlags.of(ctx), EpisodeFlags.of(ctx), ModelFlags.of(ctx)
    one_of(side, SIDES, "--as")
    one_of(episode.simulator_type, list(EMULATOR_TYPES), "--simulator-type")
    max_iterations = DEFAULT_MAX_ITERATIONS if episode.max_iterations is None else episode.max_iterations
    limits.MAX_ITERATIONS.check(max_iterations)
    agent_type = "quit" if agent.quit else agent.agent_type
    if side == "agent":
        for flag, value in (
            ("--model agent=", model.roles.get("agent")),
            ("--agent-model", AgentModelFlags.of(ctx).agent_model),
            ("--agent-type", agent.agent_type),
            ("--quit", True if agent.quit else None),
            ("--agent-temperature", agent.agent_temperature),
            ("--agent-format", agent.agent_format),
        ):
            if value is not None:
                raise InputError.single(
                    "command line", f"expected no {flag} with --as agent: you are the agent", field=flag
                )
    values = element_values(ctx)
    if side == "user":
        if values.get("user_model") is not None:
            raise InputError.single(
                "command line", "expected no --model user=... with --as user: you are the user", field="--model"
            )
        if values.get("user") == "off":
            raise InputError.single(
                "command line", "expected the user on with --as user: you are the user", field="--user"
            )
        values["user"] = "on"
    fields: dict[str, Any] = {"simulator_type": episode.simulator_type, "max_iterations": max_iterations}
    if agent_type is not None:
        fields["agent_type"] = one_of(agent_type, AGENT_TYPES, "--agent-type")
    if agent.agent_format is not None:
        fields["agent_format"] = one_of(agent.agent_format, AGENT_FORMATS, "--agent-format")
    return EpisodeSpec(**fields, elements=elements(values)), dict(role_models(values))
