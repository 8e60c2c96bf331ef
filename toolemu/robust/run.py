"""`toolemu robust`: play a run's failures again in other emulated worlds, judge them as the run was judged, and
say which failures stand.

    <out>/seed-<i>/       a run folder per seed (trajectories.jsonl, run.json, the eval files): read_run reads it
    <out>/robust.json     the summary (toolemu.log.robust.RobustSummary); `toolemu report RUN` shows it when
                          <out> is RUN/robust

The episode is the run's own, as its run.json records it (its EpisodeSpec: the gates, the user, the realism filter,
any registered element), and so is the agent (ours, a registered or imported one, or an outside agent's command:
`RobustSummary.agent` says which) unless `agent` names another. The models are the run's own, as its records name
them (the agent, each element's role, the judge with its samples), unless the command line names one; the emulator is
the run's or `--model emulator=M`, with seed i drawing world i: the model's seed and a cache salt of its own. Every seed
folder resumes: a re-run finished before is kept, one that errored is run again, and judgements resume as
`toolemu evaluate`'s do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from toolemu.agents.registry import AgentFactory, get_agent
from toolemu.emulator import Emulator
from toolemu.episode.builder import EpisodeBuilder
from toolemu.episode.reproduce import recorded_case
from toolemu.episode.spec import EpisodeSpec
from toolemu.errors import InputError
from toolemu.llm import LLMSettings, ModelHub, ModelOptions, build_chat_model, build_hub
from toolemu.llm.model import ChatFactory
from toolemu.log import (
    RUN_FILE,
    TRAJECTORIES,
    Evaluation,
    RobustTrace,
    RobustWorld,
    RunConfig,
    RunLog,
    Trajectory,
    read_meta,
    read_run,
    split_eval_key,
    write_json_atomic,
)
from toolemu.log.model import ModelDescription
from toolemu.log.robust import Rerun, RobustEpisode, RobustSummary
from toolemu.pool import PoolOutcome
from toolemu.robust.episode import rerun
from toolemu.robust.failures import Judged, headline_metrics, hinge, judged_episodes, judged_with
from toolemu.robust.stats import case_sensitivity, robust_rates, tally
from toolemu.runner import play_into, prepare_dump_dir
from toolemu.scorers import Scorer, ScoringContext, evaluate_trajectories, get_scorer, registered_infos
from toolemu.scorers.base import MetricInfo
from toolemu.secrets import REDACTED
from toolemu.specs import Benchmark, Case, load_toolkits
from toolemu.specs.models import Toolkit

log = logging.getLogger("toolemu")

ROBUST_DIR = "robust"
SUMMARY_FILE = "robust.json"
RERUN_TEMPERATURE = 0.7  # the emulator's, where the run's was 0: at 0 a new seed would draw the same world


def default_out(run: Path, name: str = ROBUST_DIR) -> Path:
    """Where a run's re-runs go by default: RUN/<name>, or <stem>_<name> beside a trajectory file (noise's too)."""
    return run / name if run.is_dir() else run.with_name(f"{run.stem}_{name}")


def _recorded_judge(run: RunLog, headline: list[MetricInfo]) -> tuple[ModelDescription | None, int]:
    """The headline judge's model settings and samples per trajectory, as its evaluations recorded them."""
    for eval_type in (*(i.eval_type for i in headline), *run.evaluations):
        for ev in run.evaluations.get(eval_type, []):
            if ev.status == "ok" and ev.evaluator is not None:
                return ev.evaluator, ev.samples_drawn(run.files.eval_file(eval_type))
    return None, 1


def recorded_agent(config: RunConfig, agent: str | AgentFactory | None, source: str) -> tuple[AgentFactory, str]:
    """The agent a run is played again with, and what to call it: `agent` where given, else the run's own, as its
    run.json records it (ours, a registered or imported one, an outside agent's command). One that played from
    outside (a person, a gym, an MCP client) cannot be played again; a command recorded with its keys as *** is
    given again with `--agent`."""
    if agent is not None:
        return get_agent(agent), f"{agent if isinstance(agent, str) else repr(agent)} (--agent)"
    outside = {"a person": config.play == "agent", "a gym's agent": config.gym, "an MCP client": config.mcp}
    outside = next((who for who, was in outside.items() if was), "")
    if outside:
        message = f"expected a run of an agent that can be played again: its agent was {outside}; name one with --agent"
        raise InputError.single(source, message, field="config")
    if config.agent is None:
        return get_agent(None), f"ours ({config.agent_type}, {config.agent_format}), as the run's"
    if REDACTED in config.agent:
        message = "the run's agent command is recorded with its keys as ***: give it again with --agent mcp-cmd:..."
        raise InputError.single(source, message, field="config.agent")
    return get_agent(config.agent), f"{config.agent}, as the run's"


def world_options(
    base: ModelOptions, *, seed: int, temperature: float | None, at_zero: float | None = RERUN_TEMPERATURE
) -> ModelOptions:
    """The emulator of world `seed`: the run's, with its seed moved by `seed`, at `temperature` where given, else at
    its own temperature, or `at_zero` where that is 0 or unset (None: left as it is, noise's)."""
    chosen = temperature if temperature is not None else (base.temperature or at_zero)
    update = {"seed": (base.seed or 0) + seed, **({"temperature": chosen} if chosen is not None else {})}
    return base.model_copy(update=update)


@dataclass
class Replaying:
    """A recorded run set up to be played again: its settings and episode spec as run.json records them (one folder,
    whatever shard an episode came from; a dump without one, ToolEmu's: as its first record says), its agent, its
    models by role (the run's own, as its records name them, unless `settings` name one: the agent's, the judge's,
    the emulator's and each element's; `worlds` more emulators, one per seed), one hub for them all (one cache, one
    budget) and the toolkits."""

    config: RunConfig
    spec: EpisodeSpec
    agent: AgentFactory
    agent_label: str
    options: dict[str, ModelOptions]
    hub: ModelHub
    kits: dict[str, Toolkit]
    samples: int  # the judge's per trajectory


def replaying(
    run: RunLog,
    first: Trajectory,
    metrics: list[MetricInfo],
    settings: LLMSettings,
    agent: str | AgentFactory | None,
    toolkits: Sequence[Path] | None,
    chat_factory: ChatFactory,
    worlds: dict[int, Callable[[ModelOptions], ModelOptions]],
) -> Replaying:
    run_file = run.files.directory / RUN_FILE
    if run.meta is not None:
        config = run.meta.config.model_copy(update={"shard": None})
    else:
        config = RunConfig(
            agent_type=first.agent_type or "naive",
            agent_format=first.agent_format or "auto",
            simulator_type=first.simulator_type or "adv_thought",
        )
    spec = EpisodeSpec.of(config, run_file)
    factory, label = recorded_agent(config, agent, str(run_file if run.meta else run.files.source))
    judge, samples = _recorded_judge(run, metrics)
    options = {
        "evaluator": settings.options_for("evaluator", recorded=judge),
        **{role: settings.options_for(role, recorded=first.model(role)) for role in spec.roles()},
    }
    options |= {f"emulator@{seed}": world(options["emulator"]) for seed, world in worlds.items()}
    hub = build_hub(settings, (), chat_factory, recorded=options)
    kits = load_toolkits(toolkits)
    return Replaying(config, spec, factory, label, options, hub, kits, samples)


def case_with_toolkits(traj: Trajectory, toolkits: dict[str, Toolkit], source: str) -> Case:
    """The recorded case, checked as a spec, with every toolkit it names loaded."""
    case = recorded_case(traj, source)
    missing = [n for n in [*case.toolkits, *case.user_toolkits] if n not in toolkits]
    if missing:
        message = f"expected the toolkits of {traj.case_name}, unknown: {', '.join(missing)} (use --toolkits-path)"
        raise InputError.single(source, message)
    return case


def recorded_scorers(run: RunLog) -> list[Scorer]:
    """The run's scorers: one per standard eval file (a panel's other judges are left out)."""
    found: dict[str, Scorer] = {}
    for eval_type in run.evaluations:
        if split_eval_key(eval_type)[1] is not None:
            continue
        try:
            scorer = get_scorer(eval_type)
        except InputError:
            log.warning("%s: eval type %r has no registered scorer; the re-runs are not judged by it", run, eval_type)
            continue
        found.setdefault(scorer.info.name, scorer)
    return list(found.values())


def check_same_settings(seed_dir: Path, identity: RunConfig) -> None:
    """A seed folder resumes only the re-runs of the same run, emulator, seed and temperature."""
    run_file = seed_dir / RUN_FILE
    if run_file.is_file() and not read_meta(run_file).config.same_run(identity):
        message = "expected re-runs of the same run and emulator settings to resume; use another --out for these"
        raise InputError.single(run_file, message, field="config")


def _judge_ids(evaluations: dict[str, list[Evaluation]], eval_type: str) -> set[str]:
    return {ev.judge_id for ev in evaluations.get(eval_type, []) if ev.judge_id and ev.status == "ok"}


def robust_failures(
    run: Path,
    *,
    settings: LLMSettings | None = None,
    seeds: int = 3,
    emulator_model: str | None = None,
    emulator_temperature: float | None = None,
    out: Path | None = None,
    toolkits: Sequence[Path] | None = None,
    agent: str | AgentFactory | None = None,
    batch_size: int = 1,
    show_progress: bool = False,
    chat_factory: ChatFactory = build_chat_model,
) -> RobustSummary:
    """Re-run every failure of `run` once per seed (1..seeds), judge the re-runs, and summarise (robust.json).
    A stop (a budget, a refused key, Ctrl-C, SIGTERM) ends the re-runs; the summary counts what was done and says
    what stopped it (`stop_kind`, `not_run`)."""
    if seeds < 1:
        raise InputError.single("command line", f"expected at least 1, got {seeds}", field="--seeds")
    settings = settings or LLMSettings()
    if emulator_model:
        settings = settings.model_copy(update={"role_models": {**settings.role_models, "emulator": emulator_model}})
    source = str(run)
    recorded_run = read_run(run)
    headline = headline_metrics(list(recorded_run.evaluations))
    if not any(recorded_run.evaluations.get(i.eval_type) for i in headline):
        names = ", ".join(i.name for i in registered_infos() if i.headline)
        raise InputError.single(source, f"expected a judged run: it has no evaluations by {names} (run evaluate)")
    episodes, _ = recorded_run.episodes()
    judged = judged_episodes(episodes)
    failures = [j for j in judged if j.failed]
    out = out or default_out(run)
    worlds = {seed: partial(world_options, seed=seed, temperature=emulator_temperature) for seed in range(1, seeds + 1)}
    first = recorded_run.trajectories[0]
    again = replaying(recorded_run, first, headline, settings, agent, toolkits, chat_factory, worlds)
    spec, hub, kits = again.spec, again.hub, again.kits
    cases = {f.key: case_with_toolkits(f.trajectory, kits, source) for f in failures}
    scorers = recorded_scorers(recorded_run)
    ctx = ScoringContext(hub=hub, toolkits=kits, samples=again.samples)
    plans = {f.key: hinge(f.trajectory) for f in failures}
    stop = PoolOutcome[Judged]()
    for seed in range(1, seeds + 1) if failures else ():
        seed_dir = out / f"seed-{seed}"
        world = RobustWorld(source=source, seed=seed, emulator=again.options[f"emulator@{seed}"].description())
        named = {"agent": agent} if isinstance(agent, str) else {}  # the agent played, where not the run's
        identity = again.config.model_copy(update={"robust": world, **named})
        plan = {"expected_pairs": [list(f.key) for f in failures]}
        plan["models"] = {r: o.model for r, o in again.options.items()}
        check_same_settings(seed_dir, identity)
        run_id, done, _ = prepare_dump_dir(seed_dir, identity, plan)  # set-aside lines are kept there
        emulator = Emulator(hub.model(f"emulator@{seed}"), spec.simulator_type, f"robust-{seed}")
        builder = EpisodeBuilder(hub, spec, Benchmark(toolkits=kits), again.agent, run_id, emulator=emulator)

        def one(failure: Judged, seed: int = seed, builder: EpisodeBuilder = builder) -> Trajectory:
            fixed, why = plans[failure.key]
            traj, replay = rerun(builder, failure.trajectory, cases[failure.key], fixed)
            traj.robust = RobustTrace(source=source, seed=seed, hinge=why, original=failure.reasons, **replay)
            return traj

        todo = [f for f in failures if f.key not in done]
        stop = play_into(seed_dir, todo, one, builder, f"re-runs (seed {seed})", batch_size, show_progress)
        if scorers and (seed_dir / TRAJECTORIES).is_file() and not stop.stop_kind:
            judged_now = evaluate_trajectories(seed_dir / TRAJECTORIES, scorers, ctx, batch_size, show_progress)
            if judged_now.stop_kind:
                stop.stopped_by(judged_now.stop_kind, judged_now.stop_reason)
        if stop.stop_kind:
            break
    base, label = again.options["emulator"], again.agent_label
    summary = summarise(run, recorded_run, judged, failures, plans, out, seeds, base, emulator_temperature, label)
    summary.stop_kind, summary.stop_reason, summary.not_run = stop.stop_kind, stop.stop_reason, len(stop.not_run)
    return summary


def _rerun_of(traj: Trajectory, evaluations: dict[str, list[Evaluation]], seed: int) -> Rerun:
    scored = judged_with(traj, evaluations)
    robust = traj.robust or RobustTrace()
    return Rerun(
        seed=seed,
        status=traj.status,
        safety=scored.safety,
        attack=scored.attack,
        failed=scored.failed if (scored.safety is not None or scored.attack is not None) else None,
        replayed=robust.replayed,
        stopped_at=robust.stopped_at.step + 1 if robust.stopped_at is not None else None,
    )


def summarise(
    run: Path,
    recorded_run: RunLog,
    judged: list[Judged],
    failures: list[Judged],
    plans: dict[tuple[str, int], tuple[int, str]],
    out: Path,
    seeds: int,
    emulator: ModelOptions,
    emulator_temperature: float | None,
    agent: str | None = None,
) -> RobustSummary:
    """Read every seed folder back and count; writes <out>/robust.json."""
    reruns: dict[tuple[str, int], list[Rerun]] = {f.key: [] for f in failures}
    notes: list[str] = []
    for seed in range(1, seeds + 1) if failures else ():
        seed_log = read_run(out / f"seed-{seed}")
        seed_episodes, seed_notes = seed_log.episodes()
        notes += [f"seed-{seed}: {n}" for n in [*seed_log.problems, *seed_notes]]
        for ep in seed_episodes:
            if ep.trajectory.key in reruns:
                reruns[ep.trajectory.key].append(_rerun_of(ep.trajectory, ep.evaluations, seed))
        for eval_type in (i.eval_type for i in headline_metrics(list(recorded_run.evaluations))):
            theirs, ours = _judge_ids(recorded_run.evaluations, eval_type), _judge_ids(seed_log.evaluations, eval_type)
            if theirs and ours and theirs != ours:
                notes.append(
                    f"seed-{seed}: {eval_type} judged by {', '.join(sorted(ours))}, the run by "
                    f"{', '.join(sorted(theirs))}: the judge's model, parameters or prompt differ"
                )
    episodes = [
        tally(
            RobustEpisode(
                case_name=f.trajectory.case_name,
                trial=f.trajectory.trial,
                reasons=f.reasons,
                hinge=plans[f.key][1],
                planned=plans[f.key][0],
                reruns=sorted(reruns[f.key], key=lambda r: r.seed),
            )
        )
        for f in failures
    ]
    rates = robust_rates(len(judged), episodes)
    summary = RobustSummary(
        run=recorded_run.files.label,
        source=str(run),
        out=str(out),
        seeds=list(range(1, seeds + 1)),
        agent=agent,
        emulator=emulator.model,
        emulator_temperature=emulator_temperature
        if emulator_temperature is not None
        else (emulator.temperature or RERUN_TEMPERATURE),
        judged=len(judged),
        failures=len(failures),
        undetermined=sum(1 for e in episodes if e.verdict == "undetermined"),
        cases=case_sensitivity(episodes),
        episodes=episodes,
        notes=notes,
        **rates,
    )
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / SUMMARY_FILE, summary.model_dump(mode="json"))
    return summary
