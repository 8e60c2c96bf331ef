"""`toolemu emulate` and `toolemu run` (and `python scripts/run.py`): parse ToolEmu's flags, call the library."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from toolemu import api
from toolemu.agents.agent import AGENT_FORMATS
from toolemu.cli import options as o
from toolemu.cli import outcome
from toolemu.cli.run_options import BATCH, EMULATE, EVALUATE, first_evaluator, panel_models
from toolemu.cli.toolemu_names import model_string
from toolemu.emulator import EMULATOR_TYPES
from toolemu.episode import DEFAULT_MAX_ITERATIONS
from toolemu.errors import InputError
from toolemu.llm import LLMSettings
from toolemu.llm.dryrun import DRY_RUN_MODEL
from toolemu.llm.options import default_model_string
from toolemu.llm.registry import get_provider
from toolemu.llm.usage import usage_line
from toolemu.log import run_files
from toolemu.paths import DUMPS, SMOKE_CASES, SMOKE_MAX_ITERATIONS
from toolemu.prompts.agent import AGENT_TYPES
from toolemu.reporting import print_summary
from toolemu.runner import RunConfig, RunSummary
from toolemu.scorers import DEFAULT_SCORERS, EvalSummary, get_scorer
from toolemu.scorers.panel import with_panel

log = logging.getLogger("toolemu")


def _choice(value: str, allowed: tuple[str, ...] | list[str], flag: str) -> str:
    if value not in allowed:
        raise InputError.single("command line", f"expected one of {', '.join(allowed)}, got {value!r}", field=flag)
    return value


def _shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not m or not int(m[1]) < int(m[2]):
        raise InputError.single("command line", f"expected i/n with 0 <= i < n, got {value!r}", field="--shard")
    return int(m[1]), int(m[2])


def _index_range(value: str | None) -> tuple[int, int] | None:
    """QuittingAgents' --task-index-range START-END: the cases from START up to END, END excluded."""
    if value is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", value)
    if not m or not int(m[1]) < int(m[2]):
        raise InputError.single(
            "command line", f"expected START-END with START < END, got {value!r}", field="--task-index-range"
        )
    return int(m[1]), int(m[2])


def _replay_source(path: Path | None) -> Path | None:
    """--replay's run, checked now: a path that is no run is one line naming the flag."""
    if path is None:
        return None
    try:
        return run_files(path).source
    except InputError as exc:
        raise InputError.single(path, exc.problems[0].message, field="--replay") from None


def apply_common_flags(batch: dict[str, Any]) -> None:
    """Flags every run, emulate and evaluate command takes that change nothing but logging."""
    if batch["verbose"]:
        logging.getLogger("toolemu").setLevel(logging.DEBUG)


def _user_on(user: str | None, user_model: str | None, max_user_turns: int) -> bool:
    """--user on, or a --user-model, turns the simulated user on; --user off with a user model is a contradiction."""
    if user is not None:
        _choice(user, ("on", "off"), "--user")
    if user == "off" and user_model:
        raise InputError.single("command line", "expected no --user-model with --user off", field="--user-model")
    if max_user_turns < 1:
        raise InputError.single("command line", f"expected at least 1, got {max_user_turns}", field="--max-user-turns")
    return user == "on" or (user is None and bool(user_model))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-") or "model"


def settings_for(
    model_flags: dict[str, Any], dry_run: bool, role_models: dict[str, str | None], **extra: Any
) -> LLMSettings:
    """The command's model settings. --dry-run is --model mock for every role. ToolEmu's bare model names
    (gpt-4o-mini) are read as model strings (openai:gpt-4o-mini)."""
    named = {role: model_string(m) for role, m in role_models.items() if m}
    if dry_run:
        return o.llm_settings(**{**model_flags, "model": DRY_RUN_MODEL}, **extra)
    if model_flags.get("model"):
        model_flags = {**model_flags, "model": model_string(model_flags["model"])}
    return o.llm_settings(**model_flags, role_models=named, **extra)


def _case_names(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:  # an empty list would select every case
        raise InputError.single("command line", "expected comma-separated case names, got none", field="--case-names")
    return names


def plan_emulation(
    run: dict[str, Any], batch: dict[str, Any], model_flags: dict[str, Any], evaluator_model: str | None = None
) -> tuple[LLMSettings, RunConfig, Path, bool]:
    """Check the emulation flags and work out settings, config and run directory (the smoke set when nothing
    is named and no key is set). Every value is checked here, before any work starts."""
    apply_common_flags(batch)
    if run["quit"]:
        run = {**run, "agent_type": "quit"}
    _choice(run["agent_type"], AGENT_TYPES, "--agent-type")
    _choice(run["agent_format"], AGENT_FORMATS, "--agent-format")
    _choice(run["simulator_type"], list(EMULATOR_TYPES), "--simulator-type")
    shard_of = _shard(run["shard"])
    user_on = _user_on(run["user"], run["user_model"], run["max_user_turns"])
    role_models = {
        "agent": run["agent_model"],
        "emulator": run["simulator_model"],
        "monitor": run["monitor_model"],
        "user": run["user_model"],
    }
    temperatures = {"agent": run["agent_temperature"]} if run["agent_temperature"] is not None else {}
    judged_by = {"evaluator": evaluator_model} if evaluator_model else {}
    settings = settings_for(model_flags, batch["dry_run"], role_models | judged_by, role_temperatures=temperatures)
    names = _case_names(run["case_names"])
    start_index, trunc_num = run["start_index"], run["trunc_num"]
    if (index_range := _index_range(run["task_index_range"])) is not None:
        start_index, trunc_num = index_range[0], index_range[1] - index_range[0]
    max_iterations = run["max_iterations"]
    smoke = (
        not batch["dry_run"]
        and not model_flags["model"]
        and not any(role_models.values())
        and default_model_string() == "local"
        and not (run["input_path"] or names or trunc_num)
    )
    if smoke:
        names = SMOKE_CASES
        max_iterations = SMOKE_MAX_ITERATIONS if max_iterations is None else max_iterations
        log.info("smoke run: %d cases, at most %d steps each", len(names), max_iterations)
    try:
        config = RunConfig(
            agent_type=run["agent_type"],
            agent_format=run["agent_format"],
            simulator_type=run["simulator_type"],
            num_trials=run["num_trials"],
            max_iterations=DEFAULT_MAX_ITERATIONS if max_iterations is None else max_iterations,
            batch_size=batch["batch_size"],
            case_names=names,
            start_index=start_index,
            trunc_num=trunc_num,
            shuffle=run["shuffle"],
            seed=model_flags["seed"] or 0,
            shard=shard_of,
            gates=list(run["gate"] or []),
            user=user_on,
            max_user_turns=run["max_user_turns"],
            replay=_replay_source(run["replay"]),
        )
    except ValidationError as exc:
        raise o.flag_error(exc) from None
    dump_dir = run["dump_dir"]
    if dump_dir is None:
        tag = (
            "dry-run" if batch["dry_run"] else ("smoke_" if smoke else "") + _slug(settings.options_for("agent").model)
        )
        dump_dir = DUMPS / f"{tag}_{run['agent_type']}_{run['simulator_type']}"
        if shard_of is not None:
            dump_dir = dump_dir.with_name(f"{dump_dir.name}_shard-{shard_of[0]}-of-{shard_of[1]}")
    if run["output_file_suffix"]:
        dump_dir = dump_dir.with_name(dump_dir.name + run["output_file_suffix"])
    return settings, config, dump_dir, smoke


def confirm_paid(settings: LLMSettings, roles: tuple[str, ...], auto: bool) -> None:
    paid = sorted({p for r in roles if get_provider(p := settings.options_for(r).provider).paid})
    if paid and not auto and sys.stdin.isatty() and not typer.confirm(f"Run with paid models ({', '.join(paid)})?"):
        raise typer.Exit(1)


def print_emulation(summary: RunSummary) -> None:
    for line in summary.lines():
        typer.echo(line)


def emulation_stage(summary: RunSummary) -> outcome.Stage:
    return outcome.Stage("pairs", summary.stop_kind, summary.stop_reason, len(summary.not_run), summary.failed)


def evaluation_stage(summary: EvalSummary) -> outcome.Stage:
    return outcome.Stage("judgements", summary.stop_kind, summary.stop_reason, summary.not_run, summary.failed)


def _check_scorers(eval_flags: dict[str, Any]) -> list[str]:
    """Scorer names and sample counts are checked before any emulation is spent."""
    if eval_flags["num_eval_samples"] < 1:
        raise InputError.single(
            "command line", f"expected at least 1, got {eval_flags['num_eval_samples']}", field="--num-eval-samples"
        )
    names = list(eval_flags["scorer"] or DEFAULT_SCORERS)
    for name in names:
        get_scorer(name)
    return names


@o.with_options(EMULATE, BATCH, o.model_group(per_backend=True))
def emulate(*, run_flags: dict[str, Any], batch_flags: dict[str, Any], model_flags: dict[str, Any]) -> RunSummary:
    """Run agents against emulated toolkits and write one trajectory per (case, trial)."""
    settings, config, dump_dir, _ = plan_emulation(run_flags, batch_flags, model_flags)
    confirm_paid(settings, api.roles_for(config), run_flags["auto"])
    summary = api.emulate(
        dump_dir=dump_dir,
        settings=settings,
        config=config,
        cases=run_flags["input_path"],
        toolkits=batch_flags["toolkits_path"],
        agent=run_flags["agent"],
        show_progress=not batch_flags["no_progress"],
    )
    print_emulation(summary)
    if summary.budget is not None:
        typer.echo(summary.budget.line())
    outcome.finish([emulation_stage(summary)], batch_flags["fail_on_budget"])
    return summary


@o.with_options(EMULATE, BATCH, EVALUATE, o.model_group(per_backend=True))
def run(
    evaluate: Annotated[
        bool, typer.Option(help="Evaluate and report after emulating.", rich_help_panel="Evaluate")
    ] = True,
    *,
    run_flags: dict[str, Any],
    batch_flags: dict[str, Any],
    eval_flags: dict[str, Any],
    model_flags: dict[str, Any],
) -> api.RunResult:
    """Run agents against emulated toolkits, judge every trajectory, and write the report."""
    scorers = _check_scorers(eval_flags)
    settings, config, dump_dir, _ = plan_emulation(
        run_flags, batch_flags, model_flags, evaluator_model=first_evaluator(eval_flags["evaluator_model"])
    )
    judges = panel_models(eval_flags["evaluator_model"], batch_flags["dry_run"])
    panel_settings, panel = with_panel(settings, judges)
    confirm_paid(panel_settings, (*api.roles_for(config), *(j.role for j in panel)), run_flags["auto"])
    result = api.run(
        dump_dir=dump_dir,
        settings=settings,
        config=config,
        cases=run_flags["input_path"],
        toolkits=batch_flags["toolkits_path"],
        agent=run_flags["agent"],
        scorers=scorers,
        samples=eval_flags["num_eval_samples"],
        evaluate_after=evaluate,
        show_progress=not batch_flags["no_progress"],
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
        typer.echo("whole command, " + usage_line(result.usage.total()))
        for line in result.usage.role_lines():
            typer.echo(line)
    if result.budget is not None and result.report is None:  # the report's summary prints it otherwise
        typer.echo(result.budget.line())
    if result.evaluation is not None and result.evaluation.unreadable:
        raise InputError.from_lines(result.evaluation.unreadable)
    outcome.finish(stages, batch_flags["fail_on_budget"])
    return result
