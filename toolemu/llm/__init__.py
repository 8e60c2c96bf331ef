"""One way to get a chat model for a role, with cache, retries, usage, budgets and structured output."""

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

__all__ = [
    "ROLES",
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
