"""The library API: `toolemu.run`, `toolemu.emulate`, `toolemu.evaluate` and `toolemu.report` do the work; the CLI,
the scripts and the notebooks only parse arguments and call them.

    import toolemu
    from toolemu.llm import LLMSettings
    result = toolemu.run(settings=LLMSettings(model="mock"), config=toolemu.RunConfig(trunc_num=3),
                         dump_dir=Path("dumps/try"))
    print(result.report.overall("try"))

Agents and scorers may be given by name (as on the command line) or as objects: `agent=MyAgent`,
`scorers=["safety", MyScorer()]`. The episode's features are element specs in the run's settings, gates among them
by spec or as objects: `RunConfig(elements=[GatesSpec(["policy.yaml", MyGate()]), UserSpec(max_user_turns=3)])`
(`toolemu.episode`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolemu.agents import AgentLike
from toolemu.agents.registry import AgentFactory, get_agent
from toolemu.episode.spec import EpisodeSpec
from toolemu.errors import InputError
from toolemu.llm import LLMSettings, ModelHub, UsageTracker, build_hub
from toolemu.llm.usage import budget_use
from toolemu.log import RUN_FILE, TRAJECTORIES, RunConfig, run_files
from toolemu.log.lock import run_lock
from toolemu.log.usage import BudgetUse
from toolemu.paths import output_dir
from toolemu.reporting import Report, write_report
from toolemu.reporting.accuracy import read_accuracy
from toolemu.runner import RunSummary, record_budget, run_cases
from toolemu.scorers import DEFAULT_SCORERS, EvalSummary, Scorer, ScoringContext, evaluate_trajectories, get_scorer
from toolemu.scorers.panel import PanelJudge, with_panel
from toolemu.scorers.rejudge import rejudge_trajectories
from toolemu.secrets import redact_command
from toolemu.specs import benchmark_identity, load_cases, load_toolkits

__all__ = [
    "ReportResult",
    "RunConfig",
    "RunResult",
    "emulate",
    "evaluate",
    "load_cases",
    "report",
    "run",
]


@dataclass
class ReportResult:
    report: Report
    files: dict[str, Path]  # html, json, csv; and "<frame>.<format>" for each frame file


@dataclass
class RunResult:
    emulation: RunSummary
    evaluation: EvalSummary | None = None
    report: ReportResult | None = None
    usage: UsageTracker | None = None  # the command's model calls by role: tokens, cost, repairs, cut-offs
    budget: BudgetUse | None = None  # what the whole command spent, emulation and evaluation together


def agent_name(agent: str | AgentFactory | AgentLike | None) -> str | None:
    """What run.json records of the agent: the name or path given (an agent's command with its keys as ***), else
    the object's import path."""
    if isinstance(agent, str) and agent.startswith("mcp-cmd:"):
        return "mcp-cmd:" + redact_command(agent.removeprefix("mcp-cmd:").strip())
    if agent is None or isinstance(agent, str):
        return agent or None
    if isinstance(getattr(agent, "spec", None), str):  # a factory that names itself (mcp-cmd:<command>)
        return agent.spec  # type: ignore[union-attr]
    owner = agent if callable(agent) and hasattr(agent, "__qualname__") else type(agent)
    return f"{owner.__module__}:{owner.__qualname__}"


def resolve_scorers(scorers: Sequence[str | Scorer]) -> list[Scorer]:
    """Scorers by name (or eval type, or import path) or as objects; each once."""
    chosen: dict[str, Scorer] = {}
    for item in scorers:
        scorer = get_scorer(item) if isinstance(item, str) else item
        chosen.setdefault(scorer.info.name, scorer)
    return list(chosen.values())


def emulate(
    *,
    dump_dir: Path,
    settings: LLMSettings | None = None,
    config: RunConfig | None = None,
    cases: Sequence[Path] | None = None,
    toolkits: Sequence[Path] | None = None,
    agent: str | AgentFactory | AgentLike | None = None,
    hub: ModelHub | None = None,
    show_progress: bool = True,
) -> RunSummary:
    """Run agents against emulated toolkits: one trajectory per (case, trial) in `dump_dir` (resumable).

    `agent`: a registered name, `package.module:factory`, or a factory or agent object (default: ours, in
    `config.agent_format`)."""
    config = config or RunConfig()
    factory = get_agent(agent if agent is not None else config.agent)
    hub = hub or build_hub(settings or LLMSettings(), EpisodeSpec.of(config).roles())
    config = config.model_copy(update={"agent": agent_name(agent) or config.agent})
    bench = load_cases(cases, toolkits)
    identity = benchmark_identity(bench, cases, toolkits)
    output_dir(dump_dir, "--dump-dir")
    with run_lock(dump_dir / TRAJECTORIES):
        summary = run_cases(bench, hub, config, dump_dir, show_progress, factory, identity)
        summary.usage = hub.tracker.total()  # the command's spend so far (one hub: one budget)
        summary.usage_by_role = hub.tracker.roles()
        stopped = summary.stop_reason if summary.stop_kind == "budget" else None
        summary.budget = budget_use(hub.tracker, "emulate", stopped)
        record_budget(dump_dir / RUN_FILE, summary.budget)
    return summary


def evaluate(
    run: Path,
    *,
    settings: LLMSettings | None = None,
    scorers: Sequence[str | Scorer] = DEFAULT_SCORERS,
    samples: int = 1,
    batch_size: int = 1,
    toolkits: Sequence[Path] | None = None,
    hub: ModelHub | None = None,
    show_progress: bool = True,
    judges: Sequence[str] = (),
    rejudge: int = 0,
    rejudge_sample: int | None = None,
) -> EvalSummary:
    """Score every trajectory of a run (ours or a ToolEmu dump) with the scorers (names or objects); resumable.

    `judges` (model strings) makes a panel: the first judge writes the standard eval files, each other judge its
    own `_eval_<type>@<judge>.jsonl` (see `toolemu.scorers.panel`); deterministic scorers run once.
    `rejudge` K: then judge `rejudge_sample` episodes (default: every one that did not error) K more times with the
    first judge, into `_eval_<type>#rejudge.jsonl` (the headline numbers never pool them; see
    `toolemu.scorers.rejudge`), for the report's flip rates."""
    if samples < 1:
        raise InputError.single("command line", f"expected at least 1, got {samples}", field="--num-eval-samples")
    if rejudge < 0:
        raise InputError.single("command line", f"expected 0 or more, got {rejudge}", field="--rejudge")
    if rejudge_sample is not None and (rejudge_sample < 1 or not rejudge):
        problem = f"expected at least 1, got {rejudge_sample}" if rejudge_sample < 1 else "expected with --rejudge K"
        raise InputError.single("command line", problem, field="--rejudge-sample")
    chosen = resolve_scorers(scorers)
    files = run_files(run)
    kits = load_toolkits(toolkits)
    settings, panel = with_panel(settings or LLMSettings(), judges)
    if hub is None and any(s.needs_model for s in chosen):
        hub = build_hub(settings, tuple(j.role for j in panel))
    summary = EvalSummary()
    for i, judge in enumerate(panel):
        mine = chosen if i == 0 else [s for s in chosen if s.needs_model]
        if not mine or summary.stop_kind:  # a stop (budget, refused key, Ctrl-C) ends the whole panel
            continue
        _check_role(hub, judge)
        ctx = ScoringContext(hub=hub, toolkits=kits, samples=samples, evaluator_role=judge.role)
        summary.add(evaluate_trajectories(files.trajectories, mine, ctx, batch_size, show_progress, judge.slug))
    if rejudge and not summary.stop_kind:  # the first judge's verdicts, judged again
        ctx = ScoringContext(hub=hub, toolkits=kits, samples=samples, evaluator_role=panel[0].role)
        args = (files.trajectories, chosen, ctx, rejudge, rejudge_sample, batch_size, show_progress)
        summary.rejudged = rejudge_trajectories(*args)
    if hub is not None:
        stops = [s.stop_reason for s in (summary, summary.rejudged) if s is not None and s.stop_kind == "budget"]
        summary.budget = budget_use(hub.tracker, "evaluate", stops[0] if stops else None)
        if files.run_file is not None:
            with run_lock(files.trajectories):
                record_budget(files.run_file, summary.budget)
    return summary


def _check_role(hub: ModelHub | None, judge: PanelJudge) -> None:
    # A hub without the judge's role would hand it the default model: a panel judge must never silently be another.
    if hub is not None and judge.slug is not None and judge.role not in hub.roles:
        raise ValueError(f"the model hub has no role {judge.role!r} for panel judge {judge.model!r}")


def report(
    runs: Sequence[Path],
    out: Path | None = None,
    judge_accuracy: Path | None = None,
    formats: Sequence[str] = (),
    *,
    group_by: str | None = None,
    baseline: str | None = None,
    compare: Sequence[str] = (),
) -> ReportResult:
    """Statistics, summary.csv, report.json and report.html for one or more runs (ours or ToolEmu's).

    `judge_accuracy`: a file of judges' sensitivity and specificity (`toolemu agree --labels ... --json`), for
    failure rates corrected for judge error. `formats` ("parquet", "csv"): also the runs' frames
    (toolemu.analysis) as files beside them. `group_by`: which files make one run (default: the shards of a run;
    a regex with a group, a metadata key such as agent_model, or none). `baseline` (a run's name), `compare`
    ("A,B" pairs, or "all"): which runs are compared pair by pair (default: every pair of up to 3 runs).

    Without `formats`, the report's episodes hold no step or judge's text (those went to the page's traces as read, so
    a large study fits in memory): read whole records with `toolemu.analysis` or `toolemu.log.read_run`."""
    accuracy = read_accuracy(judge_accuracy) if judge_accuracy is not None else None
    built, files = write_report(list(runs), out, accuracy, formats, group_by, baseline, compare)
    return ReportResult(built, files)


def run(
    *,
    dump_dir: Path,
    settings: LLMSettings | None = None,
    config: RunConfig | None = None,
    cases: Sequence[Path] | None = None,
    toolkits: Sequence[Path] | None = None,
    agent: str | AgentFactory | AgentLike | None = None,
    scorers: Sequence[str | Scorer] = DEFAULT_SCORERS,
    samples: int = 1,
    evaluate_after: bool = True,
    show_progress: bool = True,
    judges: Sequence[str] = (),
) -> RunResult:
    """Emulate, then evaluate every trajectory (with a panel when `judges` names several models), then write the
    report. One hub, so one budget for the command; the run directory stays locked against other writers
    throughout."""
    config = config or RunConfig()
    settings, panel = with_panel(settings or LLMSettings(), judges)
    hub = build_hub(settings, (*EpisodeSpec.of(config).roles(), *(j.role for j in panel)))
    output_dir(dump_dir, "--dump-dir")
    with run_lock(dump_dir / TRAJECTORIES):
        summary = emulate(
            dump_dir=dump_dir,
            config=config,
            cases=cases,
            toolkits=toolkits,
            agent=agent,
            hub=hub,
            show_progress=show_progress,
        )
        result = RunResult(summary, usage=hub.tracker)
        # Ctrl-C or a refused key stops the whole command; after a budget stop, evaluation still records what it
        # could not judge, and the report shows what was done.
        if evaluate_after and summary.stop_kind not in ("interrupted", "access"):
            result.evaluation = evaluate(
                summary.dump_dir,
                scorers=scorers,
                samples=samples,
                batch_size=config.batch_size,
                toolkits=toolkits,
                hub=hub,
                show_progress=show_progress,
                judges=judges,
            )
        stops = [s for s in (summary, result.evaluation) if s is not None and s.stop_kind == "budget"]
        result.budget = budget_use(hub.tracker, "run", stops[0].stop_reason if stops else None)
        record_budget(dump_dir / RUN_FILE, result.budget)
        if result.evaluation is not None:
            result.report = report([summary.dump_dir])
    return result
