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


def run_costs(logs: list[RunLog]) -> dict[str, Any]:
    """Their costs file (their save_costs' dict) for the records of one run (every file read into it): tokens by
    (component, model) of each trajectory's use by role (the role is the component), and of every evaluation line's
    use as the evaluator's."""
    tokens: dict[tuple[str, str], list[int]] = {}
    for log in logs:
        used = [(role, traj.model_of(role), usage) for traj in log.trajectories for role, usage in traj.usage.items()]
        used += [(EVALUATOR, ev.judge_model, ev.usage) for evs in log.evaluations.values() for ev in evs]
        for component, model, usage in used:  # a trajectory's "total" is its roles' sum
            if component != "total" and (usage.calls or usage.prompt_tokens or usage.completion_tokens):
                counts = tokens.setdefault((component, bare_model(model) or "unrecorded"), [0, 0])
                counts[0] += usage.prompt_tokens
                counts[1] += usage.completion_tokens
    model_costs: dict[str, dict[str, Any]] = {}
    components = dict.fromkeys(COMPONENTS, 0.0)
    for (component, model), (tokens_in, tokens_out) in tokens.items():
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
