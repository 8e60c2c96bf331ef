"""What every stage of `toolemu noise` shares: the run as recorded, the chosen cases and their episodes, and the
models by role (the run's own, as its records name them, unless the command line names one), the run's episode spec
and its agent, as `toolemu robust` sets them up for its re-runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from toolemu.agents.registry import AgentFactory
from toolemu.episode.spec import EpisodeSpec
from toolemu.errors import InputError
from toolemu.llm import LLMSettings, ModelHub, ModelOptions
from toolemu.llm.model import ChatFactory
from toolemu.log import Episode, RunConfig, RunLog, read_run
from toolemu.log.evaluation import MAX_SAMPLES  # judgements per trajectory
from toolemu.noise.design import choose_cases, noise_metrics, scored
from toolemu.robust.run import case_with_toolkits, recorded_scorers, replaying, world_options
from toolemu.scorers import Scorer, ScoringContext
from toolemu.scorers.base import MetricInfo
from toolemu.specs import Benchmark, Case

# The bounds of the counts (the CLI's, toolemu/cli/limits.py, are the same: tests/test_noise_cli.py checks it).
MAX_CASES = 1_000_000
MAX_TRIALS = 100  # new agent trials per case
MAX_SEEDS = 100  # new worlds per trial
MAX_RESAMPLES = 10_000  # bootstrap resamples (each a fit of the model)


def check_counts(cases: int | None, trials: int, seeds: int, samples: int, resamples: int) -> None:
    """Every count within its bound, before any work: a typo is one line, exit 2."""
    bounds = (
        ("--cases", cases, 1, MAX_CASES),
        ("--num-trials", trials, 0, MAX_TRIALS),
        ("--seeds", seeds, 0, MAX_SEEDS),
        ("--num-eval-samples", samples, 1, MAX_SAMPLES),
        ("--resamples", resamples, 0, MAX_RESAMPLES),
    )
    for flag, value, least, most in bounds:
        if value is not None and not least <= value <= most:
            message = f"expected {least:,} to {most:,} (a bound against a typo), got {value:,}"
            raise InputError.single("command line", message, field=flag)


@dataclass
class NoiseSetup:
    source: str
    run: RunLog
    metrics: list[MetricInfo]
    chosen: list[str]  # the case names, in the order chosen
    of_cases: int  # the run's judged cases
    originals: list[Episode]  # the run's judged episodes of the chosen cases
    config: RunConfig  # the run's settings (one folder, whatever shard an episode came from)
    spec: EpisodeSpec  # the run's episodes, as its run.json records them
    options: dict[str, ModelOptions]
    hub: ModelHub
    bench: Benchmark
    cases: dict[str, Case]
    agent: AgentFactory  # the run's own agent, unless another was named
    scorers: list[Scorer]
    ctx: ScoringContext


def _judged(run: RunLog, metrics: list[MetricInfo]) -> list[Episode]:
    episodes, _ = run.episodes()
    return [
        ep
        for ep in episodes
        if ep.trajectory.status != "error"
        and any(scored(ev, i) is not None for i in metrics for ev in ep.evaluations.get(i.eval_type) or [])
    ]


def prepare(
    run: Path,
    settings: LLMSettings,
    cases: int | None,
    seeds: int,
    emulator_temperature: float | None,
    toolkits: Sequence[Path] | None,
    agent: str | AgentFactory | None,
    chat_factory: ChatFactory,
) -> NoiseSetup:
    source = str(run)
    recorded_run = read_run(run)
    metrics = noise_metrics(list(recorded_run.evaluations))
    judged = _judged(recorded_run, metrics)
    if not judged:
        message = "expected a judged run: no episode has a verdict of safety, helpfulness or attack (run evaluate)"
        raise InputError.single(source, message)
    names = [ep.trajectory.case_name for ep in judged]
    chosen = choose_cases(names, cases)
    originals = [ep for ep in judged if ep.trajectory.case_name in set(chosen)]
    world = partial(world_options, temperature=emulator_temperature, at_zero=None)  # the run's own temperature
    worlds = {seed: partial(world, seed=seed) for seed in range(1, seeds + 1)}
    again = replaying(recorded_run, originals[0].trajectory, metrics, settings, agent, toolkits, chat_factory, worlds)
    kits = again.kits
    case_of: dict[str, Case] = {}
    for ep in originals:
        case_of.setdefault(ep.trajectory.case_name, case_with_toolkits(ep.trajectory, kits, source))
    wanted = {i.name for i in metrics}
    return NoiseSetup(
        source=source,
        run=recorded_run,
        metrics=metrics,
        chosen=chosen,
        of_cases=len(set(names)),
        originals=originals,
        config=again.config,
        spec=again.spec,
        options=again.options,
        hub=again.hub,
        bench=Benchmark(toolkits=kits),
        cases=case_of,
        agent=again.agent,
        scorers=[s for s in recorded_scorers(recorded_run) if s.info.name in wanted],
        ctx=ScoringContext(hub=again.hub, toolkits=kits, samples=again.samples),
    )
