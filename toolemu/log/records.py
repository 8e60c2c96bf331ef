"""The trajectory record: ToolEmu's fields (so its tooling reads them) and ours beside them.

Every stage writes these typed and reads them typed (see `toolemu.log.read`). A ToolEmu-format record is upgraded
into the same type on the way in (`toolemu.log.toolemu_format`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from toolemu.log.ledger import StateChange, accumulate
from toolemu.log.model import ModelDescription
from toolemu.log.usage import Cost, Count, Usage
from toolemu.version import SCHEMA_VERSION

# token_limit: ToolEmu stopped the agent when its context ran out; it never gave a final answer.
# closed: an outside agent's MCP session closed before it called final_answer (`toolemu mcp serve`): no answer, not
# an error. ToolEmu reads it as an agent its executor stopped (as max_iterations), so its judges score it; our report
# counts it on its own, never as answered, and it is not FINISHED (no run would take it for a done pair).
# stopped: the same, but the server stopped the session (Ctrl-C, SIGTERM, a budget, a record it could not write)
# while its agent was still at work; the record holds the steps whose results the client was sent, no more.
Status = Literal["final_answer", "quit", "max_iterations", "token_limit", "closed", "stopped", "error"]
FINISHED: tuple[Status, ...] = ("final_answer", "quit", "max_iterations", "token_limit")
MAX_ITERATIONS_OUTPUT = "Agent stopped: max iterations reached"  # LangChain's and so ToolEmu's wording
TOKEN_LIMIT_OUTPUT = "Agent stopped: token limit exceeded"  # ToolEmu's wording
CLOSED_OUTPUT = "Agent stopped: the session closed without a final answer"  # in the same words' style
STOPPED_OUTPUT = "Agent stopped: the server stopped before a final answer"
# The case keys ToolEmu's own code reads (its case_to_input_dict fails on any other); ours go to `case_extra`.
TOOLEMU_CASE_KEYS = (
    "name",
    "Toolkits",
    "User Instruction",
    "Underspecifications",
    "Expected Achievements",
    "Potential Risky Outcomes",
    "Potential Risky Actions",
)
GateAction = Literal["allow", "warn", "deny"]
GatePhase = Literal["pre_call", "post_call"]
Actor = Literal["agent", "user"]
ASK_USER = "AskUser"  # the built-in action by which an agent asks the simulated user (toolemu.user)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def as_text(value: Any) -> str:
    """A record field as display text: JSON for anything that is not already a string."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _text_list(value: Any) -> list[str]:
    """A list of strings from whatever a foreign file holds there: a list, one value, or nothing."""
    if value is None or value == "":
        return []
    return [as_text(v) for v in value] if isinstance(value, list) else [as_text(value)]


TextList = Annotated[list[str], BeforeValidator(_text_list)]


def _as_list(value: Any) -> list[Any]:
    """A list as it is; one value as a list of it (its reader judges what it holds); nothing as []."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


class UnderspecificationsView(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    task_information: TextList = Field(default_factory=list, alias="Task Information")
    safety_constraints: TextList = Field(default_factory=list, alias="Safety & Security Constraints")


class ThreatView(BaseModel):
    model_config = ConfigDict(extra="allow")

    kind: str = ""
    vector: str = ""
    description: str = ""
    targets: TextList = Field(default_factory=list)


class CaseView(BaseModel):
    """The case a trajectory carries, read leniently: files other tools wrote may miss keys or hold odd types,
    and a record must still be judged and reported (the spec loader is where cases are checked strictly)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    name: str = ""
    toolkits: TextList = Field(default_factory=list, alias="Toolkits")
    user_instruction: str = Field("", alias="User Instruction")
    underspecifications: UnderspecificationsView = Field(
        default_factory=UnderspecificationsView, alias="Underspecifications"
    )
    expected_achievements: TextList = Field(default_factory=list, alias="Expected Achievements")
    potential_risky_outcomes: TextList = Field(default_factory=list, alias="Potential Risky Outcomes")
    potential_risky_actions: TextList = Field(default_factory=list, alias="Potential Risky Actions")
    initial_state: TextList = Field(default_factory=list, alias="Initial State")
    threat: ThreatView | None = Field(default=None, alias="Threat")
    user_knowledge: TextList = Field(default_factory=list, alias="User Knowledge")
    user_persona: str = Field("", alias="User Persona")
    user_toolkits: TextList = Field(default_factory=list, alias="User Toolkits")
    policy: str = Field("", alias="Policy")
    checks: Annotated[list[Any], BeforeValidator(_as_list)] = Field(default_factory=list, alias="Checks")

    @classmethod
    def of(cls, case: Any) -> CaseView:
        if not isinstance(case, dict):
            return cls()
        data = dict(case)
        if not isinstance(data.get("Underspecifications"), dict):
            data.pop("Underspecifications", None)
        threat = data.get("Threat")
        if not (isinstance(threat, dict) and threat.get("kind")):
            data.pop("Threat", None)
        for key in ("name", "User Instruction", "User Persona", "Policy"):
            if key in data:
                data[key] = as_text(data[key])
        return cls.model_validate(data)


# A position or a trial, as a record gives it: within 64 bits (what every reader and the Parquet frames hold).
Int64 = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


class StepTokens(BaseModel):
    """A step's tokens: counts, bounded as usage is (toolemu.llm.usage)."""

    agent_prompt: Count = 0
    agent_completion: Count = 0
    emulator_prompt: Count = 0
    emulator_completion: Count = 0


class GateDecision(BaseModel):
    """What one gate said about one tool call, before it ran (pre_call) or about its output (post_call)."""

    gate: str  # the gate's name
    phase: GatePhase
    action: GateAction
    reason: str = ""  # a short, stable code, e.g. "amount_over_limit"
    message: str = ""  # for people (and, on a deny, for the agent)


class UserReview(BaseModel):
    """The honesty review of one user reply (toolemu.user.honesty): facts it stated that the user was never given.

    `unsupported` lists what the reply that stands still states without support (empty: it passed); `reasked`
    counts the times the user was asked again, and `rejected` keeps each reply that was turned down, in order."""

    unsupported: list[str] = Field(default_factory=list)
    reasked: int = 0
    rejected: list[str] = Field(default_factory=list)
    reviewer: bool = False  # a reviewer model took part (besides the deterministic check)

    @property
    def flagged(self) -> bool:
        """The first reply was flagged (it was asked again, or it stands marked)."""
        return bool(self.unsupported or self.reasked)


class UserReply(BaseModel):
    """What the simulated user answered to one AskUser question (the observation is written from it)."""

    reply: str = ""
    declined: bool = False  # the user would not answer or would not do what was asked
    ends_conversation: bool = False  # the user will answer no more questions
    thought: str = ""  # the user's private reasoning: hidden from the agent and from the judges
    actions: int = 0  # how many actions the user took on their own toolkits before replying (steps by the user)
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Absent where no review ran (records written before it, and people answering in a play mode).
    review: UserReview | None = Field(default=None, exclude_if=lambda v: v is None)


class RejectedDraft(BaseModel):
    """An observation the realism filter turned down before the agent saw it (toolemu.episode.realism_filter)."""

    observation: str
    reasons: list[str] = Field(default_factory=list)  # "<kind>: <detail>", one per problem found
    flagged_by: list[str] = Field(default_factory=list)  # "rules" (the deterministic checks), "judge"
    state: list[StateChange] = Field(default_factory=list)  # the draft's state patch, never applied
    emulator_thought: str = ""


def _input_value(value: Any) -> Any:
    """A call's input as the agent gave it: an object, or else its text (a list or a number is not arguments)."""
    if value is None:
        return {}
    return value if isinstance(value, dict | str) else as_text(value)


def arguments_of(value: Any) -> tuple[dict[str, Any] | str, str | None]:
    """A call's arguments as an object, or as the text they came as and why they could not be read: an object is
    itself; anything else is read as JSON text (as a model's native call or ToolEmu's records give them)."""
    if isinstance(value, dict):
        return value, None
    raw = as_text(value)
    try:
        parsed = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        return (
            raw,
            f"expected the arguments as a JSON object, {exc.msg if hasattr(exc, 'msg') else 'nested too deeply'}",
        )
    if isinstance(parsed, dict):
        return parsed, None
    return raw, f"expected the arguments as a JSON object, got {type(parsed).__name__}"


# Where each outside shape of a tool call keeps its name, arguments and id (ToolCall.of): ours; LangChain's tool call
# ({name, args, id}, an invalid one with `error`) and its AgentAction ({tool, tool_input, log}); MCP's tools/call
# params ({name, arguments}); Anthropic's tool_use block ({name, input, id}); OpenAI's, {id, function: {name,
# arguments}}, is unwrapped first.
_NAME_KEYS = ("tool", "name")
_ARGUMENT_KEYS = ("tool_input", "args", "arguments", "input")
_ID_KEYS = ("call_id", "id")


class ToolCall(BaseModel):
    """One tool call: what an agent proposes (`ToolCall("Tool", {...})`), what gates and the emulator see, and
    what a step records. Every outside shape of a call becomes one at the edge (`ToolCall.of`); a call whose
    arguments could not be read keeps them as text, with `parse_error` saying why."""

    tool: str
    tool_input: Annotated[dict[str, Any] | str, BeforeValidator(_input_value)] = Field(default_factory=dict)
    call_id: str = ""  # native tool calling: the call's id (the model's, or a stable one the agent made)
    parse_error: str | None = None  # why the call's arguments (or the call) could not be read; None: they were

    def __init__(self, *args: Any, **data: Any) -> None:
        """Positionally too: ToolCall(tool, tool_input, call_id)."""
        data.update(zip(("tool", "tool_input", "call_id"), args, strict=False))
        super().__init__(**data)

    @classmethod
    def of(cls, value: Any) -> ToolCall:
        """The one ToolCall of a call in any outside shape: a ToolCall; a dict as LangChain, MCP, OpenAI or
        Anthropic give a call, or as LangChain dumps its AgentAction; ToolEmu's [tool, tool_input, log] list or a
        (tool, tool_input[, call_id]) tuple; an object with those attributes (LangChain's AgentAction). Arguments
        given as text are read as JSON; what cannot be read is kept as text, with `parse_error`."""
        if isinstance(value, ToolCall):
            return value
        if isinstance(value, list | tuple):
            if len(value) < 2:
                return cls._unreadable(value)
            call_id = value[2] if isinstance(value, tuple) and len(value) > 2 else ""  # a list's third is ToolEmu's log
            return cls._made(value[0], value[1], call_id, None)
        if not isinstance(value, dict):
            keys = [key for key in (*_NAME_KEYS, *_ARGUMENT_KEYS, *_ID_KEYS) if hasattr(value, key)]
            if not keys:
                return cls._unreadable(value)
            value = {key: getattr(value, key) for key in keys}
        if isinstance(value.get("function"), dict):  # OpenAI's {id, type: function, function: {name, arguments}}
            value = {**value["function"], "id": value.get("id")}
        name = next((value[k] for k in _NAME_KEYS if k in value), None)
        if not isinstance(name, str) or not name:
            return cls._unreadable(value)
        raw = next((value[k] for k in _ARGUMENT_KEYS if k in value), None)
        call_id = next((value[k] for k in _ID_KEYS if value.get(k)), "")
        return cls._made(name, {} if raw is None else raw, call_id, value.get("error"))

    @classmethod
    def _made(cls, name: Any, raw: Any, call_id: Any, error: Any) -> ToolCall:
        arguments, problem = arguments_of(raw)
        problem = str(error) if error else problem
        return cls(tool=as_text(name), tool_input=arguments, call_id=as_text(call_id), parse_error=problem)

    @classmethod
    def _unreadable(cls, value: Any) -> ToolCall:
        shown = as_text(value if isinstance(value, str | dict | list | tuple) else repr(value))[:2000]
        return cls(tool="", tool_input=shown, parse_error="expected a tool call: a tool's name and its arguments")

    @property
    def arguments(self) -> dict[str, Any]:
        return self.tool_input if isinstance(self.tool_input, dict) else {}

    @property
    def input_text(self) -> str:
        return as_text(self.tool_input)


def raised(observation: str) -> bool:
    """ToolEmu's shape for a raised exception: a JSON object whose only key is `error`."""
    try:
        value = json.loads(observation)
    except (json.JSONDecodeError, TypeError, RecursionError):
        return False
    return isinstance(value, dict) and set(value) == {"error"}


class Step(BaseModel):
    """One agent action and the observation it got (emulated, or a gate's block notice)."""

    index: Int64
    thought: str = ""
    tool: str
    tool_input: dict[str, Any] | str = Field(default_factory=dict)  # str: a foreign record's unparsable input
    call_id: str = ""  # native tool calling: the call's id (the model's, or a stable one), to rebuild the conversation
    agent_log: str = ""  # the agent text that was kept: thought, action and input, nothing after
    discarded_text: str = ""  # what the agent wrote past its action (e.g. an invented Observation)
    reasoning: str = ""  # a reasoning model's thinking for the turn (reasoning_content / thinking blocks)
    observation: str  # JSON text; never empty
    # Why the call got no real observation: its tool (or a gate) failed, or an earlier call of its turn did. The
    # episode then ended in error; the step is kept so the agent's action is never lost.
    not_run: str = ""
    invalid_call: bool = False  # rejected by spec validation; no emulator call was made
    emulator_thought: str = ""  # hidden from the agent and from the judges
    emulator_log_summary: str = ""
    emulator_attempts: int = 0
    gates: list[GateDecision] = Field(default_factory=list)
    blocked: GatePhase | None = None  # a gate denied the call (pre_call) or withheld its output (post_call)
    agent_latency_s: float = 0.0
    emulator_latency_s: float = 0.0
    tokens: StepTokens = Field(default_factory=StepTokens)
    # With the simulated user on: who made the call (the user acts on their own toolkits), and, on an AskUser
    # step, the user's reply (the observation came from the user, not the emulator).
    actor: Actor = "agent"
    user_reply: UserReply | None = None
    # The world-state patch the emulator returned with the observation: what the call created, changed or deleted.
    state: list[StateChange] = Field(default_factory=list)
    # The observation's replay key (case, emulator configuration, salt, every earlier step and this call; see
    # toolemu.episode.replay), set where the emulator answered; `replayed`: taken from a recorded run, not emulated.
    obs_key: str = ""
    replayed: bool = False
    # Drafts of this observation the realism filter rejected (`--realism-filter N`), oldest first; absent when none.
    rejected_drafts: list[RejectedDraft] = Field(default_factory=list, exclude_if=lambda v: not v)

    @property
    def input_text(self) -> str:
        return as_text(self.tool_input)

    @property
    def call(self) -> ToolCall:
        """The step's call; a foreign record's arguments that were no JSON object are text, with `parse_error`."""
        problem = arguments_of(self.tool_input)[1] if isinstance(self.tool_input, str) else None
        return ToolCall(tool=self.tool, tool_input=self.tool_input, call_id=self.call_id, parse_error=problem)

    @property
    def by_user(self) -> bool:
        return self.actor == "user"

    @property
    def answered_by_user(self) -> bool:
        return self.user_reply is not None


class PolicyRuleView(BaseModel):
    id: str  # "<policy>.<n>"
    text: str


class PolicyView(BaseModel):
    """A domain policy as the agent was given it: its text, and its numbered rules for the policy judge."""

    model_config = ConfigDict(extra="allow")

    name: str
    text: str = ""
    rules: list[PolicyRuleView] = Field(default_factory=list)


class EpisodeError(BaseModel):
    type: str
    message: str


class ReplayStop(BaseModel):
    """Where a robust re-run stopped replaying: the first recorded action the new world rejected."""

    step: int
    observation: str = ""


class RobustTrace(BaseModel):
    """A robust re-run of a failure (toolemu.robust): the source run, the world (seed), and how much was replayed."""

    model_config = ConfigDict(extra="allow")

    source: str = ""
    seed: int = 0
    hinge: str = ""  # the step the failure hinges on, in words
    original: list[str] = Field(default_factory=list)  # why the episode failed in the source run
    planned: int = 0  # recorded actions to replay before the agent takes over
    replayed: int = 0
    stopped_at: ReplayStop | None = None


class Trajectory(BaseModel):
    """One (case, trial): what the agent did, what it saw, how it ended."""

    model_config = ConfigDict(extra="allow")  # a newer writer's fields survive a read-modify-write

    # ToolEmu's fields.
    input: str
    output: str = ""
    intermediate_steps: list[Any] = Field(default_factory=list)
    case: dict[str, Any] = Field(default_factory=dict)
    case_idx: Int64 = 0
    underspecifications: dict[str, Any] | None = None
    risky_outcome: list[str] | None = None
    risky_actions: list[str] | None = None
    # Ours.
    schema_version: str = SCHEMA_VERSION
    run_id: str = ""
    case_name: str
    trial: Int64 = 0
    status: Status
    error: EpisodeError | None = None
    steps: list[Step] = Field(default_factory=list)
    agent_type: str = ""
    agent_format: str = ""
    simulator_type: str = ""
    models: dict[str, ModelDescription] = Field(default_factory=dict)  # by role
    usage: dict[str, Usage] = Field(default_factory=dict)  # "total", then by role
    cost_usd: Cost = 0.0
    started_at: str = ""
    finished_at: str = ""
    policies: list[PolicyView] = Field(default_factory=list)  # the domain policies the agent had to follow
    ledger: dict[str, Any] = Field(default_factory=dict)  # the world state every step's patch adds up to
    emulator_id: str = ""  # the emulator's configuration id, part of each observation's replay key
    # A robust re-run of a failure (toolemu.robust): the source run, the seed, and how much was replayed fixed.
    robust: RobustTrace | None = None

    @model_validator(mode="before")
    @classmethod
    def _merge_case_extra(cls, data: Any) -> Any:
        """On disk our case keys sit beside ToolEmu's in `case_extra`; in memory `case` holds them all."""
        # A case that is not an object stays as it is, for validation to name: merging would hide it.
        if (
            isinstance(data, dict)
            and isinstance(data.get("case_extra"), dict)
            and isinstance(data.get("case", {}), dict)
        ):
            data = dict(data)
            extra = data.pop("case_extra")
            data["case"] = {**data.get("case", {}), **extra}
        return data

    @property
    def key(self) -> tuple[str, int]:
        return (self.case_name, self.trial)

    @property
    def case_view(self) -> CaseView:
        """The case, typed (and lenient: a foreign record's odd case still reads)."""
        return CaseView.of(self.case)

    @property
    def toolkits(self) -> list[str]:
        return self.case_view.toolkits

    @property
    def instruction(self) -> str:
        return self.case_view.user_instruction or self.input

    def recomputed_ledger(self) -> dict[str, Any]:
        """The ledger from the steps' patches (records written before ledgers, or a check of the recorded one)."""
        return accumulate(step.state for step in self.steps)

    def model(self, role: str) -> ModelDescription | None:
        """A role's model as recorded (None when the record does not say)."""
        return self.models.get(role)

    def model_of(self, role: str) -> str:
        """The model string a role used ('' when the record does not say)."""
        described = self.model(role)
        return described.model if described is not None else ""

    @property
    def total_usage(self) -> Usage:
        """The episode's model use, every role together (none recorded: nothing)."""
        return self.usage.get("total") or Usage()

    def to_record(self) -> dict[str, Any]:
        """The line as written: ToolEmu's fields exactly as its own code reads them, ours beside them.

        ToolEmu's evaluator refuses any record with an `error` key, so there is none when nothing failed; and its
        case reader knows only ToolEmu's case keys, so ours (Initial State, Threat, ...) go to `case_extra`, which
        reading merges back."""
        data = self.model_dump(mode="json")
        # Absent, not null, as in ToolEmu's records: `error` on success, the adversarial inputs for std_thought.
        for key in ("error", "underspecifications", "risky_outcome", "risky_actions", "robust"):
            if data[key] is None:
                del data[key]
        case = data["case"]
        extra = {k: v for k, v in case.items() if k not in TOOLEMU_CASE_KEYS}
        if extra:
            data["case"] = {k: v for k, v in case.items() if k in TOOLEMU_CASE_KEYS}
            data = _insert_after(data, "case", "case_extra", extra)
        return data


# A step the simulated user took on its own toolkits keeps ToolEmu's layout; its log says who acted.
USER_ACTION_LOG = "[An action the user took on their own device, not the agent]"


def _insert_after(data: dict[str, Any], key: str, new_key: str, value: Any) -> dict[str, Any]:
    """The dict with `new_key` placed right after `key`, so a reader sees the two together."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        out[k] = v
        if k == key:
            out[new_key] = value
    return out


def finish_entry(output: str, log: str) -> list[Any]:
    """ToolEmu's last `intermediate_steps` entry: its AgentFinish, dumped as [return_values, log], with an empty
    observation. ToolEmu's trajectory printer reads the final answer from this entry's log (after
    "Final Answer:") and reads every entry before it as a tool call with its observation."""
    return [[{"output": output}, log], ""]


def toolemu_intermediate_steps(steps: list[Step], status: str | None = None, output: str = "") -> list[Any]:
    """ToolEmu's layout: [[tool, tool_input_json, agent_log], [observation, summary, emulator_log]] per call, then,
    for an episode that finished (not one that errored), the final-answer entry ToolEmu writes last."""
    entries: list[Any] = [
        [
            [s.tool, s.input_text, USER_ACTION_LOG if s.by_user else s.agent_log],
            [s.observation, s.emulator_log_summary, s.emulator_thought],
        ]
        for s in steps
    ]
    if status in FINISHED or status in ("closed", "stopped"):
        # The agent's text is not kept for the final turn; a log that ToolEmu reads as the same final answer is.
        entries.append(finish_entry(output, f"Final Answer: {output}" if status in ("final_answer", "quit") else ""))
    return entries
