"""The option groups of `toolemu emulate`, `evaluate` and `run`: ToolEmu's flag names where it has them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli.options import OptionGroup
from toolemu.prompts.agent import AGENT_TYPES

_R, _E, _G, _U = "Run", "Evaluate", "Gates", "Simulated user"

# Shared by emulation and evaluation (one value for both in `toolemu run`).
BATCH = OptionGroup(
    "batch",
    [
        (
            "batch_size",
            Annotated[int, typer.Option("--batch-size", "-bs", help="Episodes or judgements run side by side.")],
            1,
        ),
        (
            "toolkits_path",
            Annotated[
                list[Path] | None,
                typer.Option(
                    help="Toolkit files or directories (ToolEmu's all_toolkits.json works).", rich_help_panel=_R
                ),
            ],
            None,
        ),
        ("dry_run", Annotated[bool, typer.Option(help="--model mock for every role: no model at all.")], False),
        ("no_progress", Annotated[bool, typer.Option(help="No progress bar.")], False),
    ],
)

EMULATE = OptionGroup(
    "run",
    [
        (
            "agent_model",
            Annotated[str | None, typer.Option(help="Agent's model (default: --model).", rich_help_panel=_R)],
            None,
        ),
        (
            "agent_type",
            Annotated[str, typer.Option(help=f"One of {', '.join(AGENT_TYPES)}.", rich_help_panel=_R)],
            "naive",
        ),
        (
            "agent_temperature",
            Annotated[
                float | None,
                typer.Option("--agent-temperature", "--agent-temp", help="Agent's temperature.", rich_help_panel=_R),
            ],
            None,
        ),
        (
            "agent_format",
            Annotated[
                str,
                typer.Option(help="react (ReAct text), tools (native tool calls / JSON), auto.", rich_help_panel=_R),
            ],
            "auto",
        ),
        (
            "agent",
            Annotated[
                str | None,
                typer.Option(
                    help="An outside agent: package.module:factory(model, agent_type, agent_format).",
                    rich_help_panel=_R,
                ),
            ],
            None,
        ),
        (
            "simulator_model",
            Annotated[str | None, typer.Option(help="Emulator's model (default: --model).", rich_help_panel=_R)],
            None,
        ),
        (
            "simulator_type",
            Annotated[
                str, typer.Option(help="adv_thought (adversarial) or std_thought (standard).", rich_help_panel=_R)
            ],
            "adv_thought",
        ),
        (
            "trunc_num",
            Annotated[int | None, typer.Option(help="Run at most this many cases.", rich_help_panel=_R)],
            None,
        ),
        (
            "shuffle",
            Annotated[bool, typer.Option(help="Shuffle cases (with --seed) before truncating.", rich_help_panel=_R)],
            False,
        ),
        (
            "input_path",
            Annotated[
                list[Path] | None,
                typer.Option(help="Case files or directories (ToolEmu's all_cases.json works).", rich_help_panel=_R),
            ],
            None,
        ),
        (
            "dump_dir",
            Annotated[Path | None, typer.Option(help="Run directory; the same one resumes.", rich_help_panel=_R)],
            None,
        ),
        (
            "auto",
            Annotated[bool, typer.Option(help="Do not ask for confirmation before a paid run.", rich_help_panel=_R)],
            False,
        ),
        ("num_trials", Annotated[int, typer.Option(help="Trials per case.", rich_help_panel=_R)], 1),
        (
            "case_names",
            Annotated[str | None, typer.Option(help="Comma-separated case names.", rich_help_panel=_R)],
            None,
        ),
        ("start_index", Annotated[int, typer.Option(help="Skip this many selected cases.", rich_help_panel=_R)], 0),
        (
            "max_iterations",
            Annotated[int | None, typer.Option(help="Agent steps per episode (default 15).", rich_help_panel=_R)],
            None,
        ),
        (
            "shard",
            Annotated[
                str | None,
                typer.Option(
                    help="Run shard i of n (i/n, e.g. 0/4): pair j of the selected (case, trial) pairs goes to "
                    "shard j % n.",
                    rich_help_panel=_R,
                ),
            ],
            None,
        ),
        (
            "gate",
            Annotated[
                list[str] | None,
                typer.Option(
                    "--gate",
                    help="A gate between agent and tools (repeatable): policy.yaml, monitor, or package.module:attr.",
                    rich_help_panel=_G,
                ),
            ],
            None,
        ),
        (
            "monitor_model",
            Annotated[
                str | None, typer.Option(help="The monitor gate's model (default: --model).", rich_help_panel=_G)
            ],
            None,
        ),
        (
            "user",
            Annotated[
                str | None,
                typer.Option(
                    "--user",
                    help="on: a simulated user answers the agent's AskUser questions (model: --user-model, else "
                    "--model); off (default): ToolEmu's single-turn episodes.",
                    rich_help_panel=_U,
                ),
            ],
            None,
        ),
        (
            "user_model",
            Annotated[
                str | None,
                typer.Option(help="The simulated user's model; turns the user on.", rich_help_panel=_U),
            ],
            None,
        ),
        (
            "max_user_turns",
            Annotated[
                int,
                typer.Option(
                    help="Questions the user answers per episode; later ones get 'not answering'.", rich_help_panel=_U
                ),
            ],
            5,
        ),
    ],
)

EVALUATE = OptionGroup(
    "eval",
    [
        (
            "scorer",
            Annotated[
                list[str] | None,
                typer.Option(
                    "--scorer",
                    help="A scorer (repeatable): safety, helpfulness, attack, policy, or package.module:factory "
                    "(default: safety, helpfulness, attack, policy).",
                    rich_help_panel=_E,
                ),
            ],
            None,
        ),
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
    ],
)
