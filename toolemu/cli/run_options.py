"""The option groups of `toolemu emulate`, `evaluate` and `run`: ToolEmu's flag names where it has them.

ToolEmu's and QuittingAgents' scripts/run.py, emulate.py and evaluate.py spell flags their own way (argparse, with
short forms such as -atp); each spelling is an alias here, so their commands run unchanged. A flag that means
nothing here is accepted and says in its help what it does instead.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli import limits
from toolemu.cli.options import OptionGroup
from toolemu.cli.toolemu_names import model_string
from toolemu.prompts.agent import AGENT_TYPES

_R, _E = "Run", "Evaluate"
_COST = "Cost"


@dataclass(frozen=True)
class BatchFlags(OptionGroup):
    """Shared by emulation and evaluation (one value for both in `toolemu run`): batch size, toolkits, dry run,
    progress and logging."""

    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size", "-bs", help=f"Episodes or judgements run side by side ({limits.BATCH_SIZE.help})."
        ),
    ] = 1
    toolkits_path: Annotated[
        list[Path] | None,
        typer.Option(help="Toolkit files or directories (ToolEmu's all_toolkits.json works).", rich_help_panel=_R),
    ] = None
    dry_run: Annotated[bool, typer.Option(help="--model mock for every role: no model at all.")] = False
    no_progress: Annotated[
        bool, typer.Option("--no-progress", "--disable-batch-progress", "-xprog", help="No progress bar.")
    ] = False
    track_costs: Annotated[
        bool,
        typer.Option(
            "--track-costs",
            help="Accepted for ToolEmu/QuittingAgents; tokens and cost are always tracked (in every record, "
            "run.json and the summary line).",
        ),
    ] = False
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log every detail (debug level).")] = False
    fail_on_budget: Annotated[
        bool,
        typer.Option(help="Exit 3 when a budget (--max-calls, --max-total-tokens, --max-cost) stops the work."),
    ] = False


@dataclass(frozen=True)
class RunFlags(OptionGroup):
    """The emulation options of `toolemu emulate` and `run`: agent, emulator, cases, run folder (the episode's
    elements, gates and the user among them, are `ElementFlags`)."""

    agent_model: Annotated[
        str | None,
        typer.Option(
            "--agent-model",
            "--agent-model-name",
            "-am",
            help="Agent's model (default: --model).",
            rich_help_panel=_R,
        ),
    ] = None
    agent_type: Annotated[
        str,
        typer.Option("--agent-type", "-atp", help=f"One of {', '.join(AGENT_TYPES)}.", rich_help_panel=_R),
    ] = "naive"
    quit: Annotated[
        bool, typer.Option("--quit", "-q", help="QuittingAgents' flag: --agent-type quit.", rich_help_panel=_R)
    ] = False
    agent_temperature: Annotated[
        float | None,
        typer.Option("--agent-temperature", "--agent-temp", "-at", help="Agent's temperature.", rich_help_panel=_R),
    ] = None
    agent_format: Annotated[
        str,
        typer.Option(help="react (ReAct text), tools (native tool calls / JSON), auto.", rich_help_panel=_R),
    ] = "auto"
    agent: Annotated[
        str | None,
        typer.Option(
            help="Another agent: react or tools (ours), mcp-cmd:<command> (an external agent over MCP), or "
            "package.module:factory.",
            rich_help_panel=_R,
        ),
    ] = None
    agent_cmd: Annotated[
        str | None,
        typer.Option(
            "--agent-cmd",
            help="An external agent's command, run per (case, trial) with an MCP server of its episode: "
            "--agent mcp-cmd:<command>.",
            rich_help_panel=_R,
        ),
    ] = None
    agent_timeout: Annotated[
        float | None,
        typer.Option(
            "--agent-timeout",
            help="Seconds an external agent's command may run per episode (default 900, at most 86,400).",
            rich_help_panel=_R,
        ),
    ] = None
    simulator_model: Annotated[
        str | None,
        typer.Option(
            "--simulator-model",
            "--simulator-model-name",
            "-sm",
            help="Emulator's model (default: --model).",
            rich_help_panel=_R,
        ),
    ] = None
    simulator_type: Annotated[
        str,
        typer.Option(
            "--simulator-type",
            "-stp",
            help="adv_thought (adversarial) or std_thought (standard).",
            rich_help_panel=_R,
        ),
    ] = "adv_thought"
    trunc_num: Annotated[
        int | None,
        typer.Option(
            "--trunc-num", "-tn", help=f"Run at most this many cases ({limits.TRUNC_NUM.help}).", rich_help_panel=_R
        ),
    ] = None
    shuffle: Annotated[
        bool,
        typer.Option(
            "--shuffle",
            "-shf",
            "-shuf",
            help="Shuffle cases (with --seed) before truncating.",
            rich_help_panel=_R,
        ),
    ] = False
    input_path: Annotated[
        list[Path] | None,
        typer.Option(
            "--input-path",
            "-inp",
            help="Case files or directories (ToolEmu's all_cases.json works).",
            rich_help_panel=_R,
        ),
    ] = None
    dump_dir: Annotated[
        Path | None,
        typer.Option("--dump-dir", "-du", help="Run directory; the same one resumes.", rich_help_panel=_R),
    ] = None
    output_file_suffix: Annotated[
        str,
        typer.Option(
            "--output-file-suffix",
            "-outsuf",
            help="ToolEmu's suffix for its output file; here it is added to the run directory's name.",
            rich_help_panel=_R,
        ),
    ] = ""
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id",
            help="QuittingAgents' run id: accepted and unused; the run is named by --dump-dir (and "
            "--output-file-suffix), and run.json records its own id.",
            rich_help_panel=_R,
        ),
    ] = None
    auto: Annotated[
        bool,
        typer.Option("--auto", "-auto", help="Do not ask for confirmation before a paid run.", rich_help_panel=_R),
    ] = False
    num_trials: Annotated[
        int,
        typer.Option(
            "--num-trials",
            "--num-replicates",
            "-nrep",
            help=f"Trials per case (ToolEmu's --num-replicates of each case; {limits.NUM_TRIALS.help}).",
            rich_help_panel=_R,
        ),
    ] = 1
    case_names: Annotated[str | None, typer.Option(help="Comma-separated case names.", rich_help_panel=_R)] = None
    start_index: Annotated[
        int,
        typer.Option(
            "--start-index",
            "-si",
            help=f"Skip this many selected cases ({limits.START_INDEX.help}).",
            rich_help_panel=_R,
        ),
    ] = 0
    task_index_range: Annotated[
        str | None,
        typer.Option(
            "--task-index-range",
            "-tir",
            help="QuittingAgents' START-END (END excluded): --start-index START --trunc-num END-START.",
            rich_help_panel=_R,
        ),
    ] = None
    max_iterations: Annotated[
        int | None,
        typer.Option(
            "--max-iterations",
            "-mi",
            help=f"Agent steps per episode (default 15; {limits.MAX_ITERATIONS.help}).",
            rich_help_panel=_R,
        ),
    ] = None
    shard: Annotated[
        str | None,
        typer.Option(
            help="Run shard i of n (i/n, e.g. 0/4): pair j of the selected (case, trial) pairs goes to shard j % n "
            f"(n at most {limits.SHARDS.most:,}).",
            rich_help_panel=_R,
        ),
    ] = None


@dataclass(frozen=True)
class EvalFlags(OptionGroup):
    """The evaluation options of `toolemu evaluate` and `run`: scorers, samples, the evaluator's model(s)."""

    scorer: Annotated[
        list[str] | None,
        typer.Option(
            "--scorer",
            help="A scorer (repeatable): safety, helpfulness, attack, policy, checks, realism, awareness, or "
            "package.module:factory (default: all seven).",
            rich_help_panel=_E,
        ),
    ] = None
    num_eval_samples: Annotated[
        int,
        typer.Option(
            help=f"Judgements per trajectory (mean, majority label; {limits.NUM_EVAL_SAMPLES.help}).",
            rich_help_panel=_E,
        ),
    ] = 1
    evaluator_model: Annotated[
        str | None,
        typer.Option(
            "--evaluator-model",
            "--evaluator-model-name",
            "-em",
            help="Evaluator's model (default: --model). Several, comma-separated (a,b,c), make a judge panel: "
            "the first writes the standard eval files, each other its own _eval_<type>@<judge>.jsonl.",
            rich_help_panel=_E,
        ),
    ] = None
    evaluator_temperature: Annotated[
        float | None,
        typer.Option(
            "--evaluator-temperature",
            help="The judges' temperature (default 0; --temperature is the other roles'). Judges also get a "
            "fixed seed where the provider takes one (--seed, else 0).",
            rich_help_panel=_E,
        ),
    ] = None


@dataclass(frozen=True)
class EstimateFlags(OptionGroup):
    """Before a run: what it will cost (--estimate prints it and exits) and a limit above which it asks first."""

    estimate: Annotated[
        bool,
        typer.Option(
            "--estimate",
            help="Print the expected calls, tokens and cost per role, and exit without running (no model is "
            "built, nothing is written).",
            rich_help_panel=_COST,
        ),
    ] = False
    estimate_from: Annotated[
        Path | None,
        typer.Option(
            "--estimate-from",
            help="A run of your own whose recorded usage per case and role the estimate scales (default: the "
            "token profile shipped with the package, a floor for real models).",
            rich_help_panel=_COST,
        ),
    ] = None
    confirm_above: Annotated[
        float | None,
        typer.Option(
            "--confirm-above",
            metavar="USD",
            help="Ask before a run whose estimate is above USD (0 to 1,000,000; or has calls with no price); "
            "without a terminal to ask (stdin closed or not a terminal), refuse (exit 2).",
            rich_help_panel=_COST,
        ),
    ] = None


def judge_temperatures(evaluation: EvalFlags) -> dict[str, float]:
    """--evaluator-temperature as the evaluator role's temperature (a panel's judges take it too)."""
    t = evaluation.evaluator_temperature
    return {} if t is None else {"evaluator": t}


def panel_models(evaluator_model: str | None, dry_run: bool) -> list[str]:
    """The judges of `--evaluator-model a,b,c`: none for one judge (the evaluator role takes it); under --dry-run,
    a mock judge per named one (so the panel's files are made, and say their judges were mocks)."""
    from toolemu.llm.dryrun import DRY_RUN_MODEL
    from toolemu.scorers.identity import judge_slug
    from toolemu.scorers.panel import parse_models

    models = [model_string(m) for m in parse_models(evaluator_model)]  # ToolEmu's bare names too
    if len(models) < 2:
        return []
    return [f"{DRY_RUN_MODEL}:{judge_slug(m)}" for m in models] if dry_run else models


def first_evaluator(evaluator_model: str | None) -> str | None:
    from toolemu.scorers.panel import parse_models

    return next(iter(parse_models(evaluator_model)), None)
