"""The run folder: which file holds what, for our run directories and for ToolEmu's dump files alike.

    <run>/run.json                          settings, selection, plan, audits (ours only)
    <run>/trajectories.jsonl                one Trajectory per (case, trial)
    <run>/trajectories.errors.jsonl         failed attempts a resume re-ran, kept
    <run>/trajectories_eval_<type>.jsonl    one Evaluation per trajectory and scorer (ToolEmu's naming)
    <run>/trajectories_eval_<type>@<judge>.jsonl    the same, by a panel's second, third... judge
    <run>/trajectories_eval_<type>#rejudge.jsonl    re-judgements of a sample (evaluate --rejudge K): apart

A ToolEmu dump is `<prefix>.jsonl` with `<prefix>_eval_<type>.jsonl` beside it; a folder may hold several. A judge
panel's first judge writes the standard file (so ToolEmu's readers find one judge's verdicts where they expect
them); every other judge writes its own `@<judge>` file. `eval_files()` lists both kinds, keyed `<type>` and
`<type>@<judge>`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from toolemu.errors import InputError

TRAJECTORIES = "trajectories.jsonl"
RETRIED_ERRORS = "trajectories.errors.jsonl"  # failed attempts that a resume re-ran: kept, not lost
RUN_FILE = "run.json"
EVAL_INFIX = "_eval_"
JUDGE_MARK = "@"  # <type>@<judge>: a panel judge's eval file
REJUDGE_MARK = "#rejudge"  # <type>#rejudge: re-judgements (toolemu evaluate --rejudge), never pooled into <type>


@dataclass(frozen=True)
class RunFiles:
    """The files of one run, found from a run directory or a trajectory .jsonl file."""

    source: Path  # what the user named
    trajectories: Path

    @property
    def is_dir(self) -> bool:
        return self.source.is_dir()

    @property
    def directory(self) -> Path:
        return self.trajectories.parent

    @property
    def run_file(self) -> Path | None:
        return self.source / RUN_FILE if self.is_dir else None

    @property
    def label(self) -> str:
        return self.source.name if self.is_dir else self.trajectories.stem

    def eval_file(self, eval_type: str) -> Path:
        return eval_path(self.trajectories, eval_type)

    def eval_files(self, rejudged: bool = False) -> dict[str, Path]:
        """Every `<stem>_eval_<type>.jsonl` beside the trajectories, by type (error files left out); with
        `rejudged`, the re-judgement files instead (`<type>#rejudge`), which the headline never reads."""
        # A listing, not a glob: a stem may hold glob characters, and a folder of many dumps is listed cheaply.
        return eval_files_among(self.trajectories, os.listdir(self.directory), rejudged)


class FolderListing:
    """The names in one folder, indexed by the trajectories' stem each could be an eval file of (the text before
    any `_eval_` in it): a folder of hundreds of dumps is listed once and each dump finds its files at once."""

    def __init__(self, names: list[str]):
        self.by_stem: dict[str, list[str]] = {}
        for name in names:
            for stem in _stems_before_infix(name):
                self.by_stem.setdefault(stem, []).append(name)


def _stems_before_infix(name: str) -> Iterator[str]:
    """The trajectories' stems a name could be an eval file of: the text before each `_eval_` in it (so a folder of
    n dumps costs n lookups, not n * n prefix tests)."""
    at = name.find(EVAL_INFIX)
    while at != -1:
        yield name[:at]
        at = name.find(EVAL_INFIX, at + 1)


def eval_files_among(trajectories: Path, names: list[str] | FolderListing, rejudged: bool = False) -> dict[str, Path]:
    """`RunFiles.eval_files` from a listing of the trajectories' folder (one listing serves many dumps)."""
    listing = names if isinstance(names, FolderListing) else FolderListing(names)
    prefix = trajectories.stem + EVAL_INFIX
    found = {}
    for name in sorted(n for n in listing.by_stem.get(trajectories.stem, []) if n.endswith(".jsonl")):
        eval_type = name[len(prefix) : -len(".jsonl")]
        if eval_type and not eval_type.endswith(".errors") and eval_type.endswith(REJUDGE_MARK) == rejudged:
            found[eval_type] = trajectories.parent / name
    return found


def eval_path(trajectories: Path, eval_type: str, judge: str | None = None) -> Path:
    """ToolEmu's naming: <trajectories stem>_eval_<eval_type>.jsonl beside the trajectories; a panel judge's
    file adds @<judge>."""
    return trajectories.with_name(f"{trajectories.stem}{EVAL_INFIX}{eval_file_key(eval_type, judge)}.jsonl")


def eval_file_key(eval_type: str, judge: str | None = None) -> str:
    return f"{eval_type}{JUDGE_MARK}{judge}" if judge else eval_type


def split_eval_key(key: str) -> tuple[str, str | None]:
    """An `eval_files()` key as (eval type, panel judge or None): agent_safe@openai-gpt-4o -> (agent_safe, ...)."""
    eval_type, mark, judge = key.partition(JUDGE_MARK)
    return (eval_type, judge) if mark and judge else (key, None)


def toolemu_dumps_in(directory: Path) -> list[Path]:
    """The ToolEmu dumps in a folder: every `<prefix>.jsonl` that is neither another dump's eval file
    (`<other prefix>_eval_<type>.jsonl`) nor an errors file."""
    files = sorted(p for p in directory.glob("*.jsonl") if p.is_file() and not p.name.endswith(".errors.jsonl"))
    stems = {p.stem for p in files}
    return [p for p in files if not any(stem in stems for stem in _stems_before_infix(p.stem))]


def runs_in(path: Path) -> list[Path]:
    """What one path names for a report: a run directory or a trajectory file is one run; any other folder holds one
    run per ToolEmu dump and per run directory in it or in the folders below it (`runs_below`)."""
    if path.is_dir() and not (path / TRAJECTORIES).is_file():
        found = runs_below(path)
        if found:
            return found
        raise InputError.single(
            path,
            "expected a run directory holding trajectories.jsonl, a folder of ToolEmu dumps or of run directories "
            "(at any depth), or a .jsonl file",
        )
    return [path]


def runs_below(folder: Path) -> list[Path]:
    """The runs in a folder and in the folders below it, as published studies lay them out (judge/agent/files): the
    ToolEmu dumps of each folder, then its subfolders in name order; a run directory (holding trajectories.jsonl)
    is one run, its own subfolders (robust/...) part of it. A folder reached twice (a link) is read once."""
    found: list[Path] = []
    seen: set[Path] = set()
    stack = [folder]
    while stack:
        here = stack.pop()
        real = here.resolve()
        if real in seen:
            continue
        seen.add(real)
        try:
            subfolders = sorted(p for p in here.iterdir() if p.is_dir())
        except OSError as exc:
            raise InputError.single(here, f"cannot be read: {exc.strerror or exc}") from None
        found += toolemu_dumps_in(here)
        runs = [p for p in subfolders if (p / TRAJECTORIES).is_file()]
        found += runs
        stack += reversed([p for p in subfolders if p not in runs])  # depth first, in name order
    return found


def run_files(path: Path) -> RunFiles:
    """A run directory (ours) or a trajectory .jsonl file (ours or ToolEmu's)."""
    file = path / TRAJECTORIES if path.is_dir() else path
    if not file.is_file():
        raise InputError.single(path, "expected a run directory holding trajectories.jsonl, or a .jsonl file")
    return RunFiles(path, file)
