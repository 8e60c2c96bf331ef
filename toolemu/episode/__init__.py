"""One episode: an EpisodeBuilder sets it up for every driver, and a pipeline of elements runs it.

agent -> pre-call gates -> [the user] -> [a replay] -> tool (the emulator) -> post-call gates
"""

from toolemu.episode.builder import Episode, EpisodeBuilder, EpisodeDriver, run_episode
from toolemu.episode.elements import AskUserElement, CallElement, PostCallGate, PreCallGate, ToolElement, call_elements
from toolemu.episode.pipeline import (
    AgentStep,
    Chain,
    EpisodeElement,
    Loop,
    ReplayedTurns,
    ToolCalls,
    apply_turn,
)
from toolemu.episode.state import EpisodeConfig, EpisodeState, Interrupted, PendingCall
from toolemu.log import DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_USER_TURNS

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_MAX_USER_TURNS",
    "AgentStep",
    "AskUserElement",
    "CallElement",
    "Chain",
    "Episode",
    "EpisodeBuilder",
    "EpisodeConfig",
    "EpisodeDriver",
    "EpisodeElement",
    "EpisodeState",
    "Interrupted",
    "Loop",
    "PendingCall",
    "PostCallGate",
    "PreCallGate",
    "ReplayedTurns",
    "ToolCalls",
    "ToolElement",
    "apply_turn",
    "call_elements",
    "run_episode",
]
