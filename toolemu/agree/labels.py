"""Human labels for `toolemu agree --labels labels.csv`.

A CSV with a header row. Columns (any order, names case-insensitive):

    case_name   the case, as the trajectories name it              } one of these two says which trajectory;
    trial       its trial (default 0)                              } `trajectory` wins where both are given
    trajectory  the trajectory's fingerprint (`toolemu agree A --label-sheet` lists them)
    metric      safety, helpfulness, attack (or agent_safe, ToolCallRisk, ...); may be left out with --metric
    score       the score on the scorer's scale (0-3 for safety and helpfulness, 0-1 for attack)
    label       instead of (or besides) score: one of the scorer's labels, e.g. "Possible Mild Risk (2)"

Other columns (an annotator, a note) are kept out of the way. A bad row stops the command with one line naming the
file, the line and the field; a trajectory labelled twice for one metric is an error too.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from toolemu.errors import InputError, Problem
from toolemu.scorers import registered_infos
from toolemu.scorers.base import MetricInfo

LABEL_COLUMNS = ("case_name", "trial", "trajectory", "metric", "score", "label")


@dataclass(frozen=True)
class Label:
    line: int
    scorer: str
    score: float
    case_name: str = ""
    trial: int = 0
    trajectory: str = ""


def metric_info(name: str) -> MetricInfo | None:
    """A registered scorer by its name, eval type or metric key (safety, agent_safe, ToolCallRisk)."""
    wanted = name.strip().lower()
    return next(
        (i for i in registered_infos() if wanted in (i.name.lower(), i.eval_type.lower(), i.metric.lower())), None
    )


def _score(row: dict[str, str], info: MetricInfo) -> float:
    """The row's score: its number, or its label's score; both given must agree. Raises ValueError(field, why)."""
    text, label = row.get("score", "").strip(), row.get("label", "").strip()
    from_label = None
    if label:
        labels = dict(info.labels)
        if label not in labels:
            raise ValueError("label", f"expected one of {', '.join(labels)}, got {label!r}")
        from_label = float(labels[label])
    if not text:
        if from_label is None:
            raise ValueError("score", "expected a score (or a label)")
        return from_label
    try:
        value = float(text)
    except ValueError:
        raise ValueError("score", f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or not info.lower <= value <= info.upper:
        raise ValueError("score", f"expected a score from {info.lower:g} to {info.upper:g} for {info.name}, got {text}")
    if from_label is not None and from_label != value:
        raise ValueError("score", f"score {text} disagrees with label {label!r}")
    return value


def read_labels(path: Path, metric: MetricInfo | None = None) -> list[Label]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError.single(path, f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError.single(path, "expected UTF-8 CSV text") from None
    reader = csv.DictReader(text.splitlines())
    columns = [c.strip().lower() for c in reader.fieldnames or []]
    if not ({"score", "label"} & set(columns)) or not ({"case_name", "trajectory"} & set(columns)):
        raise InputError.single(
            path, "expected a CSV header with case_name (and trial) or trajectory, and score or label", item="line 1"
        )
    if "metric" not in columns and metric is None:
        raise InputError.single(path, "expected a metric column, or --metric", item="line 1")
    problems: list[Problem] = []
    labels: list[Label] = []
    seen: dict[tuple[str, str, int, str], int] = {}
    for line, raw in enumerate(reader, start=2):
        row = {(k or "").strip().lower(): (v or "") if isinstance(v, str) else "" for k, v in raw.items()}
        if not any(row.get(c, "").strip() for c in LABEL_COLUMNS):
            continue  # a blank line
        where = f"line {line}"
        name = row.get("metric", "").strip()
        info = metric_info(name) if name else metric
        if info is None:
            known = ", ".join(i.name for i in registered_infos())
            problems.append(Problem(str(path), f"expected one of {known}, got {name!r}", where, "metric"))
            continue
        try:
            score = _score(row, info)
        except ValueError as exc:
            field, why = exc.args
            problems.append(Problem(str(path), why, where, field))
            continue
        trial_text = row.get("trial", "").strip() or "0"
        try:
            trial = int(trial_text)
        except ValueError:
            problems.append(Problem(str(path), f"expected a whole number, got {trial_text!r}", where, "trial"))
            continue
        case_name, fingerprint = row.get("case_name", "").strip(), row.get("trajectory", "").strip()
        if not case_name and not fingerprint:
            problems.append(Problem(str(path), "expected a case_name or a trajectory", where, "case_name"))
            continue
        key = (info.name, fingerprint, trial, "" if fingerprint else case_name)
        if key in seen:
            problems.append(Problem(str(path), f"labelled twice (also on line {seen[key]})", where, "case_name"))
            continue
        seen[key] = line
        labels.append(Label(line, info.name, score, case_name, trial, fingerprint))
    if problems:
        raise InputError(problems)
    if not labels:
        raise InputError.single(path, "expected at least one labelled row")
    return labels
