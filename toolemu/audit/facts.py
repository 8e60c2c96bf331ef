"""What a case holds that a mutant can carry: its values, its secrets, the confirmation it requires, and the calls
its checks forbid or its risky actions name (each a `CallPlan`).

Everything here is read from the case the trajectory recorded, by rules: the same case gives the same facts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from toolemu.log import CaseView
from toolemu.specs.checks import Check
from toolemu.specs.conditions import Condition
from toolemu.specs.models import Tool

QUOTED = re.compile(r"(?<![\w])'([^'\n]{1,300}?)'(?![\w])|\"([^\"\n]{1,300}?)\"")
EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
ID_TOKEN = re.compile(r"\b[A-Za-z][A-Za-z0-9]*[_-][A-Za-z0-9_-]*[A-Za-z0-9]\b")
SECRETS = (
    re.compile(r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|SECRET|TOKEN|API_KEY|PASSWD|PWD)[A-Z0-9_]*\s*[=:]\s*[^\s'\",;)]+"),
    re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9.]{6,}"),
    re.compile(r"\bAKIA[0-9A-Z]{12,}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{10,}\b"),
    re.compile(r"\bxox[abpr]-[A-Za-z0-9-]{8,}\b"),
    re.compile(r"\b\d{3}-\d{2}-\d{4}\b"),
    re.compile(r"\b(?:\d{4}[ -]){3}\d{4}\b"),
    re.compile(
        r"(?i)\b(?:password|passcode|passphrase|pin|one-time code|verification code|recovery code|security code|cvv)"
        r"\s+(?:is|was|:|=)\s*'[^'\n]{3,80}'"
    ),
)
CONFIRMATION = re.compile(
    r"(?i)\b(?:confirm\w*|ask(?:s|ing)? (?:the user|them|first|before|which|whether)|without (?:asking|checking|"
    r"confirm\w*|verif\w*|approval)|verif(?:y|ication) with|approval)\b"
)
UNASKED = re.compile(r"(?i)\bwithout (?:asking|checking|confirm\w*|verif\w*|approval)|\bbefore (?:asking|confirming)")
WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class Fact:
    where: str  # "Initial State[2]"
    text: str


@dataclass
class CallPlan:
    """A call that would carry a violation: its tool, the arguments the violation fixes, and where it comes from."""

    tool: str  # the full tool name
    hints: dict[str, Any]
    source: str  # "Checks[no-new-portal-payee]", "Potential Risky Actions[0]"
    text: str  # the violation in words
    check: Check | None = None
    conditions: list[Condition] = field(default_factory=list)


def case_texts(case: CaseView) -> list[Fact]:
    """The case's texts a value may come from, each with where it is."""
    under = case.underspecifications
    parts: list[tuple[str, list[str]]] = [
        ("User Instruction", [case.user_instruction]),
        ("Initial State", case.initial_state),
        ("User Knowledge", case.user_knowledge),
        ("Potential Risky Actions", case.potential_risky_actions),
        ("Potential Risky Outcomes", case.potential_risky_outcomes),
        ("Expected Achievements", case.expected_achievements),
        ("Underspecifications.Task Information", under.task_information),
        ("Underspecifications.Safety & Security Constraints", under.safety_constraints),
    ]
    if case.threat is not None:
        parts.append(("Threat.description", [case.threat.description]))
    return [Fact(f"{name}[{i}]" if len(texts) > 1 or name != "User Instruction" else name, text)
            for name, texts in parts for i, text in enumerate(texts) if text]  # fmt: skip


def quoted(text: str) -> list[str]:
    return [a or b for a, b in QUOTED.findall(text) if (a or b).strip()]


def values_in(texts: list[str]) -> list[str]:
    """Quoted values, e-mail addresses and ids (pay_778, chk-main) in the texts, in order, each once."""
    found: dict[str, None] = {}
    for text in texts:
        for value in [*quoted(text), *EMAIL.findall(text), *ID_TOKEN.findall(text)]:
            found.setdefault(value.strip(), None)
    return list(found)


def secrets_in(case: CaseView) -> list[Fact]:
    """Credentials and personal numbers the case holds (a password, an API key, a card number, a passcode)."""
    seen: dict[str, Fact] = {}
    for fact in case_texts(case):
        for pattern in SECRETS:
            for match in pattern.finditer(fact.text):
                seen.setdefault(match.group(0), Fact(fact.where, match.group(0)))
    return list(seen.values())


def confirmation_required(case: CaseView, checks: list[Check]) -> Fact | None:
    """Where the case asks the agent to confirm (or faults it for not asking) before acting; None if nowhere."""
    under = case.underspecifications
    texts = [
        *(Fact(f"Expected Achievements[{i}]", t) for i, t in enumerate(case.expected_achievements)),
        *(
            Fact(f"Underspecifications.Safety & Security Constraints[{i}]", t)
            for i, t in enumerate(under.safety_constraints)
        ),  # fmt: skip
        *(Fact(f"Potential Risky Actions[{i}]", t) for i, t in enumerate(case.potential_risky_actions)),
        *(Fact(f"Checks[{c.id}]", c.description) for c in checks),
    ]
    return next((f for f in texts if CONFIRMATION.search(f.text)), None)


def name_words(name: str) -> set[str]:
    """The words of a name: payee_id -> {payee, id}; fromAccountId -> {from, account, id}."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return {w.lower() for w in WORD.findall(spaced)}


def tool_in_text(text: str, tools: dict[str, Tool]) -> str | None:
    """The tool a text names: by its full name, else by its own name as a word (TransferFunds); the longest wins."""
    named = [full for full in tools if full in text]
    named += [full for full, tool in tools.items() if re.search(rf"\b{re.escape(tool.name)}\b", text)]
    return max(named, key=len) if named else None


def check_plans(checks: list[Check], tools: dict[str, Tool]) -> list[CallPlan]:
    """A plan per check that forbids a call of one of the case's tools (a glob that names one tool exactly), with
    conditions on top-level arguments."""
    plans = []
    for check in checks:
        name = check.forbid.tool
        if name is None or name not in tools or any("." in c.arg for c in check.forbid.where):
            continue
        plans.append(CallPlan(name, {}, f"Checks[{check.id}]", check.description, check, list(check.forbid.where)))
    return plans


def action_plans(case: CaseView, tools: dict[str, Tool]) -> list[CallPlan]:
    """A plan per listed risky action that names a tool: the values it quotes go to the arguments whose names
    precede them in the text ("to payee 'pay_778'" -> payee_id), the rest to the tool's other text arguments."""
    plans = []
    for i, text in enumerate(case.potential_risky_actions):
        name = tool_in_text(text, tools)
        if name is None:
            continue
        plans.append(CallPlan(name, quoted_hints(text, tools[name]), f"Potential Risky Actions[{i}]", text))
    return plans


def quoted_hints(text: str, tool: Tool) -> dict[str, Any]:
    """Quoted values to the text arguments whose names are next to them (in the three words before, else the word
    right after: "payee 'pay_778'", "'editor' access"); the others to the arguments left, required ones first."""
    strings = [p for p in tool.parameters if p.type == "string"]
    hints: dict[str, Any] = {}
    leftover = []
    for match in QUOTED.finditer(text):
        value = match.group(1) or match.group(2)
        before = {w.lower() for w in WORD.findall(text[max(0, match.start() - 40) : match.start()])[-3:]}
        after = {w.lower() for w in WORD.findall(text[match.end() : match.end() + 30])[:1]}
        free = [p for p in strings if p.name not in hints]
        param = next((p for p in free if name_words(p.name) & before - {"id", "the"}), None)
        param = param or next((p for p in free if name_words(p.name) & after - {"id", "the"}), None)
        if param is not None:
            hints[param.name] = value
        else:
            leftover.append(value)
    free = [p for p in sorted(strings, key=lambda p: not p.required) if p.name not in hints]
    for param, value in zip(free, leftover, strict=False):
        hints[param.name] = value
    return hints
