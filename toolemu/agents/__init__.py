"""Agents: one model turn -> exactly one action or a final answer."""

from toolemu.agents.agent import AGENT_FORMATS, Agent, AgentLike, AgentParseError, AgentTurn, ProposedCall
from toolemu.agents.react import ReactParseError, parse_react

__all__ = [
    "AGENT_FORMATS",
    "Agent",
    "AgentLike",
    "AgentParseError",
    "AgentTurn",
    "ProposedCall",
    "ReactParseError",
    "parse_react",
]
