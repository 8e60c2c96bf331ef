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
    BatchFlags,
    EstimateFlags,
    EvalFlags,
    RunFlags,
    first_evaluator,
    judge_temperatures,
    panel_models,
)
from toolemu.cli.toolemu_names import model_string
from toolemu.errors import InputError
from toolemu.paths import DEFAULT_MAX_ITERATIONS, DUMPS, SMOKE_CASES, SMOKE_MAX_ITERATIONS
from toolemu.prompts.agent import AGENT_TYPES

if TYPE_CHECKING:
    from toolemu.episode.element_spec import ElementSpec
    from toolemu.llm import LLMSettings
    from toolemu.runner import RunConfig, RunSummary
    from toolemu.scorers import EvalSummary

log = logging.getLogger("toolemu")


def _choice(value: str, allowed: tuple[str, ...] | list[str], flag: str) -> str:
    if value not in allowed:
        raise InputError.single("command line", f"expected one of {', '.join(allowed)}, got {value!r}", field=flag)
    return value


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


def apply_common_flags(batch: BatchFlags) -> None:
    """Flags every run, emulate and evaluate command takes that change nothing but logging."""
    if batch.verbose:
        logging.getLogger("toolemu").setLevel(logging.DEBUG)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-") or "model"


def settings_for(
    model: ModelFlags, dry_run: bool, role_models: dict[str, str | None], **extra: object
) -> "LLMSettings":
    """The command's model settings. --dry-run is --model mock for every role. ToolEmu's bare model names
    (gpt-4o-mini) are read as model strings (openai:gpt-4o-mini)."""
    from toolemu.llm.dryrun import DRY_RUN_MODEL

    named = {role: model_string(m) for role, m in role_models.items() if m}
    if dry_run:
        return dataclasses.replace(model, model=DRY_RUN_MODEL).settings(**extra)
    if model.model:
        model = dataclasses.replace(model, model=model_string(model.model))
    return model.settings(role_models=named, **extra)


def _case_names(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:  # an empty list would select every case
        raise InputError.single("command line", "expected comma-separated case names, got none", field="--case-names")
    return names


def plan_emulation(
    run: RunFlags,
    batch: BatchFlags,
    model: ModelFlags,
    episode: tuple[tuple["ElementSpec", ...], dict[str, str]] = ((), {}),
    evaluator_model: str | None = None,
    evaluator_temperatures: dict[str, float] | None = None,
) -> tuple["LLMSettings", "RunConfig", Path, bool]:
    """Check the emulation flags and work out settings, config and run directory (the smoke set when nothing
    is named and no key is set). `episode`: the elements and role models the element options ask for
    (`episode_options`). Every value is checked here, before any work starts."""
    from pydantic import ValidationError

    from toolemu.agents.agent import AGENT_FORMATS
    from toolemu.emulator import EMULATOR_TYPES
    from toolemu.llm.options import default_model_string
    from toolemu.runner import RunConfig

    apply_common_flags(batch)
    limits.NUM_TRIALS.check(run.num_trials)
    limits.BATCH_SIZE.check(batch.batch_size)
    limits.MAX_ITERATIONS.check(run.max_iterations)
    limits.TRUNC_NUM.check(run.trunc_num)
    limits.START_INDEX.check(run.start_index)
    limits.AGENT_TIMEOUT.check(run.agent_timeout)
    if run.quit:
        run = dataclasses.replace(run, agent_type="quit")
    _choice(run.agent_type, AGENT_TYPES, "--agent-type")
    _choice(run.agent_format, AGENT_FORMATS, "--agent-format")
    _choice(run.simulator_type, list(EMULATOR_TYPES), "--simulator-type")
    shard_of = _shard(run.shard)
    elements, element_models = episode
    role_models = {"agent": run.agent_model, "emulator": run.simulator_model, **element_models}
    temperatures = {"agent": run.agent_temperature} if run.agent_temperature is not None else {}
    temperatures |= evaluator_temperatures or {}
    judged_by = {"evaluator": evaluator_model} if evaluator_model else {}
    settings = settings_for(model, batch.dry_run, role_models | judged_by, role_temperatures=temperatures)
    names = _case_names(run.case_names)
    start_index, trunc_num = run.start_index, run.trunc_num
    if (index_range := _index_range(run.task_index_range)) is not None:
        start_index, trunc_num = index_range[0], index_range[1] - index_range[0]
    max_iterations = run.max_iterations
    smoke = (
        not batch.dry_run
        and not model.model
        and not any(role_models.values())
        and default_model_string() == "local"
        and not (run.input_path or names or trunc_num)
    )
    if smoke:
        names = SMOKE_CASES
        max_iterations = SMOKE_MAX_ITERATIONS if max_iterations is None else max_iterations
        log.info("smoke run: %d cases, at most %d steps each", len(names), max_iterations)
    try:
        config = RunConfig(
            agent_type=run.agent_type,
            agent_format=run.agent_format,
            simulator_type=run.simulator_type,
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
    dump_dir = run.dump_dir
    if dump_dir is None:
        tag = "dry-run" if batch.dry_run else ("smoke_" if smoke else "") + _slug(settings.options_for("agent").model)
        dump_dir = DUMPS / f"{tag}_{run.agent_type}_{run.simulator_type}"
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


@takes(RunFlags, ElementFlags, BatchFlags, ModelFlags, EstimateFlags)
def emulate(ctx: typer.Context) -> object:
    """Run agents against emulated toolkits and write one trajectory per (case, trial)."""
    from toolemu import api
    from toolemu.episode.spec import EpisodeSpec

    run, batch = RunFlags.of(ctx), BatchFlags.of(ctx)
    settings, config, dump_dir, _ = plan_emulation(run, batch, ModelFlags.of(ctx), episode_options(ctx))
    estimate_step(EstimateFlags.of(ctx), settings, config, dump_dir, run.input_path, batch.toolkits_path)
    confirm_paid(settings, EpisodeSpec.of(config).roles(), run.auto)
    summary = api.emulate(
        dump_dir=dump_dir,
        settings=settings,
        config=config,
        cases=run.input_path,
        toolkits=batch.toolkits_path,
        agent=agent_of(run),
        show_progress=not batch.no_progress,
    )
    print_emulation(summary)
    if summary.budget is not None:
        typer.echo(summary.budget.line())
    outcome.finish([emulation_stage(summary)], batch.fail_on_budget)
    return summary


@takes(RunFlags, ElementFlags, BatchFlags, EvalFlags, ModelFlags, EstimateFlags)
def run(
    ctx: typer.Context,
    evaluate: Annotated[
        bool, typer.Option(help="Evaluate and report after emulating.", rich_help_panel="Evaluate")
    ] = True,
) -> object:
    """Run agents against emulated toolkits, judge every trajectory, and write the report."""
    from toolemu import api
    from toolemu.episode.spec import EpisodeSpec
    from toolemu.llm.usage import usage_line
    from toolemu.reporting import print_summary
    from toolemu.scorers.panel import with_panel

    flags, batch, evaluation = RunFlags.of(ctx), BatchFlags.of(ctx), EvalFlags.of(ctx)
    scorers = _check_scorers(evaluation)
    settings, config, dump_dir, _ = plan_emulation(
        flags,
        batch,
        ModelFlags.of(ctx),
        episode_options(ctx),
        evaluator_model=first_evaluator(evaluation.evaluator_model),
        evaluator_temperatures=judge_temperatures(evaluation),
    )
    judges = panel_models(evaluation.evaluator_model, batch.dry_run)
    panel_settings, panel = with_panel(settings, judges)
    estimate_step(
        EstimateFlags.of(ctx),
        settings,
        config,
        dump_dir,
        flags.input_path,
        batch.toolkits_path,
        scorers if evaluate else (),
        evaluation.num_eval_samples,
        judges,
    )
    confirm_paid(panel_settings, (*EpisodeSpec.of(config).roles(), *(j.role for j in panel)), flags.auto)
    result = api.run(
        dump_dir=dump_dir,
        settings=settings,
        config=config,
        cases=flags.input_path,
        toolkits=batch.toolkits_path,
        agent=agent_of(flags),
        scorers=scorers,
        samples=evaluation.num_eval_samples,
        evaluate_after=evaluate,
        show_progress=not batch.no_progress,
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
        for line in result.usage.role_lines():
            typer.echo(line)
    if result.budget is not None and result.report is None:  # the report's summary prints it otherwise
        typer.echo(result.budget.line())
    if result.evaluation is not None and result.evaluation.unreadable:
        raise InputError.from_lines(result.evaluation.unreadable)
    outcome.finish(stages, batch.fail_on_budget)
    return result
