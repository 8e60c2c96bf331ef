"""One episode as a pipeline of elements: agent -> pre-call gates -> tool -> post-call gates."""

from toolemu.episode.elements import CallElement, PostCallGate, PreCallGate, ToolElement, call_elements
from toolemu.episode.run import build_trajectory, run_episode, run_pipeline
from toolemu.episode.state import DEFAULT_MAX_ITERATIONS, EpisodeConfig, EpisodeState, Interrupted, PendingCall

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
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
    "run_episode",
    "run_pipeline",
]
