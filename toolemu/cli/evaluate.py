"""`toolemu evaluate`: judge a run's trajectories for safety and helpfulness (ToolEmu's eval files)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli import options as o
from toolemu.errors import InputError
from toolemu.evaluators import EVAL_TYPES, EvalSummary, evaluate_trajectories
from toolemu.llm import build_chat_model, build_hub
from toolemu.llm.dryrun import DRY_RUN_OPTIONS, dry_run_factory
from toolemu.paths import DEFAULT_TOOLKITS
from toolemu.runner import trajectories_file
from toolemu.specs import load_benchmark

_E = "Evaluate"


def run_evaluation(
    dump: Path,
    eval_types: list[str],
    num_samples: int,
    batch_size: int,
    toolkits_path: list[Path] | None,
    dry_run: bool,
    show_progress: bool,
    model_flags: o.ModelFlags,
    evaluator_model: str | None = None,
) -> EvalSummary:
    """The library call behind `toolemu evaluate` (and the evaluation step of `toolemu run`)."""
    bad = [t for t in eval_types if t not in EVAL_TYPES]
    if bad:
        raise InputError.single(
            "command line", f"expected {' or '.join(EVAL_TYPES)}, got {bad[0]!r}", field="--eval-type"
        )
    if num_samples < 1:
        raise InputError.single("command line", f"expected at least 1, got {num_samples}", field="--num-eval-samples")
    path = trajectories_file(dump)
    dry = {"model": DRY_RUN_OPTIONS["model"], "structured": DRY_RUN_OPTIONS["structured"], "cache": "off"}
    settings = o.llm_settings(
        **{**model_flags, **(dry if dry_run else {})},
        role_models={"evaluator": evaluator_model} if evaluator_model and not dry_run else {},
    )
    kits = load_benchmark(toolkits_path or [DEFAULT_TOOLKITS]).toolkits
    hub = build_hub(settings, ("evaluator",), dry_run_factory if dry_run else build_chat_model)
    return evaluate_trajectories(path, hub, eval_types, num_samples, batch_size, kits, show_progress)


@o.with_model_options(max_tokens=512)
def evaluate(
    dump: Annotated[Path, typer.Argument(help="A run directory, or a trajectory .jsonl file (ToolEmu's too).")],
    eval_type: Annotated[
        list[str] | None,
        typer.Option("--eval-type", "-ev", help="agent_safe and/or agent_help (default: both).", rich_help_panel=_E),
    ] = None,
    num_eval_samples: Annotated[
        int, typer.Option(help="Judgements per trajectory; the mean and the majority label.", rich_help_panel=_E)
    ] = 1,
    evaluator_model: Annotated[
        str | None, typer.Option(help="Evaluator's model (default: --model).", rich_help_panel=_E)
    ] = None,
    batch_size: Annotated[
        int, typer.Option("--batch-size", "-bs", help="Judgements run side by side.", rich_help_panel=_E)
    ] = 1,
    toolkits_path: Annotated[
        list[Path] | None, typer.Option(help="Toolkits the cases name (for their descriptions).", rich_help_panel=_E)
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="A scripted evaluator: no model at all.", rich_help_panel=_E)] = False,
    no_progress: Annotated[bool, typer.Option(help="No progress bar.", rich_help_panel=_E)] = False,
    *,
    model_flags: o.ModelFlags,
) -> EvalSummary:
    """Judge every trajectory of a run for safety (ToolCallRisk) and helpfulness; resumable."""
    summary = run_evaluation(
        dump,
        list(eval_type or EVAL_TYPES),
        num_eval_samples,
        batch_size,
        toolkits_path,
        dry_run,
        not no_progress,
        model_flags,
        evaluator_model,
    )
    for line in summary.lines():
        typer.echo(line)
    return summary
