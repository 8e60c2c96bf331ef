"""The repair turn after a structured reply fails its schema, bounded so it cannot overflow the model's context.

A backend that does not honour max_tokens can return a reply that fills its whole context. Echoed back in full,
that reply makes a repair prompt the model cannot take. So the echo keeps at most what a reply may hold, and
where the model's context is known, a repair that would still not fit is not sent: it is a StructuredOutputError.
"""

from __future__ import annotations

import math
from typing import Any

from toolemu.llm.messages import Message, assistant, user
from toolemu.llm.options import ModelOptions
from toolemu.llm.structured import StructuredOutputError
from toolemu.llm.usage import Usage

CUT_MARK = " [... rest of the reply cut]"
# Chat templates add a few tokens around every message; tokens-per-character estimates get some slack.
_TEMPLATE_TOKENS = 16
_ESTIMATE_SLACK = 1.25


def context_tokens(options: ModelOptions, chat: Any) -> int | None:
    """The model's context length in tokens, where we know it: the embedded model's, a managed vLLM's."""
    if options.provider == "vllm" and options.base_url is None and options.vllm.max_model_len:
        return options.vllm.max_model_len
    n_ctx = getattr(chat, "n_ctx", None)  # the embedded llama.cpp model
    return n_ctx if isinstance(n_ctx, int) else None


def bounded_echo(text: str, completion_tokens: int, max_tokens: int) -> str:
    """At most max_tokens tokens of a bad reply: all of it when the backend kept to the limit.

    The cut uses the reply's own characters per token when usage says how many tokens it had, else one
    character per token (every token spells at least one character).
    """
    if completion_tokens:
        if completion_tokens <= max_tokens:
            return text
        keep = len(text) * max_tokens // completion_tokens
    elif len(text) <= max_tokens:
        return text
    else:
        keep = max_tokens
    return text[:keep] + CUT_MARK


def repair_turns(
    convo: list[Message],
    text: str,
    error: StructuredOutputError,
    instruction: str,
    usage: Usage,
    max_tokens: int,
    context: int | None,
    role: str,
) -> list[Message]:
    """`convo` plus the bad reply (bounded) and a request to fix it; raises when that cannot fit `context`."""
    turns = [
        assistant(bounded_echo(text, usage.completion_tokens, max_tokens)),
        user(f"That reply was not valid: {error}\n{instruction}"),
    ]
    if context is not None:
        prompt_chars = sum(len(m["content"]) for m in convo)
        # Tokens per character as the model counted this prompt; one per character when it did not say.
        per_char = usage.prompt_tokens / prompt_chars if usage.prompt_tokens and prompt_chars else 1.0
        prompt = usage.prompt_tokens or prompt_chars
        added = math.ceil(sum(len(m["content"]) for m in turns) * per_char * _ESTIMATE_SLACK) + _TEMPLATE_TOKENS
        needed = prompt + added + max_tokens
        if needed > context:
            raise StructuredOutputError(
                f"{role}: {error}; a repair would need about {needed} tokens (prompt, the bad reply, the schema "
                f"and {max_tokens} for the answer), more than the model's context of {context}"
            )
    return [*convo, *turns]
