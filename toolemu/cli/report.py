"""`toolemu report` and `toolemu view`: summarise runs (ours or ToolEmu's) and look at them."""

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolemu.errors import InputError

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer


def report(
    dumps: Annotated[
        list[Path], typer.Argument(help="Run directories, or trajectory .jsonl files (ToolEmu's too); one run each.")
    ],
    out: Annotated[Path | None, typer.Option(help="Where to write (default: beside the dumps).")] = None,
    judge_accuracy: Annotated[
        Path | None,
        typer.Option(
            help="Judges' sensitivity and specificity against labels (`toolemu agree --labels L --json F` writes "
            "one): adds failure rates corrected for judge error."
        ),
    ] = None,
    formats: Annotated[
        list[str] | None,
        typer.Option(
            "--format",
            help="Also write the runs' frames (runs, episodes, evaluations, steps, scores) as parquet or csv "
            "files (repeatable).",
        ),
    ] = None,
    group_by: Annotated[
        str | None,
        typer.Option(
            help="Which files make one run. Default: the shards of a run are one (our --shard run dirs; ToolEmu "
            "dumps <prefix>_r<a>-<b>_... are the run <prefix>). A regex with a group searched in each path (the "
            "group names the run), a key (agent_model, agent_type, emulator_model, simulator_type, agent), or "
            "none (every file its own run).",
        ),
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(help="Compare every other run with this one, pair by pair (b minus baseline).")
    ] = None,
    compare: Annotated[
        list[str] | None,
        typer.Option(
            help="Compare two runs pair by pair: A,B gives B minus A (repeatable); 'all' compares every pair. "
            "Default: every pair of up to 3 runs, none past that.",
        ),
    ] = None,
    fidelity: Annotated[
        list[Path] | None,
        typer.Option(
            help="A fidelity.json of `toolemu fidelity` (or its folder; repeatable): beside each toolkit, the state "
            "accuracy of the emulator that produced its results. One in a run's folder is read too."
        ),
    ] = None,
) -> object:
    """Statistics, summary.csv, report.json and report.html (traces of a large report in report_traces/ beside
    it) for one or more runs."""
    # The reporting layer itself, not toolemu.api: that loads the agents, the model layer and LangChain, which a
    # report never uses (a study's report is timed against a bare parse of its files: docs/PERFORMANCE.md).
    from toolemu.reporting import print_summary
    from toolemu.reporting.accuracy import read_accuracy
    from toolemu.reporting.write import write_report

    accuracy = read_accuracy(judge_accuracy) if judge_accuracy is not None else None
    report, files = write_report(
        list(dumps), out, accuracy, formats or [], group_by, baseline, compare or [], fidelity or []
    )
    print_summary(report)
    for kind, path in files.items():
        typer.echo(f"{kind}: {path}")
    problems = [p for run in report.runs for p in run.problems]
    if problems:  # the report is written and notes them; the lines themselves are bad input
        raise InputError.from_lines(problems)
    return report


def serve(directory: Path, port: int = 0) -> "ThreadingHTTPServer":
    """A static server on loopback only, in a background thread; `server.shutdown()` stops it."""
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class _QuietHandler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), partial(_QuietHandler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True, name="report-server").start()
    return server


def view(
    path: Annotated[Path, typer.Argument(help="A report.html, or the directory holding it.")] = Path("."),
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: any free one).")] = 0,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Only serve; print the address.")] = False,
) -> None:
    """Serve a report on loopback and open it in the browser; Ctrl-C stops."""
    from toolemu.reporting.write import REPORT_HTML

    if not 0 <= port <= 65535:
        raise InputError.single(
            "command line", f"expected a port in 0-65535 (0: any free one), got {port}", field="--port"
        )
    page = path / REPORT_HTML if path.is_dir() else path
    if not page.is_file():
        raise InputError.single(path, "expected a report.html or a directory holding one (run `toolemu report`)")
    server = serve(page.parent, port)
    url = f"http://127.0.0.1:{server.server_address[1]}/{page.name}"
    typer.echo(f"serving {page} at {url} (Ctrl-C stops)")
    if not no_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        threading.Event().wait()
    finally:
        server.shutdown()
