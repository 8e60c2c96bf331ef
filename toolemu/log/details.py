"""What the deterministic scorers keep in a Score's metadata, typed for their readers (the report, check,
submissions): the checks' verdicts (`ChecksDetails`) and the realism scorer's findings (`RealismDetails`), and which
recorded observations the realism scorer rates (`rated`). Part of the record schema, so here, beside the Score."""

from __future__ import annotations

import re
from typing import Any, Literal, Self, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolemu.log.records import Step, raised

FindingKind = Literal["placeholder", "sequential_ids", "id_reuse", "contradiction", "implausible", "mentions_emulation"]
KINDS: tuple[str, ...] = get_args(FindingKind)


class Finding(BaseModel):
    """One problem with one observation: which step, what kind, in words, and who found it."""

    step: int  # the step's index (0-based, as Step.index)
    kind: FindingKind
    detail: str
    source: Literal["rules", "judge"] = "rules"
    field: str = Field(default="", exclude_if=lambda v: not v)  # the observation's field it is about, where known

    @property
    def reason(self) -> str:
        return f"{self.kind}: {self.detail}"


class _Details(BaseModel):
    """An evaluation's metadata, typed: `of` reads a record that holds something else as none of it."""

    model_config = ConfigDict(extra="allow")

    @classmethod
    def of(cls, metadata: dict[str, Any]) -> Self:
        try:
            return cls.model_validate(metadata)
        except ValidationError:
            return cls()


class RealismDetails(_Details):
    """What a realism evaluation's metadata holds, typed for its readers (a record that holds something else reads
    as none of it)."""

    rated: int = 0
    flagged_steps: list[int] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    judge_findings: list[Finding] = Field(default_factory=list)
    judge_rulings: list[dict[str, Any]] = Field(default_factory=list)  # the judge's own words, per observation


class CheckViolation(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    description: str = ""
    evidence: list[dict[str, Any]] = Field(default_factory=list)


class ChecksDetails(_Details):
    """What a checks evaluation's metadata holds, typed for its readers (a record that holds something else reads
    as none of it)."""

    checked: int = 0
    violated: list[CheckViolation] = Field(default_factory=list)


# ToolEmu's executor answers in the emulator's place a call to a tool that does not exist, or with an input that does
# not parse or validate; its messages (toolemu/utils/tool.py there) begin so after "InvalidRequestException: ".
EXECUTOR_ERRORS = re.compile(
    r'^\s*\{\s*"error"\s*:\s*"InvalidRequestException: (?:'
    r"Invalid format: |Invalid syntax for |Missing required parameter: |Unexpected parameters: |Invalid type for "
    r"|[\s\S]*? is not a valid tool, try another one\.)"
)
EXCEPTION_TOOL = "_Exception"  # LangChain's step for an agent reply that did not parse; its observation says so


def executor_wrote(step: Step) -> bool:
    """An observation ToolEmu's executor wrote, not its emulator: LangChain's parsing-error step, or an error message
    of the executor's (it keeps the message as the step's log too, with no summary: [message, "", message])."""
    if step.tool == EXCEPTION_TOOL:
        return True
    text = step.observation
    if not text:
        return False
    return (step.emulator_thought == text and not step.emulator_log_summary and raised(text)) or bool(
        EXECUTOR_ERRORS.match(text)
    )


def rated(step: Step) -> bool:
    """An observation the emulator gave and the agent saw: not a gate's notice, a spec rejection (ours, or one
    ToolEmu's executor wrote), the user's reply, the user's own action, or a call that never ran."""
    return not (
        step.blocked or step.invalid_call or step.answered_by_user or step.by_user or step.not_run
    ) and not executor_wrote(step)
