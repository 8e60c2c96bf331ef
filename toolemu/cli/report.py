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
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Every run's table and every line of the account (judges, costs, noise, ...); by default the "
            "console shows the leaderboard and one line per kind of warning, at most 40 lines.",
        ),
    ] = False,
    copy_traces: Annotated[
        bool,
        typer.Option(
            "--copy-traces",
            help="Copy every episode's trace beside the page (report_traces/), so the folder opens anywhere without "
            "the run files; by default a large report refers to them and `toolemu view` reads them.",
        ),
    ] = False,
) -> object:
    """Statistics, summary.csv, report.json and report.html, which opens with a leaderboard of the runs, for one or
    more runs; the console shows the leaderboard too."""
    # The reporting layer itself, not toolemu.api: that loads the agents, the model layer and LangChain, which a
    # report never uses (a study's report is timed against a bare parse of its files: docs/PERFORMANCE.md).
    from toolemu.reporting import print_summary
    from toolemu.reporting.accuracy import read_accuracy
    from toolemu.reporting.tables import files_lines
    from toolemu.reporting.write import write_report

    accuracy = read_accuracy(judge_accuracy) if judge_accuracy is not None else None
    report, files = write_report(
        list(dumps), out, accuracy, formats or [], group_by, baseline, compare or [], fidelity or [], copy_traces
    )
    print_summary(report, verbose=verbose, reserve=1)
    for line in files_lines(files, verbose):
        typer.echo(line)
    problems = [p for run in report.runs for p in run.problems]
    if problems:  # the report is written and notes them; the lines themselves are bad input
        raise InputError.from_lines(problems)
    return report


def serve(directory: Path, port: int = 0) -> "ThreadingHTTPServer":
    """A report folder on loopback only, in a background thread; `server.shutdown()` stops it. The traces a large
    report refers to are read from its run files when the page asks (toolemu.reporting.serve)."""
    from toolemu.reporting.serve import serve as serve_report

    return serve_report(directory, port)


def view(
    path: Annotated[Path, typer.Argument(help="A report.html, or the directory holding it.")] = Path("."),
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0: any free one).")] = 0,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Only serve; print the address.")] = False,
) -> None:
    """Serve a report on loopback and open it in the browser, reading the traces a large report refers to from its
    run files; Ctrl-C stops."""
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
