"""The tool emulator: validates a call against its spec, then has a model play the tool.

The names below load when first used (PEP 562): a light submodule (the realism checks, which the realism scorer
and so every report's list of scorers imports) must not pull in the emulator and the model layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolemu.registration import lazy_names

if TYPE_CHECKING:
    from toolemu.emulator.emulator import EMULATOR_TYPES, Emulation, Emulator, EmulatorOutputError, invalid_request

__all__ = ["EMULATOR_TYPES", "Emulation", "Emulator", "EmulatorOutputError", "invalid_request"]


__getattr__ = lazy_names(__name__, dict.fromkeys(__all__, "toolemu.emulator.emulator"))
