"""Prefix-keyed replay: observations reused up to a changed agent's first divergent action, the reuse rate in
run.json and the console, keys that tell emulators and cases apart, and `toolemu replay` of one episode."""

from __future__ import annotations

import json
from pathlib import Path

from validity_helpers import BANK_CASE, HARMFUL, bank_hub, emulator, react, scripted_factory, write_bench

import toolemu
from toolemu.episode import ReplaySpec
from toolemu.log import read_meta, read_run
from toolemu.runner import RunConfig

READ, STATEMENT, PAY = (
    react("BankReadInbox", {}),
    react("BankReadStatement", {"account": "main"}),
    react("BankTransfer", {"to": "acct-evil", "amount": 5000}),
)


def scripted_agent(turns: list[str]):
    """The agent's n-th turn is turns[n]: how many observations its prompt shows."""

    def respond(messages, kwargs) -> str:
        done = messages[-1]["content"].count("Observation:")
        return turns[done] if done < len(turns) else "Thought: Done.\nFinal Answer: paid."

    return respond


def _run(tmp_path: Path, name: str, turns: list[str], replay: Path | None = None, counter: list[str] | None = None,
         emulator_model: str = "scripted:emulator", case: dict | None = None) -> Path:  # fmt: skip
    kits, cases = write_bench(tmp_path / f"bench-{name}", [case or BANK_CASE])
    hub = bank_hub(scripted_factory(scripted_agent(turns), {None: emulator(HARMFUL, counter)}))
    hub.roles["emulator"] = hub.roles["emulator"].model_copy(update={"model": emulator_model})
    run = tmp_path / name
    config = RunConfig(agent_format="react", elements=(ReplaySpec(replay),) if replay else ())
    summary = toolemu.emulate(dump_dir=run, config=config, cases=[cases], toolkits=[kits], hub=hub, show_progress=False)
    assert summary.finished == 1
    return run


def test_a_changed_agent_reuses_observations_up_to_its_first_divergent_action(tmp_path, run_cli) -> None:
    original = _run(tmp_path, "original", [READ, STATEMENT, PAY])
    counter: list[str] = []
    # The new agent reads the inbox as before, then asks for another account: it diverges at step 2.
    changed = [READ, react("BankReadStatement", {"account": "savings"}), PAY]
    new = _run(tmp_path, "new", changed, replay=original, counter=counter)
    [traj] = read_run(new).trajectories
    assert [s.replayed for s in traj.steps] == [True, False, False]
    assert counter == ["BankReadStatement", "BankTransfer"]  # the emulator played only the calls after it
    [first] = read_run(original).trajectories
    assert traj.steps[0].observation == first.steps[0].observation
    assert traj.steps[0].obs_key == first.steps[0].obs_key and traj.steps[2].obs_key != first.steps[2].obs_key
    meta = read_meta(new / "run.json")
    assert meta.replay is not None
    assert meta.replay.model_dump() == {"source": str(original), "reused": 1, "calls": 3, "rate": 0.3333}


def test_the_same_agent_reuses_every_observation_and_the_console_says_so(tmp_path) -> None:
    original = _run(tmp_path, "original", [READ, STATEMENT, PAY])
    counter: list[str] = []
    again = _run(tmp_path, "again", [READ, STATEMENT, PAY], replay=original, counter=counter)
    assert counter == [] and read_meta(again / "run.json").replay.reused == 3
    [before], [after] = read_run(original).trajectories, read_run(again).trajectories
    assert after.steps[2].state == before.steps[2].state and after.ledger == before.ledger  # the patch comes too
    assert ReplaySpec(original).after_run(again) == [f"replay: reused 3 of 3 observations (100%) from {original}"]


def test_another_emulator_or_an_edited_case_reuses_nothing(tmp_path) -> None:
    original = _run(tmp_path, "original", [READ, STATEMENT, PAY])
    other = _run(tmp_path, "other", [READ, STATEMENT, PAY], replay=original, emulator_model="scripted:emulator-v2")
    assert read_meta(other / "run.json").replay.reused == 0
    edited = {**BANK_CASE, "Initial State": ["The inbox holds two invoice messages."]}
    moved = _run(tmp_path, "moved", [READ, STATEMENT, PAY], replay=original, case=edited)
    assert read_meta(moved / "run.json").replay.reused == 0


def test_a_dry_run_replay_through_the_cli(tmp_path, run_cli) -> None:
    first = run_cli("emulate", "--dry-run", "--trunc-num", "2", "--dump-dir", tmp_path / "a", "--no-progress")
    assert first.code == 0
    second = run_cli(
        "emulate", "--dry-run", "--trunc-num", "2", "--dump-dir", tmp_path / "b", "--replay", tmp_path / "a",
        "--no-progress",
    )  # fmt: skip
    assert second.code == 0 and f"replay: reused 2 of 2 observations (100%) from {tmp_path / 'a'}" in second.out
    bad = run_cli("emulate", "--dry-run", "--dump-dir", tmp_path / "c", "--replay", tmp_path / "nowhere")
    assert bad.code == 2 and len(bad.err.strip().splitlines()) == 1 and "nowhere" in bad.err


def test_toolemu_replay_reproduces_a_finished_episode(tmp_path, run_cli) -> None:
    run = _run(tmp_path, "original", [READ, STATEMENT, PAY])
    result = run_cli("replay", run, "--case", "bank_invoice")
    assert result.code == 0, result.out + result.err
    lines = result.out.strip().splitlines()  # (the emulation above printed a blank line)
    assert lines[0] == "step 1 [observation by replay key]: BankReadInbox {}"
    assert "  state: set account:main.balance = -4000" in lines
    assert lines[-1] == "reproduced bank_invoice#0: 3 steps, final_answer, 1 facts in the ledger"


def test_toolemu_replay_prints_what_differs(tmp_path, run_cli) -> None:
    run = _run(tmp_path, "original", [READ, STATEMENT, PAY])
    traj_file = run / "trajectories.jsonl"
    [record] = [json.loads(line) for line in traj_file.read_text().splitlines()]
    record["steps"][1]["tool_input"] = {"account": "savings"}  # step 3's recorded key no longer fits its prefix
    record["ledger"] = {"account:main.balance": 0}
    traj_file.write_text(json.dumps(record) + "\n")
    result = run_cli("replay", run, "--case", "bank_invoice", "--quiet")
    assert result.code == 1
    assert result.out.strip().splitlines()[0] == "not reproduced bank_invoice#0: 3 differences"
    assert "step 2: its prefix key" in result.out and "step 3: its prefix key" in result.out
    assert "ledger: recorded" in result.out


def test_toolemu_replay_names_an_unknown_case(tmp_path, run_cli) -> None:
    run = _run(tmp_path, "original", [READ])
    result = run_cli("replay", run, "--case", "nope", "--trial", "0")
    assert result.code == 2 and "it has: bank_invoice" in result.err and len(result.err.strip().splitlines()) == 1


def test_a_call_whose_tool_failed_is_not_reused(tmp_path) -> None:
    from toolemu.episode.replay import ReplayIndex
    from toolemu.log import Step, Trajectory

    failed = Step(index=0, tool="BankReadInbox", observation='{"error": "not run: boom"}', obs_key="k1", not_run="boom")
    kept = Step(index=1, tool="BankReadInbox", observation='{"text": "hi"}', obs_key="k2")
    traj = Trajectory(input="x", case_name="c", status="error", steps=[failed, kept])
    assert set(ReplayIndex.of([traj], "run").steps) == {"k2"}
