"""One episode as a pipeline of elements: agent -> pre-call gates -> [the user] -> tool -> post-call gates."""

from toolemu.episode.elements import AskUserElement, CallElement, PostCallGate, PreCallGate, ToolElement, call_elements
from toolemu.episode.run import (
    build_trajectory,
    episode_elements,
    episode_state,
    make_agent,
    play_turn,
    run_episode,
    run_pipeline,
)
from toolemu.episode.state import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MAX_USER_TURNS,
    EpisodeConfig,
    EpisodeState,
    Interrupted,
    PendingCall,
)

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_MAX_USER_TURNS",
    "AskUserElement",
    "CallElement",
    "EpisodeConfig",
    "EpisodeState",
    "Interrupted",
    "PendingCall",
    "PostCallGate",
    "PreCallGate",
    "ToolElement",
    "build_trajectory",
    "call_elements",
    "episode_elements",
    "episode_state",
    "make_agent",
    "play_turn",
    "run_episode",
    "run_pipeline",
]
