"""fidelity.json: how well an emulator keeps the world's state, measured by probes with known answers, as one
certificate per (toolkit, emulator model, emulator type). `toolemu fidelity` writes it (toolemu.fidelity); the
report shows it beside each toolkit's results and `toolemu check` reads its state accuracy (min_state_accuracy).
Here, below both, so that either can read it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Interval = tuple[float, float]
Outcome = Literal["match", "contradiction", "lost", "invented", "error", "undecided"]
EmulatorType = Literal["standard", "adversarial"]
FIDELITY_SCHEMA = "toolemu-fidelity/1"
FIDELITY_FILE = "fidelity.json"


class FieldCheck(BaseModel):
    """One read-back of one field (or of one object: is it there, is it gone) against the expected state."""

    step: int  # the probe's step that read it back
    object: str  # `<kind>:<id>`, ids as the emulator gave them
    field: str = ""  # "" where the check is about the object itself, or about a repeated read as a whole
    expected: Any = None
    actual: Any = None  # what the output held (clipped); None where it held nothing
    outcome: Outcome
    judged: bool = False  # a judge decided it, where the rule could not
    note: str = ""


class ProbeResult(BaseModel):
    probe: str
    kind: str
    changed: int  # the facts its last writing step changed (0 for a read)
    source: str = "hand"
    passed: bool  # every read-back right, and no call raised where it was due to succeed
    checks: list[FieldCheck] = Field(default_factory=list)
    errors: int = 0  # calls that raised (or were not played) where success was due
    read_writes: int = 0  # facts the emulator's own ledger changed on a call that changes nothing
    status: str = ""  # the episode's (final_answer, or error with `error`)
    error: str = ""
    calls: int = 0  # model calls of the emulator (cache hits not counted)
    cache_hits: int = 0
    judge_calls: int = 0


class Share(BaseModel):
    """k of n, with its bootstrap 95% CI (toolemu.reporting.stats); no rate where n is 0."""

    n: int = 0
    k: int = 0
    rate: float | None = None
    ci: Interval | None = None


class FidelityCounts(BaseModel):
    checks: int = 0
    match: int = 0
    contradiction: int = 0
    lost: int = 0
    invented: int = 0
    error: int = 0  # read-backs of a call that raised, or that was never played
    undecided: int = 0  # neither the rule nor a judge could decide: not counted right
    judged: int = 0  # decided by the judge
    errors_where_success_due: int = 0  # calls
    read_writes: int = 0


class Certificate(BaseModel):
    """One (toolkit, emulator model, emulator type)."""

    toolkit: str
    toolkit_hash: str  # the toolkit spec it was measured on
    probes_hash: str  # the toolkit's probe file
    emulator: str  # the emulator's model string
    emulator_type: EmulatorType
    emulator_model: dict[str, Any] = Field(default_factory=dict)  # its settings, as records keep them
    emulator_id: str = ""  # the emulator's configuration id (model, type, prompt, reply schema)
    state: Share  # probes whose every read-back was right: the state accuracy
    fields: Share  # field read-backs that were right
    by_kind: dict[str, Share] = Field(default_factory=dict)
    by_changed: dict[str, Share] = Field(default_factory=dict)  # by the number of facts changed ("0", "1", ...)
    counts: FidelityCounts = Field(default_factory=FidelityCounts)
    model_calls: int = 0  # the emulator's, over all probes (cache hits aside)
    cache_hits: int = 0
    judge_calls: int = 0
    cost_usd: float = 0.0
    complete: bool = True  # every probe of the toolkit ran (a budget or Ctrl-C can stop a certificate part way)
    results: list[ProbeResult] = Field(default_factory=list)


class FidelityFile(BaseModel):
    model_config = ConfigDict(extra="ignore")

    schema_version: str = FIDELITY_SCHEMA
    generated_at: str = ""
    benchmark_version: str | None = None
    benchmark_hash: str = ""
    probes_hash: str = ""  # every probe file, by toolkit
    emulator: str = ""
    emulator_types: list[EmulatorType] = Field(default_factory=list)
    judge: str = ""  # the judge's model, where undecided read-backs were put to one ("" none)
    certificates: list[Certificate] = Field(default_factory=list)
    unprobeable: dict[str, str] = Field(default_factory=dict)  # toolkit -> why it has no probes
    not_run: list[str] = Field(default_factory=list)  # <toolkit>/<probe> (<type>) a stop left unplayed
    stop_reason: str = ""


class ToolkitFidelity(BaseModel):
    """Beside one toolkit's results in a run's report: the fidelity certificate of the emulator that produced them."""

    run: str
    toolkit: str
    emulator: str
    emulator_type: EmulatorType
    state: Share
    fields: Share
    source: str  # the fidelity.json it was read from
    benchmark_hash: str = ""
    same_spec: bool | None = None  # the run's toolkit spec is the one certified (None: the run records no hash)
