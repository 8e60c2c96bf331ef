"""Many episodes: case selection, trials, shards, resume, on the one work pool (toolemu.pool).

Each episode is built by one EpisodeBuilder, from the run's EpisodeSpec; finished trajectories go to a writer thread
that appends and fsyncs them in batches (log/batched.py), and an episode counts as done once its record is on disk.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from toolemu.agents.registry import AgentFactory, default_agent
from toolemu.episode.builder import EpisodeBuilder
from toolemu.episode.spec import EpisodeSpec
from toolemu.episode.state import Interrupted
from toolemu.errors import InputError
from toolemu.llm import ModelHub
from toolemu.llm.usage import Usage, role_lines, usage_line
from toolemu.log import (
    FINISHED,
    RETRIED_ERRORS,
    RUN_FILE,
    TRAJECTORIES,
    RunConfig,
    RunMeta,
    Trajectory,
    read_meta,
    write_meta,
)
from toolemu.log.batched import BatchedJsonlWriter
from toolemu.log.lock import run_lock
from toolemu.log.read import parse_trajectory
from toolemu.log.resume import resume_records
from toolemu.log.usage import BudgetUse
from toolemu.paths import output_dir
from toolemu.pool import NotRun, PoolOutcome, Recorded, run_pool
from toolemu.specs import Benchmark, Case
from toolemu.specs.version import BenchmarkIdentity, differing_cases, identify

log = logging.getLogger("toolemu")

T = TypeVar("T")


def shard_pairs(pairs: list[T], shard: tuple[int, int] | None) -> list[T]:
    """Pair j of the full selection (cases in selection order x trials) belongs to shard j % n."""
    if shard is None:
        return list(pairs)
    i, n = shard
    return [p for j, p in enumerate(pairs) if j % n == i]


def select_cases(bench: Benchmark, config: RunConfig, source: str = "--case-names") -> list[tuple[int, Case]]:
    indexed = list(enumerate(bench.cases))
    if config.case_names:
        by_name = {c.name: (i, c) for i, c in indexed}
        missing = [n for n in config.case_names if n not in by_name]
        if missing:
            raise InputError.single(source, f"expected names of loaded cases, unknown: {', '.join(missing)}")
        indexed = [by_name[n] for n in config.case_names]
    if config.shuffle:
        random.Random(config.seed).shuffle(indexed)
    indexed = indexed[config.start_index :]
    if config.trunc_num is not None:
        indexed = indexed[: config.trunc_num]
    return indexed


@dataclass
class RunSummary:
    dump_dir: Path
    trajectories: Path
    total: int = 0
    skipped: int = 0  # already finished in an earlier run
    finished: int = 0
    failed: int = 0
    not_run: list[tuple[str, int]] = field(default_factory=list)
    stop_reason: str = ""
    stop_kind: str = ""  # "", "interrupted", "budget", "access" (a refused key), "stopped"
    set_aside: int = 0  # unreadable lines (a torn last line included) moved to the errors file; their pairs re-run
    cost_usd: float = 0.0
    shard: tuple[int, int] | None = None
    selected: int = 0  # pairs of the whole selection, all shards together
    usage: Usage | None = None  # model calls, tokens and cost of the command so far
    usage_by_role: dict[str, Usage] = field(default_factory=dict)  # the same by role, with repairs and cut-offs
    budget: BudgetUse | None = None  # the command's use against its limits (set by toolemu.api.emulate)
    notes: list[str] = field(default_factory=list)  # what the elements recorded after the run (a replay's reuse)

    def lines(self) -> list[str]:
        out = [
            f"trajectories: {self.trajectories}",
            f"pairs: {self.total} (already done {self.skipped}, finished now {self.finished}, failed {self.failed})",
        ]
        if self.shard is not None:
            out.append(f"shard: {self.shard[0]}/{self.shard[1]} ({self.total} of {self.selected} selected pairs)")
        if self.set_aside:
            out.append(
                f"set aside: {self.set_aside} unreadable lines of {TRAJECTORIES} (kept in {RETRIED_ERRORS}); "
                "their pairs ran again"
            )
        if self.not_run:
            names = ", ".join(f"{c}#{t}" for c, t in self.not_run[:10])
            more = f" and {len(self.not_run) - 10} more" if len(self.not_run) > 10 else ""
            out.append(f"not run ({self.stop_reason}): {len(self.not_run)}: {names}{more}")
        out += self.notes
        if self.usage is not None:
            out.append(usage_line(self.usage))
            out += role_lines(self.usage_by_role)
        return out


def prepare_dump_dir(
    dump_dir: Path, config: RunConfig, plan: dict[str, Any] | None = None
) -> tuple[str, set[tuple[str, int]], int]:
    """Create or resume a run directory. Returns the run id, the (case, trial) pairs already finished, and how
    many unreadable lines were set aside.

    `plan` (what this run selected: expected_pairs and the like) is recorded in run.json, replacing the last one.
    Failed records and unreadable lines (a torn last line too) are moved to RETRIED_ERRORS, so every pair appears
    at most once in TRAJECTORIES and the next append starts on a line of its own.
    """
    output_dir(dump_dir, "--dump-dir")
    run_file = dump_dir / RUN_FILE
    meta: RunMeta | None = read_meta(run_file) if run_file.exists() else None
    if meta is not None and not meta.config.same_run(config):
        raise InputError.single(
            run_file,
            f"expected the same run settings to resume, found {meta.config.identity()}; "
            f"use another --dump-dir for {config.identity()}",
            field="config",
        )
    if meta is not None and meta.benchmark is not None and plan and plan.get("benchmark"):
        _check_same_cases(run_file, meta.benchmark, BenchmarkIdentity.model_validate(plan["benchmark"]))
    run_id = meta.run_id if meta else f"{dump_dir.name}-{uuid.uuid4().hex[:8]}"
    if plan is not None or meta is None:
        base = meta.model_dump(exclude_none=True) if meta else {}
        write_meta(run_file, RunMeta.model_validate({**base, "run_id": run_id, **(plan or {}), "config": config}))
    (dump_dir / TRAJECTORIES).touch()  # a run folder always has its file, if empty (a shard with no pairs, a stop)
    resumed = resume_records(
        dump_dir / TRAJECTORIES,
        parse_trajectory,
        lambda traj: traj.key if traj.status in FINISHED else None,
        "not a whole trajectory record; its pair is run again",
        dump_dir / RETRIED_ERRORS,
    )
    return run_id, set(resumed.kept), resumed.set_aside


def _check_same_cases(run_file: Path, before: BenchmarkIdentity, now: BenchmarkIdentity) -> None:
    """A run resumes only on the cases it started with: an edited case (or one of its toolkits) would mix
    episodes of two versions under one run."""
    changed, _, _ = differing_cases(before.cases, now.cases)
    if changed:
        names = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        raise InputError.single(
            run_file,
            f"expected the cases this run started with (benchmark {before.label()}) to resume; these differ now "
            f"(benchmark {now.label()}): {names}; use another --dump-dir",
            field="benchmark",
        )


def run_cases(
    bench: Benchmark,
    hub: ModelHub,
    config: RunConfig,
    dump_dir: Path,
    show_progress: bool = True,
    agent: AgentFactory = default_agent,
    benchmark: BenchmarkIdentity | None = None,
) -> RunSummary:
    """Run every selected (case, trial) pair not finished yet, with the episode spec of `config` (the hub lists its
    roles) and the agent (`toolemu.agents.registry.get_agent`). `benchmark` (the loaded benchmark's identity) goes
    to run.json. The run directory is locked against other writers meanwhile."""
    output_dir(dump_dir, "--dump-dir")
    with run_lock(dump_dir / TRAJECTORIES):
        spec = EpisodeSpec.of(config)
        cases = select_cases(bench, config)
        selected = [(idx, case, t) for idx, case in cases for t in range(config.num_trials)]
        pairs = shard_pairs(selected, config.shard)
        plan = {
            "selection": config.selection(),
            "selected_cases": [case.name for _, case in cases],
            "expected_pairs": [[case.name, t] for _, case, t in pairs],
            "models": {role: hub.options_for(role).model for role in spec.roles()},
        }
        if isinstance(named := getattr(agent, "spec", None), str):  # an agent that brings its own model (mcp-cmd:...)
            plan["models"]["agent"] = named
        identity = benchmark or identify(bench, shipped=False)
        plan["benchmark"] = identity.model_dump(mode="json", exclude_none=True)
        # A bad gate or --replay is bad input before run.json is written.
        builder = EpisodeBuilder(hub, spec, bench, agent)
        run_id, done, set_aside = prepare_dump_dir(dump_dir, config, plan)
        builder.run_id = run_id
        todo = [p for p in pairs if (p[1].name, p[2]) not in done]
        summary = RunSummary(dump_dir, dump_dir / TRAJECTORIES, total=len(pairs), skipped=len(pairs) - len(todo))
        summary.set_aside = set_aside
        summary.shard, summary.selected = config.shard, len(selected)

        def count(traj: Trajectory) -> None:
            summary.cost_usd += traj.cost_usd
            failed = traj.status == "error"
            summary.failed += failed
            summary.finished += not failed

        try:
            play = partial(_episode, builder)
            outcome = play_into(dump_dir, todo, play, builder, "episodes", config.batch_size, show_progress, count)
        finally:  # every finished episode is on disk before the summary says so; a failed write raises
            summary.notes = builder.spec.after_run(dump_dir)  # the gate audit, a replay's reuse
        summary.not_run = [(case.name, trial) for _, case, trial in outcome.not_run]
        summary.stop_reason, summary.stop_kind = outcome.stop_reason, outcome.stop_kind
        return summary


def play_into(
    folder: Path,
    items: list[T],
    play: Callable[[T], Trajectory],
    builder: EpisodeBuilder,
    label: str,
    batch_size: int,
    show_progress: bool,
    count: Callable[[Trajectory], None] | None = None,
) -> PoolOutcome[T]:
    """Play `items` on the pool (`builder`'s stop ends it), each trajectory appended to the folder's trajectory file
    as it comes, a torn tail set aside beside it (a run's episodes, robust's re-runs, noise's trials and worlds);
    `count` sees each one first. Every finished episode is on disk when it returns; a failed write raises."""
    writer = BatchedJsonlWriter(folder / TRAJECTORIES, folder / RETRIED_ERRORS)

    def record(_: T, traj: Trajectory) -> Recorded:
        if count is not None:
            count(traj)
        return Recorded(writer.append(traj), traj.status == "error", traj.cost_usd)

    try:
        return run_pool(
            items, play, record, workers=batch_size, label=label, show_progress=show_progress, stop=builder.stop
        )
    finally:
        writer.close()


def _episode(builder: EpisodeBuilder, pair: tuple[int, Case, int]) -> Trajectory:
    idx, case, trial = pair
    try:
        return builder.run(case, idx, trial)
    except Interrupted:  # the run is stopping: this pair is not run
        raise NotRun() from None


def record_budget(run_file: Path, use: BudgetUse) -> None:
    """Put a command's budget use in run.json (the last command's replaces the one before)."""
    if not run_file.is_file():
        return  # a ToolEmu dump has no run.json
    meta = read_meta(run_file)
    meta.budget = use
    write_meta(run_file, meta)
