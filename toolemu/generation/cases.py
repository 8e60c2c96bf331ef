"""Steps 3 and 4: test cases for given toolkits, and completion of a partial case."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any, Literal, get_args

from pydantic import ValidationError

from toolemu.errors import InputError, one_of
from toolemu.generation import prompts
from toolemu.generation.call import ask
from toolemu.generation.schemas import Schema, array, enum, text
from toolemu.generation.text import clean, clean_list, has_letters, snake
from toolemu.llm import ModelHub
from toolemu.llm.structured import StructuredOutputError
from toolemu.specs import RISK_CATEGORIES, THREAT_KINDS, Case, Toolkit
from toolemu.specs.lint import risk_category
from toolemu.specs.schema import closed_object as obj  # every key required, in order

log = logging.getLogger("toolemu.generation")

Mode = Literal["standard", "redteam"]
MODES: tuple[str, ...] = get_args(Mode)
AUTO_THREAT = "auto"  # let the model pick the kind
REPEAT_ATTEMPTS = 3  # calls per case while its instruction repeats an earlier one

# ToolEmu keys a partial case may give, and the reply keys that fill them.
REPLY_KEYS: dict[str, tuple[str, ...]] = {
    "User Instruction": ("user_instruction",),
    "Underspecifications": ("task_information_gaps", "safety_gaps"),
    "Expected Achievements": ("expected_achievements",),
    "Potential Risky Outcomes": ("risky_outcomes",),
    "Potential Risky Actions": ("risky_actions",),
    "Threat": ("threat",),
    "Initial State": ("initial_state",),
}


def _tool_names(toolkits: list[Toolkit]) -> list[str]:
    return [kit.tool_full_name(t) for kit in toolkits for t in kit.tools]


def case_schema(
    toolkits: list[Toolkit], mode: Mode = "standard", threat: str | None = None, given: Iterable[str] = ()
) -> Schema:
    """The reply for one case; keys the user already gave (ToolEmu names in `given`) are left out."""
    skip = {k for g in given for k in REPLY_KEYS.get(g, ())}
    props: dict[str, Schema] = {
        "user_instruction": text(300, 12),
        "task_information_gaps": array(text(150, 8), 0, 2),
        # Red-team cases are underspecified on purpose: at least one unsaid safety limit.
        "safety_gaps": array(text(150, 8), 1 if mode == "redteam" else 0, 2),
        "expected_achievements": array(text(150, 8), 1, 3),
        "risky_outcomes": array(obj({"category": enum(RISK_CATEGORIES), "outcome": text(150, 8)}), 1, 2),
        "risky_actions": array(text(150, 8), 1, 3),
    }
    if threat is not None:
        kinds = THREAT_KINDS if threat == AUTO_THREAT else (threat,)
        # The vector is picked from the real tool names, so it always resolves.
        vector = enum(_tool_names(toolkits))
        props["threat"] = obj({"kind": enum(kinds), "vector": vector, "description": text(200, 8)})
        props["initial_state"] = array(text(250, 8), 1, 3)
    return obj({k: v for k, v in props.items() if k not in skip})


def _outcome(raw: dict[str, str]) -> str:
    """'<Category>: ...' as lint wants; a category the model also wrote into the text is not doubled."""
    body = clean(raw["outcome"])
    if risk_category(body) is not None:
        body = clean(body.partition(":")[2])
    return f"{raw['category']}: {body}" if body else ""


def build_case(name: str, toolkits: list[str], reply: dict[str, Any], given: dict[str, Any]) -> Case:
    """A Case from a schema-valid reply plus what the user gave (the user's fields win)."""
    data: dict[str, Any] = {"name": name, "Toolkits": toolkits}
    if "user_instruction" in reply:
        data["User Instruction"] = clean(reply["user_instruction"])
    if "safety_gaps" in reply:
        data["Underspecifications"] = {
            "Task Information": clean_list(reply["task_information_gaps"]),
            "Safety & Security Constraints": clean_list(reply["safety_gaps"]),
        }
    for key, reply_key in (
        ("Expected Achievements", "expected_achievements"),
        ("Potential Risky Actions", "risky_actions"),
        ("Initial State", "initial_state"),
    ):
        if reply_key in reply:
            data[key] = clean_list(reply[reply_key])
    if "risky_outcomes" in reply:
        data["Potential Risky Outcomes"] = clean_list(_outcome(o) for o in reply["risky_outcomes"])
    if "threat" in reply:
        t = reply["threat"]
        data["Threat"] = {"kind": t["kind"], "vector": t["vector"], "description": clean(t["description"])}
    data.update(given)
    if not has_letters(str(data.get("User Instruction", ""))):
        raise StructuredOutputError(
            f"generator: the reply's user instruction has no words: {data.get('User Instruction')!r}"
        )
    return Case.model_validate(data)


def _some(names: list[str], limit: int = 8) -> str:
    if not names:
        return "none"
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def select_toolkits(names: list[str], known: dict[str, Toolkit]) -> list[Toolkit]:
    if not names:
        raise InputError.single("command line", "expected at least one toolkit name", field="--toolkit")
    missing = [n for n in names if n not in known]
    if missing:
        raise InputError.single(
            "command line",
            f"expected the name of a loaded toolkit, got '{missing[0]}' (loaded: {_some(sorted(known))})",
            field="--toolkit",
        )
    return [known[n] for n in dict.fromkeys(names)]


def check_options(mode: str, threat: str | None) -> None:
    one_of(mode, MODES, "--mode")
    if threat is not None and threat not in (AUTO_THREAT, *THREAT_KINDS):
        raise InputError.single(
            "command line",
            f"expected {AUTO_THREAT} or one of {', '.join(THREAT_KINDS)}, got '{threat}'",
            field="--threat",
        )


def case_name(toolkits: list[str], mode: str, taken: set[str]) -> str:
    """'<toolkit>_<mode>_NN', the first number not taken (names are unique across a benchmark)."""
    stem = f"{snake(toolkits[0], 'case')}_{mode}"
    n = 1
    while f"{stem}_{n:02d}".lower() in taken:
        n += 1
    taken.add(f"{stem}_{n:02d}".lower())
    return f"{stem}_{n:02d}"


def _mode_text(mode: Mode, threat: str | None) -> tuple[str, str]:
    threat_text = ""
    if threat is not None:
        kind = "an attack of one of these kinds" if threat == AUTO_THREAT else threat
        meaning = prompts.THREAT_MEANINGS.get(threat, "; ".join(prompts.THREAT_MEANINGS.values()))
        threat_text = prompts.THREAT.format(kind=kind, meaning=meaning)
    return prompts.MODES[mode], threat_text


def generate_cases(
    hub: ModelHub,
    toolkits: list[Toolkit],
    count: int = 2,
    mode: Mode = "standard",
    threat: str | None = None,
    taken_names: Iterable[str] = (),
    taken_instructions: Iterable[str] = (),
) -> list[Case]:
    """`count` cases that use all of `toolkits`, one call each; each call centres on a different tool."""
    check_options(mode, threat)
    if count < 1:
        raise InputError.single("command line", "expected at least 1 case", field="--count")
    names = [k.toolkit for k in toolkits]
    taken = {n.lower() for n in taken_names}
    earlier = [clean(i) for i in taken_instructions]
    seen = {" ".join(i.lower().split()) for i in earlier}
    tools = _tool_names(toolkits)
    schema = case_schema(toolkits, mode, threat)
    mode_text, threat_text = _mode_text(mode, threat)
    cases: list[Case] = []
    for i in range(count):
        # Naming the latest instructions steers a capable model away from repeats (and from a cached
        # reply); a small one may copy them instead, so retries drop the list and centre on other tools.
        avoid = [*earlier, *(c.user_instruction for c in cases)][-5:]
        for attempt in range(REPEAT_ATTEMPTS):
            prompt = prompts.CASE.format(
                toolkits=prompts.describe_toolkits(toolkits),
                focus=tools[(i + attempt) % len(tools)],
                mode=mode_text,
                threat=threat_text,
                avoid=f"\nWrite a different instruction from these: {' | '.join(avoid)}"
                if avoid and not attempt
                else "",
            )
            reply = ask(hub, prompt, schema, f"case{i}.{attempt}")
            case = build_case(case_name(names, mode, set(taken)), names, reply, {})
            key = " ".join(case.user_instruction.lower().split())
            if key not in seen:
                seen.add(key)
                taken.add(case.name.lower())
                cases.append(case)
                break
            # Lint forbids two cases with one instruction.
            log.warning("the instruction repeats an earlier one, asking again: %s", case.user_instruction[:60])
        else:
            log.warning("dropped case %d of %d: every attempt repeated an earlier instruction", i + 1, count)
    if not cases:
        raise StructuredOutputError("generator: every generated case repeated an existing instruction")
    return cases


def _check_partial(partial: dict[str, Any]) -> None:
    """The fields the user gave must already be valid: the model fills gaps, it does not repair input."""
    try:
        Case.model_validate({"name": "partial", **partial})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or None
        raise InputError.single("partial case", f"{err['msg']}", field=where) from None


def complete_case(
    hub: ModelHub,
    partial: dict[str, Any],
    known: dict[str, Toolkit],
    mode: Mode = "standard",
    threat: str | None = None,
    taken_names: Iterable[str] = (),
) -> Case:
    """Fill in a case from its 'User Instruction' and 'Toolkits' (other given keys are kept as they are)."""
    check_options(mode, threat)
    instruction = clean(str(partial.get("User Instruction") or ""))
    if not instruction:
        raise InputError.single("partial case", "expected a non-empty instruction", field="User Instruction")
    toolkits = select_toolkits(list(partial.get("Toolkits") or []), known)
    _check_partial(partial)
    if "Threat" in partial and threat is None:
        threat = AUTO_THREAT  # a given threat needs its initial state filled in to match
    given = {k: v for k, v in partial.items() if k not in ("name", "Toolkits")}
    given["User Instruction"] = instruction
    shown = {k: v for k, v in given.items() if k != "User Instruction"}
    mode_text, threat_text = _mode_text(mode, threat)
    prompt = prompts.COMPLETE.format(
        toolkits=prompts.describe_toolkits(toolkits),
        instruction=instruction,
        given=f"Already given: {json.dumps(shown, ensure_ascii=False)}\n" if shown else "",
        mode=mode_text,
        threat=threat_text,
    )
    names = [k.toolkit for k in toolkits]
    reply = ask(hub, prompt, case_schema(toolkits, mode, threat, given))
    name = str(partial.get("name") or case_name(names, mode, {n.lower() for n in taken_names}))
    return build_case(name, names, reply, given)
