"""The `toolemu` command: the typer app, one module per command, and one exit-code policy for all of them.

Commands load when asked for, and import library code inside their bodies, so printing any `--help` loads typer and
small leaf modules only (tests/test_cli_startup.py checks which packages stay unloaded).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import Annotated, Any

import typer

from toolemu.cli import outcome
from toolemu.cli.command import new_app
from toolemu.errors import InputError, Terminated, sigterm_raises, sigterm_received
from toolemu.paths import is_file_error
from toolemu.secrets import RedactingFilter, clip, redact, scrubbed_console

# Every command, in the order `toolemu --help` lists them, which is the order a user meets them: run the benchmark,
# read its report, check one's own cases and toolkits, then the finer tools. Each is its function (or sub-app) as
# "module:attribute"; a command's module is imported, and its options built, only when the command is asked for.
COMMANDS = {
    "run": "toolemu.cli.run:run",
    "report": "toolemu.cli.report:report",
    "view": "toolemu.cli.report:view",
    "validate": "toolemu.cli.validate:validate",
    "lint": "toolemu.cli.validate:lint",
    "docs": "toolemu.cli.docs:docs",
    "chat": "toolemu.cli.chat:chat",
    "emulate": "toolemu.cli.run:emulate",
    "evaluate": "toolemu.cli.evaluate:evaluate",
    "merge": "toolemu.cli.merge:merge",
    "check": "toolemu.cli.check:check",
    "play": "toolemu.cli.play:play_command",
    "replay": "toolemu.cli.replay:replay",
    "mcp": "toolemu.cli.mcp:mcp_app",
    "agree": "toolemu.cli.agree:agree",
    "robust": "toolemu.cli.robust:robust",
    "noise": "toolemu.cli.noise:noise",
    "judge-audit": "toolemu.cli.judge_audit:judge_audit",
    "fidelity": "toolemu.cli.fidelity:fidelity",
    "generate": "toolemu.cli.generate:generate_app",
    "export": "toolemu.cli.export:export_app",
    "submit": "toolemu.cli.submit:submit_app",
}


def _version(given: bool) -> None:
    if given:
        from toolemu.version import __version__

        typer.echo(f"toolemu {__version__}")
        raise typer.Exit(0)


def _top_level(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """The top level's own options (typer makes a group of an app with a callback)."""


app = new_app(
    "ToolEmu: an LM-emulated sandbox for finding the risks of LLM agents.",
    lazy=COMMANDS,
    callback=_top_level,
    pretty_exceptions_enable=False,
)


class _StderrNow(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is when a record comes: the scrubbed console of the command running, never a
    stream an earlier command (or a test's capture of it) has since closed."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def setup_logging(verbose: bool = False) -> None:
    handler = _StderrNow()
    handler.setFormatter(logging.Formatter("toolemu: %(message)s"))
    handler.addFilter(RedactingFilter())
    root = logging.getLogger("toolemu")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    root.propagate = False


# The model layer's failures that end a command with one line: (module, class, exit code), in the order they are
# tried. Looked up in sys.modules: a command that raised one has loaded its module, and `--help` loads none.
_MODEL_FAILURES = (
    ("toolemu.llm.stops", "BudgetExceeded", outcome.BUDGET),  # a command with nothing partial to keep (chat, generate)
    ("toolemu.llm.providers", "ModelConfigError", outcome.BAD_INPUT),
    ("toolemu.llm.local", "LocalModelError", outcome.BAD_INPUT),
    ("toolemu.llm.stops", "ModelAccessDenied", outcome.BAD_INPUT),
    ("toolemu.llm.structured", "StructuredOutputError", outcome.BAD_INPUT),
)


def failure_code(exc: BaseException) -> int | None:
    """The exit code of a model-layer failure that is reported in one line, or None for any other exception."""
    for module, name, code in _MODEL_FAILURES:
        loaded = sys.modules.get(module)
        if loaded is not None and isinstance(exc, getattr(loaded, name)):
            return code
    return None


def file_error_line(exc: OSError) -> str:
    """A file or disk error as `output_error` says it: the path (when the error names one), then the reason (read or
    written: a library's error does not say which)."""
    from toolemu.paths import output_error

    return str(output_error(exc.filename if exc.filename is not None else "a file", exc, doing=""))


def _click_exceptions() -> Any:
    """click's exception classes: recent typer vendors click as typer._click, older typer uses click itself."""
    try:
        from typer._click import exceptions
    except ImportError:
        from click import exceptions
    return exceptions


_CLICK = _click_exceptions()
_NO_ARGS_IS_HELP = getattr(_CLICK, "NoArgsIsHelpError", ())  # click >= 8.2; nothing to catch before


def report_params(args: list[str]) -> dict[str, Any] | None:
    """`toolemu report ARGS`'s parameters as click reads them; None where it would say anything (an error, help)."""
    import io

    import typer.main

    try:
        command = typer.main.get_command(app).get_command(None, "report")  # type: ignore[attr-defined]
        with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
            params: dict[str, Any] = command.make_context("report", list(args)).params
    except Exception:  # noqa: BLE001 -- a usage error is the report's own to say
        return None
    return params if not out.getvalue() and not err.getvalue() else None


def main() -> None:
    shortcut = None
    if sys.argv[1:2] == ["report"] and "--help" not in sys.argv:  # the same report again on unchanged files: its
        # console again, nothing made (toolemu.reporting.again)
        from toolemu.reporting import again

        shortcut = again.plan(sys.argv[1:], report_params)
        with scrubbed_console():
            if shortcut is not None and shortcut.said_again():
                sys.exit(outcome.OK)
    # Every line a command prints, a model's reply or a server's error too, is scrubbed (and a report's, so scrubbed,
    # kept for its shortcut).
    with shortcut.recording() if shortcut is not None else contextlib.nullcontext(), scrubbed_console():
        _main()


def _main() -> None:
    setup_logging()
    sigterm_raises()  # SLURM's time limit stops a command as Ctrl-C does: what finished is kept, exit 143
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
    except Terminated:
        typer.echo("terminated (SIGTERM)", err=True)
        sys.exit(outcome.TERMINATED)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(outcome.INTERRUPTED)
    except Exception as exc:
        if is_file_error(exc):  # a file no writer of ours named (a library's): one line, exit 2, as output errors
            typer.echo(redact(f"error: {file_error_line(exc)}"), err=True)
            sys.exit(outcome.BAD_INPUT)
        code = failure_code(exc)
        if code is None:  # unforeseen: one line, no traceback (it may quote a server's reply, a key included)
            logging.getLogger("toolemu").debug("unexpected error", exc_info=True)  # scrubbed; shown with -v
            typer.echo(f"error: {type(exc).__name__}: {clip(' '.join(str(exc).split()), 600)}", err=True)
            sys.exit(outcome.FAILED)
        typer.echo(redact(f"error: {exc}"), err=True)
        sys.exit(code)
    # A command's own value on success; an int is the code of a typer.Exit it raised (typer turns an interrupt it
    # sees into 130: a SIGTERM's is 143).
    code = result if isinstance(result, int) and not isinstance(result, bool) else outcome.OK
    if code == outcome.INTERRUPTED and sigterm_received():
        typer.echo("terminated (SIGTERM)", err=True)
        code = outcome.TERMINATED
    sys.exit(code)


if __name__ == "__main__":
    main()
