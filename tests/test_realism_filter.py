"""--realism-filter N: flagged drafts are emulated again (told why) before the agent sees them, at most N times, every
rejected draft stays in the record, and the filter's calls are counted under the `realism` role."""

from __future__ import annotations

import json

from engine_helpers import bench, config, final, observation, react

from toolemu.episode import EpisodeSpec, RealismSpec, run_episode
from toolemu.llm import ModelHub, ModelOptions, ScriptedChatModel, UsageTracker
from toolemu.log import RunConfig
from toolemu.log.read import parse_trajectory

B = bench()
NOTES = B.cases[0]
PLACEHOLDER = observation({"content": "Ask John Doe at jd@example.com"})
CLEAN = observation({"content": "milk, eggs, 2 lemons"})
CLEAN_2 = observation({"content": "oat milk, bread"})


def realism_verdict(verdict: str, kind: str = "none", reason: str = "", key: str = "step-1") -> str:
    observations = {key: {"verdict": verdict, "kind": kind, "reason": reason}}
    return json.dumps({"thought": "t", "observations": observations, "summary": "s"})


def run(emulator_replies, redrafts: int, judge_replies=None, agent_replies=None):
    agent = ScriptedChatModel(replies=agent_replies or [react("NoteVaultReadNote", {"note_id": "n1"}), final()])
    emulator = ScriptedChatModel(replies=emulator_replies)
    chats = {"agent": agent, "emulator": emulator}
    roles = {r: ModelOptions(model=f"scripted:{r}") for r in ("default", "agent", "emulator")}
    if judge_replies is not None:
        chats["realism"] = ScriptedChatModel(replies=judge_replies)
        roles["realism"] = ModelOptions(model="scripted:realism")
    hub = ModelHub(roles, None, UsageTracker(), lambda o, role: chats[role])
    cfg = config(realism_filter=redrafts, realism_judge=judge_replies is not None)
    traj = run_episode(B, NOTES, 0, 0, hub, cfg)
    return traj, chats


def test_a_flagged_draft_is_emulated_again_told_why_and_the_agent_sees_only_the_redraft() -> None:
    traj, chats = run([PLACEHOLDER, CLEAN], redrafts=2)
    [step] = traj.steps
    assert json.loads(step.observation) == {"content": "milk, eggs, 2 lemons"}
    [draft] = step.rejected_drafts
    assert "John Doe" in draft.observation and draft.flagged_by == ["rules"]
    assert any(r.startswith("placeholder:") and "John" in r for r in draft.reasons)
    redraft_prompt = chats["emulator"].calls[1]["messages"][-1]["content"]
    assert "turned down as unrealistic" in redraft_prompt and "John/Jane Doe" in redraft_prompt
    agent_prompt = chats["agent"].calls[1]["messages"][-1]["content"]
    assert "milk, eggs" in agent_prompt and "John Doe" not in agent_prompt
    # The redraft is counted as the filter's; the first draft as the emulator's. Its step keeps no replay key.
    assert traj.usage["realism"].calls == 1 and traj.usage["emulator"].calls == 1
    assert step.obs_key == ""
    # The record keeps the rejected draft through a write and a read.
    again = parse_trajectory(json.loads(json.dumps(traj.to_record())), 0)
    assert again.steps[0].rejected_drafts == step.rejected_drafts


def test_at_most_n_redrafts_and_the_last_is_what_the_agent_sees() -> None:
    traj, chats = run([PLACEHOLDER, PLACEHOLDER, CLEAN], redrafts=1)
    [step] = traj.steps
    assert len(step.rejected_drafts) == 1 and "John Doe" in step.observation  # the redraft, flagged or not
    assert len(chats["emulator"].calls) == 2  # the first draft and one redraft, never a third


def test_the_judge_flags_what_the_rules_pass_and_is_not_asked_about_what_they_flag() -> None:
    judge = [realism_verdict("unrealistic", "implausible", "a note service returning a stock quote")]
    judge += [realism_verdict("realistic")]
    traj, chats = run([CLEAN, CLEAN_2], redrafts=3, judge_replies=judge)
    [step] = traj.steps
    assert json.loads(step.observation) == {"content": "oat milk, bread"}
    [draft] = step.rejected_drafts
    assert draft.flagged_by == ["judge"] and draft.reasons == ["implausible: a note service returning a stock quote"]
    judge_prompt = chats["realism"].calls[0]["messages"][-1]["content"]
    assert "milk, eggs, 2 lemons" in judge_prompt and "[rate as step-1]" in judge_prompt
    assert traj.usage["realism"].calls == 3  # two judge calls and one redraft
    assert "realism" in traj.models
    # A draft the rules flag costs no judge call.
    traj, chats = run([PLACEHOLDER, CLEAN], redrafts=1, judge_replies=[])
    assert chats["realism"].calls == [] and len(traj.steps[0].rejected_drafts) == 1


def test_without_the_filter_nothing_changes_in_the_record() -> None:
    traj, chats = run([PLACEHOLDER], redrafts=0)
    record = traj.to_record()
    assert "rejected_drafts" not in record["steps"][0] and "realism" not in traj.usage
    assert "John Doe" in traj.steps[0].observation and traj.steps[0].obs_key


def test_invalid_calls_and_clean_drafts_cost_nothing() -> None:
    agent = [react("NoteVaultReadNote", {}), react("NoteVaultReadNote", {"note_id": "n1"}), final()]
    traj, chats = run(
        [CLEAN], redrafts=2, judge_replies=[realism_verdict("realistic", key="step-2")], agent_replies=agent
    )
    assert traj.steps[0].invalid_call and not traj.steps[0].rejected_drafts and not traj.steps[1].rejected_drafts
    assert len(chats["realism"].calls) == 1 and traj.usage["realism"].calls == 1  # the one valid call's check


def test_the_filter_is_part_of_what_must_match_to_resume() -> None:
    plain, filtered = RunConfig(), RunConfig(elements=(RealismSpec(2, judge=True),))
    assert "realism_filter" not in plain.identity()
    assert filtered.identity()["realism_filter"] == {"redrafts": 2, "judge": True}
    assert not plain.same_run(filtered)
    assert EpisodeSpec.of(RunConfig.recorded(filtered.identity())).get(RealismSpec) == RealismSpec(2, judge=True)


def test_the_cli_runs_the_filter_with_its_judge_and_records_it(run_cli, tmp_path) -> None:
    from toolemu.log import read_meta, read_run

    out = tmp_path / "run"
    result = run_cli(
        "emulate", "--dry-run", "--trunc-num", "2", "--realism-filter", "2", "--model", "realism=j", "--dump-dir", out
    )
    assert result.code == 0, result.err
    meta = read_meta(out / "run.json")
    assert meta.config.element("realism_filter") == {"redrafts": 2, "judge": True}
    trajectories = read_run(out).trajectories
    judged = [s for t in trajectories for s in t.steps if not s.invalid_call]
    assert judged and sum(t.usage["realism"].calls for t in trajectories) == len(judged)  # one check each, all clean
    # Another filter setting is another run: the folder does not resume under it.
    again = run_cli("emulate", "--dry-run", "--trunc-num", "2", "--realism-filter", "1", "--dump-dir", out)
    assert again.code == 2 and "realism_filter" in again.err


def test_bad_realism_and_review_flags_are_one_line_and_exit_2(run_cli, tmp_path) -> None:
    for args, names in [
        (["--model", "realism=m"], "--model realism="),
        (["--realism-filter", "-1"], "--realism-filter"),
        (["--user-reasks", "1"], "--user-reasks"),
        (["--model", "reviewer=m"], "--model reviewer="),
        (["--user", "on", "--user-reasks", "-2"], "--user-reasks"),
    ]:
        result = run_cli("emulate", "--dry-run", "--trunc-num", "1", "--dump-dir", tmp_path / "x", *args)
        assert result.code == 2 and names in result.err and "Traceback" not in result.err, (args, result.err)
        assert len(result.err.strip().splitlines()) == 1, result.err


def test_a_value_the_case_gives_is_no_placeholder_to_redraft() -> None:
    """The filter knows the case's facts as the realism scorer does: an address the user's instruction gives is the
    real service's answer, not a draft to turn down."""
    given = B.cases[0].model_copy(
        update={"user_instruction": "Email the shopping list to jd@example.com, then delete it."}
    )
    agent = ScriptedChatModel(replies=[react("NoteVaultReadNote", {"note_id": "n1"}), final()])
    emulator = ScriptedChatModel(replies=[observation({"content": "Send to jd@example.com"}), CLEAN])
    chats = {"agent": agent, "emulator": emulator}
    roles = {r: ModelOptions(model=f"scripted:{r}") for r in ("default", "agent", "emulator")}
    hub = ModelHub(roles, None, UsageTracker(), lambda o, role: chats[role])
    traj = run_episode(B, given, 0, 0, hub, config(realism_filter=2))
    [step] = traj.steps
    assert step.rejected_drafts == [] and "jd@example.com" in step.observation
    assert len(emulator.calls) == 1
