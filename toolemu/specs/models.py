"""Toolkit, tool and case models in ToolEmu's JSON format (field names exactly as ToolEmu writes them)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, field_validator

from toolemu.specs.checks import Check, unique_ids
from toolemu.specs.policy import PolicyDoc

JsonType = Literal["string", "integer", "number", "boolean", "array", "object", "null"]

RISK_CATEGORIES: tuple[str, ...] = (
    "Privacy breach",
    "Financial loss",
    "Data loss",
    "Property damage",
    "Physical harm",
    "Security compromise",
    "Reputational damage",
    "Misinformation",
    "Legal violation",
    "Resource exhaustion",
)

THREAT_KINDS: tuple[str, ...] = (
    "prompt_injection",
    "data_exfiltration",
    "rag_poisoning",
    "denial_of_wallet",
    "unsafe_output",
    "agent_note_poisoning",
)


class SpecModel(BaseModel):
    # Unknown keys are kept (and written back), never an error: files from other tools must load.
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)


class ItemType(SpecModel):
    """The type of an array's items, as JSON Schema writes it ({"type": "string"}); arrays of arrays nest."""

    type: JsonType
    items: ItemType | None = None


class ToolArgument(SpecModel):
    name: str
    type: JsonType
    description: str = ""
    required: bool = False
    items: ItemType | None = None  # ours, optional: an array's items are then type-checked like the argument

    @field_validator("items")
    @classmethod
    def _items_of_an_array(cls, items: ItemType | None, info: ValidationInfo) -> ItemType | None:
        if items is not None and info.data.get("type") != "array":
            raise ValueError("items describes an array's items: the argument's type must be array")
        return items


class ToolReturn(SpecModel):
    name: str
    type: JsonType
    description: str = ""


class ToolException(SpecModel):
    name: str
    description: str = ""


class Tool(SpecModel):
    name: str
    summary: str
    parameters: list[ToolArgument] = Field(default_factory=list)
    returns: list[ToolReturn] = Field(default_factory=list)
    exceptions: list[ToolException] = Field(default_factory=list)


class Toolkit(SpecModel):
    toolkit: str
    name_for_model: str
    name_for_human: str = ""
    description_for_model: str = ""
    description_for_human: str = ""
    category: str | None = None
    tools: list[Tool]
    risks: list[str] = Field(default_factory=list)
    # Ours: the domain policy (assets/policies/<name>.md) every agent using this toolkit must follow.
    policy: str | None = None
    _policy_doc: PolicyDoc | None = PrivateAttr(default=None)  # resolved by the loader

    @property
    def policy_doc(self) -> PolicyDoc | None:
        return self._policy_doc

    def tool_full_name(self, tool: Tool) -> str:
        """The name the agent calls, as in ToolEmu: the toolkit's model name, then the tool's."""
        return f"{self.name_for_model}{tool.name}"


class Underspecifications(SpecModel):
    task_information: list[str] = Field(default_factory=list, alias="Task Information")
    safety_constraints: list[str] = Field(default_factory=list, alias="Safety & Security Constraints")


class Threat(SpecModel):
    kind: Literal[THREAT_KINDS]  # type: ignore[valid-type]
    vector: str
    description: str
    # Values whose appearance in any tool input of the agent means the attacker got what it wanted
    # (an address, account, URL, command): the scorer matches them case-insensitively as substrings.
    targets: list[str] = Field(default_factory=list)


class Case(SpecModel):
    # ToolEmu's own cases all have a name; generated ones may not, so the loader fills one in.
    name: str
    toolkits: list[str] = Field(alias="Toolkits", min_length=1)
    user_instruction: str = Field(alias="User Instruction", min_length=1)
    underspecifications: Underspecifications = Field(default_factory=Underspecifications, alias="Underspecifications")
    expected_achievements: list[str] = Field(default_factory=list, alias="Expected Achievements")
    potential_risky_outcomes: list[str] = Field(default_factory=list, alias="Potential Risky Outcomes")
    potential_risky_actions: list[str] = Field(default_factory=list, alias="Potential Risky Actions")
    # Ours (ToolEmu ignores them): the starting world the emulator must honour, hidden from the agent.
    initial_state: list[str] = Field(default_factory=list, alias="Initial State")
    threat: Threat | None = Field(default=None, alias="Threat")
    # Ours, for the simulated user (off unless a run turns it on): what the user knows but did not say, who they
    # are, and toolkits only the user can use (their phone, their banking app), emulated on the user's request.
    user_knowledge: list[str] = Field(default_factory=list, alias="User Knowledge")
    user_persona: str | None = Field(default=None, alias="User Persona")
    user_toolkits: list[str] = Field(default_factory=list, alias="User Toolkits")
    # Ours: the domain policy (assets/policies/<name>.md) the agent must follow in this case.
    policy: str | None = Field(default=None, alias="Policy")
    # Ours: deterministic predicates over the episode's calls and ledger (toolemu.specs.checks).
    checks: list[Check] = Field(default_factory=list, alias="Checks")
    _policy_doc: PolicyDoc | None = PrivateAttr(default=None)  # resolved by the loader

    @field_validator("checks")
    @classmethod
    def _unique_check_ids(cls, checks: list[Check]) -> list[Check]:
        return unique_ids(checks)

    @property
    def policy_doc(self) -> PolicyDoc | None:
        return self._policy_doc

    def to_json(self) -> dict[str, Any]:
        # The user keys and checks are written only where a case has them, so cases without them read as before.
        data = super().to_json()
        for key in ("User Knowledge", "User Toolkits", "Checks"):
            if not data.get(key):
                data.pop(key, None)
        if self.checks:
            data["Checks"] = [check.to_json() for check in self.checks]
        return data
