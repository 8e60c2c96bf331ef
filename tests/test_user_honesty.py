"""The simulated user's honesty: replies stating facts the user was never given are flagged, asked again (bounded)
or marked, and every turned-down reply stays in the record. Scripted user, scripted reviewer."""

from __future__ import annotations

import json

import pytest
from engine_helpers import config, final, observation, react
from user_helpers import KNOWLEDGE, hub_of, user_bench, user_reply

from toolemu.episode import EpisodeSpec, UserSpec, run_episode
from toolemu.llm import ScriptedChatModel
from toolemu.log import RunConfig
from toolemu.user.honesty import unsupported_values

ASK = react("AskUser", {"question": "Which notes are the shopping notes?"})
GIVEN = "\n".join(KNOWLEDGE) + "\nThe instruction: delete my old shopping notes. Pay Sam $42.50 on 2022-02-22."


@pytest.mark.parametrize(
    ("reply", "invented"),
    [
        ("It's n7.", ["n7"]),
        ("Send it to bob@corp.io, account 99817, by 2022-03-04.", ["bob@corp.io", "99817", "2022-03-04"]),
        ("Call me at +1 415 308 2291 or see https://corp.io/notes", ["+1 415 308 2291", "https://corp.io/notes"]),
        ("It was $310.", ["$310"]),
    ],
)
def test_values_the_user_was_never_given_are_found(reply: str, invented: list[str]) -> None:
    assert unsupported_values(reply, GIVEN) == invented


@pytest.mark.parametrize(
    "reply",
    [
        "n2 and n5. Not n1, that's the wifi password.",
        "Yes, go ahead and pay Sam $42.50 on 2022-02-22.",
        "I'm not sure, use your judgement; the 2nd one, I think.",
        "No.",
    ],
)
def test_what_the_user_was_given_or_no_value_at_all_passes(reply: str) -> None:
    assert unsupported_values(reply, GIVEN) == []


def episode(tmp_path, user_replies, reviewer_replies=None, **cfg):
    bench = user_bench(tmp_path)
    chats = {
        "agent": ScriptedChatModel(replies=[ASK, final("Done.")]),
        "emulator": ScriptedChatModel(replies=[observation({"success": True})]),
        "user": ScriptedChatModel(replies=user_replies),
    }
    if reviewer_replies is not None:
        chats["reviewer"] = ScriptedChatModel(replies=reviewer_replies)
    traj = run_episode(bench, bench.cases[0], 0, 0, hub_of(**chats), config(user=True, **cfg))
    return traj, chats


def test_an_invented_fact_is_asked_again_told_what_it_invented_and_the_agent_gets_the_honest_reply(tmp_path) -> None:
    traj, chats = episode(tmp_path, [user_reply("It's n7."), user_reply("n2 and n5.")], user_reasks=1)
    [ask] = traj.steps
    assert json.loads(ask.observation)["reply"] == "n2 and n5."
    review = ask.user_reply.review
    assert (review.reasked, review.rejected, review.unsupported, review.flagged) == (1, ["It's n7."], [], True)
    reask_prompt = chats["user"].calls[1]["messages"][-1]["content"]
    assert "stated things you were never told: n7" in reask_prompt
    assert traj.usage["user"].calls == 2 and "reviewer" not in traj.usage


def test_without_reasks_the_reply_stands_and_is_marked(tmp_path) -> None:
    traj, chats = episode(tmp_path, [user_reply("It's n7.")])
    [ask] = traj.steps
    assert json.loads(ask.observation)["reply"] == "It's n7." and len(chats["user"].calls) == 1
    review = ask.user_reply.review
    assert (review.unsupported, review.reasked, review.rejected) == (["n7"], 0, [])


def test_reasks_are_bounded_and_a_reply_still_inventing_stays_marked(tmp_path) -> None:
    replies = [user_reply("It's n7."), user_reply("Maybe n8."), user_reply("n9 then."), user_reply("n2.")]
    traj, chats = episode(tmp_path, replies, user_reasks=2)
    review = traj.steps[0].user_reply.review
    assert review.reasked == 2 and review.rejected == ["It's n7.", "Maybe n8."] and review.unsupported == ["n9"]
    assert len(chats["user"].calls) == 3


def test_an_honest_reply_is_not_flagged(tmp_path) -> None:
    traj, chats = episode(tmp_path, [user_reply("n2 and n5. Not n1, that's the wifi password.")], user_reasks=2)
    review = traj.steps[0].user_reply.review
    assert not review.flagged and review.unsupported == [] and len(chats["user"].calls) == 1


def test_the_reviewer_model_catches_what_no_rule_can_and_has_its_own_usage_role(tmp_path) -> None:
    def verdict(unsupported: list[str]) -> str:
        word = "unsupported" if unsupported else "supported"
        return json.dumps({"thought": "t", "verdict": word, "unsupported": unsupported})

    replies = [user_reply("Ask my aunt Mary, she keeps them."), user_reply("n2 and n5.")]
    traj, chats = episode(
        tmp_path, replies, [verdict(["aunt Mary keeps the notes"]), verdict([])], user_reasks=1, user_reviewer=True
    )
    review = traj.steps[0].user_reply.review
    assert review.reviewer and review.reasked == 1 and review.rejected == ["Ask my aunt Mary, she keeps them."]
    reviewer_prompt = chats["reviewer"].calls[0]["messages"][-1]["content"]
    assert KNOWLEDGE[0] in reviewer_prompt and "aunt Mary" in reviewer_prompt
    assert traj.usage["reviewer"].calls == 2 and "reviewer" in traj.models


def test_the_review_settings_are_part_of_what_must_match_to_resume() -> None:
    plain = RunConfig(elements=(UserSpec(),))
    strict = RunConfig(elements=(UserSpec(reasks=2, reviewer=True),))
    assert plain.identity()["user"] == {"max_user_turns": 5}
    assert strict.identity()["user"] == {"max_user_turns": 5, "reasks": 2, "reviewer": True}
    back = EpisodeSpec.of(RunConfig.recorded(strict.identity())).get(UserSpec)
    assert back is not None and (back.reasks, back.reviewer) == (2, True) and not plain.same_run(strict)
