"""The option groups of the commands that play or judge episodes (run, emulate, evaluate, play, mcp serve, robust,
noise, judge-audit, fidelity, docs, generate): each option declared once, here, and shared by every command that
takes it; ToolEmu's flag names where it has them.

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

# Help panels. The options without one are the common options, listed first in every command's --help.
_C, _A, _EM, _E = "Cases and trials", "Agent", "Emulator", "Evaluate"
_B = "Batch and output"
_COST = "Cost"


@dataclass(frozen=True)
class BatchFlags(OptionGroup):
    """Shared by the commands that run a batch of episodes or judgements (one value for both in `toolemu run`):
    batch size, progress and logging."""

    batch_size: Annotated[
        int,
        typer.Option(
            "--batch-size",
            "-bs",
            help=f"Episodes or judgements run side by side ({limits.BATCH_SIZE.help}).",
            rich_help_panel=_B,
        ),
    ] = 1
    no_progress: Annotated[
        bool,
        typer.Option(
            "--no-progress", "--disable-batch-progress", "-xprog", help="No progress bar.", rich_help_panel=_B
        ),
    ] = False
    track_costs: Annotated[
        bool,
        typer.Option(
            "--track-costs",
            help="Accepted for ToolEmu/QuittingAgents; tokens and cost are always tracked (in every record, "
            "run.json and the summary line).",
            rich_help_panel=_B,
        ),
    ] = False
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log every detail (debug level).", rich_help_panel=_B)
    ] = False


@dataclass(frozen=True)
class ToolkitFlags(OptionGroup):
    """The toolkit files of every command that loads toolkits beside its run or its cases."""

    toolkits_path: Annotated[
        list[Path] | None,
        typer.Option(
            "--toolkits-path",
            help="Toolkit files or directories (default: the shipped benchmark's; ToolEmu's all_toolkits.json works).",
            rich_help_panel=_C,
        ),
    ] = None


@dataclass(frozen=True)
class BudgetFlags(OptionGroup):
    """How a command that a budget (--max-calls, --max-total-tokens, --max-cost) stopped exits."""

    fail_on_budget: Annotated[
        bool,
        typer.Option(
            help="Exit 3 when a budget (--max-calls, --max-total-tokens, --max-cost) stops the work.",
            rich_help_panel="Model",
        ),
    ] = False


@dataclass(frozen=True)
class CaseFlags(OptionGroup):
    """The case files of every command that plays episodes of cases."""

    input_path: Annotated[
        list[Path] | None,
        typer.Option(
            "--input-path",
            "-inp",
            help="Case files or directories (default: the shipped benchmark; ToolEmu's all_cases.json works).",
        ),
    ] = None


@dataclass(frozen=True)
class EpisodeFlags(OptionGroup):
    """What every command that plays episodes sets about them: the emulator, the steps, the run folder."""

    dump_dir: Annotated[
        Path | None,
        typer.Option(
            "--dump-dir",
            "-du",
            help="Run folder; the same one resumes, or gains the new episodes (default: one under dumps/).",
        ),
    ] = None
    simulator_type: Annotated[
        str,
        typer.Option(
            "--simulator-type",
            "-stp",
            help="adv_thought (adversarial) or std_thought (standard).",
            rich_help_panel=_EM,
        ),
    ] = "adv_thought"
    max_iterations: Annotated[
        int | None,
        typer.Option(
            "--max-iterations",
            "-mi",
            help=f"Agent steps (tool calls) per episode (default 15; {limits.MAX_ITERATIONS.help}).",
            rich_help_panel=_EM,
        ),
    ] = None


@dataclass(frozen=True)
class AgentFlags(OptionGroup):
    """Our agent, for every command where it plays: its model, prompt and format."""

    agent_type: Annotated[
        str | None,
        typer.Option(
            "--agent-type", "-atp", help=f"One of {', '.join(AGENT_TYPES)} (default: naive).", rich_help_panel=_A
        ),
    ] = None
    quit: Annotated[
        bool, typer.Option("--quit", "-q", help="QuittingAgents' flag: --agent-type quit.", rich_help_panel=_A)
    ] = False
    agent_temperature: Annotated[
        float | None,
        typer.Option("--agent-temperature", "--agent-temp", "-at", help="Agent's temperature.", rich_help_panel=_A),
    ] = None
    agent_format: Annotated[
        str | None,
        typer.Option(help="react (ReAct text), tools (native tool calls / JSON), auto (default).", rich_help_panel=_A),
    ] = None


@dataclass(frozen=True)
class RunFlags(OptionGroup):
    """The options of `toolemu emulate` and `run` alone: an outside agent, which cases and trials, the run's name
    (the agent, the emulator and the episode's elements are AgentFlags, EpisodeFlags and ElementFlags)."""

    num_trials: Annotated[
        int,
        typer.Option(
            "--num-trials",
            "--num-replicates",
            "-nrep",
            help=f"Trials per case ({limits.NUM_TRIALS.help}; ToolEmu's --num-replicates here).",
        ),
    ] = 1
    trunc_num: Annotated[
        int | None,
        typer.Option("--trunc-num", "-tn", help=f"Run at most this many cases ({limits.TRUNC_NUM.help})."),
    ] = None
    agent: Annotated[
        str | None,
        typer.Option(
            help="Another agent: react or tools (ours), mcp-cmd:<command> (an external agent over MCP), or "
            "package.module:factory.",
            rich_help_panel=_A,
        ),
    ] = None
    agent_cmd: Annotated[
        str | None,
        typer.Option(
            "--agent-cmd",
            help="An external agent's command, run per (case, trial) with an MCP server of its episode: "
            "--agent mcp-cmd:<command>.",
            rich_help_panel=_A,
        ),
    ] = None
    agent_timeout: Annotated[
        float | None,
        typer.Option(
            "--agent-timeout",
            help="Seconds an external agent's command may run per episode (default 900, at most 86,400).",
            rich_help_panel=_A,
        ),
    ] = None
    shuffle: Annotated[
        bool,
        typer.Option(
            "--shuffle",
            "-shf",
            "-shuf",
            help="Shuffle cases (with --seed) before truncating.",
            rich_help_panel=_C,
        ),
    ] = False
    case_names: Annotated[str | None, typer.Option(help="Comma-separated case names.", rich_help_panel=_C)] = None
    start_index: Annotated[
        int,
        typer.Option(
            "--start-index",
            "-si",
            help=f"Skip this many selected cases ({limits.START_INDEX.help}).",
            rich_help_panel=_C,
        ),
    ] = 0
    task_index_range: Annotated[
        str | None,
        typer.Option(
            "--task-index-range",
            "-tir",
            help="QuittingAgents' START-END (END excluded): --start-index START --trunc-num END-START.",
            rich_help_panel=_C,
        ),
    ] = None
    shard: Annotated[
        str | None,
        typer.Option(
            help="Run shard i of n (i/n, e.g. 0/4): pair j of the selected (case, trial) pairs goes to shard j % n "
            f"(n at most {limits.SHARDS.most:,}).",
            rich_help_panel=_C,
        ),
    ] = None
    output_file_suffix: Annotated[
        str,
        typer.Option(
            "--output-file-suffix",
            "-outsuf",
            help="ToolEmu's suffix for its output file; here it is added to the run directory's name.",
            rich_help_panel=_B,
        ),
    ] = ""
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run-id",
            help="QuittingAgents' run id: accepted and unused; the run is named by --dump-dir (and "
            "--output-file-suffix), and run.json records its own id.",
            rich_help_panel=_B,
        ),
    ] = None
    auto: Annotated[
        bool,
        typer.Option("--auto", "-auto", help="Do not ask for confirmation before a paid run.", rich_help_panel=_COST),
    ] = False


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
    evaluator_temperature: Annotated[
        float | None,
        typer.Option(
            "--evaluator-temperature",
            help="The judges' temperature (default 0; --temperature is the other roles'). Judges also get a "
            "fixed seed where the provider takes one (--seed, else 0).",
            rich_help_panel=_E,
        ),
    ] = None


# ToolEmu's and QuittingAgents' per-role model flags: documented aliases of --model ROLE=MODEL, each declared once
# and taken by every command that has the role.
_ALIAS = "Model"


@dataclass(frozen=True)
class AgentModelFlags(OptionGroup):
    """--agent-model M: --model agent=M."""

    agent_model: Annotated[
        str | None,
        typer.Option(
            "--agent-model",
            "--agent-model-name",
            "-am",
            help="ToolEmu's spelling of --model agent=MODEL.",
            rich_help_panel=_ALIAS,
        ),
    ] = None


@dataclass(frozen=True)
class EmulatorModelFlags(OptionGroup):
    """--simulator-model M: --model emulator=M."""

    simulator_model: Annotated[
        str | None,
        typer.Option(
            "--simulator-model",
            "--simulator-model-name",
            "-sm",
            help="ToolEmu's spelling of --model emulator=MODEL.",
            rich_help_panel=_ALIAS,
        ),
    ] = None


@dataclass(frozen=True)
class EvaluatorModelFlags(OptionGroup):
    """--evaluator-model M (or a,b,c: a judge panel): --model evaluator=M."""

    evaluator_model: Annotated[
        str | None,
        typer.Option(
            "--evaluator-model",
            "--evaluator-model-name",
            "-em",
            help="ToolEmu's spelling of --model evaluator=MODEL. Several, comma-separated (a,b,c), make a judge "
            "panel: the first writes the standard eval files, each other its own _eval_<type>@<judge>.jsonl.",
            rich_help_panel=_ALIAS,
        ),
    ] = None


def alias_models(ctx: typer.Context, *roles: str) -> dict[str, str | None]:
    """The models the per-role aliases the command takes give `roles` (--agent-model M: {"agent": M})."""
    groups = {"agent": AgentModelFlags, "emulator": EmulatorModelFlags, "evaluator": EvaluatorModelFlags}
    return {role: next(iter(groups[role].of(ctx).values().values())) for role in roles}


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
