"""The three re-runs of `toolemu noise`, each into run folders that resume: the agent (new trials beside the run's
own, copied with their verdicts), the emulator (every trial replayed in each new world), the judge (every
trajectory judged `samples` times: the eval file, then `samples - 1` re-judgements)."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path

from toolemu.emulator import Emulator
from toolemu.episode.builder import EpisodeBuilder
from toolemu.log import TRAJECTORIES, RobustWorld, RunConfig, Trajectory, read_run, run_files
from toolemu.log.batched import BatchedJsonlWriter
from toolemu.noise.episodes import in_new_world
from toolemu.noise.setup import NoiseSetup
from toolemu.pool import PoolOutcome
from toolemu.robust.run import check_same_settings
from toolemu.runner import play_into, prepare_dump_dir
from toolemu.scorers import evaluate_trajectories
from toolemu.scorers.rejudge import rejudge_trajectories

TRIALS_DIR = "trials"
Item = tuple[Trajectory, int]  # an episode to play from (its case, its trial or the one after), and its trial


def seed_dir(out: Path, seed: int) -> Path:
    return out / f"seed-{seed}"


def _open(folder: Path, identity: RunConfig, pairs: list[list[object]]) -> tuple[str, set[tuple[str, int]]]:
    check_same_settings(folder, identity)  # a folder resumes only the same run's re-runs, in the same settings
    run_id, done, _ = prepare_dump_dir(folder, identity, {"expected_pairs": pairs})
    return run_id, done


def _copy_originals(setup: NoiseSetup, folder: Path, done: set[tuple[str, int]]) -> set[Hashable]:
    """The run's own episodes of the chosen cases, with their verdicts of the scorers measured, into the trials
    folder (those not there yet). Returns what was reused: trajectory keys, and (eval type, key, start) of
    verdicts."""
    files = run_files(folder)
    eval_types = [s.info.eval_type for s in setup.scorers]
    reused: set[Hashable] = set()
    trajectories = BatchedJsonlWriter(files.trajectories)
    writers = {t: BatchedJsonlWriter(files.eval_file(t)) for t in eval_types}
    try:
        for ep in setup.originals:
            reused.add(ep.trajectory.key)
            verdicts = {t: ep.evaluations.get(t) or [] for t in eval_types}
            reused |= {(t, ev.key, ev.started_at) for t, evs in verdicts.items() for ev in evs}
            if ep.trajectory.key in done:
                continue
            trajectories.append(ep.trajectory)
            for t, evs in verdicts.items():
                for ev in evs:
                    writers[t].append(ev)
    finally:
        trajectories.close()
        for writer in writers.values():
            writer.close()
    return reused


def play_trials(
    setup: NoiseSetup, out: Path, trials: int, batch_size: int, show_progress: bool
) -> tuple[set[Hashable], PoolOutcome[Item]]:
    """The agent's part: each chosen case's own trials (copied) and `trials` new ones, numbered after the run's
    last trial of that case."""
    folder = out / TRIALS_DIR
    last: dict[str, int] = {}
    for traj in setup.run.trajectories:
        last[traj.case_name] = max(last.get(traj.case_name, -1), traj.trial)
    first = {}
    for ep in setup.originals:
        first.setdefault(ep.trajectory.case_name, ep.trajectory)
    new = [(first[n], t) for n in setup.chosen for t in range(last[n] + 1, last[n] + 1 + trials)]
    pairs = [[ep.trajectory.case_name, ep.trajectory.trial] for ep in setup.originals]
    run_id, done = _open(folder, setup.config, pairs + [[traj.case_name, t] for traj, t in new])
    reused = _copy_originals(setup, folder, done)
    builder = EpisodeBuilder(setup.hub, setup.spec, setup.bench, setup.agent, run_id)

    def trial(item: Item) -> Trajectory:
        traj, number = item
        return builder.run(setup.cases[traj.case_name], traj.case_idx, number)

    todo = [(traj, t) for traj, t in new if (traj.case_name, t) not in done]
    return reused, play_into(folder, todo, trial, builder, "new trials", batch_size, show_progress)


def play_world(setup: NoiseSetup, out: Path, seed: int, batch_size: int, show_progress: bool) -> PoolOutcome[Item]:
    """The emulator's part: every trial of the trials folder (that did not error) replayed in world `seed`."""
    options = setup.options[f"emulator@{seed}"]
    world = RobustWorld(source=setup.source, seed=seed, emulator=options.description())
    identity = setup.config.model_copy(update={"robust": world})
    played = [t for t in read_run(out / TRIALS_DIR, evaluations=False).trajectories if t.status != "error"]
    folder = seed_dir(out, seed)
    run_id, done = _open(folder, identity, [list(t.key) for t in played])
    emulator = Emulator(setup.hub.model(f"emulator@{seed}"), setup.spec.simulator_type, f"noise-{seed}")
    builder = EpisodeBuilder(setup.hub, setup.spec, setup.bench, setup.agent, run_id, emulator=emulator)

    def replay(item: Item) -> Trajectory:
        return in_new_world(builder, item[0], setup.cases[item[0].case_name])

    todo = [(t, t.trial) for t in played if t.key not in done]
    return play_into(folder, todo, replay, builder, f"world {seed}", batch_size, show_progress)


def judge_folder(
    setup: NoiseSetup, folder: Path, samples: int, batch_size: int, show_progress: bool
) -> tuple[str, str]:
    """The judge's part: every trajectory of `folder` judged (the eval file), then judged again `samples - 1`
    times. Returns what stopped it and why ("" where nothing did)."""
    trajectories = folder / TRAJECTORIES
    if not trajectories.is_file() or not setup.scorers:
        return "", ""
    done = evaluate_trajectories(trajectories, setup.scorers, setup.ctx, batch_size, show_progress)
    if done.stop_kind or samples < 2:
        return done.stop_kind, done.stop_reason
    again = rejudge_trajectories(trajectories, setup.scorers, setup.ctx, samples - 1, None, batch_size, show_progress)
    return again.stop_kind, again.stop_reason
