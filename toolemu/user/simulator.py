"""The simulated user: the `user` role answers one AskUser question, after at most a few actions of its own.

What the user sees (and so what keeps it consistent with the emulator's world):
- the case's instruction, `User Persona`, `User Knowledge` and underspecifications (what it meant but did not say);
- the case's `Initial State`, except in security cases (a user does not know what an attacker planted);
- the conversation: the agent's questions, its own replies, its own actions and their results.
Never the agent's tool calls or what they returned: only what the agent tells it. The emulator, for its part,
reads the same Initial State and User Knowledge and sees every question, reply and user action in its history.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolemu.llm import Completion, RoleModel, StructuredOutputError, system, user
from toolemu.llm.usage import Usage
from toolemu.log import ASK_USER, Step, UserReply
from toolemu.prompts import honesty as honesty_prompts
from toolemu.prompts import user as prompts
from toolemu.prompts.tools import describe_toolkits
from toolemu.specs.models import Case, Toolkit
from toolemu.specs.schema import MAX_STRING, arguments_schema, text_schema

MAX_ACTIONS_PER_QUESTION = 3  # then the user must reply in words: each answer is bounded

# act(tool, tool_input, thought) -> observation: the episode emulates and records one action of the user's.
Act = Callable[[str, Any, str], str]


class UserReplyError(RuntimeError):
    """The user role gave no valid reply within the model layer's repair bound."""


@dataclass
class UserView:
    """What a user (simulated, or a person in a play mode) is handed for one question."""

    case: Case
    user_kits: list[Toolkit]
    steps: list[Step]  # the episode so far; a simulated user reads only its own part of it
    act: Act
    cache_salt: str = ""
    usage: Usage = field(default_factory=Usage)  # the user role's model usage for this answer, added up here
    reviewer_usage: Usage = field(default_factory=Usage)  # the honesty reviewer's (toolemu.user.honesty), apart


class UserLike(Protocol):
    def answer(self, question: str, view: UserView) -> UserReply:
        """Reply to one question, after acting through `view.act` as the user sees fit."""
        ...


def reply_schema(user_kits: list[Toolkit], may_act: bool, *, bounded: bool) -> dict[str, Any]:
    """A thought, then either a message to the agent or (while it may act) one call to one of the user's tools.
    Caps only for a bounded backend (ModelOptions.bounded_schemas)."""
    branches: list[dict[str, Any]] = [
        {
            "type": "object",
            "properties": {
                "reply": text_schema(MAX_STRING, bounded=bounded),
                "declines": {"type": "boolean"},
                "ends_conversation": {"type": "boolean"},
            },
            "required": ["reply", "declines", "ends_conversation"],
            "additionalProperties": False,
        }
    ]
    if may_act:
        branches += [
            {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "enum": [kit.tool_full_name(t)]},  # const is not portable (Gemini)
                    "input": arguments_schema(t, bounded=bounded),
                },
                "required": ["tool", "input"],
                "additionalProperties": False,
            }
            for kit in user_kits
            for t in kit.tools
        ]
    return {
        "type": "object",
        "properties": {"thought": text_schema(MAX_STRING, bounded=bounded), "action": {"anyOf": branches}},
        "required": ["thought", "action"],
        "additionalProperties": False,
    }


def _reply_text(step: Step) -> str:
    reply = step.user_reply
    if reply is None:
        return ""
    flags = [f for f, on in (("declined", reply.declined), ("ended the conversation", reply.ends_conversation)) if on]
    return reply.reply + (f" [{', '.join(flags)}]" if flags else "")


def conversation(steps: list[Step]) -> tuple[list[str], list[str]]:
    """The user's side of the episode: past exchanges, and its actions since the last one (the current question).

    A user's actions are recorded before the AskUser step they answer (the reply completes that step)."""
    history: list[str] = []
    pending: list[str] = []
    for step in steps:
        if step.by_user:
            pending.append(prompts.action_line(step.tool, step.input_text, step.observation))
        elif step.tool == ASK_USER and step.answered_by_user:
            question = step.tool_input.get("question", "") if isinstance(step.tool_input, dict) else ""
            history.append(prompts.exchange(str(question), pending, _reply_text(step)))
            pending = []
    return history, pending


def given_text(question: str, view: UserView) -> str:
    """Everything the user was given for this question, as one text (what its prompt holds; the honesty review
    checks its reply against it)."""
    case = view.case
    unsaid = [*case.underspecifications.task_information, *case.underspecifications.safety_constraints]
    world = case.initial_state if case.threat is None else []
    knowledge = prompts.knowledge_block(case.user_instruction, case.user_persona, case.user_knowledge, unsaid, world)
    history, actions = conversation(view.steps)
    return "\n\n".join([knowledge, prompts.current_turn(history, question, actions)])


class SimulatedUser:
    """A `user` role model playing the person behind the instruction."""

    def __init__(self, model: RoleModel, max_actions: int = MAX_ACTIONS_PER_QUESTION):
        self.model = model
        self.max_actions = max_actions

    def messages(self, question: str, view: UserView) -> list[Any]:
        return [
            system(prompts.system_prompt(describe_toolkits(view.user_kits) if view.user_kits else "")),
            user(given_text(question, view)),
        ]

    def _ask(self, messages: list[Any], view: UserView, may_act: bool, salt: str) -> Completion:
        """One reply of the user's schema (an action only when `may_act`), its use added to the episode's."""
        schema = reply_schema(view.user_kits, may_act, bounded=self.model.options.bounded_schemas)
        try:
            reply = self.model.complete(messages, schema=schema, cache_salt=salt)
        except StructuredOutputError as exc:
            raise UserReplyError(f"user reply unusable: {exc}") from None
        view.usage.add(reply.usage)
        return reply

    def answer(self, question: str, view: UserView) -> UserReply:
        started = time.perf_counter()
        spent = Usage()
        for taken in range(self.max_actions + 1):
            may_act = bool(view.user_kits) and taken < self.max_actions
            reply = self._ask(self.messages(question, view), view, may_act, view.cache_salt)
            spent.add(reply.usage)
            thought, action = reply.value["thought"], reply.value["action"]
            if "tool" in action:
                view.act(action["tool"], action["input"], thought)
                continue
            return UserReply(
                reply=action["reply"],
                declined=action["declines"],
                ends_conversation=action["ends_conversation"],
                thought=thought,
                actions=taken,
                latency_s=round(time.perf_counter() - started, 3),
                prompt_tokens=spent.prompt_tokens,
                completion_tokens=spent.completion_tokens,
            )
        raise AssertionError("unreachable: the last attempt's schema allows only a reply")

    def reword(
        self, question: str, view: UserView, draft: UserReply, unsupported: list[str], attempt: int
    ) -> UserReply:
        """The question asked again after `draft` stated facts the user was never given (toolemu.user.honesty): a
        reply in words only (the actions taken for this question are done), told which facts it invented."""
        started = time.perf_counter()
        *head, last = self.messages(question, view)
        note = honesty_prompts.REASK.format(facts="; ".join(unsupported))
        messages = [*head, user(f"{last['content']}\n\n{note}")]
        reply = self._ask(messages, view, False, f"{view.cache_salt}|reask-{attempt}")
        action = reply.value["action"]
        return draft.model_copy(
            update={
                "reply": action["reply"],
                "declined": action["declines"],
                "ends_conversation": action["ends_conversation"],
                "thought": reply.value["thought"],
                "latency_s": round(draft.latency_s + time.perf_counter() - started, 3),
                "prompt_tokens": draft.prompt_tokens + reply.usage.prompt_tokens,
                "completion_tokens": draft.completion_tokens + reply.usage.completion_tokens,
            }
        )
