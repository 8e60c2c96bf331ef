"""The simulated user (`--user on`, or `--model user=M`): a `user` role that answers the agent's AskUser questions,
at most `max_user_turns` per episode, and may act on toolkits only the user holds. Its replies are reviewed for
honesty: one stating facts the user was never given is marked, or asked again `reasks` times, with a `reviewer`
model beside the rules when one is named. Off, an episode is ToolEmu's single turn."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from toolemu.episode.element_spec import ANSWER, Count, ElementSpec, Option, Placed, refuse

if TYPE_CHECKING:
    from toolemu.episode.builder import EpisodeBuilder
    from toolemu.episode.state import EpisodeState

USER, REVIEWER = "user", "reviewer"  # the roles
DEFAULT_MAX_USER_TURNS = 5
TURNS = Count(1, 100, "questions per episode")
REASKS = Count(0, 10, "re-asks per reply")
_PANEL = "Simulated user"


@dataclass(frozen=True)
class UserSpec(ElementSpec):
    name: ClassVar[str] = "user"
    bounds: ClassVar[Mapping[str, Count]] = {"max_user_turns": TURNS, "reasks": REASKS}
    options: ClassVar[tuple[Option, ...]] = (
        Option(
            "user",
            ("--user",),
            "on: a simulated user answers the agent's AskUser questions (model: --model user=M, else --model); off "
            "(default): ToolEmu's single-turn episodes.",
            panel=_PANEL,
        ),
        Option(
            "user_model", ("--user-model",), "The simulated user's model; turns the user on.", panel=_PANEL, role=USER
        ),
        Option(
            "max_user_turns",
            ("--max-user-turns",),
            "Questions the user answers per episode ({range}); later ones get 'not answering'.",
            kind=int,
            default=DEFAULT_MAX_USER_TURNS,
            panel=_PANEL,
            count=TURNS,
        ),
        Option(
            "user_reasks",
            ("--user-reasks",),
            "Ask the user again, at most N times, when a reply states facts the user was never given (0: the reply "
            "is only marked; {range}).",
            kind=int,
            default=0,
            panel=_PANEL,
            count=REASKS,
        ),
        Option(
            "user_reviewer_model",
            ("--user-reviewer-model",),
            "A model that reviews the user's replies beside the rules.",
            panel=_PANEL,
            role=REVIEWER,
        ),
    )

    max_user_turns: int = DEFAULT_MAX_USER_TURNS
    reasks: int = 0  # a reply stating facts the user was never given is asked again, this many times
    reviewer: bool = False  # a reviewer model checks the user's replies beside the rules

    def roles(self) -> tuple[str, ...]:
        return (USER, REVIEWER) if self.reviewer else (USER,)

    def identity(self) -> Any:
        return {
            "max_user_turns": self.max_user_turns,
            **({"reasks": self.reasks} if self.reasks else {}),
            **({"reviewer": True} if self.reviewer else {}),
        }

    @classmethod
    def recorded(cls, value: Any) -> UserSpec:
        if not isinstance(value, dict):
            raise ValueError(f"expected the user's settings as an object, got {value!r}")
        reviewer = value.get("reviewer", False)
        if not isinstance(reviewer, bool):
            raise ValueError(f"user.reviewer: expected true or false, got {reviewer!r}")
        return cls(value.get("max_user_turns", DEFAULT_MAX_USER_TURNS), value.get("reasks", 0), reviewer)

    @classmethod
    def from_options(cls, values: Mapping[str, Any]) -> UserSpec | None:
        """--user on, or a user model (--model user=M), turns the user on; --user off with a user model is a
        contradiction, and so is a re-ask or a reviewer for a user who is off."""
        given, model = values.get("user"), values.get("user_model")
        if given is not None and given not in ("on", "off"):
            raise refuse("--user", f"expected one of on, off, got {given!r}")
        if given == "off" and model:
            raise refuse("--model user=", "expected no --model user=M with --user off")
        on = given == "on" or (given is None and bool(model))
        reasks, reviewer = values.get("user_reasks") or 0, bool(values.get("user_reviewer_model"))
        for flag, asked in (("--user-reasks", reasks > 0), ("--model reviewer=", reviewer)):
            if asked and not on:
                raise refuse(flag, "expected the simulated user on (--user on)")
        turns = values.get("max_user_turns")
        return cls(DEFAULT_MAX_USER_TURNS if turns is None else turns, reasks, reviewer) if on else None

    def build(self, builder: EpisodeBuilder) -> list[Placed]:
        """The user the driver brings (a person at a terminal), else a simulated one, whose replies are reviewed."""
        from toolemu.episode.elements import AskUserElement
        from toolemu.user import SimulatedUser
        from toolemu.user.honesty import ReviewedUser

        user = builder.user or SimulatedUser(builder.hub.model(USER))
        if isinstance(user, SimulatedUser):
            reviewer = builder.hub.model(REVIEWER) if self.reviewer else None
            user = ReviewedUser(user, self.reasks, reviewer, builder.stopping)
        assert builder.emulator is not None
        return [(ANSWER, AskUserElement(user, builder.emulator, self.max_user_turns))]

    def start(self, state: EpisodeState, builder: EpisodeBuilder) -> None:
        """The agent gets AskUser, and the user the case's own toolkits."""
        from toolemu.llm.usage import Usage

        state.ask_user = True
        state.user_kits = builder.bench.user_toolkits_for(state.case)
        for role in self.roles():
            state.usage.setdefault(role, Usage())
