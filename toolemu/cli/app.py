"""The `toolemu` command. Every subcommand is a thin layer over library functions."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolemu.cli import options as o
from toolemu.cli import outcome
from toolemu.cli import run as run_module
from toolemu.cli.agree import agree
from toolemu.cli.check import check
from toolemu.cli.docs import docs
from toolemu.cli.evaluate import evaluate
from toolemu.cli.export import export_app
from toolemu.cli.generate import generate_app
from toolemu.cli.merge import merge
from toolemu.cli.play import play_command
from toolemu.cli.replay import replay
from toolemu.cli.report import report, view
from toolemu.cli.robust import robust
from toolemu.cli.submit import submit_app
from toolemu.errors import InputError
from toolemu.llm import LocalModelError, ModelConfigError, build_hub, system, user
from toolemu.llm.secrets import RedactingFilter, redact
from toolemu.llm.stops import ModelAccessDenied
from toolemu.llm.structured import StructuredOutputError
from toolemu.llm.usage import BudgetExceeded
from toolemu.paths import ASSETS
from toolemu.specs import load_benchmark
from toolemu.specs.lint import lint_benchmark
from toolemu.specs.load import read_json_items
from toolemu.specs.version import VERSION_FILE, read_version, version_problems

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="ToolEmu: an LM-emulated sandbox for finding the risks of LLM agents.",
)
app.add_typer(generate_app, name="generate")
app.add_typer(export_app, name="export")
app.add_typer(submit_app, name="submit")


def setup_logging(verbose: bool = False) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("toolemu: %(message)s"))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger("toolemu")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    root.propagate = False


@app.command()
def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Toolkit and case files or directories (default: the shipped benchmark)."),
    ] = None,
    toolkits: Annotated[
        list[Path] | None, typer.Option("--toolkits", help="Extra toolkits that cases may name.")
    ] = None,
) -> None:
    """Check ToolEmu-format toolkits and cases; print one summary line per file."""
    known = load_benchmark(toolkits).toolkits if toolkits else None
    bench = load_benchmark(paths or [ASSETS], known_toolkits=known)
    for summary in bench.files:
        typer.echo(summary.line())
    typer.echo(f"ok: {len(bench.toolkits)} toolkits, {bench.num_tools} tools, {len(bench.cases)} cases")


@app.command()
def lint(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="The benchmark: toolkit and case files or directories (default: the shipped one)."),
    ] = None,
) -> None:
    """Check benchmark rules on top of validation, and print coverage. A folder with a VERSION file (the shipped
    benchmark) must also have the content hash that its version records in CHANGELOG.md."""
    paths = paths or [ASSETS]
    bench = load_benchmark(paths)
    problems, coverage = lint_benchmark(bench, " ".join(map(str, paths)))
    versioned = [p for p in paths if (p / VERSION_FILE).is_file()]
    for folder in versioned:
        problems += version_problems(bench, folder)
    for line in coverage.lines():
        typer.echo(line)
    if problems:
        raise InputError(problems)
    for folder in versioned:
        typer.echo(f"version: {read_version(folder / VERSION_FILE)}, content hash as recorded")
    typer.echo("lint: ok")


@app.command()
@o.with_options(o.model_group(per_backend=True))
def chat(
    prompt: Annotated[str, typer.Argument(help="The user message.")],
    role: Annotated[str, typer.Option(help="Which role's model answers.")] = "agent",
    schema: Annotated[Path | None, typer.Option(help="JSON schema file the reply must match.")] = None,
    system_prompt: Annotated[str, typer.Option("--system", help="System message.")] = "You are a helpful assistant.",
    *,
    model_flags: o.ModelFlags,
) -> None:
    """Send one message to a role's model and print the reply (JSON when --schema is given)."""
    settings = o.llm_settings(**model_flags)
    schema_obj = None
    if schema is not None:
        schema_obj = read_json_items(schema)[0]
    hub = build_hub(settings, (role,))
    reply = hub.model(role).complete([system(system_prompt), user(prompt)], schema=schema_obj)
    typer.echo(json.dumps(reply.value, ensure_ascii=False) if schema_obj is not None else reply.text)
    usage = hub.tracker.total()
    logging.getLogger("toolemu").info(
        "%s: %d prompt + %d completion tokens, %.1fs%s",
        hub.model(role).options.model,
        usage.prompt_tokens,
        usage.completion_tokens,
        reply.latency_s,
        " (cached)" if reply.cached else "",
    )


app.command("emulate")(run_module.emulate)
app.command("merge")(merge)
app.command("evaluate")(evaluate)
app.command("report")(report)
app.command("view")(view)
app.command("run")(run_module.run)
app.command("check")(check)
app.command("docs")(docs)
app.command("agree")(agree)
app.command("play")(play_command)
app.command("replay")(replay)
app.command("robust")(robust)


def _click_exceptions() -> Any:
    """click's exception classes: recent typer vendors click as typer._click, older typer uses click itself."""
    try:
        from typer._click import exceptions
    except ImportError:
        from click import exceptions
    return exceptions


_CLICK = _click_exceptions()
_NO_ARGS_IS_HELP = getattr(_CLICK, "NoArgsIsHelpError", ())  # click >= 8.2; nothing to catch before


def main() -> None:
    setup_logging()
    try:
        # Not standalone: click's usage errors come here, to be one line like every other bad input.
        result = app(standalone_mode=False)
    except _NO_ARGS_IS_HELP as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except _CLICK.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "toolemu"
        message = " ".join(exc.format_message().split())
        typer.echo(redact(f"error: command line: {message} (see {command} --help)"), err=True)
        sys.exit(outcome.BAD_INPUT)
    except _CLICK.ClickException as exc:
        typer.echo(redact(f"error: {' '.join(exc.format_message().split())}"), err=True)
        sys.exit(exc.exit_code)
    except typer.Abort:  # end of input at a confirmation prompt
        typer.echo("aborted", err=True)
        sys.exit(outcome.FAILED)
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(redact(f"error: {problem}"), err=True)
        sys.exit(outcome.BAD_INPUT)
    except BudgetExceeded as exc:  # a command with nothing partial to keep (chat, generate)
        typer.echo(redact(f"error: {exc}"), err=True)
        sys.exit(outcome.BUDGET)
    except (ModelConfigError, LocalModelError, ModelAccessDenied, StructuredOutputError) as exc:
        typer.echo(redact(f"error: {exc}"), err=True)
        sys.exit(outcome.BAD_INPUT)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(outcome.INTERRUPTED)
    # A command's own value on success; an int is the code of a typer.Exit it raised.
    sys.exit(result if isinstance(result, int) and not isinstance(result, bool) else outcome.OK)


if __name__ == "__main__":
    main()
