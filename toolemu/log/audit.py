"""The gate audit run.json keeps: every gate decision of a run's trajectories, counted by gate, phase, action and
reason. A run records it when it ends, and so does a played or gym folder after each episode."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from toolemu.log.layout import RUN_FILE, TRAJECTORIES
from toolemu.log.meta import GateAudit, GateAuditCounts, GateCount, read_meta, write_meta
from toolemu.log.read import read_trajectories
from toolemu.log.records import Trajectory


def gate_audit(trajectories: list[Trajectory]) -> GateAuditCounts:
    """Every gate decision of a run, counted by gate, phase, action and reason (what run.json records)."""
    counts: Counter[tuple[str, str, str, str]] = Counter()
    calls = 0
    for traj in trajectories:
        for step in traj.steps:
            calls += 1
            counts.update((d.gate, d.phase, d.action, d.reason) for d in step.gates)
    return GateAuditCounts(
        calls=calls,
        decisions=[
            GateCount(gate=g, phase=p, action=a, reason=r, count=n)
            for (g, p, a, r), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ],
    )


def record_gate_audit(dump_dir: Path, gates: list[str]) -> None:
    meta = read_meta(dump_dir / RUN_FILE)
    trajectories, _ = read_trajectories(dump_dir / TRAJECTORIES)
    meta.gates = GateAudit(configured=gates, audit=gate_audit(trajectories))
    write_meta(dump_dir / RUN_FILE, meta)
