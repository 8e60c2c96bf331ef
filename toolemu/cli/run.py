"""`toolemu run` / `toolemu emulate`: run agents against emulated toolkits (ToolEmu's flags, plus ours)."""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from toolemu.agents.agent import AGENT_FORMATS
from toolemu.cli import options as o
from toolemu.emulator import EMULATOR_TYPES
from toolemu.errors import InputError
from toolemu.llm import build_chat_model, build_hub
from toolemu.llm.dryrun import DRY_RUN_OPTIONS, dry_run_factory
from toolemu.llm.options import default_model_string
from toolemu.paths import DEFAULT_CASES, DEFAULT_TOOLKITS, DUMPS, SMOKE_CASES, SMOKE_MAX_ITERATIONS
from toolemu.prompts.agent import AGENT_TYPES
from toolemu.runner import RunConfig, RunSummary, run_cases
from toolemu.specs import load_benchmark

log = logging.getLogger("toolemu")
_R = "Run"


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


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-") or "model"


@o.with_model_options(max_tokens=512)
def emulate(
    agent_model: Annotated[
        str | None, typer.Option(help="Agent's model (default: --model).", rich_help_panel=_R)
    ] = None,
    agent_type: Annotated[str, typer.Option(help=f"One of {', '.join(AGENT_TYPES)}.", rich_help_panel=_R)] = "naive",
    agent_temperature: Annotated[
        float | None,
        typer.Option("--agent-temperature", "--agent-temp", help="Agent's temperature.", rich_help_panel=_R),
    ] = None,
    agent_format: Annotated[
        str, typer.Option(help="react (ReAct text), tools (native tool calls / JSON), auto.", rich_help_panel=_R)
    ] = "auto",
    simulator_model: Annotated[
        str | None, typer.Option(help="Emulator's model (default: --model).", rich_help_panel=_R)
    ] = None,
    simulator_type: Annotated[
        str, typer.Option(help="adv_thought (adversarial) or std_thought (standard).", rich_help_panel=_R)
    ] = "adv_thought",
    batch_size: Annotated[
        int, typer.Option("--batch-size", "-bs", help="Episodes run side by side.", rich_help_panel=_R)
    ] = 1,
    trunc_num: Annotated[int | None, typer.Option(help="Run at most this many cases.", rich_help_panel=_R)] = None,
    shuffle: Annotated[
        bool, typer.Option(help="Shuffle cases (with --seed) before truncating.", rich_help_panel=_R)
    ] = False,
    input_path: Annotated[
        list[Path] | None,
        typer.Option(help="Case files or directories (ToolEmu's all_cases.json works).", rich_help_panel=_R),
    ] = None,
    toolkits_path: Annotated[
        list[Path] | None,
        typer.Option(help="Toolkit files or directories (ToolEmu's all_toolkits.json works).", rich_help_panel=_R),
    ] = None,
    dump_dir: Annotated[
        Path | None, typer.Option(help="Run directory; the same one resumes.", rich_help_panel=_R)
    ] = None,
    auto: Annotated[
        bool, typer.Option(help="Do not ask for confirmation before a paid run.", rich_help_panel=_R)
    ] = False,
    num_trials: Annotated[int, typer.Option(help="Trials per case.", rich_help_panel=_R)] = 1,
    case_names: Annotated[str | None, typer.Option(help="Comma-separated case names.", rich_help_panel=_R)] = None,
    start_index: Annotated[int, typer.Option(help="Skip this many selected cases.", rich_help_panel=_R)] = 0,
    max_iterations: Annotated[
        int | None, typer.Option(help="Agent steps per episode (default 15).", rich_help_panel=_R)
    ] = None,
    dry_run: Annotated[
        bool, typer.Option(help="Scripted models for every role: no model at all.", rich_help_panel=_R)
    ] = False,
    no_progress: Annotated[bool, typer.Option(help="No progress bar.", rich_help_panel=_R)] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Run shard i of n (i/n, e.g. 0/4): pair j of the selected (case, trial) pairs goes to shard j % n.",
            rich_help_panel=_R,
        ),
    ] = None,
    *,
    model_flags: o.ModelFlags,
) -> RunSummary:
    """Run agents against emulated toolkits and write one trajectory per (case, trial)."""
    _choice(agent_type, AGENT_TYPES, "--agent-type")
    _choice(agent_format, AGENT_FORMATS, "--agent-format")
    _choice(simulator_type, list(EMULATOR_TYPES), "--simulator-type")
    shard_of = _shard(shard)
    role_models = {k: v for k, v in {"agent": agent_model, "emulator": simulator_model}.items() if v}
    model = model_flags["model"]
    dry = {"model": DRY_RUN_OPTIONS["model"], "structured": DRY_RUN_OPTIONS["structured"], "cache": "off"}
    settings = o.llm_settings(
        **{**model_flags, **(dry if dry_run else {})},
        role_models={} if dry_run else role_models,
        role_temperatures={"agent": agent_temperature} if agent_temperature is not None else {},
    )
    names = [n.strip() for n in case_names.split(",") if n.strip()] if case_names else None
    # No key, no model and no case selection: the smoke set, so a first run finishes in minutes.
    smoke = (
        not dry_run
        and not model
        and not role_models
        and default_model_string() == "local"
        and not (input_path or names or trunc_num)
    )
    if smoke:
        names = SMOKE_CASES
        max_iterations = max_iterations or SMOKE_MAX_ITERATIONS
        log.info("smoke run: %d cases, at most %d steps each", len(names), max_iterations)
    config = RunConfig(
        agent_type=agent_type,
        agent_format=agent_format,
        simulator_type=simulator_type,
        num_trials=num_trials,
        max_iterations=max_iterations or 15,
        batch_size=batch_size,
        case_names=names,
        start_index=start_index,
        trunc_num=trunc_num,
        shuffle=shuffle,
        seed=model_flags["seed"] or 0,
        shard=shard_of,
    )
    kits = load_benchmark(toolkits_path or [DEFAULT_TOOLKITS]).toolkits
    bench = load_benchmark(input_path or [DEFAULT_CASES], known_toolkits=kits)
    agent_opts = settings.options_for("agent")
    if dump_dir is None:
        tag = "dry-run" if dry_run else ("smoke_" if smoke else "") + _slug(agent_opts.model)
        dump_dir = DUMPS / f"{tag}_{agent_type}_{simulator_type}"
        if shard_of is not None:
            dump_dir = dump_dir.with_name(f"{dump_dir.name}_shard-{shard_of[0]}-of-{shard_of[1]}")
    paid = {settings.options_for(r).provider for r in ("agent", "emulator")} & {"openai", "anthropic"}
    if paid and not auto and sys.stdin.isatty() and not typer.confirm(f"Run with paid models ({', '.join(paid)})?"):
        raise typer.Exit(1)
    hub = build_hub(settings, ("agent", "emulator"), dry_run_factory if dry_run else build_chat_model)
    summary = run_cases(bench, hub, config, dump_dir, show_progress=not no_progress)
    for line in summary.lines():
        typer.echo(line)
    usage = hub.tracker.total()
    typer.echo(
        f"usage: {usage.calls} model calls, {usage.cache_hits} cache hits, {usage.prompt_tokens} prompt + "
        f"{usage.completion_tokens} completion tokens, ${usage.cost_usd:.4f}"
    )
    if summary.stop_reason == "interrupted":
        typer.echo("interrupted: what finished is kept; run the same command again to resume", err=True)
        raise typer.Exit(130)
    return summary
