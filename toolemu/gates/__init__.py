"""Gates between the agent and its tools: allow, warn or deny each call, with a reason, recorded on its step.

Kinds: a YAML rule policy (`rules`), an LLM monitor role (`monitor`), any Python gate by import path (`python`);
`toolemu.builtins` registers them.
"""

from toolemu.gates.base import UNDECIDABLE, BaseGate, CallView, Gate, blocked_observation
from toolemu.gates.registry import build_gate, gate_kinds, register_gate_kind
from toolemu.gates.rules import Policy, RuleGate, load_policy

__all__ = [
    "UNDECIDABLE",
    "BaseGate",
    "CallView",
    "Gate",
    "Policy",
    "RuleGate",
    "blocked_observation",
    "build_gate",
    "gate_kinds",
    "load_policy",
    "register_gate_kind",
]
