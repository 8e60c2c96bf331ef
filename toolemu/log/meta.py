"""run.json: what a run was asked to do (settings, selection, plan) and what it audited (gates)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolemu.errors import InputError
from toolemu.log.jsonl import write_json_atomic
from toolemu.specs.version import BenchmarkIdentity


class Selection(BaseModel):
    """What picked the (case, trial) pairs: recorded so shards can be merged and checked for gaps."""

    model_config = ConfigDict(extra="allow")

    num_trials: int = 1
    case_names: list[str] | None = None
    start_index: int = 0
    trunc_num: int | None = None
    shuffle: bool = False
    seed: int = 0


class RunMeta(BaseModel):
    model_config = ConfigDict(extra="allow")  # fields of newer writers are kept on rewrite

    run_id: str
    config: dict[str, Any] = Field(default_factory=dict)  # what must match to resume: RunConfig.identity()
    selection: Selection | None = None
    selected_cases: list[str] | None = None
    expected_pairs: list[tuple[str, int]] = Field(default_factory=list)
    models: dict[str, str] = Field(default_factory=dict)
    benchmark: BenchmarkIdentity | None = None  # version and content hashes of the cases and toolkits it ran
    gates: dict[str, Any] | None = None  # the gates configured and the audit of their decisions
    replay: dict[str, Any] | None = None  # --replay: the source run, observations reused, calls, the reuse rate
    sources: list[dict[str, Any]] | None = None  # set by `toolemu merge`
    merge: dict[str, Any] | None = None
    budget: dict[str, Any] | None = None  # the last command's budget use (toolemu.llm.usage.BudgetUse)

    @property
    def shard(self) -> tuple[int, int] | None:
        shard = self.config.get("shard")
        return (int(shard[0]), int(shard[1])) if shard else None


def read_meta(path: Path) -> RunMeta:
    """A run.json, typed; a file that is not one gets one clear error."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError.single(path, "expected UTF-8 JSON text") from None
    except OSError as exc:
        raise InputError.single(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError.single(path, f"expected JSON, {exc.msg} at line {exc.lineno}") from None
    except RecursionError:
        raise InputError.single(path, "expected JSON, found nesting too deep to read") from None
    if not isinstance(data, dict):
        raise InputError.single(path, f"expected a JSON object, got {type(data).__name__}")
    try:
        return RunMeta.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or None
        raise InputError.single(path, f"expected a run file of toolemu: {err['msg']}", field=where) from None


def write_meta(path: Path, meta: RunMeta) -> None:
    write_json_atomic(path, meta.model_dump(mode="json", exclude_none=True))
