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
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from toolemu.log import Episode, Evaluation, Score, Step, Trajectory
from toolemu.reporting.judges import score_judge
from toolemu.reporting.load import LoadedRun, load_runs
from toolemu.reporting.model import EpisodeView
from toolemu.scorers import info_for_eval_type

RunsLike = str | Path | LoadedRun | Sequence[str | Path | LoadedRun]

RUN_COLUMNS = [
    "run",  # the report's label: the run directory's (or dump file's) name, made unique
    "run_id",  # run.json's run_id ("" for a ToolEmu dump)
    "source",  # the path it was read from
    "format",  # "ours" or "toolemu"
    "agent_model",
    "agent_type",
    "agent_format",
    "emulator_model",
    "simulator_type",
    "evaluator_model",
    "max_iterations",  # None where the run does not record it
    "num_trials",
    "episodes",
    "scorers",  # comma-joined scorer names
    "benchmark_version",  # None: unversioned case files, or a run that records no benchmark
    "benchmark_hash",
    "notes",  # how many problems reading it found (unreadable lines, orphan evaluations)
]
EPISODE_COLUMNS = [
    "run",
    "run_id",
    "episode",  # the trajectory's position in its run
    "case_name",
    "case_idx",
    "trial",
    "toolkits",  # comma-joined
    "risk_categories",  # comma-joined; "uncategorised" when no outcome names one
    "threat",  # the case's threat kind, None for a case without one
    "status",  # final_answer, quit, max_iterations, error
    "error",  # "Type: message" when the episode errored
    "instruction",
    "final_answer",
    "steps",  # tool calls made (blocked ones included)
    "denied_calls",  # calls a gate blocked, before or after the tool ran
    "invalid_calls",  # calls the spec check rejected
    "agent_model",
    "agent_type",
    "agent_format",
    "emulator_model",
    "simulator_type",
    "prompt_tokens",  # every role of the episode (agent, emulator, monitor); judges are in evaluations_df
    "completion_tokens",
    "total_tokens",
    "cost_usd",
    "started_at",
    "finished_at",
    "duration_s",
    "case_hash",  # the case's content hash, from run.json (None when the run records none)
]
SCORE_COLUMNS = [
    "run",
    "run_id",
    "episode",
    "case_name",
    "trial",
    "scorer",  # the registered name: safety, helpfulness, attack, ...
    "metric",  # the value's name: ToolCallRisk, Helpfulness, AttackSuccess, ...
    "replicate",  # 0, or the evaluation line's number where the episode was judged more than once
    "status",  # ok, error, skipped (the episode errored), not_applicable, missing (no evaluation record)
    "value",  # NaN unless status is ok
    "label",
    "passed",  # the good outcome of the metric (safe, helpful, attack resisted); None when not scored
    "explanation",
    "summary",
    "samples",
    "error",
    "scorer_model",
    "judge",  # the judge's id (or "unrecorded:<model>" for records written before judges had ids)
    "metadata",  # JSON text
]
EVALUATION_COLUMNS = [
    "run",
    "run_id",
    "episode",  # the episode it judged; <NA> for a record that matches no trajectory
    "eval_type",
    "scorer",
    "metric",
    "eval_id",
    "case_name",
    "case_idx",
    "trial",
    "status",
    "value",  # the metric's value in eval_scores
    "label",
    "thought",
    "summary",
    "samples",
    "error",
    "evaluator_model",
    "judge_id",  # "" in records written before judges had ids
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "started_at",
    "finished_at",
]
STEP_COLUMNS = [
    "run",
    "run_id",
    "episode",
    "case_name",
    "trial",
    "step",  # the step's index in its episode
    "tool",
    "tool_input",  # JSON text
    "thought",
    "observation",
    "invalid_call",
    "blocked",  # pre_call, post_call or None
    "warned",  # a gate warned about this call
    "gate_reasons",  # "gate: reason" of every decision that was not an allow, "; "-joined
    "agent_latency_s",
    "emulator_latency_s",
    "agent_prompt_tokens",
    "agent_completion_tokens",
    "emulator_prompt_tokens",
    "emulator_completion_tokens",
    "emulator_thought",
    "emulator_log_summary",
    "discarded_text",
]


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


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _seconds(start: str, end: str) -> float | None:
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None


def runs_df(runs: RunsLike) -> pd.DataFrame:
    """One row per run: its settings, size and benchmark (like Inspect's `evals_df`)."""
    rows = []
    for run in loaded(runs):
        meta = run.log.meta if run.log is not None else None
        first = next((s.trajectory for s in _sources(run) if s.trajectory.schema_version), None)
        rows.append(
            {
                "run": run.info.run,
                "run_id": _run_id(run, first),
                "source": run.info.source,
                "format": run.info.format,
                "agent_model": first.model_of("agent") if first else "",
                "agent_type": first.agent_type if first else "",
                "agent_format": first.agent_format if first else "",
                "emulator_model": first.model_of("emulator") if first else "",
                "simulator_type": first.simulator_type if first else "",
                "evaluator_model": run.info.evaluator,
                "max_iterations": meta.config.max_iterations if meta is not None else None,
                "num_trials": len({ep.trial for ep in run.episodes}),
                "episodes": len(run.episodes),
                "scorers": ",".join(run.info.scorers),
                "benchmark_version": run.info.benchmark_version,
                "benchmark_hash": run.info.benchmark_hash,
                "notes": len(run.info.notes),
            }
        )
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
            total = traj.total_usage
            row: dict[str, Any] = key | {
                "case_idx": view.case_idx,
                "toolkits": ",".join(view.toolkits),
                "risk_categories": ",".join(view.risk_categories),
                "threat": view.threat,
                "status": view.status,
                "error": view.error,
                "instruction": view.instruction,
                "final_answer": view.final_answer,
                "steps": len(view.steps),
                "denied_calls": view.denied_calls,
                "invalid_calls": sum(s.invalid_call for s in view.steps),
                "agent_model": traj.model_of("agent"),
                "agent_type": traj.agent_type,
                "agent_format": traj.agent_format,
                "emulator_model": traj.model_of("emulator"),
                "simulator_type": traj.simulator_type,
                "prompt_tokens": total.prompt_tokens,
                "completion_tokens": total.completion_tokens,
                "total_tokens": total.total_tokens,
                "cost_usd": traj.cost_usd,
                "started_at": traj.started_at or None,
                "finished_at": traj.finished_at or None,
                "duration_s": _seconds(traj.started_at, traj.finished_at),
                "case_hash": cases.get(view.case_name),
            }
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


def _score_row(run: LoadedRun, key: dict[str, Any], replicate: int, s: Score) -> dict[str, Any]:
    info = next((i for i in run.scorers if i.name == s.scorer), None)
    return key | {
        "scorer": s.scorer,
        "metric": s.metric,
        "replicate": replicate,
        "status": s.status,
        "value": s.value if s.scored else None,
        "label": s.label,
        "passed": info.passes(s.value) if info is not None and s.scored and s.value is not None else None,
        "explanation": s.explanation,
        "summary": s.summary,
        "samples": s.samples,
        "error": s.error,
        "scorer_model": s.judge_model,
        "judge": score_judge(s),
        "metadata": _json(s.metadata),
    }


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
    return {
        "run": run.info.run,
        "run_id": ev.run_id or _run_id(run),
        "episode": episode,
        "eval_type": eval_type,
        "scorer": ev.scorer or info.name,
        "metric": info.metric,
        "eval_id": ev.eval_id,
        "case_name": ev.case_name or None,
        "case_idx": ev.case_idx,
        "trial": ev.trial,
        "status": ev.status,
        "value": ev.value_of(info.metric),
        "label": ev.label,
        "thought": ev.evaluator_thought,
        "summary": ev.log_summary,
        "samples": len(ev.samples),
        "error": f"{ev.error.type}: {ev.error.message}" if ev.error else None,
        "evaluator_model": ev.evaluator_model,
        "judge_id": ev.judge_id,
        "prompt_tokens": ev.usage.prompt_tokens,
        "completion_tokens": ev.usage.completion_tokens,
        "cost_usd": ev.cost_usd,
        "started_at": ev.started_at or None,
        "finished_at": ev.finished_at or None,
    }


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


def _step_row(key: dict[str, Any], step: Step) -> dict[str, Any]:
    return key | {
        "step": step.index,
        "tool": step.tool,
        "tool_input": step.input_text,
        "thought": step.thought,
        "observation": step.observation,
        "invalid_call": step.invalid_call,
        "blocked": step.blocked,
        "warned": any(d.action == "warn" for d in step.gates),
        "gate_reasons": "; ".join(f"{d.gate}: {d.reason or d.action}" for d in step.gates if d.action != "allow"),
        "agent_latency_s": step.agent_latency_s,
        "emulator_latency_s": step.emulator_latency_s,
        "agent_prompt_tokens": step.tokens.agent_prompt,
        "agent_completion_tokens": step.tokens.agent_completion,
        "emulator_prompt_tokens": step.tokens.emulator_prompt,
        "emulator_completion_tokens": step.tokens.emulator_completion,
        "emulator_thought": step.emulator_thought,
        "emulator_log_summary": step.emulator_log_summary,
        "discarded_text": step.discarded_text,
    }


def steps_df(runs: RunsLike) -> pd.DataFrame:
    """One row per tool call of every episode, with what the gates said about it."""
    rows = []
    for run in loaded(runs):
        for key, view, _ in _episodes(run):
            rows += [_step_row(key, s) for s in view.steps]
    return _frame(rows, STEP_COLUMNS)
