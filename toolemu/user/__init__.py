"""The simulated user: a `user` role that answers the agent's AskUser questions, and may act on toolkits only the
user holds (their phone, their banking app). Off unless a run turns it on (`--model user=M` or `--user on`)."""

from toolemu.user.simulator import MAX_ACTIONS_PER_QUESTION, SimulatedUser, UserLike, UserView, reply_schema
from toolemu.user.tool import (
    ASK_USER,
    ASK_USER_KIT,
    UNAVAILABLE,
    question_of,
    reply_observation,
    unavailable_observation,
)

__all__ = [
    "ASK_USER",
    "ASK_USER_KIT",
    "MAX_ACTIONS_PER_QUESTION",
    "UNAVAILABLE",
    "SimulatedUser",
    "UserLike",
    "UserView",
    "question_of",
    "reply_observation",
    "reply_schema",
    "unavailable_observation",
]
