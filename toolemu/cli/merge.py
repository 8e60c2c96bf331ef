"""`toolemu merge`: combine the run directories of a sharded run (`toolemu emulate --shard i/n`) into one, or the
shard dumps of a ToolEmu run (`<prefix>_r<a>-<b>_<stamp>.jsonl` with their eval files) into one dump."""

from pathlib import Path
from typing import Annotated

import typer


def merge(
    shard_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Run directories of the shards (their --dump-dir), or ToolEmu dumps: the shard files of one run "
            "(<prefix>_r<a>-<b>_...jsonl) or a folder of them."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory of the merged run; an earlier merge is replaced.")],
) -> object:
    """Merge shards into one run: every (case, trial) once; exit 1 when pairs are missing, 2 on mismatched shards."""
    from toolemu.merge import merge_runs
    from toolemu.merge_dumps import is_dump_input, merge_dumps

    if shard_dirs and all(is_dump_input(p) for p in shard_dirs):
        dumped = merge_dumps(shard_dirs, out)
        for line in dumped.lines():
            typer.echo(line)
        return dumped
    result = merge_runs(shard_dirs, out)
    for line in result.lines():
        typer.echo(line)
    if result.missing:
        typer.echo(
            f"incomplete: {result.missing_count} pairs missing; resubmit their shards (finished pairs are skipped), "
            "then merge again",
            err=True,
        )
        raise typer.Exit(1)
    return result
