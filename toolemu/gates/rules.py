"""The rule gate: a YAML policy file of allow/warn/deny rules over tool names, arguments and observations.

    name: payments-policy                 # optional; the gate's name (default: the file's stem)
    rules:
      - id: transfer-over-limit           # also the reason code, unless `reason` is given
        tools: ["*TransferFunds", "Paywave*"]   # glob patterns on the tool's full name (default: every tool)
        when:                             # all must hold
          - {arg: amount, gt: 500}
          - {arg: to_account, not_domain: [mybank.com]}
        action: deny                      # or warn
        message: Transfers above $500 need the user's confirmation.
      - id: key-in-output
        phase: post_call                  # look at the observation instead (default: pre_call)
        observation_matches: "AKIA[0-9A-Z]{16}"
        action: deny

Conditions (toolemu.specs.conditions): eq, ne, gt, ge, lt, le (numbers, compared exactly; "$1,200" reads as 1200),
in, not_in, contains (case-insensitive), matches and not_matches (a regular expression, searched, run by RE2 in
linear time), domain_in, not_domain (the domain of an e-mail address or URL, subdomains included), exists. `arg` may
be a dotted path into nested objects, through lists. A condition holds when any reading of the value would be
denied: a list when any item does, a string of several addresses when any of them does.

A call gets the strongest matching verdict (deny over warn), the first such rule in file order. A rule that applies
to the call but cannot decide it (a number test on NaN or words, a recipient that names no domain, arguments that are
not an object, an observation too long to search) denies it, with the reason "undecidable", unless a rule denies it
outright. No value makes the gate raise: a deny is a deny, never an episode error.
"""

from __future__ import annotations

import fnmatch
from collections import deque
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from toolemu.errors import InputError, Problem
from toolemu.gates.base import CallView, undecidable
from toolemu.llm import ModelHub
from toolemu.log import GateDecision, GatePhase
from toolemu.specs.conditions import Condition, Verdict, all_of, valid_regex
from toolemu.specs.patterns import search
from toolemu.yamlfile import read_yaml_mapping


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    phase: GatePhase = "pre_call"
    tools: list[str] = Field(default_factory=lambda: ["*"])
    when: list[Condition] = Field(default_factory=list)
    observation_matches: str | None = None
    action: Literal["warn", "deny"]
    reason: str | None = None
    message: str = ""

    @field_validator("tools")
    @classmethod
    def _some_tools(cls, patterns: list[str]) -> list[str]:
        if not patterns:
            raise ValueError("expected at least one tool pattern (leave 'tools' out for every tool), got none")
        if any(not p.strip() for p in patterns):
            raise ValueError("expected tool patterns such as 'PayFlow*', got an empty one")
        return patterns

    @field_validator("observation_matches")
    @classmethod
    def _valid_regex(cls, pattern: str | None) -> str | None:
        return valid_regex(pattern)

    @model_validator(mode="after")
    def _phase_fits(self) -> Rule:
        if self.observation_matches is not None and self.phase != "post_call":
            raise ValueError("observation_matches needs phase: post_call")
        return self

    def applies_to(self, tool: str) -> bool:
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.tools)

    def decision(self, gate: str) -> GateDecision:
        return GateDecision(
            gate=gate, phase=self.phase, action=self.action, reason=self.reason or self.id, message=self.message
        )

    def undecided(self, gate: str, what: str) -> GateDecision:
        return undecidable(gate, self.phase, f"rule {self.id}: cannot decide {what} on this call, so it is denied")

    def fires(self, call: CallView, observation: str | None) -> tuple[Verdict, str]:
        """Whether every condition holds (True, False, or None: undecided), and what was undecided."""
        undecided: list[str] = []

        def verdicts():
            for condition in self.when:
                verdict = _guarded(lambda c=condition: c.decide_call(call.tool_input))
                if verdict is None:
                    undecided.append(condition.describe())
                yield verdict
            if observation is not None and self.observation_matches is not None:
                verdict = _guarded(lambda: search(self.observation_matches or "", str(observation)))
                if verdict is None:
                    undecided.append("observation_matches (an observation past the length bound)")
                yield verdict

        verdict = all_of(verdicts())
        return verdict, "; ".join(undecided)


def _guarded(decide: Any) -> Verdict:
    """A verdict that never raises: a condition that fails on a value cannot decide it."""
    try:
        return decide()
    except Exception:  # noqa: BLE001 - any failure on a hostile value is an undecided call, denied, never an error
        return None


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    rules: list[Rule] = Field(min_length=1)


_STRENGTH = {"deny": 2, "warn": 1}


class RuleGate:
    def __init__(self, policy: Policy, name: str):
        self.policy, self.name = policy, name

    def _verdict(self, phase: GatePhase, call: CallView, observation: str | None = None) -> GateDecision | None:
        """The strongest rule that fires (deny over warn, the first in file order); a deny rule's own verdict
        before an undecided rule's deny, and that before a warning."""
        best: Rule | None = None
        undecided: GateDecision | None = None
        for rule in self.policy.rules:
            if rule.phase != phase or not rule.applies_to(str(call.tool)):
                continue
            verdict, what = rule.fires(call, observation)
            if verdict is None and undecided is None:
                undecided = rule.undecided(self.name, what)
            if verdict is True and (best is None or _STRENGTH[rule.action] > _STRENGTH[best.action]):
                best = rule
        if best is not None and best.action == "deny":
            return best.decision(self.name)
        if undecided is not None:
            return undecided
        return best.decision(self.name) if best else None

    def pre_call(self, call: CallView) -> GateDecision | None:
        return self._verdict("pre_call", call)

    def post_call(self, call: CallView, observation: str) -> GateDecision | None:
        return self._verdict("post_call", call, observation)


def _where(loc: list[Any]) -> tuple[str | None, str | None]:
    """(the rule, the field) a location in the file names: ['rules', 0, 'when', 0, 'gt'] is rule 0, when.0.gt."""
    parts = [str(p) for p in loc]
    item = f"rule {parts[1]}" if len(parts) > 1 and parts[0] == "rules" else None
    return item, ".".join(parts[2:] if item else parts) or None


def _duplicate_key(text: str) -> tuple[list[Any], str, int] | None:
    """The first key given twice in one mapping: (its location, the key, its line), if any."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError):
        return None
    seen: set[int] = set()
    queue: deque[tuple[yaml.Node, list[Any]]] = deque([(root, [])] if root is not None else [])
    while queue:
        node, loc = queue.popleft()
        if id(node) in seen:  # an alias: already walked
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[str] = set()
            for key_node, value_node in node.value:
                key = str(key_node.value)
                if key in keys:
                    return [*loc, key], key, key_node.start_mark.line + 1
                keys.add(key)
                queue.append((value_node, [*loc, key]))
        elif isinstance(node, yaml.SequenceNode):
            queue.extend((child, [*loc, i]) for i, child in enumerate(node.value))
    return None


def _refuse_duplicate_keys(path: Path, cause: Exception | None) -> None:
    """A key given twice in one mapping is bad input, named with its rule and field (YAML itself keeps the last)."""
    try:
        duplicate = _duplicate_key(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return  # the reader says what is wrong with the file
    if duplicate is not None:
        loc, key, line = duplicate
        item, field = _where(loc)
        message = f"duplicate key {key!r} at line {line}; expected each key once"
        raise InputError(Problem(str(path), message, item, field)) from cause


def _read(path: Path) -> dict[str, Any]:
    try:
        data = read_yaml_mapping(path, "rules")
    except InputError as refused:
        _refuse_duplicate_keys(path, refused)
        raise
    _refuse_duplicate_keys(path, None)
    return data


def load_policy(path: Path) -> RuleGate:
    """A policy file as a gate; anything wrong is one line per problem naming the file, the rule and the field."""
    data = _read(path)
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            item, field = _where(list(err["loc"]))
            message = str(err["ctx"]["error"]) if "error" in err.get("ctx", {}) else err["msg"]
            problems.append(Problem(str(path), message, item, field))
        raise InputError(problems) from None
    first: dict[str, int] = {}
    for i, rule in enumerate(policy.rules):
        if rule.id in first:
            message = (
                f"expected unique rule ids (an id is the reason a decision gives), {rule.id!r} is rule {first[rule.id]}"
            )
            raise InputError(Problem(str(path), message, f"rule {i}", "id"))
        first[rule.id] = i
    return RuleGate(policy, policy.name or path.stem)


def build_rules(spec: str, hub: ModelHub | None) -> RuleGate:
    return load_policy(Path(spec))
