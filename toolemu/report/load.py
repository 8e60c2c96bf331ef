"""Read runs for a report: our dump directories, and the trajectory + eval files that ToolEmu itself wrote.

Evaluations join their trajectory on (case, trial, episode start) for our records, and by position
(`eval_id`) for ToolEmu's. Nothing is dropped: an evaluation that failed or is missing shows as such, and
evaluation records that match no trajectory are reported.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolemu.evaluators.records import eval_path
from toolemu.evaluators.runner import eval_key, trajectory_key
from toolemu.evaluators.scales import SCALES, Scale
from toolemu.llm.secrets import redactor
from toolemu.records import as_text, calls_of, episode_status, read_jsonl
from toolemu.report.model import EpisodeView, Judgement, RunInfo, StepView
from toolemu.runner import trajectories_file
from toolemu.specs.lint import risk_category

log = logging.getLogger("toolemu")
UNCATEGORISED = "uncategorised"


@dataclass
class LoadedRun:
    info: RunInfo
    episodes: list[EpisodeView]
    notes: list[str] = field(default_factory=list)  # records that matched nothing, duplicates


def judgement_of(record: dict[str, Any] | None, scale: Scale) -> Judgement:
    if record is None:
        return Judgement(status="missing")
    if record.get("status") == "skipped":
        return Judgement(status="skipped", error=_error_text(record.get("error")))
    raw = (record.get("eval_scores") or {}).get(scale.metric)
    try:
        score = float(raw)
    except (TypeError, ValueError):
        reason = _error_text(record.get("error")) or f"no {scale.metric} score in the evaluator's reply"
        return Judgement(status="error", error=reason, thought=as_text(record.get("Evaluator Thought")))
    return Judgement(
        status="ok",
        score=score,
        label=as_text(record.get("Overall Qualitative Label")) or None,
        thought=as_text(record.get("Evaluator Thought")),
        summary=as_text(record.get("Evaluator Log Summary")),
        samples=len(record.get("samples") or []) or 1,
    )


def _error_text(error: Any) -> str | None:
    if not error:
        return None
    if isinstance(error, dict):
        return f"{error.get('type', 'Error')}: {error.get('message', '')}"
    return as_text(error)


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else ([str(value)] if value else [])


def categories_of(case: dict[str, Any]) -> list[str]:
    found = {risk_category(o) for o in _strings(case.get("Potential Risky Outcomes"))}
    return sorted(c for c in found if c) or [UNCATEGORISED]


def _index_evals(records: list[dict[str, Any]], ours: bool, file: Path, notes: list[str]) -> dict[Any, dict[str, Any]]:
    index: dict[Any, dict[str, Any]] = {}
    for position, rec in enumerate(records):
        key = eval_key(rec) if ours else rec.get("eval_id", position)
        if key in index:
            notes.append(f"{file.name}: more than one evaluation for {key}; the first is used")
            continue
        index[key] = rec
    return index


def load_run(path: Path, label: str | None = None) -> LoadedRun:
    file = trajectories_file(path)
    scrub = redactor()  # dumps other tools wrote may hold a key that is set here: it never reaches a report
    records = read_jsonl(file, scrub)
    ours = any(r.get("schema_version") for r in records)
    notes: list[str] = []
    evals = {t: _index_evals(read_jsonl(eval_path(file, t), scrub), ours, eval_path(file, t), notes) for t in SCALES}
    used: dict[str, set[Any]] = {t: set() for t in SCALES}
    episodes = []
    for position, rec in enumerate(records):
        key = trajectory_key(rec, position) if ours else position
        judged = {}
        for t, index in evals.items():
            match = index.get(key)
            if match is not None:
                used[t].add(key)
            judged[t] = judgement_of(match, SCALES[t])
        case = rec.get("case") or {}
        episodes.append(
            EpisodeView(
                run="",
                case_name=as_text(rec.get("case_name") or case.get("name")) or f"case {rec.get('case_idx', position)}",
                case_idx=int(rec.get("case_idx", position) or 0),
                trial=int(rec.get("trial") or 0),
                toolkits=_strings(case.get("Toolkits")),
                risk_categories=categories_of(case),
                status=episode_status(rec),
                instruction=as_text(case.get("User Instruction") or rec.get("input")),
                final_answer=as_text(rec.get("output")),
                error=_error_text(rec.get("error")),
                steps=[StepView(**call.model_dump()) for call in calls_of(rec)],
                safety=judged["agent_safe"],
                helpfulness=judged["agent_help"],
            )
        )
    for t, index in evals.items():
        orphans = len(index.keys() - used[t])
        if orphans:
            notes.append(f"{eval_path(file, t).name}: {orphans} evaluations match no trajectory in {file.name}")
    info = _run_info(path, file, records, evals, ours, label)
    for ep in episodes:
        ep.run = info.run
    return LoadedRun(info, episodes, notes)


def _run_info(
    path: Path,
    file: Path,
    records: list[dict[str, Any]],
    evals: dict[str, dict[Any, Any]],
    ours: bool,
    label: str | None,
) -> RunInfo:
    first = next((r for r in records if r.get("schema_version")), {})
    models = first.get("models") or {}

    def model(role: str, kind: str = "") -> str:
        name = (models.get(role) or {}).get("model", "")
        return f"{name} ({first.get(kind)})" if name and kind and first.get(kind) else name

    evaluator = next((e.get("evaluator", {}).get("model", "") for idx in evals.values() for e in idx.values()), "")
    return RunInfo(
        run=label or (path.name if path.is_dir() else file.stem),
        source=str(path),
        format="ours" if ours else "toolemu",
        agent=model("agent", "agent_type") or (path.name if path.is_dir() else file.stem),
        emulator=model("emulator", "simulator_type"),
        evaluator=evaluator,
    )


def load_runs(paths: list[Path]) -> list[LoadedRun]:
    """Each path one run; labels are the directory (or file) names, made unique where they clash."""
    runs = [load_run(p) for p in paths]
    seen: dict[str, int] = {}
    for run, path in zip(runs, paths, strict=True):
        label = run.info.run
        if label in seen or sum(r.info.run == label for r in runs) > 1:
            label = f"{path.resolve().parent.name}/{label}"
        seen[label] = seen.get(label, 0) + 1
        if seen[label] > 1:
            label = f"{label}#{seen[label]}"
        run.info.run = label
        for ep in run.episodes:
            ep.run = label
    for run in runs:
        for note in run.notes:
            log.warning("%s: %s", run.info.source, note)
    return runs
