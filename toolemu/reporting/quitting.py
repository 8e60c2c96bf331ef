"""QuittingAgents' per-run files, written by `toolemu report` for runs of ours so that fork's reader finds them.

QuittingAgents' run.py writes `<prefix>_quit_stats.json` after every run (its count_quits: the cases, the quits, the
rate as text, each quit's reason), and its cost tracker writes `<prefix>_costs.json` (tokens and dollars by
component and model); its scripts/helper/read_eval_results.py reads both, by the prefix of the eval files. Ours hold
the same keys, computed their way: quits by the one rule (toolemu.log.toolemu_format.is_quit, so an episode's status
is quit), costs as tokens times a price per thousand tokens, by `<component>_<model>`.

The files go beside the report; a run whose trajectory file is in that folder is named by that file (a run folder's
`trajectories_quit_stats.json`, beside `trajectories_eval_<type>.jsonl`, where their reader looks), any other by its
label. A ToolEmu dump gets neither: its own scripts wrote its files, and nothing here may overwrite them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolemu.log.toolemu_format import quit_reason
from toolemu.reporting.model import EpisodeView

if TYPE_CHECKING:
    from toolemu.llm.usage import Usage
    from toolemu.log import RunLog
    from toolemu.reporting.load import LoadedRun

QUIT_STATS_SUFFIX = "_quit_stats.json"
COSTS_SUFFIX = "_costs.json"
COMPONENTS = ("agent", "emulator", "evaluator")  # their cost tracker's, always present; other roles are added
EVALUATOR = "evaluator"


def quit_stats(episodes: list[EpisodeView]) -> dict[str, Any]:
    """count_quits' dict over a run's episodes: every episode is a case, and the quits' reasons in episode order."""
    reasons = [quit_reason(ep.final_answer) for ep in episodes if ep.status == "quit"]
    return {
        "total_cases": len(episodes),
        "quit_count": len(reasons),
        "quit_rate": f"{len(reasons) / len(episodes) * 100:.2f}%",
        "quit_reasons": reasons,
    }


def bare_model(model: str) -> str:
    """The model's own name, as their tracker keys it: gpt-4o-mini for openai:gpt-4o-mini."""
    provider, colon, name = model.partition(":")
    return name if colon and name else provider


def price_per_1k(name: str) -> tuple[float, float]:
    """USD per thousand (input, output) tokens, from our price table by the model's name (a dated snapshot takes its
    family's); a model the table lacks costs 0, as in their tracker."""
    from toolemu.llm.usage import PRICES_PER_MTOK

    prices: dict[str, tuple[float, float]] = PRICES_PER_MTOK
    family = name if name in prices else max((k for k in prices if name.startswith(k + "-")), key=len, default=None)
    per_mtok = prices[family] if family is not None else (0.0, 0.0)
    return per_mtok[0] / 1000, per_mtok[1] / 1000


class CostBook:
    """Tokens by (component, model), summed as a run's records are read; `file()` is their save_costs' dict."""

    def __init__(self) -> None:
        self.tokens: dict[tuple[str, str], list[int]] = {}

    def add(self, component: str, model: str, usage: Usage) -> None:
        if not (usage.calls or usage.prompt_tokens or usage.completion_tokens):
            return
        counts = self.tokens.setdefault((component, bare_model(model) or "unrecorded"), [0, 0])
        counts[0] += usage.prompt_tokens
        counts[1] += usage.completion_tokens

    def file(self) -> dict[str, Any]:
        model_costs: dict[str, dict[str, Any]] = {}
        components = dict.fromkeys(COMPONENTS, 0.0)
        for (component, model), (tokens_in, tokens_out) in self.tokens.items():
            per_in, per_out = price_per_1k(model)
            cost = tokens_in * per_in / 1000 + tokens_out * per_out / 1000
            model_costs[f"{component}_{model}"] = {
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "input_cost_per_1k": per_in,
                "output_cost_per_1k": per_out,
                "total_cost": cost,
            }
            components[component] = components.get(component, 0.0) + cost
        return {
            "total_cost": sum(components.values()),
            "model_costs": model_costs,
            "token_usage": {
                key: {k: v for k, v in entry.items() if k != "total_cost"} for key, entry in model_costs.items()
            },
            "component_costs": components,
        }


def run_costs(logs: list[RunLog]) -> dict[str, Any]:
    """Their costs file for the records of one run (every file read into it): each trajectory's use by role (the
    role is the component), and every evaluation line's use as the evaluator's."""
    book = CostBook()
    for log in logs:
        for traj in log.trajectories:
            for role, usage in traj.usage.items():
                if role != "total":
                    book.add(role, traj.model_of(role), usage)
        for evaluations in log.evaluations.values():
            for ev in evaluations:
                book.add(EVALUATOR, ev.judge_model, ev.usage)
    return book.file()


def quitting_prefix(run: LoadedRun, out: Path, label_stem: str) -> str:
    """The name their reader finds: a run of one trajectory file in `out` is that file's stem, else its label."""
    logs = run.all_logs
    if len(logs) == 1 and logs[0].files.directory.resolve() == out.resolve():
        return logs[0].files.trajectories.stem
    return label_stem


def quitting_files(
    runs: list[LoadedRun],
    out: Path,
    stems: dict[str, str],
    reduced: dict[str, tuple[dict[str, Any], dict[str, Any]]] | None = None,
) -> dict[Path, str]:
    """`<prefix>_quit_stats.json` and `<prefix>_costs.json` for each run of ours with episodes, as json.dump writes
    them (indent 2, ASCII). `stems`: each run's label as a file-name stem (its unified report's). `reduced`: each
    run's two files as computed while its records were read (a run reduced as it was read keeps none)."""
    files: dict[Path, str] = {}
    for run in runs:
        if run.info.format != "ours" or not run.episodes:
            continue
        prefix = quitting_prefix(run, out, stems[run.info.run])
        stats, costs = (
            reduced[run.info.run] if reduced is not None else (quit_stats(run.episodes), run_costs(run.all_logs))
        )
        files[out / f"{prefix}{QUIT_STATS_SUFFIX}"] = json.dumps(stats, indent=2)
        files[out / f"{prefix}{COSTS_SUFFIX}"] = json.dumps(costs, indent=2)
    return files
