"""run.json: what a run was asked to do (settings, selection, plan) and what it audited (gates, budget, replay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, model_validator

from toolemu import strict_json
from toolemu.errors import InputError
from toolemu.log.config import RunConfig
from toolemu.log.jsonl import write_json_atomic
from toolemu.log.usage import BudgetUse


class BenchmarkIdentity(BaseModel):
    """What a run ran: recorded in run.json as `benchmark`."""

    version: str | None = None  # None: files that no CHANGELOG version records
    hash: str
    source: str = "shipped"  # "shipped", or "files": the case and toolkit files given on the command line
    cases: dict[str, str] = Field(default_factory=dict)  # case name -> hash (with its toolkits)
    toolkits: dict[str, str] = Field(default_factory=dict)  # toolkit name -> hash
    policies: dict[str, str] | None = None  # policy name -> hash of its text, where cases are given policies
    files: dict[str, str] | None = None  # for source "files": each file given -> the hash of its items

    def label(self) -> str:
        return f"{self.version or 'unversioned'} ({self.hash[:15]})"


class Selection(BaseModel):
    """What picked the (case, trial) pairs: recorded so shards can be merged and checked for gaps."""

    model_config = ConfigDict(extra="allow")

    num_trials: int = 1
    case_names: list[str] | None = None
    start_index: int = 0
    trunc_num: int | None = None
    shuffle: bool = False
    seed: int = 0


class GateCount(BaseModel):
    gate: str
    phase: str
    action: str
    reason: str
    count: int


class GateAuditCounts(BaseModel):
    """Every gate decision of a run, counted by gate, phase, action and reason."""

    calls: int = 0
    decisions: list[GateCount] = Field(default_factory=list)


class GateAudit(BaseModel):
    configured: list[str] = Field(default_factory=list)  # the --gate specs, in order
    audit: GateAuditCounts = Field(default_factory=GateAuditCounts)


class ReplayUse(BaseModel):
    """--replay: the source run, observations reused of the calls the tool or a replay answered, and the rate."""

    source: str
    reused: int = 0
    calls: int = 0
    rate: float | None = None


class MergeSource(BaseModel):
    """One directory `toolemu merge` read."""

    dir: str
    run_id: str
    shard: tuple[int, int] | None = None
    records: int = 0
    retried: int = 0


class MergeOutcome(BaseModel):
    """What `toolemu merge` kept: pairs finished, failed, missing and recorded twice, and error records kept."""

    finished: int = 0
    failed: list[tuple[str, int]] = Field(default_factory=list)
    missing: list[tuple[str, int]] = Field(default_factory=list)
    duplicates: list[tuple[str, int]] = Field(default_factory=list)
    errors_kept: int = 0


class RunMeta(BaseModel):
    model_config = ConfigDict(extra="allow")  # fields of newer writers are kept on rewrite

    run_id: str
    config: RunConfig = Field(default_factory=RunConfig)  # on disk: its identity (what must match to resume)
    selection: Selection | None = None
    selected_cases: list[str] | None = None
    expected_pairs: list[tuple[str, int]] = Field(default_factory=list)
    models: dict[str, str] = Field(default_factory=dict)
    benchmark: BenchmarkIdentity | None = None  # version and content hashes of the cases and toolkits it ran
    gates: GateAudit | None = None  # the gates configured and the audit of their decisions
    replay: ReplayUse | None = None  # --replay: the source run, observations reused, calls, the reuse rate
    sources: list[MergeSource] | None = None  # set by `toolemu merge`
    merge: MergeOutcome | None = None
    budget: BudgetUse | None = None  # the last command's budget use

    @model_validator(mode="before")
    @classmethod
    def _settings(cls, data: Any) -> Any:
        """run.json keeps the identity in `config` and the selection apart; in memory `config` holds both."""
        if isinstance(data, dict) and isinstance(data.get("config", {}), dict):
            selection = data.get("selection") if isinstance(data.get("selection"), dict) else None
            data = {**data, "config": RunConfig.recorded(data.get("config", {}), selection)}
        return data

    @field_serializer("config")
    def _identity(self, config: RunConfig) -> dict[str, Any]:
        return config.identity()

    @property
    def shard(self) -> tuple[int, int] | None:
        return self.config.shard

    def model_of(self, role: str) -> str:
        """The model string a role used ('' when run.json does not say)."""
        return self.models.get(role) or ""


def read_meta(path: Path) -> RunMeta:
    """A run.json, typed; a file that is not one gets one clear error."""
    data = strict_json.read_file(path, keys_once=False, max_depth=None)
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
