"""One way to get a chat model for a role, with cache, retries, usage, budgets and structured output.

The names below are loaded when first used (PEP 562): importing a light submodule such as `toolemu.llm.options`
must not pull in LangChain and the model backends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolemu.registration import lazy_names

if TYPE_CHECKING:
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

_WHERE = {
    "ResponseCache": "toolemu.llm.cache",
    "LocalModelError": "toolemu.llm.local",
    "default_gguf_path": "toolemu.llm.local",
    "Message": "toolemu.llm.messages",
    "assistant": "toolemu.llm.messages",
    "system": "toolemu.llm.messages",
    "user": "toolemu.llm.messages",
    "Completion": "toolemu.llm.model",
    "ModelHub": "toolemu.llm.model",
    "RoleModel": "toolemu.llm.model",
    "ROLES": "toolemu.llm.options",
    "ModelOptions": "toolemu.llm.options",
    "default_model_string": "toolemu.llm.options",
    "ModelConfigError": "toolemu.llm.providers",
    "build_chat_model": "toolemu.llm.providers",
    "ScriptedChatModel": "toolemu.llm.scripted",
    "LLMSettings": "toolemu.llm.settings",
    "build_hub": "toolemu.llm.settings",
    "BudgetExceeded": "toolemu.llm.stops",
    "ModelAccessDenied": "toolemu.llm.stops",
    "StopRun": "toolemu.llm.stops",
    "StructuredOutputError": "toolemu.llm.structured",
    "Budget": "toolemu.llm.usage",
    "Usage": "toolemu.llm.usage",
    "UsageTracker": "toolemu.llm.usage",
}

__all__ = [
    "Budget",
    "BudgetExceeded",
    "Completion",
    "LLMSettings",
    "LocalModelError",
    "Message",
    "ModelAccessDenied",
    "ModelConfigError",
    "ModelHub",
    "ModelOptions",
    "ROLES",
    "ResponseCache",
    "RoleModel",
    "ScriptedChatModel",
    "StopRun",
    "StructuredOutputError",
    "Usage",
    "UsageTracker",
    "assistant",
    "build_chat_model",
    "build_hub",
    "default_gguf_path",
    "default_model_string",
    "system",
    "user",
]


__getattr__ = lazy_names(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
