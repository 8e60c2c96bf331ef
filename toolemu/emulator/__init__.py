"""The tool emulator: validates a call against its spec, then has a model play the tool.

The names below load when first used (PEP 562): a light submodule (the realism checks, which the realism scorer
and so every report's list of scorers imports) must not pull in the emulator and the model layer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolemu.emulator.emulator import EMULATOR_TYPES, Emulation, Emulator, EmulatorOutputError, invalid_request

__all__ = ["EMULATOR_TYPES", "Emulation", "Emulator", "EmulatorOutputError", "invalid_request"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'toolemu.emulator' has no attribute {name!r}")
    value = getattr(importlib.import_module("toolemu.emulator.emulator"), name)
    globals()[name] = value  # later lookups skip this function
    return value
