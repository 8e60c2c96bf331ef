"""The knobs of the model doubles. Every reply is a function of (config, request): same seed, same answers."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

# How a JSON reply is dressed when nothing in the request enforces a schema (the schema is only in the prompt).
WRAPS = ("bare", "fenced", "prose", "prose_fenced")


def _default_wraps() -> dict[str, float]:
    return {"bare": 0.4, "fenced": 0.3, "prose": 0.2, "prose_fenced": 0.1}


@dataclass(frozen=True)
class DoubleConfig:
    seed: int = 0

    # Content. Long strings carry a marker and a checksum (see markers.py) so a test can find them again.
    long_min: int = 1000
    long_max: int = 3000
    array_items: tuple[int, int] = (18, 22)
    long_string_rate: float = 0.25  # for string fields whose name says nothing about their content
    thought_chars: tuple[int, int] = (150, 1200)  # a verbose model's reasoning fields
    optional_rate: float = 0.8  # how often an optional property is filled in
    # Real models write long text whatever maxLength/maxItems say; OpenAI's strict mode does not even send them.
    ignore_limits: bool = True
    heed_repairs: bool = False  # on a repair request, keep to the schema's limits after all

    # JSON replies to a schema that lives only in the prompt text.
    wraps: dict[str, float] = field(default_factory=_default_wraps)

    # Agent behaviour.
    tool_turns: int = 3  # tool calls before a final answer, counted from the tool results in the conversation
    parallel_calls: tuple[int, int] = (2, 3)
    parallel_rate: float = 1.0  # with native tools: how often a tool-calling reply carries several calls
    overrun_rate: float = 0.0  # ReAct: the model goes on past its action with an invented Observation
    honour_stop: bool = True  # the server cuts the reply at the request's stop sequences, as real APIs do
    exception_rate: float = 0.1  # a tool emulator picks the "raised an exception" branch
    reasoning: bool = False  # reasoning_content (OpenAI-compatible) / thinking blocks (Anthropic) on every reply

    # Failures.
    refusal_rate: float = 0.02
    rate_limit_rate: float = 0.0
    retry_after_s: float = 1.0
    server_error_rate: float = 0.0
    server_error_codes: tuple[int, ...] = (500, 503)

    # A real API stops at max_tokens (finish_reason "length"); tokens are estimated from characters.
    honour_max_tokens: bool = True
    chars_per_token: float = 4.0

    def with_(self, **changes: Any) -> DoubleConfig:
        return replace(self, **changes)

    @classmethod
    def from_pairs(cls, pairs: list[str]) -> DoubleConfig:
        """`name=value` strings (a benchmark's command line) -> a config; values are parsed as Python literals."""
        import ast

        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for pair in pairs:
            name, _, raw = pair.partition("=")
            if name not in known:
                raise ValueError(f"unknown double knob {name!r}; known: {', '.join(sorted(known))}")
            try:
                values[name] = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                values[name] = raw
        return cls(**values)
