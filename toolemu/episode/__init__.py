"""One episode: an EpisodeSpec of registered element specs, built by one EpisodeBuilder for every driver into a
pipeline of elements that runs it.

agent -> pre-call gates -> [the user] -> [a replay] -> tool (the emulator) -> [realism filter] -> post-call gates

The names below load when first used (PEP 562): the CLI reads the element specs' options to build a command (for
--help too) and must not load the builder, the emulator or the model layer with them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolemu.episode.builder import Episode, EpisodeBuilder, EpisodeDriver, run_episode
    from toolemu.episode.element_spec import ElementSpec, Option, register_element
    from toolemu.episode.elements import AskUserElement, CallElement, PostCallGate, PreCallGate, ToolElement
    from toolemu.episode.features.gates import GatesSpec
    from toolemu.episode.features.realism import RealismSpec
    from toolemu.episode.features.replay import ReplaySpec
    from toolemu.episode.features.user import UserSpec
    from toolemu.episode.pipeline import AgentStep, Chain, EpisodeElement, Loop, ReplayedTurns, ToolCalls, apply_turn
    from toolemu.episode.spec import EpisodeSpec
    from toolemu.episode.state import EpisodeState, Interrupted, PendingCall
    from toolemu.paths import DEFAULT_MAX_ITERATIONS

_WHERE = {
    "Episode": "builder",
    "EpisodeBuilder": "builder",
    "EpisodeDriver": "builder",
    "run_episode": "builder",
    "ElementSpec": "element_spec",
    "Option": "element_spec",
    "register_element": "element_spec",
    "AskUserElement": "elements",
    "CallElement": "elements",
    "PostCallGate": "elements",
    "PreCallGate": "elements",
    "ToolElement": "elements",
    "GatesSpec": "features.gates",
    "RealismSpec": "features.realism",
    "ReplaySpec": "features.replay",
    "UserSpec": "features.user",
    "AgentStep": "pipeline",
    "Chain": "pipeline",
    "EpisodeElement": "pipeline",
    "Loop": "pipeline",
    "ReplayedTurns": "pipeline",
    "ToolCalls": "pipeline",
    "apply_turn": "pipeline",
    "EpisodeSpec": "spec",
    "EpisodeState": "state",
    "Interrupted": "state",
    "PendingCall": "state",
}

__all__ = [
    "AgentStep",
    "AskUserElement",
    "CallElement",
    "Chain",
    "DEFAULT_MAX_ITERATIONS",
    "ElementSpec",
    "Episode",
    "EpisodeBuilder",
    "EpisodeDriver",
    "EpisodeElement",
    "EpisodeSpec",
    "EpisodeState",
    "GatesSpec",
    "Interrupted",
    "Loop",
    "Option",
    "PendingCall",
    "PostCallGate",
    "PreCallGate",
    "RealismSpec",
    "ReplaySpec",
    "ReplayedTurns",
    "ToolCalls",
    "ToolElement",
    "UserSpec",
    "apply_turn",
    "register_element",
    "run_episode",
]


def __getattr__(name: str) -> Any:
    if name == "DEFAULT_MAX_ITERATIONS":
        from toolemu.paths import DEFAULT_MAX_ITERATIONS

        return DEFAULT_MAX_ITERATIONS
    if name not in _WHERE:
        raise AttributeError(f"module 'toolemu.episode' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"toolemu.episode.{_WHERE[name]}"), name)
    globals()[name] = value  # later lookups skip this function
    return value
