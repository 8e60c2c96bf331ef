"""One episode: an EpisodeSpec of registered element specs, built by one EpisodeBuilder for every driver into a
pipeline of elements that runs it.

agent -> pre-call gates -> [the user] -> [a replay] -> tool (the emulator) -> [realism filter] -> post-call gates

The names below load when first used (PEP 562): the CLI reads the element specs' options to build a command (for
--help too) and must not load the builder, the emulator or the model layer with them.
"""

from __future__ import annotations

from toolemu.registration import lazy_names

_MODULES = {
    "builder": ("Episode", "EpisodeBuilder", "EpisodeDriver", "OutsideAgent", "run_episode"),
    "element_spec": ("ElementSpec", "Option", "register_element"),
    "elements": ("AskUserElement", "CallElement", "GateElement", "ToolElement"),
    "features.gates": ("GatesSpec",),
    "features.realism": ("RealismSpec",),
    "features.replay": ("ReplaySpec",),
    "features.user": ("UserSpec",),
    "pipeline": ("AgentStep", "Chain", "EpisodeElement", "Loop", "ReplayedTurns", "ToolCalls", "apply_turn"),
    "spec": ("EpisodeSpec",),
    "state": ("EpisodeState", "Interrupted", "PendingCall"),
}
_WHERE = {name: f"toolemu.episode.{module}" for module, names in _MODULES.items() for name in names}
__all__ = sorted(_WHERE)
__getattr__ = lazy_names(__name__, _WHERE)
