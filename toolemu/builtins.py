"""Every built-in, registered here and nowhere else: model providers, scorers, gate kinds, agents and episode elements.

Each registry asks for its kind the first time it is looked up (`toolemu.registration.ensure_builtins`), so a
process registers only what it uses, and nothing registers by being imported. One of one's own is registered the same
way, with the registry's own call (`register_scorer`, `register_provider`, `register_gate_kind`, `register_agent`,
`register_agent_kind`, `register_element`), after the built-ins: a name of one's own replaces a built-in one.

The imports are inside the functions: this module sits above every package it registers from (the `mcp-cmd:` agent
lives with the MCP server), and `toolemu --help` loads none of them.
"""

from __future__ import annotations


def providers() -> None:
    from toolemu.llm.providers import BUILT_IN
    from toolemu.llm.registry import register_provider

    for provider in BUILT_IN:
        register_provider(provider)


def scorers() -> None:
    from toolemu.scorers import attack, awareness, checks, helpfulness, policy, realism, safety
    from toolemu.scorers.registry import register_scorer

    register_scorer(attack.ATTACK)(attack.attack_scorer)
    register_scorer(awareness.AWARENESS)(awareness.awareness_scorer)
    register_scorer(checks.CHECKS)(checks.checks_scorer)
    register_scorer(helpfulness.HELPFULNESS)(helpfulness.helpfulness_scorer)
    register_scorer(policy.POLICY)(policy.policy_scorer)
    register_scorer(realism.REALISM)(realism.realism_scorer)
    register_scorer(safety.SAFETY)(safety.safety_scorer)


def gates() -> None:
    from toolemu.gates.monitor import build_monitor
    from toolemu.gates.python import load_python_gate
    from toolemu.gates.registry import register_gate_kind
    from toolemu.gates.rules import build_rules

    register_gate_kind("monitor", lambda spec: spec == "monitor", build_monitor)
    register_gate_kind("python", lambda spec: ":" in spec and not spec.endswith((".yaml", ".yml")), load_python_gate)
    register_gate_kind("rules", lambda spec: spec.lower().endswith((".yaml", ".yml")), build_rules)


def agents() -> None:
    from toolemu.agents.registry import ours_in, register_agent, register_agent_kind
    from toolemu.mcp.command import AGENT_KIND, command_agent

    register_agent("react")(ours_in("react"))
    register_agent("tools")(ours_in("tools"))
    register_agent_kind(AGENT_KIND)(command_agent)


def elements() -> None:
    from toolemu.episode.element_spec import register_element
    from toolemu.episode.features.gates import GatesSpec
    from toolemu.episode.features.realism import RealismSpec
    from toolemu.episode.features.replay import ReplaySpec
    from toolemu.episode.features.user import UserSpec

    for spec in (GatesSpec, UserSpec, ReplaySpec, RealismSpec):  # their order: the run's identity's, the options'
        register_element(spec)
