"""What a prompt says about how long a reply may be: the one limit a strong backend has is the reply's token
ceiling (no caps in its schema), stated so the model knows it has room; a bounded backend's grammar keeps its
small model short, and its prompt says nothing more."""

from __future__ import annotations

WORDS_PER_TOKEN = 0.75  # English prose, roughly


def room(bounded: bool, reply_tokens: int) -> str:
    """'about N words' for a strong backend's reply ceiling; '' for a bounded backend."""
    if bounded:
        return ""
    words = max(100, round(reply_tokens * WORDS_PER_TOKEN, -2))
    return f"about {int(words):,} words"
