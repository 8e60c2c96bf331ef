"""A run as an Inspect eval log: one sample per episode, every scorer's score, usage, and the run's settings.

    toolemu export inspect dumps/my-run                  # -> dumps/my-run/inspect/<created>_toolemu-benchmark_<id>.json
    inspect view --log-dir dumps/my-run/inspect

How a run maps onto Inspect's log:
- eval spec: task = the benchmark (`toolemu-benchmark`, task_version = its version), model = the agent's model,
  model_roles = the emulator's and the judges' models, dataset = the cases (sample_ids: the case names), config.epochs
  = the trials, task_args = the run's settings (agent type, emulator type, step limit, gates, selection);
- a sample per episode: id = the case name, epoch = trial + 1, input = the instruction, target = the case's expected
  achievements; messages = the instruction (user), each agent turn (assistant, with its tool call) and what the
  call returned (tool; a call a gate blocked carries an `approval` error, one the spec check refused a `parsing`
  error), and the final answer (assistant); an episode that errored has `error`, one that hit the step limit
  `limit`;
- scores: one per scorer (value, answer = the label, explanation = the judge's reasoning, metadata = status,
  summary and the scorer's own metadata); a judgement that failed, is missing or does not apply is NaN with the
  status as its `reason`;
- usage: per model and per role (agent, emulator, evaluator), per sample and for the whole run;
- results: each scorer's mean, std, 95% CI and binarised rate, as the report computes them.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime
from pathlib import Path

from toolemu.errors import InputError
from toolemu.export import inspect_format as ix
from toolemu.llm.usage import Usage
from toolemu.log import Episode, Evaluation, Score, Step, Trajectory, now
from toolemu.log.jsonl import write_text_atomic
from toolemu.log.model import ModelDescription
from toolemu.log.read import RunLog
from toolemu.paths import output_dir
from toolemu.reporting import build_report, load_runs
from toolemu.reporting.groups import NO_GROUPING
from toolemu.reporting.load import LoadedRun
from toolemu.reporting.model import EpisodeView, MetricStats
from toolemu.reporting.write import refuse_unreadable
from toolemu.scorers.base import MetricInfo
from toolemu.secrets import redact
from toolemu.version import __version__

TASK = "toolemu-benchmark"
INSPECT_DIR = "inspect"  # beside the run: `inspect view --log-dir <run>/inspect`
# Why a score has no value, in Inspect's words where it has one (our status is in the score's metadata too).
UNSCORED_REASONS = {
    "error": "grader_failed",
    "missing": "missing",
    "skipped": "skipped",
    "not_applicable": "not_applicable",
}


def _id(*parts: object, length: int = 22) -> str:
    """A stable id from what identifies the thing (the same run exports the same ids)."""
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:length]


def inspect_model_name(model: str) -> str:
    """Inspect names models `provider/model`; ours are `provider:model` (or a bare provider such as `mock`)."""
    provider, sep, name = model.partition(":")
    return f"{provider}/{name}" if sep else model


def _usage(usage: Usage, cost: float | None = None) -> ix.ModelUsage:
    return ix.ModelUsage(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
        total_cost=usage.cost_usd if cost is None else cost,
    )


def _add(a: ix.ModelUsage, b: ix.ModelUsage) -> ix.ModelUsage:
    cost = None if a.total_cost is None and b.total_cost is None else (a.total_cost or 0.0) + (b.total_cost or 0.0)
    return ix.ModelUsage(
        input_tokens=a.input_tokens + b.input_tokens,
        output_tokens=a.output_tokens + b.output_tokens,
        total_tokens=a.total_tokens + b.total_tokens,
        total_cost=cost,
    )


def _merge(into: dict[str, ix.ModelUsage], key: str, usage: ix.ModelUsage) -> None:
    into[key] = _add(into[key], usage) if key in into else usage


def _role_usage(traj: Trajectory, evaluations: list[Evaluation]) -> tuple[dict, dict]:
    """(usage by model, usage by role) of one episode: the roles that ran it and the judges that scored it."""
    by_role: dict[str, ix.ModelUsage] = {}
    by_model: dict[str, ix.ModelUsage] = {}
    for role, spent in traj.usage.items():
        if role == "total":
            continue
        usage = _usage(spent)
        _merge(by_role, role, usage)
        _merge(by_model, inspect_model_name(traj.model_of(role) or role), usage)
    for ev in evaluations:
        if ev.usage.calls or ev.usage.cache_hits or ev.usage.total_tokens:
            usage = _usage(ev.usage, ev.usage.cost_usd or ev.cost_usd)
            _merge(by_role, "evaluator", usage)
            _merge(by_model, inspect_model_name(ev.evaluator_model or "evaluator"), usage)
    return by_model, by_role


def _step_messages(step: Step, episode_id: str, agent_model: str) -> list[ix.ChatMessage]:
    call_id = f"call_{step.index}"
    call = step.call
    arguments, parse_error = call.arguments, call.parse_error and f"{call.parse_error}: {call.tool_input}"
    error = None
    if step.blocked:
        reasons = "; ".join(f"{d.gate}: {d.reason or d.action}" for d in step.gates if d.action == "deny")
        where = "before the tool ran" if step.blocked == "pre_call" else "after the tool ran (output withheld)"
        error = ix.ToolCallError(type="approval", message=f"blocked {where}: {reasons}".rstrip(": "))
    elif step.invalid_call:
        error = ix.ToolCallError(type="parsing", message="the call does not match the tool's spec")
    gates = [d.model_dump(mode="json") for d in step.gates]
    return [
        ix.ChatMessage(
            id=f"{episode_id}-a{step.index}",
            role="assistant",
            content=step.thought,
            source="generate",
            model=agent_model or None,
            tool_calls=[ix.ToolCall(id=call_id, function=step.tool, arguments=arguments, parse_error=parse_error)],
        ),
        ix.ChatMessage(
            id=f"{episode_id}-t{step.index}",
            role="tool",
            content=step.observation,
            tool_call_id=call_id,
            function=step.tool,
            error=error,
            metadata={"gates": gates} if gates else None,
        ),
    ]


def _score(score: Score) -> ix.Score:
    metadata = {
        "status": score.status,
        "metric": score.metric,
        "summary": score.summary,
        "samples": score.samples,
        **({"error": score.error} if score.error else {}),
        **({"scorer_model": score.judge_model} if score.judge_model else {}),
        **score.metadata,
    }
    scored = score.scored and score.value is not None
    return ix.Score(
        value=float(score.value) if scored else math.nan,  # type: ignore[arg-type]
        answer=score.label,
        explanation=score.explanation or score.error or None,
        reason=None if scored else UNSCORED_REASONS.get(score.status, score.status),
        metadata=metadata,
    )


def _sample(
    view: EpisodeView, source: Episode, position: int, run_id: str, max_iterations: int | None
) -> ix.EvalSample:
    traj = source.trajectory
    agent_model = inspect_model_name(traj.model_of("agent"))
    episode_id = _id(run_id, view.case_name, view.trial, traj.started_at, position, length=12)
    messages = [ix.ChatMessage(id=f"{episode_id}-u", role="user", content=view.instruction, source="input")]
    for step in view.steps:
        messages += _step_messages(step, episode_id, agent_model)
    output = ix.ModelOutput(model=agent_model)
    if view.status != "error":
        final = ix.ChatMessage(
            id=f"{episode_id}-f", role="assistant", content=view.final_answer, source="generate", model=agent_model
        )
        messages.append(final)
        output = ix.ModelOutput(
            model=agent_model,
            choices=[ix.ChatCompletionChoice(message=final, stop_reason="stop")],
            completion=view.final_answer,
        )
    evaluations = [ev for evs in source.evaluations.values() for ev in evs]
    by_model, by_role = _role_usage(traj, evaluations)
    started, finished = traj.started_at or None, traj.finished_at or None
    limit = None
    if view.status == "max_iterations":
        limit = ix.EvalSampleLimit(type="turn" if max_iterations else "custom", limit=float(max_iterations or 0))
    return ix.EvalSample(
        id=view.case_name,
        epoch=view.trial + 1,
        input=view.instruction,
        target=traj.case_view.expected_achievements or "",
        messages=messages,
        output=output,
        scores={name: _score(score) for name, score in view.scores.items()},
        metadata={
            "case_idx": view.case_idx,
            "trial": view.trial,
            "status": view.status,
            "toolkits": view.toolkits,
            "risk_categories": view.risk_categories,
            "threat": view.threat,
            "denied_calls": view.denied_calls,
            "episode": position,
        },
        model_usage=by_model,
        role_usage=by_role,
        started_at=started,
        completed_at=finished,
        total_time=_seconds(traj.started_at, traj.finished_at),
        uuid=episode_id,
        error=ix.EvalError(message=view.error or "the episode errored") if view.status == "error" else None,
        limit=limit,
    )


def _seconds(start: str, end: str) -> float | None:
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None


def _metrics(info: MetricInfo, stats: MetricStats) -> dict[str, ix.EvalMetric]:
    rate = f"{info.rate_name.replace(' ', '_')}_rate"
    values = {
        "mean": stats.mean,
        "std": stats.std,
        "ci_low": stats.mean_ci[0] if stats.mean_ci else None,
        "ci_high": stats.mean_ci[1] if stats.mean_ci else None,
        rate: stats.binarized_rate,
        "failure_incidence": stats.failure_incidence,
    }
    return {name: ix.EvalMetric(name=name, value=v) for name, v in values.items() if v is not None}


def _model_config(settings: ModelDescription | None) -> ix.ModelConfig | None:
    if settings is None or not settings.model:
        return None
    return ix.ModelConfig(
        model=inspect_model_name(settings.model),
        config=_generate_config(settings),
        base_url=settings.base_url,
        args={"toolemu_model": settings.model},
    )


def _generate_config(settings: ModelDescription | None) -> ix.GenerateConfig:
    if settings is None:
        return ix.GenerateConfig()
    return ix.GenerateConfig(temperature=settings.temperature, max_tokens=settings.max_tokens, seed=settings.seed)


def build_eval_log(run: LoadedRun) -> ix.EvalLog:
    log: RunLog | None = run.log
    sources = run.sources or []
    meta = log.meta if log is not None else None
    first = next((s.trajectory for s in sources if s.trajectory.schema_version), None)
    run_id = (meta.run_id if meta else "") or (first.run_id if first else "") or run.info.run
    bench = meta.benchmark if meta else None
    config = meta.config.identity() if meta else {}
    selection = meta.selection.model_dump(exclude_none=True) if meta and meta.selection else {}
    max_iterations = meta.config.max_iterations if meta else None
    starts = sorted(t.trajectory.started_at for t in sources if t.trajectory.started_at)
    ends = sorted(t.trajectory.finished_at for t in sources if t.trajectory.finished_at)
    created = starts[0] if starts else now()
    samples = [
        _sample(view, source, i, run_id, max_iterations)
        for i, (view, source) in enumerate(zip(run.episodes, sources, strict=True))
    ]
    report = build_report([run])
    overall = report.overall(run.info.run)
    scores = []
    for info in run.scorers:
        stats = overall.metrics.get(info.name) if overall else None
        if stats is None:
            continue
        scores.append(
            ix.EvalScore(
                name=info.name,
                scorer=info.name,
                scored_samples=stats.n,
                unscored_samples=len(samples) - stats.n,
                params={"metric": info.metric, "scale": [info.lower, info.upper], "threshold": info.threshold},
                metrics=_metrics(info, stats),
                metadata={"title": info.title, "higher_is_better": info.higher_is_better},
            )
        )
    model_usage: dict[str, ix.ModelUsage] = {}
    role_usage: dict[str, ix.ModelUsage] = {}
    for sample in samples:
        for key, usage in sample.model_usage.items():
            _merge(model_usage, key, usage)
        for key, usage in sample.role_usage.items():
            _merge(role_usage, key, usage)
    expected = len(meta.expected_pairs) if meta and meta.expected_pairs else len(samples)
    case_names = list(dict.fromkeys(meta.selected_cases or [])) if meta and meta.selected_cases else None
    case_names = case_names or list(dict.fromkeys(v.case_name for v in run.episodes))
    version = bench.version if bench and bench.version else (bench.hash[:15] if bench else "unversioned")
    agent = first.model_of("agent") if first else ""
    roles = {
        r: m for r in ("emulator", "evaluator", "monitor") if (m := _model_config(first.model(r) if first else None))
    }
    judge = next((ev.evaluator for s in sources for evs in s.evaluations.values() for ev in evs if ev.evaluator), None)
    if "evaluator" not in roles and (judged_by := _model_config(judge)) is not None:
        roles["evaluator"] = judged_by
    task_args = {
        "agent_type": first.agent_type if first else "",
        "agent_format": first.agent_format if first else "",
        "simulator_type": first.simulator_type if first else "",
        **{k: v for k, v in config.items() if k not in ("agent_type", "agent_format", "simulator_type")},
        **selection,
    }
    agent_settings = first.model("agent") if first else None
    return ix.EvalLog(
        status="success" if len(samples) >= expected else "cancelled",
        eval=ix.EvalSpec(
            eval_id=_id("eval", run_id),
            run_id=run_id,
            created=created,
            task=TASK,
            task_id=_id("task", bench.hash if bench else "unversioned"),
            task_version=version,
            task_display_name=f"ToolEmu benchmark {version}",
            task_args=task_args,
            solver=f"toolemu/{task_args['agent_type'] or 'agent'}",
            dataset=ix.EvalDataset(
                name=TASK,
                location=bench.source if bench else run.info.source,
                samples=len(case_names),
                sample_ids=case_names,
                shuffled=meta.config.shuffle if meta else False,
            ),
            model=inspect_model_name(agent) or "unknown",
            model_generate_config=_generate_config(agent_settings),
            model_base_url=agent_settings.base_url if agent_settings is not None else None,
            model_args={"toolemu_model": agent} if agent else {},
            model_roles=roles or None,
            config=ix.EvalConfig(
                epochs=len({v.trial for v in run.episodes}) or None, limit=meta.config.trunc_num if meta else None
            ),
            packages={"toolemu": __version__},
            metadata={
                "toolemu": {
                    "run": run.info.run,
                    "source": run.info.source,
                    "format": run.info.format,
                    "benchmark": {"version": bench.version, "hash": bench.hash} if bench else None,
                    "notes": run.info.notes,
                }
            },
        ),
        plan=ix.EvalPlan(
            steps=[ix.EvalPlanStep(solver=f"toolemu/{task_args['agent_type'] or 'agent'}", params=task_args)],
            config=_generate_config(agent_settings),
        ),
        results=ix.EvalResults(
            total_samples=expected,
            completed_samples=sum(s.error is None for s in samples),
            scores=scores,
        ),
        stats=ix.EvalStats(
            started_at=created, completed_at=ends[-1] if ends else "", model_usage=model_usage, role_usage=role_usage
        ),
        samples=samples,
    )


def default_log_path(run: LoadedRun, log: ix.EvalLog) -> Path:
    """<run>/inspect/<created>_<task>_<eval id>.json: `inspect view` lists .json logs whose names start with an
    ISO timestamp."""
    directory = Path(run.info.source)
    directory = directory if directory.is_dir() else directory.parent
    stamp = log.eval.created.replace(":", "-")
    return directory / INSPECT_DIR / f"{stamp}_{TASK}_{log.eval.eval_id}.json"


def export_inspect(path: Path, out: Path | None = None) -> tuple[Path, ix.EvalLog, list[str]]:
    """Write the Inspect eval log of one run (ours or a ToolEmu dump); returns where it went, the log, and the lines
    of the run's files that are no records (left out of the log, and bad input for the command)."""
    if out is not None and out.suffix != ".json":
        raise InputError.single(out, "expected a file name ending in .json (Inspect's JSON log format)")
    runs = load_runs([path], NO_GROUPING)  # the log names the file or folder it was read from
    if len(runs) != 1:  # a folder of ToolEmu dumps: one run per dump
        raise InputError.single(path, f"expected one run, it holds {len(runs)}: export each dump file on its own")
    (run,) = runs
    refuse_unreadable(runs)  # nothing readable: one error, no log written
    log = build_eval_log(run)
    target = out or default_log_path(run, log)
    output_dir(target.parent, "--out")
    # Records were scrubbed when read; names (run labels, paths) are scrubbed here too. Whole or not at all.
    write_text_atomic(target, redact(log.model_dump_json(exclude_none=True)), "--out")
    return target, log, list(run.info.problems)
