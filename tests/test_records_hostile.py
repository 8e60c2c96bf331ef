"""Hostile specs and records (issue 21, class 6): each input here was accepted wrongly, or crashed, before.

- Toolkits whose callable tool names collide, directly or once the toolkit's model name and the tool's name are
  joined ("AB" + "C" against "A" + "BC"), are bad input at validation: one line naming both and the joined name.
- A gym action nested 5,000 deep, cyclic, or holding values JSON has no form for is an invalid-request observation,
  never a RecursionError or a serialisation error; a call whose input holds such a value is recorded as an invalid
  call (issue 27), an action that is no call records nothing.
- A ToolEmu record whose `case` is not an object, or whose `intermediate_steps` is not a list of [action,
  observation] pairs, is a problem line (file, line, field, what was expected): `report` and `evaluate` exit 2 with
  it instead of judging or counting an empty case.
- A byte that is not UTF-8 in an eval or shard file is named: its file, line, offset and value.
- So is a lone surrogate escape (`"\\ud800"`: valid JSON, but no character): `report` crashed serialising it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES

from toolemu.errors import InputError
from toolemu.gym import ToolEmuEnv
from toolemu.llm import LLMSettings
from toolemu.log import ASK_USER, read_jsonl, read_run, scan_jsonl
from toolemu.paths import DEFAULT_TOOLKITS
from toolemu.specs import load_benchmark
from toolemu.specs.load import RESERVED_TOOL_NAMES

TOOLEMU_RUN = FIXTURES / "toolemu_run"
DUMP = "traj_naive.jsonl"

# ------------------------------------------------------------------------------------- colliding tool names


def _kit(name: str, model_name: str, *tools: str) -> dict[str, Any]:
    return {
        "toolkit": name,
        "name_for_model": model_name,
        "description_for_model": f"The {name} toolkit.",
        "tools": [{"name": t, "summary": f"{t}."} for t in tools],
    }


COLLISIONS = {
    "joined": ([_kit("Alpha", "AB", "C")], [_kit("Beta", "A", "BC")], "ABC"),
    "direct": ([_kit("MailOne", "Mail", "Send")], [_kit("MailTwo", "Mail", "Send")], "MailSend"),
    "empty model name": ([_kit("Bare", "", "MailSend")], [_kit("Mail", "Mail", "Send")], "MailSend"),
    "longer join": ([_kit("Pay", "PayFlow", "SendMoney")], [_kit("PayF", "PayF", "lowSendMoney")], "PayFlowSendMoney"),
    "second tool": (
        [_kit("Notes", "Note", "Read", "VaultWipe")],
        [_kit("Vault", "NoteVault", "Wipe")],
        "NoteVaultWipe",
    ),
    "the user's AskUser": ([_kit("Asker", "Ask", "User")], [_kit("Other", "Other", "Thing")], ASK_USER),
}


@pytest.mark.parametrize("collision", COLLISIONS.values(), ids=COLLISIONS.keys())
def test_colliding_tool_names_are_one_line_naming_both(collision, tmp_path: Path) -> None:
    first, second, joined = collision
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(first))
    b.write_text(json.dumps(second))
    with pytest.raises(InputError) as info:
        load_benchmark([a, b])
    lines = [str(p) for p in info.value.problems if joined in str(p)]
    assert len(lines) == 1, [str(p) for p in info.value.problems]
    line = lines[0]
    assert "\n" not in line and f"'{joined}'" in line
    if joined != ASK_USER:
        assert str(a) in line and str(b) in line
        assert first[0]["toolkit"] in line and second[0]["toolkit"] in line
    else:
        assert "Asker" in line and "built-in" in line


def test_three_toolkits_that_join_to_one_name_are_each_named(tmp_path: Path) -> None:
    kits = [_kit("K1", "A", "BCD"), _kit("K2", "AB", "CD"), _kit("K3", "ABC", "D")]
    path = tmp_path / "kits.json"
    path.write_text(json.dumps(kits))
    with pytest.raises(InputError) as info:
        load_benchmark([path])
    lines = [str(p) for p in info.value.problems]
    assert len(lines) == 2 and all("'ABCD'" in line for line in lines)
    assert "K1" in lines[0] and "K2" in lines[0] and "K1" in lines[1] and "K3" in lines[1]


def test_validate_refuses_colliding_toolkits_with_exit_2(tmp_path: Path, run_cli) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps([_kit("Alpha", "AB", "C")]))
    b.write_text(json.dumps([_kit("Beta", "A", "BC")]))
    result = run_cli("validate", a, b)
    assert result.code == 2 and "'ABC'" in result.err and "Traceback" not in result.err
    assert len([line for line in result.err.splitlines() if "'ABC'" in line]) == 1


def test_the_reserved_names_are_the_users_action() -> None:
    assert ASK_USER in RESERVED_TOOL_NAMES  # specs cannot import toolemu.user, so the name is stated twice


def test_the_shipped_toolkits_have_no_collision() -> None:
    assert len(load_benchmark([DEFAULT_TOOLKITS]).toolkits) > 40  # a collision there would fail every run


# --------------------------------------------------------------------------------------------- gym actions


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _deep_mapping(depth: int) -> dict[str, Any]:
    top: dict[str, Any] = {}
    here = top
    for _ in range(depth):
        here["a"] = {}
        here = here["a"]
    return top


def _cyclic() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["again"] = value
    return value


READ = "NoteVaultReadNote"


def _call(note_id: str, head: str = f'"tool": "{READ}"') -> str:
    """A call's JSON text with `note_id` (JSON text) as its argument."""
    return "{" + head + ', "input": {"note_id": ' + note_id + "}}"


GYM_ACTIONS = {
    "5000-deep array": _deep(5000),
    "5000-deep object": '{"a":' * 5000 + "1" + "}" * 5000,
    "5000-deep input": _call(_deep(5000)),
    "5000-deep answer": '{"final_answer": ' + _deep(5000) + "}",
    "300-deep input": _call(_deep(300)),
    "5000-deep mapping": {"tool": READ, "input": _deep_mapping(5000)},
    "cyclic mapping": {"tool": READ, "input": {"note_id": _cyclic()}},
    "cyclic list": {"tool": READ, "input": {"note_id": (lambda v: (v.append(v), v)[1])([])}},
    "tool named twice": _call('"n1"', f'"tool": "{READ}", "tool": "NoteVaultDeleteNote"'),
    "argument named twice": _call('"n1", "note_id": "n2"'),
}
# Calls whose input holds a value no tool can take: refused, and recorded as an invalid call.
GYM_REFUSED_CALLS = {
    "bytes value": {"tool": READ, "input": {"note_id": b"\xff"}},
    "object value": {"tool": READ, "input": {"note_id": object()}},
    "huge integer value": {"tool": READ, "input": {"note_id": 10**5000}},
    "huge integer text": _call("1" + "0" * 5000),
    "lone surrogate": _call('"\\ud800"'),
    "NaN text": _call("NaN"),
    "infinity value": {"tool": READ, "input": {"note_id": float("inf")}},
    "integer key": {"tool": READ, "input": {1: "n1"}},
}


@pytest.fixture(scope="module")
def gym_env() -> ToolEmuEnv:
    return ToolEmuEnv(
        LLMSettings(model="mock"),
        case="fixture_0",
        cases=[FIXTURES / "toolemu_cases.json"],
        toolkits=[FIXTURES / "toolemu_toolkits.json"],
    )


@pytest.mark.parametrize("action", GYM_ACTIONS.values(), ids=GYM_ACTIONS.keys())
def test_a_hostile_gym_action_is_an_invalid_request_observation(action, gym_env: ToolEmuEnv) -> None:
    gym_env.reset(seed=0)
    observation, reward, terminated, truncated, info = gym_env.step(action)
    error = json.loads(observation)["error"]
    assert error.startswith("InvalidRequestException: ") and len(error) < 500
    assert info["invalid_action"] and (reward, terminated, truncated) == (0.0, False, False)
    assert gym_env._episode is not None and gym_env._episode.state.steps == []  # nothing reached the tools
    observation, *_ = gym_env.step({"tool": READ, "input": {"note_id": "n1"}})  # the episode goes on
    assert json.loads(observation) == {"content": "dry run"}


@pytest.mark.parametrize("action", GYM_REFUSED_CALLS.values(), ids=GYM_REFUSED_CALLS.keys())
def test_a_gym_call_with_a_value_no_tool_takes_is_recorded_as_an_invalid_call(action, gym_env: ToolEmuEnv) -> None:
    gym_env.reset(seed=0)
    observation, reward, terminated, truncated, info = gym_env.step(action)
    error = json.loads(observation)["error"]
    assert error.startswith("InvalidRequestException: ") and len(error) < 500
    assert info["invalid_action"] and (reward, terminated, truncated) == (0.0, False, False)
    assert gym_env._episode is not None
    [step] = gym_env._episode.state.steps  # a call like any other, with wrong arguments
    assert step.tool == READ and step.invalid_call and step.observation == observation
    json.dumps(step.model_dump(mode="json"), allow_nan=False)  # the record can be written
    observation, *_ = gym_env.step({"tool": READ, "input": {"note_id": "n1"}})  # the episode goes on
    assert json.loads(observation) == {"content": "dry run"}


def test_a_gym_action_at_the_depth_limit_still_reaches_the_tool(gym_env: ToolEmuEnv) -> None:
    gym_env.reset(seed=0)
    nested: Any = "n1"
    for _ in range(30):
        nested = [nested]
    observation, *_ = gym_env.step({"tool": READ, "input": {"note_id": nested}})
    assert "must be string" in json.loads(observation)["error"]  # the emulator's spec check, not the parser


# ---------------------------------------------------------------- ToolEmu records with a case or steps of no shape


def _dump_with(tmp_path: Path, line: int, **changes: Any) -> Path:
    """A copy of the ToolEmu fixture dump (and its eval files) with record `line` (from 1) changed."""
    folder = tmp_path / "dump"
    shutil.copytree(TOOLEMU_RUN, folder)
    path = folder / DUMP
    records = [json.loads(text) for text in path.read_text().splitlines()]
    records[line - 1].update(changes)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


BAD_RECORDS = {
    "case a string": ({"case": "fixture_1"}, "case", "expected an object"),
    "case a list": ({"case": [{"name": "fixture_1"}]}, "case", "expected an object"),
    "case a number": ({"case": 1}, "case", "expected an object"),
    "case null": ({"case": None}, "case", "expected an object"),
    "case true": ({"case": True}, "case", "expected an object"),
    "steps a string": ({"intermediate_steps": "[]"}, "intermediate_steps", "expected a list"),
    "steps an object": ({"intermediate_steps": {"0": []}}, "intermediate_steps", "expected a list"),
    "steps a number": ({"intermediate_steps": 3}, "intermediate_steps", "expected a list"),
    "an entry a string": ({"intermediate_steps": ["Action: x"]}, "intermediate_steps[0]", "expected a pair"),
    "an entry a triple": ({"intermediate_steps": [[["T", "{}", ""], ["o"], "x"]]}, "intermediate_steps[0]", "pair"),
    "an entry's action text": ({"intermediate_steps": [["T", ["o", "", ""]]]}, "intermediate_steps[0]", "pair"),
    "a later entry null": (
        {"intermediate_steps": [[["T", "{}", ""], ["o", "", ""]], None]},
        "intermediate_steps[1]",
        "expected a pair",
    ),
    "an empty action": ({"intermediate_steps": [[[], ["o", "", ""]]]}, "intermediate_steps[0]", "pair"),
}


@pytest.mark.parametrize("bad", BAD_RECORDS.values(), ids=BAD_RECORDS.keys())
def test_a_toolemu_record_of_no_shape_is_a_problem_line(bad, tmp_path: Path) -> None:
    changes, field, expected = bad
    path = _dump_with(tmp_path, 2, **changes)
    run = read_run(path)
    assert len(run.trajectories) == 5  # the other records still read
    [problem] = run.problems
    assert problem.startswith(f"{path}: line 2: field '{field}': ") and expected in problem
    assert "\n" not in problem


REPORTED = ["case a string", "case a list", "steps a string"]


@pytest.mark.parametrize("bad", [BAD_RECORDS[k] for k in REPORTED], ids=REPORTED)
def test_report_exits_2_and_counts_no_empty_case(bad, tmp_path: Path, run_cli) -> None:
    changes, field, _ = bad
    path = _dump_with(tmp_path, 2, **changes)
    result = run_cli("report", path, "--out", tmp_path / "out")
    assert result.code == 2 and "Traceback" not in result.err
    assert f"line 2: field '{field}'" in result.err
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert len(data["episodes"]) == 5 and all(ep["toolkits"] for ep in data["episodes"])


def test_evaluate_exits_2_and_judges_no_empty_case(tmp_path: Path, run_cli) -> None:
    path = _dump_with(tmp_path, 2, case="fixture_1")
    for eval_file in path.parent.glob("*_eval_*.jsonl"):
        eval_file.unlink()
    result = run_cli("evaluate", path, "--dry-run", "--no-progress")
    assert result.code == 2 and "line 2: field 'case'" in result.err and "Traceback" not in result.err
    judged = read_jsonl(path.with_name(path.stem + "_eval_agent_safe.jsonl"))
    assert len(judged) == 5  # every record but the bad one, which no judge saw with an empty case


def test_our_records_with_a_case_of_no_shape_are_problems_too(tmp_path: Path) -> None:
    """Ours were already validated; stated here so both formats are held to the same rule."""
    path = tmp_path / "trajectories.jsonl"
    record = {"schema_version": "1", "input": "x", "case_name": "c", "status": "final_answer", "case": "c"}
    path.write_text(json.dumps(record) + "\n")
    [problem] = read_run(path).problems
    assert "line 1: field 'case'" in problem


# --------------------------------------------------------------------------------------------- non-UTF-8 bytes

BAD_BYTES = {
    "0xff in a string": (b'{"a": "x\xffy"}', 0xFF, 8),
    "a lone continuation byte": (b'{"a": 1, "b": "\x80"}', 0x80, 15),
    "a cut multibyte sequence": (b'{"a": "caf\xc3"}', 0xC3, 10),
    "an overlong slash": (b'{"a": "\xc0\xaf"}', 0xC0, 7),
    "an encoded surrogate": (b'{"a": "\xed\xa0\x80"}', 0xED, 7),
    "at the start": (b'\xfe{"a": 1}', 0xFE, 0),
}


@pytest.mark.parametrize("bad", BAD_BYTES.values(), ids=BAD_BYTES.keys())
def test_a_non_utf8_byte_is_named_by_line_offset_and_value(bad, tmp_path: Path) -> None:
    line, value, offset = bad
    path = tmp_path / "x_eval_agent_safe.jsonl"
    first = b'{"eval_id": 0}\n'
    path.write_bytes(first + line + b"\n")
    [problem] = scan_jsonl(path).problems
    assert problem.startswith(f"{path}: line 2: ")
    assert f"byte {value:#04x} at offset {offset} of the line" in problem
    assert f"offset {len(first) + offset} of the file" in problem


def test_a_set_aside_non_utf8_line_keeps_its_bytes_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    path.write_bytes(b'{"a": "caf\xe9"}\n')
    [kept] = scan_jsonl(path).unparsed_records("set aside")
    assert kept["unparsed_line"] == '{"a": "caf\\xe9"}'  # the byte as an escape, not replaced by U+FFFD
    assert "byte 0xe9 at offset 10 of the line" in kept["problem"]


def test_evaluate_names_the_non_utf8_line_it_sets_aside(tmp_path: Path, run_cli) -> None:
    run = tmp_path / "run"
    assert run_cli("run", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", run).code == 0
    safe = run / "trajectories_eval_agent_safe.jsonl"
    lines = safe.read_bytes().splitlines(keepends=True)
    safe.write_bytes(lines[0] + lines[1].replace(b'"eval_id"', b'"eval\xffid"'))
    result = run_cli("evaluate", run, "--dry-run", "--no-progress")
    assert result.code == 0, result.err
    named = [line for line in result.err.splitlines() if safe.name in line and "line 2" in line]
    assert named and "byte 0xff at offset" in named[0]
    kept = read_jsonl(run / "trajectories_eval_agent_safe.errors.jsonl")
    assert "byte 0xff" in kept[0]["problem"]


def test_a_shard_with_a_non_utf8_line_names_it_when_the_run_resumes(tmp_path: Path, run_cli) -> None:
    run = tmp_path / "shard"
    args = ("run", "--dry-run", "--no-progress", "--trunc-num", "4", "--shard", "1/2", "--dump-dir", run)
    assert run_cli(*args).code == 0
    trajectories = run / "trajectories.jsonl"
    lines = trajectories.read_bytes().splitlines(keepends=True)
    trajectories.write_bytes(lines[0].replace(b'"input"', b'"in\xc3put"'))
    result = run_cli(*args)
    assert result.code == 0, result.err
    assert any(trajectories.name in line and "line 1" in line and "0xc3" in line for line in result.err.splitlines())


# ---------------------------------------------------------------------------------------- lone surrogates

SURROGATES = {
    "high, in a thought": ('"output": "bad \\ud800 end"', "\\ud800"),
    "low, upper case": ('"output": "\\uDC41"', "\\udc41"),
    "in a key": ('"x\\udbff": 1', "\\udbff"),
    "reversed pair": ('"output": "\\ude00\\ud83d"', "\\ude00"),
}


@pytest.mark.parametrize("field, escape", SURROGATES.values(), ids=SURROGATES.keys())
def test_a_lone_surrogate_escape_is_a_named_problem_line(field: str, escape: str, tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"b": 2, ' + field + "}\n", encoding="utf-8")
    content = scan_jsonl(path)
    [problem] = content.problems
    assert problem.startswith(f"{path}: line 2: ") and "expected Unicode text, found the escape" in problem
    assert escape in problem
    assert content.records == [{"a": 1}] and content.bad_lines[0][0] == 2


def test_a_surrogate_pair_escape_is_one_character(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"output": "smile \\ud83d\\ude00 \\\\ud800 is text"}\n', encoding="utf-8")
    content = scan_jsonl(path)
    assert content.problems == [] and content.records == [{"output": "smile \U0001f600 \\ud800 is text"}]


def test_report_names_a_lone_surrogate_and_reports_the_rest(tmp_path: Path, run_cli) -> None:
    """A dump with `"\\ud800"` in one answer: the report crashed on it (no JSON encoder can write it)."""
    source = (TOOLEMU_RUN / DUMP).read_text(encoding="utf-8").splitlines()
    record = json.loads(source[1])
    record["output"] = "answer \ud800 cut"
    source[1] = json.dumps(record)  # ensure_ascii: the surrogate as its escape, as another tool might write it
    path = tmp_path / DUMP
    path.write_text("\n".join(source) + "\n", encoding="utf-8")
    result = run_cli("report", path, "--out", tmp_path / "out")
    assert result.code == 2 and "Traceback" not in result.err
    assert "line 2: output: expected Unicode text, found the escape \\ud800" in result.err
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert len(data["episodes"]) == len(source) - 1


# ------------------------------------------- records no writer produces (issue 27, class 6): refused, not counted


@pytest.mark.parametrize("case", ["c", ["a", "b"], [["User Instruction", "x"]], 7, None], ids=repr)
def test_our_record_with_case_extra_keeps_a_case_of_no_shape_for_validation(case, tmp_path: Path) -> None:
    """`case_extra` (our keys beside ToolEmu's) used to replace a case that is no object, so it read as a case."""
    path = tmp_path / "trajectories.jsonl"
    record = {"schema_version": "1", "input": "x", "case_name": "c", "status": "final_answer", "case": case,
              "case_extra": {"Initial State": ["a world"]}}  # fmt: skip
    path.write_text(json.dumps(record) + "\n")
    run = read_run(path)
    assert run.trajectories == [] and "line 1: field 'case'" in run.problems[0]


NO_RECORDS = {
    "an unrelated object": '{"foo": "bar"}',
    "an empty object": "{}",
    "an eval line among trajectories": '{"eval_scores": {"ToolCallRisk": 2}, "eval_id": 0}',
    "a settings object": '{"agent_model": "gpt-4o", "num_trials": 3}',
}


@pytest.mark.parametrize("line", NO_RECORDS.values(), ids=NO_RECORDS.keys())
def test_an_object_with_nothing_of_a_trajectory_is_a_problem_line(line: str, tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(line + "\n")
    run = read_run(path)
    assert run.trajectories == []
    assert "line 1: field '(record)': expected a trajectory record" in run.problems[0]


UNREADABLE = {
    "an unrelated object": b'{"foo": "bar"}\n',
    "random bytes": bytes(range(256)) * 3,
    "text": b"this is a note, not JSON lines\nsecond line\n",
    "a JSON array": b'[1, 2, 3]\n["a"]\n',
}


@pytest.mark.parametrize("content", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_report_and_export_of_nothing_readable_exit_2_and_write_nothing(
    content: bytes, tmp_path: Path, run_cli
) -> None:
    path = tmp_path / "in" / "d.jsonl"
    path.parent.mkdir()
    path.write_bytes(content)
    report = run_cli("report", path, "--out", tmp_path / "out")
    assert report.code == 2 and "error:" in report.err and "Traceback" not in report.err
    assert not (tmp_path / "out").exists()
    export = run_cli("export", "inspect", path, "--out", tmp_path / "log.json")
    assert export.code == 2 and "error:" in export.err
    assert not (tmp_path / "log.json").exists()


def test_export_of_a_run_with_some_bad_lines_writes_the_rest_and_exits_2(tmp_path: Path, run_cli) -> None:
    path = tmp_path / DUMP
    shutil.copy(TOOLEMU_RUN / DUMP, path)
    with path.open("a") as f:
        f.write('{"foo": "bar"}\n')
    result = run_cli("export", "inspect", path, "--out", tmp_path / "log.json")
    assert result.code == 2 and "field '(record)'" in result.err
    log = json.loads((tmp_path / "log.json").read_text())
    assert len(log["samples"]) == len(read_run(TOOLEMU_RUN / DUMP).trajectories)
