"""The realism judge: a model rates emulated observations against their tool's spec, the episode before them and the
world-state ledger, one verdict per observation.

The realism scorer (toolemu.scorers.realism) rates every observation of a finished episode in one call; the realism
filter (toolemu.episode.realism_filter) rates one draft before the agent sees it (`RealismJudge.review`). Both read
the same prompt (toolemu.prompts.realism), reply schema and verdicts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolemu.llm import system, user
from toolemu.llm.usage import Usage
from toolemu.log import Step, accumulate
from toolemu.log.details import KINDS, Finding
from toolemu.prompts import length
from toolemu.prompts import realism as prompts
from toolemu.prompts.tools import describe_returns_and_exceptions, describe_tool
from toolemu.specs.models import Toolkit
from toolemu.specs.schema import text_schema

if TYPE_CHECKING:  # the model layer (LangChain) loads when a model runs, not when a report lists scorers
    from toolemu.llm.model import RoleModel

VERDICTS = ("realistic", "unrealistic")  # the first is what a scripted (dry-run) judge answers
NO_PROBLEM = "none"
MAX_THOUGHT = 1000  # caps for bounded backends only (ModelOptions.bounded_schemas)
MAX_REASON = 300
MAX_SUMMARY = 300


def step_key(index: int) -> str:
    """The key a step's verdict goes under: step-1 for the first step."""
    return f"step-{index + 1}"


def ruling_schema(*, bounded: bool) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "verdict": {"enum": list(VERDICTS)},
            "kind": {"enum": [NO_PROBLEM, *KINDS]},
            "reason": text_schema(MAX_REASON, bounded=bounded),
        },
        "required": ["verdict", "kind", "reason"],
        "additionalProperties": False,
    }


def review_schema(keys: Sequence[str], *, bounded: bool) -> dict[str, Any]:
    """One verdict per rated observation, by its key: the judge can neither skip one nor invent one."""
    ruling = ruling_schema(bounded=bounded)
    return {
        "type": "object",
        "properties": {
            "thought": text_schema(MAX_THOUGHT, bounded=bounded),
            "observations": {
                "type": "object",
                "properties": {key: ruling for key in keys},
                "required": list(keys),
                "additionalProperties": False,
            },
            "summary": text_schema(MAX_SUMMARY, bounded=bounded),
        },
        "required": ["thought", "observations", "summary"],
        "additionalProperties": False,
    }


def judge_findings(value: dict[str, Any], keys: dict[str, int]) -> list[Finding]:
    """The judge's unrealistic verdicts as findings (`keys`: verdict key -> step index)."""
    out = []
    for key, ruling in value.get("observations", {}).items():
        if key not in keys or ruling.get("verdict") != "unrealistic":
            continue
        kind = ruling.get("kind") if ruling.get("kind") in KINDS else "implausible"
        out.append(Finding(step=keys[key], kind=kind, detail=ruling.get("reason") or "unrealistic", source="judge"))
    return out


def specs_text(kits: Sequence[Toolkit], tools: Sequence[str]) -> str:
    """The full spec (arguments, returns, exceptions) of each tool named, once each, in order."""
    blocks = []
    for name in dict.fromkeys(tools):
        found = next(((k, t) for k in kits for t in k.tools if k.tool_full_name(t) == name), None)
        if found is not None:
            blocks.append(describe_tool(*found) + "\n" + describe_returns_and_exceptions(*found))
    return "\n".join(blocks)


def _entry(step: Step, rate: bool) -> str:
    if step.answered_by_user:
        label = f"Call {step.index + 1} (the agent asked the user; the user replied)"
    elif step.by_user:
        label = f"Call {step.index + 1} (by the user, on their own device)"
    elif step.blocked == "pre_call":
        label = f"Call {step.index + 1} (blocked by a guard before it ran)"
    else:
        label = f"Call {step.index + 1}"
    patch = [c.text() for c in step.state]
    return prompts.call_entry(
        label, step.tool, step.input_text, step.observation, patch, step_key(step.index) if rate else ""
    )


def review_messages(
    instruction: str,
    initial_state: Sequence[str],
    kits: Sequence[Toolkit],
    steps: Sequence[Step],
    rate: Sequence[int],
    model: RoleModel | None = None,
) -> list[Any]:
    """The judge's prompt for `steps` (in order), rating the ones whose index is in `rate`. The ledger shown is what
    the steps before the first rated one add up to; every step shows its own state patch."""
    rated = set(rate)
    first = min(rated, default=len(steps))
    before = [s for s in steps if s.index < first]
    facts = [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in accumulate(s.state for s in before).items()]
    facts += [f"(the starting world) {fact}" for fact in initial_state]
    body = prompts.task_prompt(
        instruction,
        specs_text(kits, [s.tool for s in steps if s.index in rated]),
        prompts.ledger_block(facts),
        [_entry(s, s.index in rated) for s in steps],
    )
    room = length.room(model.options.bounded_schemas, model.reply_token_ceiling) if model is not None else ""
    return [system(prompts.system_prompt(room)), user(body)]


def prompt_template() -> dict[str, Any]:
    """The prompt with placeholders: the judge's prompt part of its identity."""
    probe = Step(index=0, tool="{tool}", tool_input={"in": "{input}"}, observation="{output}")
    return {
        "messages": review_messages("{instruction}", ["{fact}"], [], [probe], [0]),
        "schema": review_schema([step_key(0)], bounded=False),
    }


class RealismJudge:
    """A model that rates one draft observation before the agent sees it (the realism filter's judge)."""

    def __init__(self, model: RoleModel):
        self.model = model

    def review(
        self,
        instruction: str,
        initial_state: Sequence[str],
        kits: Sequence[Toolkit],
        history: Sequence[Step],
        draft: Step,
        cache_salt: str = "",
    ) -> tuple[list[Finding], Usage]:
        """The judge's findings on `draft` (a step not yet recorded, after `history`) and the call's model use. A
        failed call raises (the episode then ends in error with the reason, as an emulator failure does)."""
        key = step_key(draft.index)
        messages = review_messages(instruction, initial_state, kits, [*history, draft], [draft.index], self.model)
        schema = review_schema([key], bounded=self.model.options.bounded_schemas)
        reply = self.model.complete(messages, schema=schema, cache_salt=cache_salt)
        return judge_findings(reply.value, {key: draft.index}), reply.usage or Usage()
