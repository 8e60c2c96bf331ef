"""pandas DataFrames of runs: one row per run, episode, evaluation record, step or (episode, scorer) score.

Every frame reads through `toolemu.reporting.load_runs`, so through `toolemu.log.read_run`: our run directories
and ToolEmu's dumps alike, with the same joins, the same pooled scores and the same run labels as the report (the
shards of a run are one run, as there).
Column names are stable (the same columns for any input, an empty frame included); the `score_<scorer>` columns of
`episodes_df` follow the scorers the runs have, as Inspect's `samples_df` does. `run` (the report's label) with
`episode` (the trajectory's position in its run) identifies an episode in every frame.

Lists (toolkits, risk categories) are comma-joined text and nested objects are JSON text, so a frame writes the
same to CSV and to Parquet.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from toolemu.log import Episode, Evaluation, Score, Step, Trajectory
from toolemu.reporting.judges import score_judge
from toolemu.reporting.load import LoadedRun, load_runs
from toolemu.reporting.model import EpisodeView
from toolemu.scorers import info_for_eval_type
from toolemu.scorers.base import MetricInfo

RunsLike = str | Path | LoadedRun | Sequence[str | Path | LoadedRun]

# Each frame's columns are declared once, each beside how its cell is read; the constants name them in order.
KEY_COLUMNS = ["run", "run_id", "episode"]  # name an episode in every frame: `episode` is its position in its run

RUN_CELLS: dict[str, Callable[[LoadedRun, Trajectory | None], Any]] = {  # the run and its first trajectory
    # the report's label: the run directory's (or dump file's) name, made unique
    "run": lambda run, first: run.info.run,
    "run_id": lambda run, first: _run_id(run, first),  # run.json's run_id ("" for a ToolEmu dump)
    "source": lambda run, first: run.info.source,  # the path it was read from
    "format": lambda run, first: run.info.format,  # "ours" or "toolemu"
    "agent_model": lambda run, first: first.model_of("agent") if first else "",
    "agent_type": lambda run, first: first.agent_type if first else "",
    "agent_format": lambda run, first: first.agent_format if first else "",
    "emulator_model": lambda run, first: first.model_of("emulator") if first else "",
    "simulator_type": lambda run, first: first.simulator_type if first else "",
    "evaluator_model": lambda run, first: run.info.evaluator,
    # None where the run does not record it
    "max_iterations": lambda run, first: run.log.meta.config.max_iterations if run.log and run.log.meta else None,
    "num_trials": lambda run, first: len({ep.trial for ep in run.episodes}),
    "episodes": lambda run, first: len(run.episodes),
    "scorers": lambda run, first: ",".join(run.info.scorers),  # comma-joined scorer names
    # None: unversioned case files, or a run that records no benchmark
    "benchmark_version": lambda run, first: run.info.benchmark_version,
    "benchmark_hash": lambda run, first: run.info.benchmark_hash,
    # how many problems reading it found (unreadable lines, orphan evaluations)
    "notes": lambda run, first: len(run.info.notes),
}
EPISODE_CELLS: dict[str, Callable[[EpisodeView, Trajectory], Any]] = {
    "case_name": lambda view, traj: view.case_name,
    "case_idx": lambda view, traj: view.case_idx,
    "trial": lambda view, traj: view.trial,
    "toolkits": lambda view, traj: ",".join(view.toolkits),  # comma-joined
    # comma-joined; "uncategorised" when no outcome names one
    "risk_categories": lambda view, traj: ",".join(view.risk_categories),
    "threat": lambda view, traj: view.threat,  # the case's threat kind, None for a case without one
    "status": lambda view, traj: view.status,  # final_answer, quit, max_iterations, error
    "error": lambda view, traj: view.error,  # "Type: message" when the episode errored
    "instruction": lambda view, traj: view.instruction,
    "final_answer": lambda view, traj: view.final_answer,
    "steps": lambda view, traj: len(view.steps),  # tool calls made (blocked ones included)
    "denied_calls": lambda view, traj: view.denied_calls,  # calls a gate blocked, before or after the tool ran
    "invalid_calls": lambda view, traj: sum(s.invalid_call for s in view.steps),  # calls the spec check rejected
    "agent_model": lambda view, traj: traj.model_of("agent"),
    "agent_type": lambda view, traj: traj.agent_type,
    "agent_format": lambda view, traj: traj.agent_format,
    "emulator_model": lambda view, traj: traj.model_of("emulator"),
    "simulator_type": lambda view, traj: traj.simulator_type,
    # every role of the episode (agent, emulator, monitor); judges are in evaluations_df
    "prompt_tokens": lambda view, traj: traj.total_usage.prompt_tokens,
    "completion_tokens": lambda view, traj: traj.total_usage.completion_tokens,
    "total_tokens": lambda view, traj: traj.total_usage.total_tokens,
    "cost_usd": lambda view, traj: traj.cost_usd,
    "started_at": lambda view, traj: traj.started_at or None,
    "finished_at": lambda view, traj: traj.finished_at or None,
    "duration_s": lambda view, traj: _seconds(traj.started_at, traj.finished_at),
}
SCORE_CELLS: dict[str, Callable[[Score, int, MetricInfo | None], Any]] = {  # a score, its line, its scorer
    "scorer": lambda s, line, info: s.scorer,  # the registered name: safety, helpfulness, attack, ...
    "metric": lambda s, line, info: s.metric,  # the value's name: ToolCallRisk, Helpfulness, AttackSuccess, ...
    # 0, or the evaluation line's number where the episode was judged more than once
    "replicate": lambda s, line, info: line,
    # ok, error, skipped (the episode errored), not_applicable, missing (no evaluation record)
    "status": lambda s, line, info: s.status,
    "value": lambda s, line, info: s.value if s.scored else None,  # NaN unless status is ok
    "label": lambda s, line, info: s.label,
    # the good outcome of the metric (safe, helpful, attack resisted); None when not scored
    "passed": lambda s, line, info: info.passes(s.value) if info and s.scored and s.value is not None else None,
    "explanation": lambda s, line, info: s.explanation,
    "summary": lambda s, line, info: s.summary,
    "samples": lambda s, line, info: s.samples,
    "error": lambda s, line, info: s.error,
    "scorer_model": lambda s, line, info: s.judge_model,
    # the judge's id (or "unrecorded:<model>" for records written before judges had ids)
    "judge": lambda s, line, info: score_judge(s),
    "metadata": lambda s, line, info: json.dumps(s.metadata, ensure_ascii=False, sort_keys=True),  # JSON text
}
EVALUATION_CELLS: dict[str, Callable[[Evaluation, str, MetricInfo], Any]] = {  # a record, its eval type, its scorer
    "eval_type": lambda ev, eval_type, info: eval_type,
    "scorer": lambda ev, eval_type, info: ev.scorer or info.name,
    "metric": lambda ev, eval_type, info: info.metric,
    "eval_id": lambda ev, eval_type, info: ev.eval_id,
    "case_name": lambda ev, eval_type, info: ev.case_name or None,
    "case_idx": lambda ev, eval_type, info: ev.case_idx,
    "trial": lambda ev, eval_type, info: ev.trial,
    "status": lambda ev, eval_type, info: ev.status,
    "value": lambda ev, eval_type, info: ev.value_of(info.metric),  # the metric's value in eval_scores
    "label": lambda ev, eval_type, info: ev.label,
    "thought": lambda ev, eval_type, info: ev.evaluator_thought,
    "summary": lambda ev, eval_type, info: ev.log_summary,
    "samples": lambda ev, eval_type, info: len(ev.samples),
    "error": lambda ev, eval_type, info: f"{ev.error.type}: {ev.error.message}" if ev.error else None,
    "evaluator_model": lambda ev, eval_type, info: ev.evaluator_model,
    "judge_id": lambda ev, eval_type, info: ev.judge_id,  # "" in records written before judges had ids
    "prompt_tokens": lambda ev, eval_type, info: ev.usage.prompt_tokens,
    "completion_tokens": lambda ev, eval_type, info: ev.usage.completion_tokens,
    "cost_usd": lambda ev, eval_type, info: ev.cost_usd,
    "started_at": lambda ev, eval_type, info: ev.started_at or None,
    "finished_at": lambda ev, eval_type, info: ev.finished_at or None,
}
STEP_CELLS: dict[str, Callable[[Step], Any]] = {
    "step": lambda step: step.index,  # the step's index in its episode
    "tool": lambda step: step.tool,
    "tool_input": lambda step: step.input_text,  # JSON text
    "thought": lambda step: step.thought,
    "observation": lambda step: step.observation,
    "invalid_call": lambda step: step.invalid_call,
    "blocked": lambda step: step.blocked,  # pre_call, post_call or None
    "warned": lambda step: any(d.action == "warn" for d in step.gates),  # a gate warned about this call
    # "gate: reason" of every decision that was not an allow, "; "-joined
    "gate_reasons": lambda step: "; ".join(
        f"{d.gate}: {d.reason or d.action}" for d in step.gates if d.action != "allow"
    ),
    "agent_latency_s": lambda step: step.agent_latency_s,
    "emulator_latency_s": lambda step: step.emulator_latency_s,
    "agent_prompt_tokens": lambda step: step.tokens.agent_prompt,
    "agent_completion_tokens": lambda step: step.tokens.agent_completion,
    "emulator_prompt_tokens": lambda step: step.tokens.emulator_prompt,
    "emulator_completion_tokens": lambda step: step.tokens.emulator_completion,
    "emulator_thought": lambda step: step.emulator_thought,
    "emulator_log_summary": lambda step: step.emulator_log_summary,
    "discarded_text": lambda step: step.discarded_text,
}
RUN_COLUMNS = list(RUN_CELLS)
# with the case's content hash from run.json (None when the run records none)
EPISODE_COLUMNS = [*KEY_COLUMNS, *EPISODE_CELLS, "case_hash"]
SCORE_COLUMNS = [*KEY_COLUMNS, "case_name", "trial", *SCORE_CELLS]
# `episode`: the episode it judged; <NA> for a record that matches no trajectory
EVALUATION_COLUMNS = [*KEY_COLUMNS, *EVALUATION_CELLS]
STEP_COLUMNS = [*KEY_COLUMNS, "case_name", "trial", *STEP_CELLS]


def loaded(runs: RunsLike) -> list[LoadedRun]:
    """Runs already loaded, then the paths given, read together as the report reads them (unique labels; a folder
    of ToolEmu dumps is one run per dump)."""
    items = [runs] if isinstance(runs, str | Path | LoadedRun) else list(runs)
    paths = [Path(r) for r in items if not isinstance(r, LoadedRun)]
    return [r for r in items if isinstance(r, LoadedRun)] + (load_runs(paths) if paths else [])


def _frame(rows: Iterable[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=columns)


def _run_id(run: LoadedRun, trajectory: Trajectory | None = None) -> str:
    if trajectory is not None and trajectory.run_id:
        return trajectory.run_id
    return run.log.meta.run_id if run.log is not None and run.log.meta is not None else ""


def _sources(run: LoadedRun) -> list[Episode]:
    if run.sources is None:
        raise ValueError(f"{run.info.run}: loaded without its run log; load it with toolemu.reporting.load_runs")
    return run.sources


def _episodes(run: LoadedRun) -> Iterator[tuple[dict[str, Any], EpisodeView, Trajectory]]:
    """Each episode of the run with the columns that name it in every frame (run, run_id, episode, case, trial)."""
    for position, (view, source) in enumerate(zip(run.episodes, _sources(run), strict=True)):
        traj = source.trajectory
        key = {"run": run.info.run, "run_id": _run_id(run, traj), "episode": position}
        yield key | {"case_name": view.case_name, "trial": view.trial}, view, traj


def _seconds(start: str, end: str) -> float | None:
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None


def runs_df(runs: RunsLike) -> pd.DataFrame:
    """One row per run: its settings, size and benchmark (like Inspect's `evals_df`)."""
    rows = []
    for run in loaded(runs):
        first = next((s.trajectory for s in _sources(run) if s.trajectory.schema_version), None)
        rows.append({column: cell(run, first) for column, cell in RUN_CELLS.items()})
    return _frame(rows, RUN_COLUMNS)


def episodes_df(runs: RunsLike) -> pd.DataFrame:
    """One row per episode (case, trial): how it went, what it cost, and each scorer's value, status and label as
    `score_<scorer>`, `score_<scorer>_status` and `score_<scorer>_label` (the mean over replicate judgements, as
    the report's tables by episode and pass^k use it)."""
    rows, scorers = [], []
    for run in loaded(runs):
        scorers += [i.name for i in run.scorers if i.name not in scorers]
        cases = run.log.meta.benchmark.cases if run.log and run.log.meta and run.log.meta.benchmark else {}
        for key, view, traj in _episodes(run):
            row: dict[str, Any] = key | {column: cell(view, traj) for column, cell in EPISODE_CELLS.items()}
            row["case_hash"] = cases.get(view.case_name)
            for name, score in view.scores.items():
                row |= {
                    f"score_{name}": score.value if score.scored else None,
                    f"score_{name}_status": score.status,
                    f"score_{name}_label": score.label,
                }
            rows.append(row)
    columns = EPISODE_COLUMNS + [f"score_{n}{part}" for n in scorers for part in ("", "_status", "_label")]
    frame = _frame(rows, columns)
    for name in scorers:  # a float column even where every value is missing
        frame[f"score_{name}"] = frame[f"score_{name}"].astype("float64")
    return frame


def _score_row(run: LoadedRun, key: dict[str, Any], line: int, s: Score) -> dict[str, Any]:
    info = next((i for i in run.scorers if i.name == s.scorer), None)
    return key | {column: cell(s, line, info) for column, cell in SCORE_CELLS.items()}


def scores_df(runs: RunsLike) -> pd.DataFrame:
    """One row per (episode, scorer), or per evaluation line where an episode was judged more than once: the
    Scores the report's statistics count. An episode has a row for each scorer of its run; a missing evaluation is a
    row with status `missing`, never an absent row. (`episodes_df` has each scorer's mean over the replicates.)"""
    rows = []
    for run in loaded(runs):
        for key, view, _ in _episodes(run):
            for name in view.scores:
                rows += [_score_row(run, key, i, s) for i, s in enumerate(view.evaluation_lines(name))]
    frame = _frame(rows, SCORE_COLUMNS)
    frame["value"] = frame["value"].astype("float64")
    frame["passed"] = frame["passed"].astype("boolean")  # <NA> where nothing was scored
    return frame


def _evaluation_row(run: LoadedRun, eval_type: str, ev: Evaluation, episode: int | None) -> dict[str, Any]:
    info = info_for_eval_type(eval_type)
    key = {"run": run.info.run, "run_id": ev.run_id or _run_id(run), "episode": episode}
    return key | {column: cell(ev, eval_type, info) for column, cell in EVALUATION_CELLS.items()}


def evaluations_df(runs: RunsLike) -> pd.DataFrame:
    """One row per evaluation record as written (replicates and failed judgements each a row; a record that
    matches no trajectory too, with `episode` <NA>)."""
    rows = []
    for run in loaded(runs):
        judged: dict[int, int] = {}  # evaluation record (by identity) -> the episode it was joined to
        for position, source in enumerate(_sources(run)):
            for evaluations in source.evaluations.values():
                judged |= {id(ev): position for ev in evaluations}
        for log in run.all_logs:  # every shard of a combined run
            for eval_type, evaluations in log.evaluations.items():
                rows += [_evaluation_row(run, eval_type, ev, judged.get(id(ev))) for ev in evaluations]
    frame = _frame(rows, EVALUATION_COLUMNS)
    frame["episode"] = frame["episode"].astype("Int64")
    frame["value"] = frame["value"].astype("float64")
    return frame


def steps_df(runs: RunsLike) -> pd.DataFrame:
    """One row per tool call of every episode, with what the gates said about it."""
    rows = []
    for run in loaded(runs):
        for key, view, _ in _episodes(run):
            rows += [key | {column: cell(s) for column, cell in STEP_CELLS.items()} for s in view.steps]
    return _frame(rows, STEP_COLUMNS)
