"""`toolemu noise RUN`: re-run a judged run's cases to split the spread of each headline rate into the agent, the
emulator and the judge.

    <out>/trials/     a run folder: the run's own episodes of the chosen cases (copied, with their verdicts) and
                      `trials` new agent trials of each case, in the run's settings
    <out>/seed-<s>/   a run folder: every trial above replayed in world s (toolemu.noise.episodes)
    <out>/noise.json  the split (toolemu.reporting.noise_model.NoiseSummary); `toolemu report RUN` shows it when
                      <out> is RUN/noise

Every trajectory in these folders is judged `samples` times by the run's judge: once into the eval file, then
`samples - 1` re-judgements (as `evaluate --rejudge` makes them, each call asked afresh). Every folder resumes: what
was done before is kept, what errored runs again. The models are the run's own, as its records name them, unless
the command line names one; the new worlds' emulator is the run's at its own temperature (or
`--emulator-temperature`), with seed s drawing world s (the model's seed plus s, and a cache salt of its own).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from pathlib import Path

from toolemu.agents.registry import AgentFactory
from toolemu.llm import LLMSettings, build_chat_model
from toolemu.llm.model import ChatFactory
from toolemu.log import RunLog, read_run, write_json_atomic
from toolemu.noise.cost import noise_cost
from toolemu.noise.design import observations, scored
from toolemu.noise.fit import split_noise
from toolemu.noise.setup import NoiseSetup, check_counts, prepare
from toolemu.noise.stages import TRIALS_DIR, judge_folder, play_trials, play_world, seed_dir
from toolemu.reporting.noise_model import NOISE_DIR, NOISE_FILE, MetricNoise, NoiseSummary
from toolemu.robust.run import default_out
from toolemu.scorers.base import MetricInfo


def measure_noise(
    run: Path,
    *,
    settings: LLMSettings | None = None,
    cases: int | None = None,
    trials: int = 2,
    seeds: int = 2,
    samples: int = 2,
    resamples: int = 200,
    emulator_temperature: float | None = None,
    out: Path | None = None,
    toolkits: Sequence[Path] | None = None,
    agent: str | AgentFactory | None = None,
    batch_size: int = 1,
    show_progress: bool = False,
    chat_factory: ChatFactory = build_chat_model,
    bootstrap_seed: int = 0,
) -> NoiseSummary:
    """Re-run `cases` of the run's judged cases (all where None): `trials` new agent trials of each, every trial in
    `seeds` new worlds, every trajectory judged `samples` times (the first included); fit the split of each headline
    metric with `resamples` bootstrap resamples and write <out>/noise.json. A stop (a budget, a refused key, Ctrl-C,
    SIGTERM) ends the re-runs; the split is then over what was done, and the summary says what stopped it."""
    check_counts(cases=cases, trials=trials, seeds=seeds, samples=samples, resamples=resamples)
    setup = prepare(run, settings or LLMSettings(), cases, seeds, emulator_temperature, toolkits, agent, chat_factory)
    out = out or default_out(run, NOISE_DIR)
    reused, outcome = play_trials(setup, out, trials, batch_size, show_progress)
    stop_kind, stop_reason, not_run = outcome.stop_kind, outcome.stop_reason, len(outcome.not_run)
    for seed in range(1, seeds + 1) if not stop_kind else ():
        outcome = play_world(setup, out, seed, batch_size, show_progress)
        stop_kind, stop_reason, not_run = outcome.stop_kind, outcome.stop_reason, len(outcome.not_run)
        if stop_kind:
            break
    folders = [out / TRIALS_DIR, *(seed_dir(out, s) for s in range(1, seeds + 1))]
    for folder in folders if not stop_kind else ():
        stop_kind, stop_reason = judge_folder(setup, folder, samples, batch_size, show_progress)
        if stop_kind:
            break
    summary = summarise(setup, out, reused, trials, seeds, samples, resamples, emulator_temperature, bootstrap_seed)
    summary.stop_kind, summary.stop_reason, summary.not_run = stop_kind, stop_reason, not_run
    if stop_kind:
        summary.notes.append(f"stopped ({stop_kind}: {stop_reason}): the split is over what was done; run the same "
                             "command again to resume")  # fmt: skip
    write_json_atomic(out / NOISE_FILE, summary.model_dump(mode="json"))
    return summary


def _run_verdicts(run: RunLog, info: MetricInfo) -> int:
    """The scored verdicts behind the run's headline rate (one per episode, or each replicate), as the report
    counts them."""
    return sum(scored(ev, info) is not None for ev in run.evaluations.get(info.eval_type) or [])


def _metric(
    info: MetricInfo, trials: RunLog, worlds: dict[str, RunLog], setup: NoiseSetup, samples: int, resamples: int,
    seed: int,
) -> MetricNoise:  # fmt: skip
    found = observations(trials, worlds, info, samples, setup.chosen)
    n = _run_verdicts(setup.run, info)
    metric = MetricNoise(
        scorer=info.name,
        rate_name=info.rate_name,
        observations=len(found),
        cases=len({o.case for o in found}),
        trials=len({(o.case, o.trial) for o in found}),
        worlds=len({(o.case, o.trial, o.world) for o in found}),
        run_episodes=n,
    )
    if not found:
        metric.degenerate = f"no scored {info.name} verdict of the chosen cases"
        return metric
    split = split_noise(found, resamples, seed)
    metric.components, metric.not_measured = split.components, list(split.not_measured)
    metric.case_variance, metric.noise_sd, metric.noise_sd_ci = split.case_variance, split.noise_sd, split.noise_sd_ci
    metric.resamples, metric.degenerate, metric.notes = split.resamples, split.degenerate, split.notes
    if split.noise_sd is not None and n:
        metric.headline_sd = split.noise_sd / math.sqrt(n)
        ci = split.noise_sd_ci
        metric.headline_sd_ci = (ci[0] / math.sqrt(n), ci[1] / math.sqrt(n)) if ci is not None else None
    return metric


def summarise(
    setup: NoiseSetup,
    out: Path,
    reused: set[Hashable],
    trials: int,
    seeds: int,
    samples: int,
    resamples: int,
    emulator_temperature: float | None,
    bootstrap_seed: int = 0,
) -> NoiseSummary:
    """Read the folders back, fit each metric, count the cost."""
    trials_log = read_run(out / TRIALS_DIR)
    worlds = {f"seed-{s}": read_run(seed_dir(out, s)) for s in range(1, seeds + 1) if seed_dir(out, s).is_dir()}
    notes = [f"{name}: {p}" for name, log in [("trials", trials_log), *worlds.items()] for p in log.problems]
    folders = [(trials_log, reused), *((log, set[Hashable]()) for log in worlds.values())]
    for name, (log, kept) in zip(["trials", *worlds], folders, strict=True):
        errored = sum(t.status == "error" for t in log.trajectories if t.key not in kept)
        if errored:
            notes.append(f"{name}: {errored} episodes ended in an error: not judged, not in the split")
    metrics = [_metric(i, trials_log, worlds, setup, samples, resamples, bootstrap_seed) for i in setup.metrics]
    return NoiseSummary(
        run=setup.run.files.label,
        source=setup.source,
        out=str(out),
        cases=setup.chosen,
        of_cases=setup.of_cases,
        trials=trials,
        seeds=seeds,
        samples=samples,
        resamples=resamples,
        emulator=setup.options["emulator"].model,
        emulator_temperature=emulator_temperature,
        metrics=metrics,
        cost=noise_cost(folders, len(setup.chosen)),
        notes=notes,
    )
