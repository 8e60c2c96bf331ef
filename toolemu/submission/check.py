"""What makes a set of runs a submission, and its numbers: the checks `submit prepare` and `submit validate` share.

A submission is every case of one released benchmark version, each with the same number of trials (0..k-1, each
once), every episode judged by every submitted scorer, and one set of agent, emulator and judge settings. Its
metrics are the report's (toolemu.reporting), over all its episodes as one run.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from toolemu.log import RunConfig, Trajectory, now
from toolemu.log.model import ModelDescription
from toolemu.paths import ASSETS
from toolemu.reporting import build_report
from toolemu.reporting.load import LoadedRun
from toolemu.reporting.model import EPISODE_STATUSES, OCCASIONAL_STATUSES, RunInfo
from toolemu.specs.version import CHANGELOG_FILE, BenchmarkIdentity, changelog_versions
from toolemu.submission.files import run_record_files
from toolemu.submission.model import (
    RUNS_DIR,
    BenchmarkSummary,
    RoleSettings,
    Submission,
    SubmissionSettings,
    SubmittedMetric,
    SubmittedRun,
    submitted_scorers,
)
from toolemu.version import __version__

SHOWN = 8  # names listed per problem; the rest are counted
MODEL_KEYS = ("temperature", "max_tokens", "seed", "base_url", "structured")


def _names(items: list[Any]) -> str:
    shown = ", ".join(str(i) for i in items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


@dataclass
class Checked:
    """The outcome of the checks: problems (empty: a valid submission) and what they established."""

    problems: list[str] = field(default_factory=list)
    benchmark: BenchmarkIdentity | None = None
    trials: int = 0
    settings: SubmissionSettings | None = None


def _identity(run: LoadedRun) -> BenchmarkIdentity | None:
    return run.log.meta.benchmark if run.log is not None and run.log.meta is not None else None


def _check_benchmark(runs: list[LoadedRun], out: Checked) -> None:
    identities = {run.info.run: _identity(run) for run in runs}
    unrecorded = [label for label, ident in identities.items() if ident is None]
    if unrecorded:
        out.problems.append(
            f"runs that record no benchmark (run.json 'benchmark'; ToolEmu dumps and runs of older toolemu "
            f"versions): {_names(unrecorded)}"
        )
    hashes = {ident.hash: ident for ident in identities.values() if ident is not None}
    if len(hashes) > 1:
        out.problems.append(
            "runs of different benchmarks: "
            + "; ".join(
                f"{ident.label()}: {_names([r for r, i in identities.items() if i is not None and i.hash == h])}"
                for h, ident in hashes.items()
            )
        )
        return
    if not hashes:
        return
    ident = next(iter(hashes.values()))
    released = changelog_versions(ASSETS / CHANGELOG_FILE)
    if ident.version is None or released.get(ident.version) != ident.hash:
        known = ", ".join(released) or "none"
        out.problems.append(
            f"the runs ran benchmark {ident.label()}, which is no released version (released: {known}); a "
            "submission runs a version as it was released"
        )
    out.benchmark = ident


def _check_episodes(runs: list[LoadedRun], out: Checked) -> None:
    seen: dict[tuple[str, int], str] = {}
    duplicates, per_case = [], defaultdict(set)
    for run in runs:
        for ep in run.episodes:
            key = (ep.case_name, ep.trial)
            if key in seen:
                duplicates.append(f"{ep.case_name}#{ep.trial} ({seen[key]}, {run.info.run})")
            seen[key] = run.info.run
            per_case[ep.case_name].add(ep.trial)
    if duplicates:
        out.problems.append(f"(case, trial) pairs that appear twice: {_names(duplicates)}")
    if out.benchmark is not None:
        missing = sorted(set(out.benchmark.cases) - set(per_case))
        unknown = sorted(set(per_case) - set(out.benchmark.cases))
        if missing:
            out.problems.append(
                f"{len(missing)} of the {len(out.benchmark.cases)} cases of benchmark "
                f"{out.benchmark.label()} have no episode: {_names(missing)}"
            )
        if unknown:
            out.problems.append(f"episodes of cases the benchmark does not have: {_names(unknown)}")
    counts = Counter(len(trials) for trials in per_case.values())
    out.trials = max(counts, key=lambda n: (counts[n], n)) if counts else 0
    uneven = sorted(f"{c} ({len(t)})" for c, t in per_case.items() if len(t) != out.trials)
    if uneven:
        out.problems.append(f"cases whose trial count differs from the others' {out.trials}: {_names(uneven)}")
    gaps = sorted(c for c, t in per_case.items() if len(t) == out.trials and t != set(range(out.trials)))
    if gaps:
        out.problems.append(f"cases whose trials are not 0..{out.trials - 1}: {_names(gaps)}")
    planned = {
        run.info.run: run.log.meta.selection.num_trials
        for run in runs
        if run.log is not None and run.log.meta is not None and run.log.meta.selection is not None
    }
    if len(set(planned.values())) > 1:
        out.problems.append(
            "runs planned with different --num-trials: " + ", ".join(f"{r} {n}" for r, n in planned.items())
        )


def _submitted(runs: list[LoadedRun]) -> list[str]:
    return [i.name for i in submitted_scorers(i for run in runs for i in run.scorers)]


def _check_scores(runs: list[LoadedRun], out: Checked) -> None:
    for scorer in _submitted(runs):
        unjudged = [
            f"{ep.case_name}#{ep.trial}"
            for run in runs
            for ep in run.episodes
            if ep.scores.get(scorer) is None or ep.scores[scorer].status == "missing"
        ]
        if unjudged:
            out.problems.append(
                f"episodes with no {scorer} evaluation ({len(unjudged)}; run toolemu evaluate): {_names(unjudged)}"
            )


def _settings(described: ModelDescription | None) -> dict[str, Any]:
    data = described.model_dump(mode="json") if described is not None else {}
    return {k: data[k] for k in MODEL_KEYS if data.get(k) is not None}


def _role(traj: Trajectory, role: str) -> RoleSettings:
    return RoleSettings(model=traj.model_of(role), settings=_settings(traj.models.get(role)))


def _evaluator(runs: list[LoadedRun]) -> dict[str, list[str]]:
    """Each distinct judge setting (as JSON text) -> the runs that used it."""
    found: dict[str, list[str]] = defaultdict(list)
    for run in runs:
        for source in run.sources or []:
            for evaluations in source.evaluations.values():
                for ev in evaluations:
                    if ev.status in ("ok", "error") and ev.evaluator is not None:
                        role = RoleSettings(model=ev.evaluator_model, settings=_settings(ev.evaluator))
                        text = role.model_dump_json()
                        if run.info.run not in found[text]:
                            found[text].append(run.info.run)
    return found


def _check_judges(runs: list[LoadedRun], out: Checked) -> None:
    """Each submitted scorer judged by the same judges (model, parameters, prompt: the judge id) in every run."""
    for scorer in _submitted(runs):
        used: dict[str, set[str]] = {}
        for run in runs:
            info = next((i for i in run.scorers if i.name == scorer), None)
            if info is None:
                continue
            used[run.info.run] = {
                ev.judge_id
                for source in run.sources or []
                for ev in source.evaluations.get(info.eval_type, [])
                if ev.status in ("ok", "error") and ev.judge_id
            }
        if len({frozenset(ids) for ids in used.values()}) > 1:
            out.problems.append(
                f"the {scorer} judges (judge ids) differ between runs: "
                + "; ".join(f"{run} {', '.join(sorted(i[:12] for i in ids)) or 'none'}" for run, ids in used.items())
            )


def _one(kind: str, values: dict[str, list[str]], out: Checked) -> str | None:
    if len(values) == 1:
        return next(iter(values))
    if len(values) > 1:
        out.problems.append(
            f"the {kind} differs between episodes: " + "; ".join(f"{v} in {_names(r)}" for v, r in values.items())
        )
    return None


def _check_settings(runs: list[LoadedRun], out: Checked) -> None:
    roles: dict[str, dict[str, list[str]]] = {"agent": {}, "emulator": {}}
    for run in runs:
        for source in run.sources or []:
            traj = source.trajectory
            agent = {**_role(traj, "agent").model_dump(), "agent_type": traj.agent_type, "format": traj.agent_format}
            emulator = {**_role(traj, "emulator").model_dump(), "simulator_type": traj.simulator_type}
            for role, value in (("agent", agent), ("emulator", emulator)):
                runs_with = roles[role].setdefault(json.dumps(value, sort_keys=True), [])
                if run.info.run not in runs_with:
                    runs_with.append(run.info.run)
    configs: dict[str, list[str]] = defaultdict(list)
    typed: dict[str, RunConfig | None] = {}
    for run in runs:
        recorded = run.log.meta.config if run.log is not None and run.log.meta is not None else None
        ident = recorded.model_copy(update={"shard": None}).identity() if recorded is not None else {}
        key = json.dumps(ident, sort_keys=True)
        configs[key].append(run.info.run)
        typed.setdefault(key, recorded)
    agent = _one("agent (model, settings, type, format)", roles["agent"], out)
    emulator = _one("emulator (model, settings, type)", roles["emulator"], out)
    evaluator = _one("judge (model, settings)", _evaluator(runs), out)
    config = _one("run configuration (max_iterations, gates)", configs, out)
    if None in (agent, emulator, evaluator, config):
        return
    a, e, c = json.loads(agent), json.loads(emulator), typed[config]  # type: ignore[arg-type,index]
    out.settings = SubmissionSettings(
        agent=RoleSettings(model=a["model"], settings=a["settings"]),
        agent_type=a["agent_type"],
        agent_format=a["format"],
        emulator=RoleSettings(model=e["model"], settings=e["settings"]),
        simulator_type=e["simulator_type"],
        evaluator=RoleSettings.model_validate_json(evaluator),  # type: ignore[arg-type]
        max_iterations=c.max_iterations if c is not None else None,
        gates=list(c.element("gates") or []) if c is not None else [],  # as run.json records them
    )


def check_runs(runs: list[LoadedRun]) -> Checked:
    out = Checked()
    if not runs:
        out.problems.append("no runs")
        return out
    for run in runs:
        out.problems += [f"{run.info.run}: {note}" for note in run.info.notes]  # unreadable lines, orphans
    _check_benchmark(runs, out)
    _check_episodes(runs, out)
    _check_scores(runs, out)
    _check_settings(runs, out)
    _check_judges(runs, out)
    return out


def combined(runs: list[LoadedRun]) -> LoadedRun:
    """All the runs' episodes as one run, for the numbers."""
    episodes = [ep.model_copy(update={"run": "submission"}) for run in runs for ep in run.episodes]
    scorers = list({i.name: i for run in runs for i in run.scorers}.values())
    info = RunInfo(run="submission", source="", format="ours", agent="", scorers=[i.name for i in scorers])
    sources = [s for run in runs for s in (run.sources or [])]
    return LoadedRun(info, episodes, scorers, log=None, sources=sources)


def build_submission(runs: list[LoadedRun], checked: Checked, created_at: str | None = None) -> Submission:
    """The submission.json of runs that passed the checks."""
    assert checked.benchmark is not None and checked.settings is not None and not checked.problems
    report = build_report([combined(runs)])
    overall = report.overall("submission")
    assert overall is not None
    statuses = Counter(ep.status for run in runs for ep in run.episodes)
    return Submission(
        toolemu_version=__version__,
        created_at=created_at or now(),
        benchmark=BenchmarkSummary(
            version=checked.benchmark.version or "", hash=checked.benchmark.hash, cases=len(checked.benchmark.cases)
        ),
        settings=checked.settings,
        trials=checked.trials,
        episodes=sum(len(run.episodes) for run in runs),
        # Every standard status, and an occasional one (an MCP session closed without an answer) where some episode
        # has it: the counts add up to the episodes.
        status_counts={s: statuses.get(s, 0) for s in EPISODE_STATUSES if s != "unknown"}
        | {s: statuses[s] for s in OCCASIONAL_STATUSES if statuses.get(s)},
        runs=[
            SubmittedRun(
                label=run.info.run,
                run_id=run.log.meta.run_id if run.log is not None and run.log.meta is not None else "",
                path=f"{RUNS_DIR}/{run.info.run}",
                episodes=len(run.episodes),
                files=[p.name for p in run_record_files(run.log.files.directory)[0]] if run.log is not None else [],
            )
            for run in runs
        ],
        metrics={
            s: SubmittedMetric.model_validate(overall.metrics[s].model_dump())
            for s in _submitted(runs)
            if s in overall.metrics
        },
        pass_k={p.scorer: p.values for p in report.pass_k if p.scorer in _submitted(runs)},
    )
