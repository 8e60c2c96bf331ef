"""One way to get a chat model for a role, with cache, retries, usage, budgets and structured output.

The names below are loaded when first used (PEP 562): importing a light submodule such as `toolemu.llm.options`
must not pull in LangChain and the model backends.
"""

# ruff: noqa: F401

from __future__ import annotations

from typing import TYPE_CHECKING

from toolemu.registration import lazy_names

if TYPE_CHECKING:  # the names of _MODULES, for type checkers (`__all__` lists them: hence no F401 here)
    from toolemu.llm.cache import ResponseCache
    from toolemu.llm.local import LocalModelError, default_gguf_path
    from toolemu.llm.messages import Message, assistant, system, user
    from toolemu.llm.model import Completion, ModelHub, RoleModel
    from toolemu.llm.options import ROLES, ModelOptions, default_model_string
    from toolemu.llm.providers import ModelConfigError, build_chat_model
    from toolemu.llm.scripted import ScriptedChatModel
    from toolemu.llm.settings import LLMSettings, build_hub
    from toolemu.llm.stops import BudgetExceeded, ModelAccessDenied, StopRun
    from toolemu.llm.structured import StructuredOutputError
    from toolemu.llm.usage import Budget, Usage, UsageTracker

_MODULES = {
    "cache": ("ResponseCache",),
    "local": ("LocalModelError", "default_gguf_path"),
    "messages": ("Message", "assistant", "system", "user"),
    "model": ("Completion", "ModelHub", "RoleModel"),
    "options": ("ROLES", "ModelOptions", "default_model_string"),
    "providers": ("ModelConfigError", "build_chat_model"),
    "scripted": ("ScriptedChatModel",),
    "settings": ("LLMSettings", "build_hub"),
    "stops": ("BudgetExceeded", "ModelAccessDenied", "StopRun"),
    "structured": ("StructuredOutputError",),
    "usage": ("Budget", "Usage", "UsageTracker"),
}
_WHERE = {name: f"toolemu.llm.{module}" for module, names in _MODULES.items() for name in names}
__all__ = sorted(_WHERE)
__getattr__ = lazy_names(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})
