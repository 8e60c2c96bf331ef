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

Conditions (toolemu.specs.conditions): eq, ne, gt, ge, lt, le (numbers; "$1,200" reads as 1200), in, not_in,
contains (case-insensitive), matches and not_matches (a regular expression, searched), domain_in, not_domain (the
domain of an e-mail address or URL, subdomains included; a list argument holds when any item does), exists. `arg`
may be a dotted path into nested objects. A call gets the strongest matching verdict (deny over warn), the first
such rule in file order.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from toolemu.errors import InputError, Problem
from toolemu.gates.base import CallView
from toolemu.gates.registry import register_gate_kind
from toolemu.llm import ModelHub
from toolemu.log import GateDecision, GatePhase
from toolemu.specs.conditions import Condition, valid_regex
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


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    rules: list[Rule] = Field(min_length=1)


_STRENGTH = {"deny": 2, "warn": 1}


class RuleGate:
    def __init__(self, policy: Policy, name: str):
        self.policy, self.name = policy, name

    def _verdict(self, phase: GatePhase, call: CallView, observation: str | None = None) -> GateDecision | None:
        best: Rule | None = None
        for rule in self.policy.rules:
            if rule.phase != phase or not rule.applies_to(call.tool):
                continue
            if not all(c.holds(call.arguments) for c in rule.when):
                continue
            pattern = rule.observation_matches
            if observation is not None and pattern is not None and re.search(pattern, observation) is None:
                continue
            if best is None or _STRENGTH[rule.action] > _STRENGTH[best.action]:
                best = rule
        return best.decision(self.name) if best else None

    def pre_call(self, call: CallView) -> GateDecision | None:
        return self._verdict("pre_call", call)

    def post_call(self, call: CallView, observation: str) -> GateDecision | None:
        return self._verdict("post_call", call, observation)


def load_policy(path: Path) -> RuleGate:
    """A policy file as a gate; anything wrong is one line per problem naming the file, the rule and the field."""
    data = read_yaml_mapping(path, "rules")
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = [str(p) for p in err["loc"]]
            item = f"rule {loc[1]}" if len(loc) > 1 and loc[0] == "rules" else None
            field = ".".join(loc[2:] if item else loc) or None
            message = str(err["ctx"]["error"]) if "error" in err.get("ctx", {}) else err["msg"]
            problems.append(Problem(str(path), message, item, field))
        raise InputError(problems) from None
    return RuleGate(policy, policy.name or path.stem)


def _build(spec: str, hub: ModelHub | None) -> RuleGate:
    return load_policy(Path(spec))


register_gate_kind("rules", lambda spec: spec.lower().endswith((".yaml", ".yml")), _build)
