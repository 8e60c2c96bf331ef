"""How a registry gets its built-ins: from `toolemu.builtins`, the one place they are registered, on first use.

A registry sits low in the layers and some of what it holds sits above it (the `mcp-cmd:` agent lives with the MCP
server, the episode elements above the emulator), so it loads its built-ins by the module's name, as a plugin system
loads its entry points: the first lookup of a scorer runs `toolemu.builtins.scorers()`, once per process, and so on
for each kind. Nothing is registered by a module being imported. A kind registers once, whichever thread asks first;
a registration made while it does (a built-in registering itself) does not wait for itself.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from toolemu.errors import InputError

BUILTINS = "toolemu.builtins"
KINDS = ("providers", "scorers", "gates", "agents", "elements")

_done: set[str] = set()
_loading: set[str] = set()
_lock = threading.RLock()


def ensure_builtins(kind: str) -> None:
    """Register the built-ins of `kind` (one of KINDS) unless they are."""
    if kind in _done:
        return
    with _lock:
        if kind in _done or kind in _loading:  # done meanwhile, or this thread is registering them now
            return
        _loading.add(kind)
        try:
            getattr(importlib.import_module(BUILTINS), kind)()
            _done.add(kind)
        finally:
            _loading.discard(kind)


def import_target(spec: str, what: str, flag: str) -> Any:
    """What `package.module:attribute` names (one's own scorer, agent or gate); one that cannot be imported is bad
    input naming `flag`."""
    module_name, _, attribute = spec.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as exc:
        raise InputError.single("command line", f"cannot import {what} {spec!r}: {exc}", field=flag) from None
