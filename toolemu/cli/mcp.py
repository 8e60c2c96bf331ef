"""`toolemu mcp serve`: emulated toolkits as an MCP server, each session one episode of a run folder."""

import os
import re
from typing import Annotated

import typer

from toolemu.cli import limits, outcome
from toolemu.cli.command import command, new_app
from toolemu.cli.options import ElementFlags, ModelFlags, episode_options, takes
from toolemu.cli.run import settings_for
from toolemu.cli.run_options import BudgetFlags, CaseFlags, EmulatorModelFlags, EpisodeFlags, ToolkitFlags
from toolemu.errors import InputError, one_of
from toolemu.paths import DEFAULT_MAX_ITERATIONS, DUMPS

mcp_app = new_app("Emulated toolkits over the Model Context Protocol (MCP), for agents outside ToolEmu.")

_S = "Serve"
TOKEN_ENV = "TOOLEMU_MCP_TOKEN"


def _http_address(value: str | None) -> tuple[str, int] | None:
    """--http HOST:PORT (or :PORT, or PORT: loopback); IPv6 hosts in brackets ([::1]:8000)."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]*):)?(\d{1,5})\s*", value)
    if not m or not 0 <= int(m[2]) <= 65535:
        raise InputError.single("command line", f"expected HOST:PORT (e.g. 127.0.0.1:8765), got {value!r}", "--http")
    return (m[1] or "127.0.0.1").strip("[]"), int(m[2])


def _folder_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:100] or "toolkits"


@command(mcp_app, "serve")
@takes(CaseFlags, EpisodeFlags, ToolkitFlags, ElementFlags, ModelFlags, EmulatorModelFlags, BudgetFlags)
def serve(
    ctx: typer.Context,
    case: Annotated[
        str | None, typer.Option("--case", help="The case whose toolkits to serve, by name.", rich_help_panel=_S)
    ] = None,
    toolkit: Annotated[
        list[str] | None,
        typer.Option(
            "--toolkit",
            help="Without --case: a toolkit to serve, by name (repeatable; default: every one of --toolkits-path).",
            rich_help_panel=_S,
        ),
    ] = None,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="HOST:PORT",
            help="Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST defaults to 127.0.0.1; port 0: "
            "any free one).",
            rich_help_panel=_S,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            help=f"The bearer token HTTP clients must send, at least 16 characters of letters, digits and -._~+/ "
            f"(default: ${TOKEN_ENV}, else a new one, printed).",
            rich_help_panel=_S,
            show_default=False,
        ),
    ] = None,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Let --http listen on an address other than loopback (0.0.0.0, a LAN address, a host name): the token "
            "then travels in plaintext and the DNS-rebinding checks are off; put TLS in front.",
            rich_help_panel=_S,
        ),
    ] = False,
    no_final_tool: Annotated[
        bool,
        typer.Option(
            "--no-final-tool",
            help="Hide the final_answer tool: a session then ends only when the client closes it.",
            rich_help_panel=_S,
        ),
    ] = False,
) -> None:
    """Serve a case's toolkits (or any toolkits) as an MCP server: every tool with its JSON schema, the user's
    instruction as a prompt, and a final_answer tool. Each session is one episode, emulated, added to a run folder
    that `toolemu evaluate` and `toolemu report` read. Over stdio by default (the client starts this command)."""
    from toolemu import api
    from toolemu.emulator import EMULATOR_TYPES
    from toolemu.episode.spec import EpisodeSpec
    from toolemu.llm import build_hub
    from toolemu.mcp.serve import check_address, check_token
    from toolemu.mcp.serve import serve as serve_toolkits
    from toolemu.specs import load_toolkits
    from toolemu.specs.load import Benchmark

    episode, toolkits_path = EpisodeFlags.of(ctx), ToolkitFlags.of(ctx).toolkits_path
    simulator_type = one_of(episode.simulator_type, list(EMULATOR_TYPES), "--simulator-type")
    max_iterations = DEFAULT_MAX_ITERATIONS if episode.max_iterations is None else episode.max_iterations
    limits.MAX_ITERATIONS.check(max_iterations)  # run.json's RunConfig refuses past it too
    if case is not None and toolkit:
        raise InputError.single("command line", "expected --case or --toolkit, not both", field="--toolkit")
    address = _http_address(http)
    if token is not None and address is None:
        raise InputError.single("command line", "expected --http with --token (stdio needs no token)", field="--token")
    if allow_remote and address is None:
        raise InputError.single("command line", "expected --http with --allow-remote", field="--allow-remote")
    if address is not None:
        if not allow_remote:  # refused before any work; served anyway, the server warns
            check_address(address[0], allow_remote)
        if token is not None:
            check_token(token, "--token")
        elif os.environ.get(TOKEN_ENV):  # set and empty is unset
            token = check_token(os.environ[TOKEN_ENV], TOKEN_ENV, "environment")
    elements, role_models = episode_options(ctx)
    spec = EpisodeSpec(simulator_type=simulator_type, max_iterations=max_iterations, elements=elements)
    if case is not None or (not toolkit and not toolkits_path):
        bench = api.load_cases(CaseFlags.of(ctx).input_path, toolkits_path)
    else:
        bench = Benchmark(toolkits=load_toolkits(toolkits_path))
    role_models = {**role_models, "emulator": EmulatorModelFlags.of(ctx).simulator_model}
    hub = build_hub(settings_for(ModelFlags.of(ctx), role_models), spec.roles(played=["agent"]))
    folder = episode.dump_dir or DUMPS / "mcp" / _folder_name(case or "+".join(toolkit or []) or "toolkits")

    def announce(url: str, given: str) -> None:
        typer.echo(f"url: {url}")
        typer.echo(f"token: {given}")
        typer.echo("(send it as Authorization: Bearer <token>; Ctrl-C stops the server)", err=True)

    result = serve_toolkits(
        bench,
        hub,
        spec,
        folder,
        final_tool=not no_final_tool,
        case_name=case,
        toolkit_names=toolkit or [],
        http=address,
        token=token,
        announce=announce,
        allow_remote=allow_remote,
    )
    typer.echo(f"episodes recorded: {len(result.episodes)} in {result.folder}", err=True)
    if result.episodes:
        typer.echo(f"judge them: toolemu evaluate {result.folder}   then: toolemu report {result.folder}", err=True)
    if result.unwritten:  # as a run whose records cannot be written: one line each, exit 2
        raise InputError([p for e in result.unwritten for p in e.problems])
    cut = f"{result.stopped_episodes} episode(s) under way recorded as stopped" if result.stopped_episodes else ""
    if result.stop_kind in ("interrupted", "terminated"):
        typer.echo(f"server stopped ({result.stop_kind}){'; ' + cut if cut else ''}", err=True)
        raise typer.Exit(outcome.INTERRUPTED if result.stop_kind == "interrupted" else outcome.TERMINATED)
    if result.stop_kind == "access":
        raise InputError.single("model", f"{result.stop_reason}; the server stopped{' (' + cut + ')' if cut else ''}")
    if result.stop_kind == "budget":
        fail_on_budget = BudgetFlags.of(ctx).fail_on_budget
        then = "exit 3 (--fail-on-budget)" if fail_on_budget else "exit 0; --fail-on-budget makes it exit 3"
        typer.echo(f"budget: {result.stop_reason}: the server stopped{'; ' + cut if cut else ''} ({then})")
        if fail_on_budget:
            raise typer.Exit(outcome.BUDGET)
