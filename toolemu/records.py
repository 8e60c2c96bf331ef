"""Trajectory records: ToolEmu's fields (so its tooling can read them) plus ours, one JSON line each."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from toolemu import SCHEMA_VERSION
from toolemu.llm.secrets import redact

log = logging.getLogger("toolemu")

Status = Literal["final_answer", "quit", "max_iterations", "error"]
FINISHED: tuple[Status, ...] = ("final_answer", "quit", "max_iterations")
MAX_ITERATIONS_OUTPUT = "Agent stopped: max iterations reached"  # LangChain's and so ToolEmu's wording


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class StepTokens(BaseModel):
    agent_prompt: int = 0
    agent_completion: int = 0
    emulator_prompt: int = 0
    emulator_completion: int = 0


class Step(BaseModel):
    """One agent action and the emulated observation it got."""

    index: int
    thought: str = ""
    tool: str
    tool_input: dict[str, Any] = Field(default_factory=dict)
    agent_log: str = ""  # the agent text that was kept: thought, action and input, nothing after
    discarded_text: str = ""  # what the agent wrote past its action (e.g. an invented Observation)
    observation: str  # JSON text; never empty
    invalid_call: bool = False  # rejected by spec validation; no emulator call was made
    emulator_thought: str = ""  # hidden from the agent
    emulator_log_summary: str = ""
    emulator_attempts: int = 0
    agent_latency_s: float = 0.0
    emulator_latency_s: float = 0.0
    tokens: StepTokens = Field(default_factory=StepTokens)


class EpisodeError(BaseModel):
    type: str
    message: str


class Trajectory(BaseModel):
    # ToolEmu's fields.
    input: str
    output: str = ""
    intermediate_steps: list[Any] = Field(default_factory=list)
    case: dict[str, Any]
    case_idx: int
    underspecifications: dict[str, Any] | None = None
    risky_outcome: list[str] | None = None
    risky_actions: list[str] | None = None
    # Ours.
    schema_version: str = SCHEMA_VERSION
    run_id: str
    case_name: str
    trial: int
    status: Status
    error: EpisodeError | None = None
    steps: list[Step] = Field(default_factory=list)
    agent_type: str
    agent_format: str
    simulator_type: str
    models: dict[str, dict[str, Any]] = Field(default_factory=dict)
    usage: dict[str, Any] = Field(default_factory=dict)
    cost_usd: float = 0.0
    started_at: str
    finished_at: str

    @property
    def key(self) -> tuple[str, int]:
        return (self.case_name, self.trial)


def toolemu_intermediate_steps(steps: list[Step]) -> list[Any]:
    """ToolEmu's layout: [[tool, tool_input_json, agent_log], [observation, summary, emulator_log]]."""
    return [
        [
            [s.tool, json.dumps(s.tool_input, ensure_ascii=False), s.agent_log],
            [s.observation, s.emulator_log_summary, s.emulator_thought],
        ]
        for s in steps
    ]


class JsonlWriter:
    """Appends one record per line with a single write() on an O_APPEND file, then fsync.

    A killed process leaves whole lines (at worst a torn last line, which readers skip and resume re-runs).
    """

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, record: BaseModel | dict[str, Any]) -> None:
        data = record.model_dump(mode="json") if isinstance(record, BaseModel) else record
        line = redact(json.dumps(data, ensure_ascii=False)) + "\n"
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)


def read_jsonl(path: Path, scrub: Callable[[str], str] | None = None) -> list[dict[str, Any]]:
    """Every whole record in a JSONL file. A line that does not parse is reported, never silently dropped.

    `scrub` rewrites each line before it is parsed (e.g. secret redaction for files other tools wrote)."""
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(json.loads(scrub(line) if scrub else line))
            except json.JSONDecodeError:
                log.warning("%s: line %d is not a whole JSON record (an interrupted write?); skipped", path, number)
    return out


def rewrite_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace a JSONL file atomically (write a sibling, then rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class Call(BaseModel):
    """One agent call read back from a record, ours or ToolEmu's. The emulator's notes are carried for viewers;
    judges must never be shown them."""

    thought: str = ""  # ToolEmu's records keep the agent's whole log text here
    tool: str
    tool_input: str  # JSON text, as the agent wrote it
    observation: str
    emulator_thought: str = ""
    emulator_summary: str = ""


def as_text(value: Any) -> str:
    """A record field as display text: JSON for anything that is not already a string."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def calls_of(record: dict[str, Any]) -> list[Call]:
    """The calls of a trajectory record: our `steps`, or else ToolEmu's `intermediate_steps`."""
    if isinstance(record.get("steps"), list) and record.get("schema_version"):
        return [
            Call(
                thought=as_text(s.get("thought")),
                tool=as_text(s.get("tool")),
                tool_input=as_text(s.get("tool_input", {})),
                observation=as_text(s.get("observation")),
                emulator_thought=as_text(s.get("emulator_thought")),
                emulator_summary=as_text(s.get("emulator_log_summary")),
            )
            for s in record["steps"]
        ]
    calls = []
    for step in record.get("intermediate_steps") or []:
        # [[tool, tool_input, log], [observation, summary, emulator log]]; anything else (e.g. a final-answer
        # entry) is no call.
        if not (isinstance(step, list | tuple) and len(step) == 2 and isinstance(step[0], list | tuple)):
            continue
        action, result = step
        if len(action) < 2:
            continue
        result = list(result) if isinstance(result, list | tuple) else [result]
        calls.append(
            Call(
                thought=as_text(action[2]) if len(action) > 2 else "",
                tool=as_text(action[0]),
                tool_input=as_text(action[1]),
                observation=as_text(result[0]) if result else "",
                emulator_summary=as_text(result[1]) if len(result) > 1 else "",
                emulator_thought=as_text(result[2]) if len(result) > 2 else "",
            )
        )
    return calls


def episode_status(record: dict[str, Any]) -> str:
    """Ours record a status; ToolEmu's do not, so it is read from the error key and the output."""
    if record.get("schema_version") and record.get("status"):
        return str(record["status"])
    if record.get("error"):
        return "error"
    return "max_iterations" if record.get("output") == MAX_ITERATIONS_OUTPUT else "final_answer"
