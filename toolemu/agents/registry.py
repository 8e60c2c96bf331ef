"""The agent registry: a name (or an import path, or `<kind>:<argument>`) -> a factory of agents, as scorers, model
providers and gates have theirs.

    @register_agent("careful")
    def careful(setup: AgentSetup) -> AgentLike: ...

`--agent careful` (or `toolemu.run(agent="careful")`) then runs it. An agent is anything with `format` and
`next_turn(...)` (`AgentLike`). A factory gets one `AgentSetup`: the agent role's model, our agent type and format,
the domain policy text it must follow, and the hub for any other role. Built in: `react` and `tools` (ours, as
ReAct text or with native tool calls); no `--agent` at all is ours in `--agent-format`. `package.module:attr`
names a factory, a class (called with the setup) or a ready agent by import path. A kind of agent that takes an
argument registers with `register_agent_kind` (`mcp-cmd:<command>`). The built-ins are registered in
`toolemu.builtins`, on the first lookup, so `mcp-cmd:` works wherever an agent is named (`toolemu robust` too).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolemu.agents.agent import Agent, AgentLike
from toolemu.errors import InputError
from toolemu.registration import ensure_builtins, import_target

if TYPE_CHECKING:
    from toolemu.llm import ModelHub, RoleModel


@dataclass(frozen=True)
class AgentSetup:
    """What an agent factory is given for one episode."""

    model: RoleModel  # the agent role's model
    agent_type: str = "naive"  # ours: naive, ss_only, helpful_ss, quit
    agent_format: str = "auto"  # ours: react, tools, auto
    policy: str = ""  # the domain policy block the agent must follow ("" for cases without one)
    hub: ModelHub | None = None  # every other role's model, for an agent that needs more than its own


AgentFactory = Callable[[AgentSetup], AgentLike]
AgentKind = Callable[[str], AgentFactory]  # the argument after `<kind>:` -> a factory
_AGENTS: dict[str, AgentFactory] = {}
_KINDS: dict[str, AgentKind] = {}


def register_agent(name: str) -> Callable[[AgentFactory], AgentFactory]:
    ensure_builtins("agents")  # the built-ins first, so one's own of the same name replaces it

    def add(factory: AgentFactory) -> AgentFactory:
        _AGENTS[name] = factory
        return factory

    return add


def register_agent_kind(prefix: str) -> Callable[[AgentKind], AgentKind]:
    """A kind of agent named with an argument: `--agent <prefix>:<argument>`."""
    ensure_builtins("agents")

    def add(kind: AgentKind) -> AgentKind:
        _KINDS[prefix] = kind
        return kind

    return add


def agent_names() -> list[str]:
    ensure_builtins("agents")
    return [*_AGENTS, *(f"{prefix}:..." for prefix in _KINDS)]


def ours_in(agent_format: str) -> AgentFactory:
    """Ours in one format, whatever --agent-format says: `react`, ToolEmu's scratchpad (its results stay comparable),
    or `tools`, native tool calls where the provider has them (a JSON reply naming the tool where not)."""
    return lambda setup: Agent(setup.model, setup.agent_type, agent_format, setup.policy)


def default_agent(setup: AgentSetup) -> AgentLike:
    """Ours, in the format --agent-format names (auto: what the provider does best)."""
    return Agent(setup.model, setup.agent_type, setup.agent_format, setup.policy)


def get_agent(spec: str | AgentFactory | AgentLike | None) -> AgentFactory:
    """A factory from `--agent`: None (ours), a registered name, `<kind>:<argument>`, an import path, or, from
    Python, a factory or an agent object itself. A name that resolves to nothing is bad input."""
    if spec is None or spec == "":
        return default_agent
    if not isinstance(spec, str):
        return _factory_of(spec, repr(spec))
    ensure_builtins("agents")
    if spec in _AGENTS:
        return _AGENTS[spec]
    prefix, sep, argument = spec.partition(":")
    if sep and prefix in _KINDS:
        return _KINDS[prefix](argument)
    if not sep:
        known = ", ".join(agent_names())
        raise InputError.single(
            "command line", f"expected an agent: {known}, or package.module:factory, got {spec!r}", field="--agent"
        )
    return _factory_of(import_target(spec, "agent", "--agent"), spec)


def _factory_of(target: object, name: str) -> AgentFactory:
    """An agent object is used as it is (for every episode: it must keep no state between them); a class or any
    other callable is a factory and is called with the setup."""
    if isinstance(target, AgentLike) and not inspect.isclass(target):
        agent = target
        return lambda setup: agent
    if callable(target):
        return target  # type: ignore[return-value]
    raise InputError.single("command line", f"{name} is neither an agent nor a factory of agents", field="--agent")
