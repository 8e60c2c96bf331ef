"""How a registry gets its built-ins: from `toolemu.builtins`, the one place they are registered, on first use.

A registry sits low in the layers and some of what it holds sits above it (the `mcp-cmd:` agent lives with the MCP
server, the episode elements above the emulator), so it loads its built-ins by the module's name, as a plugin system
loads its entry points: the first lookup of a scorer runs `toolemu.builtins.scorers()`, once per process, and so on
for each kind. Nothing is registered by a module being imported. A kind registers once, whichever thread asks first;
a registration made while it does (a built-in registering itself) does not wait for itself.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable
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


def lazy_names(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A package's `__getattr__` (PEP 562): each name of `where` imported from its module on first use, then kept
    in the package (later lookups skip this), so importing the package loads none of them."""
    names = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = names[name] = getattr(importlib.import_module(where[name]), name)
        return value

    return __getattr__
