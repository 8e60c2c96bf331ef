"""A plan made into a call its tool's spec accepts, and the plausible observation of a call that went through.

A check's conditions are met by construction where they say what a value must be (eq, in, a bound, contains, a
domain), else by a value of the case that meets them (a pattern); the call is then tested against every condition,
so a plan whose call would not violate its check is no plan.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from toolemu.audit.facts import EMAIL, CallPlan, name_words
from toolemu.log import Step
from toolemu.specs.conditions import Condition
from toolemu.specs.models import Tool, ToolArgument
from toolemu.specs.schema import call_problems

MONEY = re.compile(r"\$\s?([0-9][0-9,]*(?:\.[0-9]+)?)")
AMOUNT_WORDS = {"amount", "price", "total", "sum", "cost", "value", "payment"}
NOW = "2025-04-02T10:15:00Z"


def _as_type(value: Any, param: ToolArgument) -> Any:
    if param.type == "array" and not isinstance(value, list):
        return [value]
    if param.type == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    if param.type == "string" and not isinstance(value, str):
        return json.dumps(value) if isinstance(value, dict | list) else str(value)
    return value


def _number_for(cond: Condition, integer: bool) -> float | None:
    low = cond.gt if cond.gt is not None else cond.ge
    high = cond.lt if cond.lt is not None else cond.le
    if low is not None and high is not None:
        value: float = (low + high) / 2
    elif low is not None:
        value = low * 2 if low > 0 else low + 1
    elif high is not None:
        value = high / 2 if high > 0 else high - 1
    else:
        return None
    if integer:
        value = math.floor(value) if high is not None and low is None else math.ceil(value)
        if cond.gt is not None and value <= cond.gt:
            value = math.floor(cond.gt) + 1
    return value


def _meet(cond: Condition, param: ToolArgument, base: Any, candidates: list[str]) -> tuple[bool, Any]:
    """(whether the argument is given, a value for it) that meets `cond`, or (True, None) if none is found."""
    if cond.exists is False:
        return False, None
    tried: list[Any] = []
    if cond.eq is not None:
        tried.append(cond.eq)
    if cond.in_:
        tried.append(cond.in_[0])
    number = _number_for(cond, param.type == "integer")
    if number is not None:
        tried.append(number)
    if cond.contains is not None:
        text = cond.contains
        mail = "email" in param.name.lower() and "@" not in text and "." in text
        tried += [f"billing@{text}" if mail else text, f"{base} {text}" if isinstance(base, str) and base else text]
    for domain in cond.domain_in or []:
        tried.append(f"billing@{domain}")
    if cond.not_domain:
        tried.append("billing@outside-recipient.net")
    tried += [base, *candidates]
    for value in tried:
        if value is None:
            continue
        typed = _as_type(value, param)
        if cond.holds({cond.arg: typed}):
            return True, typed
    return True, None


def _first_amount(text: str) -> float | None:
    found = MONEY.search(text)
    if found is None:
        return None
    value = float(found.group(1).replace(",", ""))
    return int(value) if value.is_integer() else value


def _recorded(name: str, steps: list[Step]) -> Any:
    for step in reversed(steps):
        if isinstance(step.tool_input, dict) and step.tool_input.get(name) is not None:
            return step.tool_input[name]
    return None


def placeholder(param: ToolArgument, steps: list[Step], values: list[str], instruction: str) -> Any:
    """A value for an argument the violation does not fix: one the episode used, a value of the case whose name
    matches, else one of the argument's type."""
    recorded = _recorded(param.name, steps)
    if recorded is not None:
        return recorded
    words = name_words(param.name)
    if param.type == "string":
        if "email" in words and "id" not in words:
            return next((v for v in values if EMAIL.fullmatch(v)), "billing@example.com")
        return next((v for v in values if name_words(v) & (words - {"id", "name"})), param.name.replace("_", " "))
    if param.type in ("integer", "number"):
        amount = _first_amount(instruction) if words & AMOUNT_WORDS else None
        return amount if amount is not None else 1
    return {"boolean": False, "array": [], "object": {}}.get(param.type)


def build_call(
    plan: CallPlan, tool: Tool, steps: list[Step], values: list[str], instruction: str
) -> tuple[dict[str, Any] | None, str]:
    """(the call's arguments, "") or (None, why the plan cannot be made into a call)."""
    params = {p.name: p for p in tool.parameters}
    args: dict[str, Any] = {}
    for name, value in plan.hints.items():
        if name in params:
            args[name] = _as_type(value, params[name])
    omitted: set[str] = set()
    for cond in plan.conditions:
        param = params.get(cond.arg)
        if param is None:
            return None, f"{plan.source}: its tool takes no argument {cond.arg!r}"
        base = args.get(cond.arg) or placeholder(param, steps, values, instruction)
        given, value = _meet(cond, param, base, values)
        if not given:
            omitted.add(cond.arg)
            args.pop(cond.arg, None)
        elif value is None:
            return None, f"{plan.source}: no value found that meets its condition on {cond.arg!r}"
        else:
            args[cond.arg] = value
    for param in tool.parameters:
        if param.required and param.name not in args and param.name not in omitted:
            args[param.name] = placeholder(param, steps, values, instruction)
    problems = call_problems(tool, args)
    if problems:
        return None, f"{plan.source}: the call would not be valid ({problems[0]})"
    if not all(cond.holds(args) for cond in plan.conditions):
        return None, f"{plan.source}: the call would not meet its conditions"
    return args, ""


def _return_value(name: str, kind: str, args: dict[str, Any], salt: str) -> Any:
    words = name_words(name)
    if name in args and kind not in ("array", "object"):
        return args[name]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        amount = next((v for k, v in args.items() if name_words(k) & AMOUNT_WORDS and isinstance(v, int | float)), 1)
        return amount if words & AMOUNT_WORDS else 1
    if kind == "string":
        if "id" in words:
            stem = "_".join(sorted(words - {"id"})) or "ref"
            return f"{stem}_{hashlib.sha256(salt.encode()).hexdigest()[:6]}"
        if "status" in words or "state" in words:
            return "completed"
        if words & {"time", "date", "at", "timestamp"}:
            return NOW
        return "done"
    return [] if kind == "array" else {}


def plausible_observation(tool: Tool, args: dict[str, Any], salt: str) -> str:
    """What the tool would return had the call gone through: each declared return filled in (ids, a completed
    status, the amount sent), or {"success": true} for a tool that declares none."""
    if not tool.returns:
        return json.dumps({"success": True})
    value = {r.name: _return_value(r.name, r.type, args, salt) for r in tool.returns}
    return json.dumps(value, ensure_ascii=False)
