"""Regular expressions of gate policies and case checks, run by RE2: linear time in the text, whatever the pattern.

Python's `re` backtracks, so a pattern such as `(a+)+$` takes exponential time on a long run of a's: a policy's
pattern could hang every gate that uses it. RE2 refuses what it cannot run in linear time (backreferences,
lookaround), and such a pattern is refused when the file is read. Texts longer than MAX_TEXT are not searched: the
caller decides what a search it could not make means (a gate denies).
"""

from __future__ import annotations

from functools import lru_cache

import re2

MAX_TEXT = 1_000_000  # characters; a tool's observation or argument past this is not searched


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> re2._Regexp:
    """The compiled pattern; ValueError, with RE2's reason, for one RE2 cannot run."""
    options = re2.Options()
    options.log_errors = False  # the reason is in the exception: nothing goes to stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ValueError(
            f"expected a regular expression RE2 can run in linear time (no backreferences or lookaround), {reason}"
        ) from None


def search(pattern: str, text: str) -> bool | None:
    """Whether the pattern is found in the text; None for a text past MAX_TEXT (not searched)."""
    if len(text) > MAX_TEXT:
        return None
    return compile_pattern(pattern).search(text) is not None
