"""The tool emulator: validates a call against its spec, then has a model play the tool."""

from toolemu.emulator.emulator import EMULATOR_TYPES, Emulation, Emulator, EmulatorOutputError, invalid_request

__all__ = ["EMULATOR_TYPES", "Emulation", "Emulator", "EmulatorOutputError", "invalid_request"]
