"""`toolemu run` (and `python scripts/run.py`): emulate, then evaluate, then report, in one go."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import typer

from toolemu.cli import options as o
from toolemu.cli.evaluate import run_evaluation
from toolemu.cli.run import emulate
from toolemu.evaluators import EVAL_TYPES
from toolemu.report.tables import print_summary
from toolemu.report.write import write_report

_E = "Evaluate"
# The options `run` adds to `emulate`'s; ToolEmu's names where it has them.
_EXTRA: list[tuple[str, Any, Any]] = [
    (
        "num_eval_samples",
        Annotated[int, typer.Option(help="Judgements per trajectory (mean, majority label).", rich_help_panel=_E)],
        1,
    ),
    (
        "evaluator_model",
        Annotated[str | None, typer.Option(help="Evaluator's model (default: --model).", rich_help_panel=_E)],
        None,
    ),
    (
        "evaluate",
        Annotated[bool, typer.Option(help="Evaluate and report after emulating.", rich_help_panel=_E)],
        True,
    ),
]


def run(**kwargs: Any) -> None:
    """Run agents against emulated toolkits, judge every trajectory, and write the report."""
    extra = {name: kwargs.pop(name) for name, _, _ in _EXTRA}
    summary = emulate(**kwargs)
    if not extra["evaluate"]:
        return
    shared = {name: kwargs[name] for name in o.shared_option_names()}
    evaluation = run_evaluation(
        summary.dump_dir,
        list(EVAL_TYPES),
        extra["num_eval_samples"],
        kwargs["batch_size"],
        kwargs["toolkits_path"],
        kwargs["dry_run"],
        not kwargs["no_progress"],
        shared,
        extra["evaluator_model"],
    )
    for line in evaluation.lines():
        typer.echo(line)
    report, files = write_report([summary.dump_dir])
    print_summary(report)
    typer.echo(f"report: {files['html']}  (open it, or: toolemu view {summary.dump_dir})")


_base = inspect.signature(emulate)
_added = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a) for n, a, d in _EXTRA]
run.__signature__ = _base.replace(parameters=[*_base.parameters.values(), *_added])  # type: ignore[attr-defined]
run.__annotations__ = {p.name: p.annotation for p in run.__signature__.parameters.values()}  # type: ignore[attr-defined]
