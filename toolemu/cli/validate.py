"""`toolemu validate` and `toolemu lint`: check a benchmark's toolkits and cases."""

from pathlib import Path
from typing import Annotated

import typer

from toolemu.errors import InputError
from toolemu.paths import ASSETS


def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Toolkit and case files or directories (default: the shipped benchmark)."),
    ] = None,
    toolkits: Annotated[
        list[Path] | None,
        typer.Option("--toolkits-path", help="Extra toolkit files or directories that cases may name."),
    ] = None,
) -> None:
    """Check ToolEmu-format toolkits and cases; print one summary line per file."""
    from toolemu.specs import load_benchmark

    known = load_benchmark(toolkits).toolkits if toolkits else None
    bench = load_benchmark(paths or [ASSETS], known_toolkits=known)
    for summary in bench.files:
        typer.echo(summary.line())
    typer.echo(f"ok: {len(bench.toolkits)} toolkits, {bench.num_tools} tools, {len(bench.cases)} cases")


def lint(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="The benchmark: toolkit and case files or directories (default: the shipped one)."),
    ] = None,
) -> None:
    """Check benchmark rules on top of validation, and print coverage. A folder with a VERSION file (the shipped
    benchmark) must also have the content hash that its version records in CHANGELOG.md."""
    from toolemu.specs import load_benchmark
    from toolemu.specs.lint import lint_benchmark
    from toolemu.specs.version import VERSION_FILE, read_version, version_problems

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
