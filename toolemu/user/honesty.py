"""The simulated user's honesty: a reply that states facts the user was never given is flagged, asked again (at
most `reasks` times) or, past that, kept and marked.

What the user was given is everything its prompt holds: the instruction, `User Persona`, `User Knowledge`, what the
instruction left open, the starting world (outside security cases), the conversation so far and the results of its
own actions. Two reviewers, the second optional:
- a deterministic check: every specific value in the reply (an e-mail address, a URL, a phone number, an amount or a
  number of three digits or more, a date, an id such as n7 or ACC-1182) must appear in what the user was given;
- a reviewer model (role `reviewer`, `--model reviewer=M`), which also catches invented names and events.

A flagged reply is asked again with the facts it invented named, as a reply in words (the user's actions for this
question are already done and are not repeated). Every turned-down reply is kept in `UserReply.review.rejected`, and
what the reply that stands still states without support in `review.unsupported`: the report counts both.

The re-asks are bounded (at most 10: --user-reasks, `UserSpec.reasks` in toolemu.episode.features.user), and a
stopping run (Ctrl-C, SIGTERM) is heard before each one: `stopping`, given by the episode, raises then, so no run waits
for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from toolemu.llm import RoleModel, system, user
from toolemu.log import UserReply, UserReview
from toolemu.prompts import honesty as prompts
from toolemu.specs.schema import MAX_STRING, text_schema
from toolemu.user.simulator import SimulatedUser, UserView, given_text

# (pattern, how to compare it): "text" case-folded as it is, "digits" by its digits alone.
VALUE_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", "text"),  # an e-mail address
    (r"\bhttps?://[^\s,;)]+|\bwww\.[^\s,;)]+", "text"),  # a URL
    (r"(?<![\w.])\+?\d[\d\s().-]{6,}\d(?![\w.])", "digits"),  # a phone or account number
    (r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b", "text"),  # a date
    (r"[$€£]\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*\.\d+\b|\b\d{3,}\b", "digits"),  # an amount, or a number of 3+ digits
    (r"\b(?=[A-Za-z_-]*\d)(?=[\d_-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9]\b", "text"),  # an id: n7, ACC-1182
)
_PATTERNS = [(re.compile(p), how) for p, how in VALUE_PATTERNS]
ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)", re.IGNORECASE)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def unsupported_values(reply: str, given: str) -> list[str]:
    """The specific values of `reply` that `given` does not hold (the deterministic check)."""
    folded, digits = given.casefold(), _digits(given)
    found: dict[str, int] = {}  # value -> where the reply states it
    for pattern, how in _PATTERNS:
        for m in pattern.finditer(reply):
            value = m[0].strip().rstrip(".")
            if ORDINAL.fullmatch(value):  # "the 2nd one" points at something, it states no fact
                continue
            if how == "digits":
                key = _digits(value)
                held = not key or key in digits or key in _digits(folded)
            else:
                held = value.casefold() in folded
            if not held:
                found.setdefault(value, m.start())
    # A value inside another one found (the digits of an e-mail address) is not a fact of its own.
    values = sorted(found, key=found.__getitem__)
    return [v for v in values if not any(v != w and v in w for w in values)]


def reviewer_schema(*, bounded: bool) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "thought": text_schema(MAX_STRING, bounded=bounded),
            "verdict": {"enum": ["supported", "unsupported"]},  # the first is what a scripted (dry-run) one says
            "unsupported": {"type": "array", "items": text_schema(200, bounded=bounded)},
        },
        "required": ["thought", "verdict", "unsupported"],
        "additionalProperties": False,
    }


class ReviewedUser:
    """A simulated user whose replies are reviewed for facts it was never given, and asked again when flagged."""

    def __init__(
        self,
        inner: SimulatedUser,
        reasks: int = 0,
        reviewer: RoleModel | None = None,
        stopping: Callable[[], None] | None = None,
    ):
        self.inner, self.reasks, self.reviewer = inner, reasks, reviewer
        self.stopping = stopping  # raises when the run is stopping (the episode's stop request); None: never

    def answer(self, question: str, view: UserView) -> UserReply:
        reply = self.inner.answer(question, view)
        unsupported = self.review(question, view, reply.reply)
        rejected: list[str] = []
        while unsupported and len(rejected) < self.reasks:
            if self.stopping is not None:
                self.stopping()
            rejected.append(reply.reply)
            reply = self.inner.reword(question, view, reply, unsupported, len(rejected))
            unsupported = self.review(question, view, reply.reply)
        review = UserReview(
            unsupported=unsupported, reasked=len(rejected), rejected=rejected, reviewer=self.reviewer is not None
        )
        return reply.model_copy(update={"review": review})

    def review(self, question: str, view: UserView, reply: str) -> list[str]:
        """What the reply states that the user was never given: the rules' finds, then the reviewer's."""
        given = given_text(question, view)
        found = unsupported_values(reply, given)
        if self.reviewer is None or not reply.strip():
            return found
        messages = [
            system(f"{prompts.REVIEWER}\n\n{prompts.REPLY}"),
            user(prompts.review_task(given, question, reply)),
        ]
        # A reviewer that gives no verdict after the model layer's repairs raises: the episode ends in error with
        # the reason, as when the user itself gives no reply.
        schema = reviewer_schema(bounded=self.reviewer.options.bounded_schemas)
        verdict = self.reviewer.complete(messages, schema=schema, cache_salt=view.cache_salt)
        view.reviewer_usage.add(verdict.usage)
        if verdict.value["verdict"] != "unsupported":
            return found
        return [*found, *(f for f in verdict.value["unsupported"] if f and f not in found)]
