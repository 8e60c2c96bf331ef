"""ToolEmu's model names on the command line (`gpt-4o-mini`, `claude-2`, `Qwen/Qwen3-8B`) as our model strings.

ToolEmu and its forks name a model bare and pick the API from the name; we name the provider (`openai:gpt-4o-mini`).
A bare name that says which API it is gets that provider, so a ToolEmu command runs unchanged; anything else is left
for the model layer to refuse with its own message.
"""

from __future__ import annotations

import logging

log = logging.getLogger("toolemu")

_OPENAI_PREFIXES = ("gpt-", "gpt4", "chatgpt-", "o1", "o3", "o4", "text-davinci")


def model_string(name: str) -> str:
    """`name` as a model string: unchanged when it names a registered provider or says nothing we can read."""
    from toolemu.llm.registry import provider_names  # the registry loads when a command reads a model name

    if name.split(":", 1)[0] in provider_names():
        return name
    lower = name.lower()
    if lower.startswith(_OPENAI_PREFIXES):
        found = f"openai:{name}"
    elif lower.startswith("claude"):
        found = f"anthropic:{name}"
    elif "/" in name and ":" not in name:  # a Hugging Face id, as ToolEmu's forks give open models
        found = f"vllm:{name}"
    else:
        return name
    log.info("model %r read as %r (ToolEmu's name for it)", name, found)
    return found
