"""Which files make one run of a report: the shards of a run are combined, never reported as runs of their own.

By default:
- our run directories of one sharded run (`--shard i/n`: run.json records the shard, and their settings, selection,
  models and benchmark are equal) are one run, named by what their directory names share;
- ToolEmu dumps named `<prefix>_r<a>-<b>...jsonl` in one folder (the case range of each shard) are one run, named
  `<prefix>`: `gpt4_naive_r0-15_x.jsonl` and `gpt4_naive_r15-30_y.jsonl` are the run `gpt4_naive`;
- anything else is a run of its own.

`--group-by` chooses instead: a regex with a group, searched in each path (the group, or the group named `run`, is
the run's name; a path it does not match stays a run of its own), a metadata key (`agent_model`, `agent_type`,
`emulator_model`, `simulator_type`, `agent`: runs with the same value are one run), or `none` (every file or folder
its own run, as before grouping existed).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolemu.errors import InputError
from toolemu.log import RUN_FILE, TRAJECTORIES, read_meta, runs_in
from toolemu.log.read import first_trajectory

log = logging.getLogger("toolemu")

TOOLEMU_SHARD = re.compile(r"^(?P<run>.+?)_r(?P<start>\d+)-(?P<end>\d+)(?:_.*)?$")  # on a dump's file stem
METADATA_KEYS = ("agent_model", "agent_type", "emulator_model", "simulator_type", "agent")
NO_GROUPING = "none"
_SHARD_SUFFIX = re.compile(r"[-_. ]*(?:shard|part)?[-_. ]*$", re.IGNORECASE)
# What must be equal for run directories to be shards of one run (the shard itself differs); as `toolemu merge`.
_SHARD_SETTINGS = ("config", "selection", "selected_cases", "models", "benchmark")


@dataclass
class RunGroup:
    """The paths (run directories or trajectory files) read as one run, in reading order, and the run's name."""

    label: str
    paths: list[Path]
    notes: list[str] = field(default_factory=list)


def group_runs(paths: list[Path], group_by: str | None = None) -> list[RunGroup]:
    """The runs named by `paths` (each a run directory, a trajectory file or a folder of ToolEmu dumps), grouped.
    Groups keep the order in which their first path came."""
    units = [run for path in paths for run in runs_in(path)]
    if group_by == NO_GROUPING:
        return [RunGroup(_own_label(p), [p]) for p in units]
    if group_by is None:
        folders: dict[Path, tuple[bool, Path]] = {}  # each folder looked at once, not once per dump in it
        keyed = [(_default_key(p, folders), p) for p in units]
    elif group_by in METADATA_KEYS:
        keyed = _metadata_keys(units, group_by)
    else:
        pattern = compile_group_by(group_by)
        keyed = [(_regex_key(pattern, p), p) for p in units]
    groups: dict[Any, RunGroup] = {}
    for key, path in keyed:
        if key is None:
            groups[("own", path)] = RunGroup(_own_label(path), [path])
        else:
            groups.setdefault(key, RunGroup("", [])).paths.append(path)
    for key, group in groups.items():
        if key[0] != "own":
            _finish(key, group)
    combined = [g for g in groups.values() if len(g.paths) > 1]
    if combined:  # one line for a study of any size: each run's files are listed in report.json (`sources`)
        files = sum(len(g.paths) for g in combined)
        first = combined[0]
        example = f"{first.label}" + (f", e.g. from {len(first.paths)}" if len(combined) > 1 else "")
        log.info("%d run%s combined from %d files (%s)", len(combined), "s" * (len(combined) > 1), files, example)
    return list(groups.values())


def compile_group_by(text: str) -> re.Pattern[str]:
    """`--group-by` as a regex; one clear error when it is neither a key nor a regex with a group."""
    try:
        pattern = re.compile(text)
    except re.error as exc:
        raise InputError.single(
            "--group-by", f"expected one of {', '.join(METADATA_KEYS)}, {NO_GROUPING}, or a regex ({exc})"
        ) from None
    if pattern.groups < 1:
        raise InputError.single(
            "--group-by",
            f"expected a regex with a group that names the run, e.g. '(.+)_r\\d+-\\d+', or one of "
            f"{', '.join(METADATA_KEYS)}, {NO_GROUPING}",
        )
    return pattern


def _own_label(path: Path) -> str:
    return path.name if path.is_dir() else path.stem


# ------------------------------------------------------------------------------------------------- default


def _default_key(path: Path, folders: dict[Path, tuple[bool, Path]]) -> tuple[Any, ...] | None:
    """`folders`: for each folder seen, whether it holds run.json and where it really is (filled as it goes)."""
    if path.is_dir():
        settings = _shard_settings(path)
        return ("shards", path.resolve().parent, settings) if settings is not None else None
    if path.parent not in folders:
        folders[path.parent] = ((path.parent / RUN_FILE).is_file(), path.parent.resolve())
    has_run_file, real = folders[path.parent]
    if has_run_file or path.name == TRAJECTORIES:
        return None
    m = TOOLEMU_SHARD.match(path.stem)
    if m is None:
        return None
    return ("toolemu", path.resolve().parent if path.is_symlink() else real, m.group("run"))


def _shard_settings(directory: Path) -> str | None:
    """The settings of a shard's run directory as comparable text (None: not a shard). Directories of one run
    have equal text: the same settings, selection, models, benchmark content and number of shards."""
    run_file = directory / RUN_FILE
    if not run_file.is_file():
        return None
    meta = read_meta(run_file)
    if meta.shard is None:
        return None
    data = meta.model_dump(mode="json", include=set(_SHARD_SETTINGS))
    data["config"] = meta.config.model_copy(update={"shard": None}).identity()
    data["shards"] = meta.shard[1]
    if meta.benchmark is not None:
        data["benchmark"] = meta.benchmark.model_dump(mode="json", exclude={"files"})
    return json.dumps(data, sort_keys=True)


def _shard_order(path: Path) -> tuple[int, str]:
    """Shards are read in case order: our shard index, or the first case of a ToolEmu dump's range."""
    if path.is_dir():
        meta = read_meta(path / RUN_FILE)
        return (meta.shard[0] if meta.shard else 0, path.name)
    m = TOOLEMU_SHARD.match(path.stem)
    return (int(m.group("start")) if m else 0, path.name)


def _common_name(names: list[str]) -> str:
    """What the shards' names share, less a trailing separator or 'shard': gpt4-shard0, gpt4-shard1 -> gpt4."""
    return _SHARD_SUFFIX.sub("", os.path.commonprefix(names))


def _finish(key: tuple[Any, ...], group: RunGroup) -> None:
    kind = key[0]
    if kind in ("shards", "toolemu"):
        group.paths.sort(key=_shard_order)
    if kind == "shards":
        shards = [read_meta(p / RUN_FILE).shard for p in group.paths]
        indices = [s[0] for s in shards if s is not None]
        if len(set(indices)) < len(indices):  # the same shard twice: two runs, not one; kept apart
            group.notes.append("two directories hold the same shard: read as one run, pairs may repeat")
        group.label = _common_name([p.name for p in group.paths]) or group.paths[0].resolve().parent.name
        if len(group.paths) < shards[0][1]:  # type: ignore[index]
            group.notes.append(f"{len(group.paths)} of {shards[0][1]} shards given")  # type: ignore[index]
    elif kind == "toolemu":
        group.label = key[2]
        ranges = [(int(m["start"]), int(m["end"])) for p in group.paths if (m := TOOLEMU_SHARD.match(p.stem))]
        if any(a[1] > b[0] for a, b in itertools.pairwise(ranges)):  # sorted by start: an overlap is a repeat
            group.notes.append(
                "shard ranges overlap (" + ", ".join(f"r{a}-{b}" for a, b in ranges) + "): cases may be counted twice"
            )
    else:
        group.label = key[1]


# --------------------------------------------------------------------------------------------------- chosen


def _regex_key(pattern: re.Pattern[str], path: Path) -> tuple[str, str] | None:
    m = pattern.search(path.as_posix())
    if m is None:
        return None
    name = m.group("run") if "run" in pattern.groupindex else "/".join(g for g in m.groups() if g)
    return ("regex", name) if name else None


def run_metadata(path: Path) -> dict[str, str]:
    """The agent and emulator of a run of ours: run.json's models and settings, else its first record's.
    ToolEmu's dumps record neither: {}."""
    run_file = path / RUN_FILE if path.is_dir() else path.parent / RUN_FILE
    if run_file.is_file() and (path.is_dir() or path.name == TRAJECTORIES):
        meta = read_meta(run_file)
        agent, emulator = meta.model_of("agent"), meta.model_of("emulator")
        agent_type, simulator_type = meta.config.agent_type, meta.config.simulator_type
    else:
        first = first_trajectory(path / TRAJECTORIES if path.is_dir() else path)
        if first is None or not first.schema_version:
            return {}
        agent, emulator = first.model_of("agent"), first.model_of("emulator")
        agent_type, simulator_type = first.agent_type, first.simulator_type
    out = {
        "agent_model": agent,
        "emulator_model": emulator,
        "agent_type": agent_type,
        "simulator_type": simulator_type,
        "agent": (f"{agent} ({agent_type})" if agent_type else agent) if agent else "",
    }
    return {k: v for k, v in out.items() if v}


def _metadata_keys(units: list[Path], key: str) -> list[tuple[tuple[str, str] | None, Path]]:
    keyed: list[tuple[tuple[str, str] | None, Path]] = []
    unknown = []
    for path in units:
        value = run_metadata(path).get(key)
        keyed.append((("metadata", value) if value else None, path))
        if not value:
            unknown.append(path.name)
    if unknown:
        log.warning(
            "--group-by %s: %d runs record no %s (ToolEmu's dumps never do) and are runs of their own: %s%s; "
            "group them by name with a regex instead",
            key,
            len(unknown),
            key,
            ", ".join(unknown[:5]),
            " ..." if len(unknown) > 5 else "",
        )
    return keyed
