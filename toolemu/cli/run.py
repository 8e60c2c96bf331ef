"""`toolemu emulate` and `toolemu run` (and `python scripts/run.py`): parse ToolEmu's flags, call the library."""

import dataclasses
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolemu.cli import limits, outcome
from toolemu.cli.estimate import estimate_step, stdin_is_terminal
from toolemu.cli.options import ElementFlags, ModelFlags, episode_options, flag_error, takes
from toolemu.cli.run_options import (
    AgentFlags,
    AgentModelFlags,
    BatchFlags,
    BudgetFlags,
    CaseFlags,
    EmulatorModelFlags,
    EpisodeFlags,
    EstimateFlags,
    EvalFlags,
    EvaluatorModelFlags,
    RunFlags,
    ToolkitFlags,
    alias_models,
    first_evaluator,
    judge_temperatures,
    panel_models,
)
from toolemu.cli.toolemu_names import model_string
from toolemu.errors import InputError, one_of
from toolemu.paths import DEFAULT_MAX_ITERATIONS, DUMPS, SMOKE_CASES, SMOKE_MAX_ITERATIONS
from toolemu.prompts.agent import AGENT_TYPES

if TYPE_CHECKING:
    from toolemu.llm import LLMSettings
    from toolemu.runner import RunConfig, RunSummary
    from toolemu.scorers import EvalSummary

log = logging.getLogger("toolemu")


def _shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d{1,30})\s*/\s*(\d{1,30})\s*", value)
    if not m or not int(m[1]) < int(m[2]):
        raise InputError.single("command line", f"expected i/n with 0 <= i < n, got {value[:80]!r}", field="--shard")
    limits.SHARDS.check(int(m[2]))
    return int(m[1]), int(m[2])


def _index_range(value: str | None) -> tuple[int, int] | None:
    """QuittingAgents' --task-index-range START-END: the cases from START up to END, END excluded."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d{1,30})\s*-\s*(\d{1,30})\s*", value)
    if not m or not int(m[1]) < int(m[2]):
        raise InputError.single(
            "command line", f"expected START-END with START < END, got {value[:80]!r}", field="--task-index-range"
        )
    start, end = int(m[1]), int(m[2])
    for bound, count in ((limits.START_INDEX, start), (limits.TRUNC_NUM, end - start)):
        dataclasses.replace(bound, flag="--task-index-range").check(count)
    return start, end


def batch_flags(ctx: typer.Context) -> BatchFlags:
    """The command's BatchFlags, --batch-size checked and --verbose applied (it changes nothing but logging)."""
    batch = BatchFlags.of(ctx)
    if batch.verbose:
        logging.getLogger("toolemu").setLevel(logging.DEBUG)
    limits.BATCH_SIZE.check(batch.batch_size)
    return batch


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-") or "model"


def settings_for(model: ModelFlags, role_models: dict[str, str | None], **extra: object) -> "LLMSettings":
    """The command's model settings: --model (ROLE=MODEL too) with the models a role's own flag names
    (`role_models`: --agent-model M). --dry-run is --model mock for every role. ToolEmu's bare model names
    (gpt-4o-mini) are read as model strings (openai:gpt-4o-mini)."""
    if model.dry_run:
        return model.settings(**extra)  # type: ignore[arg-type]
    named = {role: model_string(m) for role, m in role_models.items() if m}
    roles = [f"{role}={model_string(m)}" for role, m in model.roles.items()]
    plain = [model_string(model.default_model)] if model.default_model else []
    try:
        return dataclasses.replace(model, model=[*plain, *roles] or None).settings(named, **extra)  # type: ignore[arg-type]
    except InputError as exc:  # a role's model given by its alias (--agent-model M) is named by it
        raise as_given(exc, {role for role in named if role not in model.roles}) from None


def as_given(exc: InputError, aliased: set[str]) -> InputError:
    """`exc` with the field --model ROLE= named as the alias that gave ROLE its model, where one did."""
    from toolemu.cli.surface import ROLE_ALIASES
    from toolemu.errors import Problem

    flags = {f"--model {role}=": ROLE_ALIASES[role][0] for role in aliased if role in ROLE_ALIASES}
    return InputError([Problem(p.file, p.message, p.item, flags.get(p.field or "", p.field)) for p in exc.problems])


def evaluator_of(model: ModelFlags, evaluation: EvaluatorModelFlags) -> tuple[str | None, ModelFlags]:
    """The judge or judges (a,b,c: a panel) that --evaluator-model or --model evaluator=... names, and the model
    flags without the latter."""
    from toolemu.cli.options import merge_role_models

    given, rest = model.take("evaluator")
    judges = merge_role_models({"evaluator": given} if given else {}, {"evaluator": evaluation.evaluator_model})
    single = given is not None and "," not in given  # one judge stays the flags' own (a bad one is named as given)
    return judges.get("evaluator"), model if single else rest


def _case_names(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:  # an empty list would select every case
        raise InputError.single("command line", "expected comma-separated case names, got none", field="--case-names")
    return names


def plan_emulation(
    ctx: typer.Context,
    evaluator_model: str | None = None,
    evaluator_temperatures: dict[str, float] | None = None,
    model: ModelFlags | None = None,
) -> tuple["LLMSettings", "RunConfig", Path, bool]:
    """Check the emulation flags (RunFlags, AgentFlags, EpisodeFlags, CaseFlags, ElementFlags, BatchFlags and
    ModelFlags: `model` in place of the latter's) and work out settings, config and run directory (the smoke set
    when nothing is named and no key is set). Every value is checked here, before any work starts."""
    from pydantic import ValidationError

    from toolemu.agents.agent import AGENT_FORMATS
    from toolemu.emulator import EMULATOR_TYPES
    from toolemu.llm.options import default_model_string
    from toolemu.runner import RunConfig

    run, agent, episode, batch = RunFlags.of(ctx), AgentFlags.of(ctx), EpisodeFlags.of(ctx), batch_flags(ctx)
    model = model or ModelFlags.of(ctx)
    limits.NUM_TRIALS.check(run.num_trials)
    limits.MAX_ITERATIONS.check(episode.max_iterations)
    limits.TRUNC_NUM.check(run.trunc_num)
    limits.START_INDEX.check(run.start_index)
    limits.AGENT_TIMEOUT.check(run.agent_timeout)
    agent_type = "quit" if agent.quit else one_of(agent.agent_type or "naive", AGENT_TYPES, "--agent-type")
    agent_format = one_of(agent.agent_format or "auto", AGENT_FORMATS, "--agent-format")
    one_of(episode.simulator_type, list(EMULATOR_TYPES), "--simulator-type")
    shard_of = _shard(run.shard)
    elements, element_models = episode_options(ctx)
    role_models = {**alias_models(ctx, "agent", "emulator"), **element_models}
    temperatures = {"agent": agent.agent_temperature} if agent.agent_temperature is not None else {}
    temperatures |= evaluator_temperatures or {}
    judged_by = {"evaluator": evaluator_model} if evaluator_model else {}
    settings = settings_for(model, role_models | judged_by, role_temperatures=temperatures)
    names = _case_names(run.case_names)
    start_index, trunc_num = run.start_index, run.trunc_num
    if (index_range := _index_range(run.task_index_range)) is not None:
        start_index, trunc_num = index_range[0], index_range[1] - index_range[0]
    max_iterations = episode.max_iterations
    smoke = (
        not model.dry_run
        and not model.default_model
        and not model.roles
        and not any(role_models.values())
        and not evaluator_model
        and default_model_string() == "local"
        and not (CaseFlags.of(ctx).input_path or names or trunc_num)
    )
    if smoke:
        names = SMOKE_CASES
        max_iterations = SMOKE_MAX_ITERATIONS if max_iterations is None else max_iterations
        log.info("smoke run: %d cases, at most %d steps each", len(names), max_iterations)
    try:
        config = RunConfig(
            agent_type=agent_type,
            agent_format=agent_format,
            simulator_type=episode.simulator_type,
            num_trials=run.num_trials,
            max_iterations=DEFAULT_MAX_ITERATIONS if max_iterations is None else max_iterations,
            batch_size=batch.batch_size,
            case_names=names,
            start_index=start_index,
            trunc_num=trunc_num,
            shuffle=run.shuffle,
            seed=model.seed or 0,
            shard=shard_of,
            elements=elements,
        )
    except ValidationError as exc:
        raise flag_error(exc) from None
    dump_dir = episode.dump_dir
    if dump_dir is None:
        tag = "dry-run" if model.dry_run else ("smoke_" if smoke else "") + _slug(settings.options_for("agent").model)
        dump_dir = DUMPS / f"{tag}_{agent_type}_{episode.simulator_type}"
        if shard_of is not None:
            dump_dir = dump_dir.with_name(f"{dump_dir.name}_shard-{shard_of[0]}-of-{shard_of[1]}")
    if run.output_file_suffix:
        dump_dir = dump_dir.with_name(dump_dir.name + run.output_file_suffix)
    return settings, config, dump_dir, smoke


def confirm_paid(settings: "LLMSettings", roles: tuple[str, ...], auto: bool) -> None:
    from toolemu.llm.registry import get_provider

    paid = sorted({p for r in roles if get_provider(p := settings.options_for(r).provider).paid})
    if paid and not auto and stdin_is_terminal() and not typer.confirm(f"Run with paid models ({', '.join(paid)})?"):
        raise typer.Exit(1)


def print_emulation(summary: "RunSummary") -> None:
    for line in summary.lines():
        typer.echo(line)
    if summary.shard is not None and summary.total == 0:  # empty by the split: exit 0, said plainly
        i, n = summary.shard
        typer.echo(
            f"no pairs in this shard ({i}/{n}): pair j of the {summary.selected} selected goes to shard j % {n}, and "
            "none falls here; nothing to run"
        )


def empty_shard_line(run: Path, doing: str) -> str | None:
    """For a shard of ours that holds no pair: the line that says so (`doing`: what there is nothing to do)."""
    from toolemu.log import RUN_FILE, read_meta, run_files

    run_file = run_files(run).directory / RUN_FILE
    shard = read_meta(run_file).shard if run_file.is_file() else None
    return None if shard is None else f"no pairs in this shard ({shard[0]}/{shard[1]}): {doing}"


def emulation_stage(summary: "RunSummary") -> outcome.Stage:
    return outcome.Stage("pairs", summary.stop_kind, summary.stop_reason, len(summary.not_run), summary.failed)


def evaluation_stage(summary: "EvalSummary") -> outcome.Stage:
    return outcome.Stage("judgements", summary.stop_kind, summary.stop_reason, summary.not_run, summary.failed)


def rejudge_stages(summary: "EvalSummary") -> list[outcome.Stage]:
    """The re-judgements (evaluate --rejudge), as a stage of their own: what they left undone, what failed."""
    r = summary.rejudged
    return [] if r is None else [outcome.Stage("re-judgements", r.stop_kind, r.stop_reason, r.not_run, r.failed)]


def agent_of(run: RunFlags) -> object:
    """--agent as given, or the external agent of --agent-cmd X (--agent mcp-cmd:X) with its --agent-timeout."""
    spec = run.agent
    if run.agent_cmd is not None:
        if spec:
            raise InputError.single("command line", "expected --agent or --agent-cmd, not both", field="--agent-cmd")
        spec = f"mcp-cmd:{run.agent_cmd}"
    if spec and spec.startswith("mcp-cmd:"):
        from toolemu.mcp.command import DEFAULT_TIMEOUT_S, command_agent

        timeout = DEFAULT_TIMEOUT_S if run.agent_timeout is None else run.agent_timeout
        return command_agent(spec.removeprefix("mcp-cmd:"), timeout)
    if run.agent_timeout is not None:
        raise InputError.single(
            "command line", "expected --agent-cmd (or --agent mcp-cmd:...) with --agent-timeout", "--agent-timeout"
        )
    return spec


def _check_scorers(evaluation: EvalFlags) -> list[str]:
    """Scorer names and sample counts are checked before any emulation is spent."""
    from toolemu.scorers import DEFAULT_SCORERS, get_scorer

    limits.NUM_EVAL_SAMPLES.check(evaluation.num_eval_samples)
    names = list(evaluation.scorer or DEFAULT_SCORERS)
    for name in names:
        get_scorer(name)
    return names


# The groups of a command that plays episodes of cases, in the order of its --help after its own options.
EPISODES = (CaseFlags, EpisodeFlags, ToolkitFlags, AgentFlags, ElementFlags, ModelFlags, AgentModelFlags)
EPISODES += (EmulatorModelFlags,)


@takes(*EPISODES, RunFlags, BatchFlags, BudgetFlags, EstimateFlags)
def emulate(ctx: typer.Context) -> object:
    """Run agents against emulated toolkits and write one trajectory per (case, trial)."""
    from toolemu import api
    from toolemu.episode.spec import EpisodeSpec

    run, cases, toolkits = RunFlags.of(ctx), CaseFlags.of(ctx), ToolkitFlags.of(ctx)
    settings, config, dump_dir, _ = plan_emulation(ctx)
    estimate_step(EstimateFlags.of(ctx), settings, config, dump_dir, cases.input_path, toolkits.toolkits_path)
    confirm_paid(settings, EpisodeSpec.of(config).roles(), run.auto)
    summary = api.emulate(
        dump_dir=dump_dir,
        settings=settings,
        config=config,
        cases=cases.input_path,
        toolkits=toolkits.toolkits_path,
        agent=agent_of(run),
        show_progress=not BatchFlags.of(ctx).no_progress,
    )
    print_emulation(summary)
    if summary.budget is not None:
        typer.echo(summary.budget.line())
    outcome.finish([emulation_stage(summary)], BudgetFlags.of(ctx).fail_on_budget)
    return summary


# run's --help: the common options, then the cases, the agent, the judges and the episode's elements first.
_RUN = (CaseFlags, EpisodeFlags, ToolkitFlags, RunFlags, AgentFlags, EvalFlags, ElementFlags, ModelFlags)
_ROLE_ALIASES = (AgentModelFlags, EmulatorModelFlags, EvaluatorModelFlags)


@takes(*_RUN, *_ROLE_ALIASES, BatchFlags, BudgetFlags, EstimateFlags)
def run(
    ctx: typer.Context,
    evaluate: Annotated[
        bool, typer.Option(help="Evaluate and report after emulating.", rich_help_panel="Evaluate")
    ] = True,
) -> object:
    """Run agents against emulated toolkits, judge every trajectory, and write the report."""
    from toolemu import api
    from toolemu.episode.spec import EpisodeSpec
    from toolemu.llm.usage import role_lines, usage_line
    from toolemu.reporting import print_summary
    from toolemu.scorers.panel import with_panel

    flags, evaluation, cases = RunFlags.of(ctx), EvalFlags.of(ctx), CaseFlags.of(ctx)
    toolkits = ToolkitFlags.of(ctx).toolkits_path
    scorers = _check_scorers(evaluation)
    evaluator, model = evaluator_of(ModelFlags.of(ctx), EvaluatorModelFlags.of(ctx))
    settings, config, dump_dir, _ = plan_emulation(
        ctx,
        evaluator_model=first_evaluator(evaluator),
        evaluator_temperatures=judge_temperatures(evaluation),
        model=model,
    )
    judges = panel_models(evaluator, model.dry_run)
    panel_settings, panel = with_panel(settings, judges)
    estimate_step(
        EstimateFlags.of(ctx),
        settings,
        config,
        dump_dir,
        cases.input_path,
        toolkits,
        scorers if evaluate else (),
        evaluation.num_eval_samples,
        judges,
    )
    confirm_paid(panel_settings, (*EpisodeSpec.of(config).roles(), *(j.role for j in panel)), flags.auto)
    result = api.run(
        dump_dir=dump_dir,
        settings=settings,
        config=config,
        cases=cases.input_path,
        toolkits=toolkits,
        agent=agent_of(flags),
        scorers=scorers,
        samples=evaluation.num_eval_samples,
        evaluate_after=evaluate,
        show_progress=not BatchFlags.of(ctx).no_progress,
        judges=judges,
    )
    print_emulation(result.emulation)
    stages = [emulation_stage(result.emulation)]
    if result.evaluation is not None:
        for line in result.evaluation.lines():
            typer.echo(line)
        stages.append(evaluation_stage(result.evaluation))
    if result.report is not None:
        print_summary(result.report.report)
        typer.echo(f"report: {result.report.files['html']}  (open it, or: toolemu view {result.emulation.dump_dir})")
    if result.usage is not None and result.evaluation is not None:  # the judges' calls too
        typer.echo("whole command, " + usage_line(result.usage.total(), result.usage.unpriced_models()))
        for line in role_lines(result.usage.roles()):
            typer.echo(line)
    if result.budget is not None and result.report is None:  # the report's summary prints it otherwise
        typer.echo(result.budget.line())
    if result.evaluation is not None and result.evaluation.unreadable:
        raise InputError.from_lines(result.evaluation.unreadable)
    outcome.finish(stages, BudgetFlags.of(ctx).fail_on_budget)
    return result
