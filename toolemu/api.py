"""The library API: `toolemu.run`, `toolemu.emulate`, `toolemu.evaluate` and `toolemu.report` do the work; the CLI,
the scripts and the notebooks only parse arguments and call them.

    import toolemu
    from toolemu.llm import LLMSettings
    result = toolemu.run(settings=LLMSettings(model="mock"), config=toolemu.RunConfig(trunc_num=3),
                         dump_dir=Path("dumps/try"))
    print(result.report.overall("try"))
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolemu.episode.run import AgentFactory
from toolemu.errors import InputError
from toolemu.gates import build_gates
from toolemu.llm import LLMSettings, ModelHub, build_hub
from toolemu.log import run_files
from toolemu.paths import DEFAULT_CASES, DEFAULT_TOOLKITS
from toolemu.reporting import Report, write_report
from toolemu.runner import RunConfig, RunSummary, run_cases
from toolemu.scorers import DEFAULT_SCORERS, EvalSummary, ScoringContext, evaluate_trajectories, get_scorer
from toolemu.specs import Benchmark, load_benchmark

EMULATION_ROLES = ("agent", "emulator")


@dataclass
class ReportResult:
    report: Report
    files: dict[str, Path]  # html, json, csv


@dataclass
class RunResult:
    emulation: RunSummary
    evaluation: EvalSummary | None = None
    report: ReportResult | None = None


def load_cases(cases: Sequence[Path] | None = None, toolkits: Sequence[Path] | None = None) -> Benchmark:
    """The benchmark to run: the given case and toolkit files, or the shipped ones."""
    kits = load_benchmark(list(toolkits or [DEFAULT_TOOLKITS])).toolkits
    return load_benchmark(list(cases or [DEFAULT_CASES]), known_toolkits=kits)


def load_agent_factory(spec: str | None) -> AgentFactory | None:
    """An outside agent by import path, `package.module:factory`; factory(model, agent_type, agent_format)."""
    if not spec:
        return None
    module_name, _, attr = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise InputError.single("command line", f"cannot import agent {spec!r}: {exc}", field="--agent") from None
    if not callable(factory):
        raise InputError.single("command line", f"{spec!r} is not callable", field="--agent")
    return factory


def roles_for(config: RunConfig) -> tuple[str, ...]:
    """The roles an emulation uses: the monitor gate's and the simulated user's only when they are on."""
    return (
        *EMULATION_ROLES,
        *(("monitor",) if "monitor" in config.gates else ()),
        *(("user",) if config.user else ()),
    )


def emulate(
    *,
    dump_dir: Path,
    settings: LLMSettings | None = None,
    config: RunConfig | None = None,
    cases: Sequence[Path] | None = None,
    toolkits: Sequence[Path] | None = None,
    agent: str | None = None,
    hub: ModelHub | None = None,
    show_progress: bool = True,
) -> RunSummary:
    """Run agents against emulated toolkits: one trajectory per (case, trial) in `dump_dir` (resumable)."""
    config = config or RunConfig()
    bench = load_cases(cases, toolkits)
    hub = hub or build_hub(settings or LLMSettings(), roles_for(config))
    gates = build_gates(config.gates, hub)
    summary = run_cases(bench, hub, config, dump_dir, show_progress, gates, load_agent_factory(agent))
    summary.usage = hub.tracker.total()  # the command's spend so far (one hub: one budget)
    return summary


def evaluate(
    run: Path,
    *,
    settings: LLMSettings | None = None,
    scorers: Sequence[str] = DEFAULT_SCORERS,
    samples: int = 1,
    batch_size: int = 1,
    toolkits: Sequence[Path] | None = None,
    hub: ModelHub | None = None,
    show_progress: bool = True,
) -> EvalSummary:
    """Score every trajectory of a run (ours or a ToolEmu dump) with the named scorers; resumable."""
    if samples < 1:
        raise InputError.single("command line", f"expected at least 1, got {samples}", field="--num-eval-samples")
    chosen = [get_scorer(name) for name in dict.fromkeys(scorers)]
    files = run_files(run)
    kits = load_benchmark(list(toolkits or [DEFAULT_TOOLKITS])).toolkits
    if hub is None and any(s.needs_model for s in chosen):
        hub = build_hub(settings or LLMSettings(), ("evaluator",))
    ctx = ScoringContext(hub=hub, toolkits=kits, samples=samples)
    return evaluate_trajectories(files.trajectories, chosen, ctx, batch_size, show_progress)


def report(runs: Sequence[Path], out: Path | None = None) -> ReportResult:
    """Statistics, summary.csv, report.json and report.html for one or more runs (ours or ToolEmu's)."""
    built, files = write_report(list(runs), out)
    return ReportResult(built, files)


def run(
    *,
    dump_dir: Path,
    settings: LLMSettings | None = None,
    config: RunConfig | None = None,
    cases: Sequence[Path] | None = None,
    toolkits: Sequence[Path] | None = None,
    agent: str | None = None,
    scorers: Sequence[str] = DEFAULT_SCORERS,
    samples: int = 1,
    evaluate_after: bool = True,
    show_progress: bool = True,
) -> RunResult:
    """Emulate, then evaluate every trajectory, then write the report. One hub, so one budget for the command."""
    config = config or RunConfig()
    hub = build_hub(settings or LLMSettings(), (*roles_for(config), "evaluator"))
    summary = emulate(
        dump_dir=dump_dir,
        config=config,
        cases=cases,
        toolkits=toolkits,
        agent=agent,
        hub=hub,
        show_progress=show_progress,
    )
    result = RunResult(summary)
    if not evaluate_after or summary.stop_reason == "interrupted":
        return result
    result.evaluation = evaluate(
        summary.dump_dir,
        scorers=scorers,
        samples=samples,
        batch_size=config.batch_size,
        toolkits=toolkits,
        hub=hub,
        show_progress=show_progress,
    )
    result.report = report([summary.dump_dir])
    return result
