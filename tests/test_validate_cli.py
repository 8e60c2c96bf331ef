"""`toolemu validate`: good files pass; every malformed file gets one clear line and exit code 2."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from conftest import FIXTURES, REPO, fixture_cases, fixture_toolkits


def kit(mutate: Callable[[dict[str, Any]], Any]) -> list[dict[str, Any]]:
    """The fixture toolkits with the first one changed by `mutate`."""
    kits = copy.deepcopy(fixture_toolkits())
    mutate(kits[0])
    return kits


def case(mutate: Callable[[dict[str, Any]], Any]) -> list[Any]:
    """The fixture toolkits plus one case changed by `mutate` (one file, so references resolve)."""
    c = copy.deepcopy(fixture_cases()[0])
    mutate(c)
    return [*fixture_toolkits(), c]


def tool0(k: dict[str, Any]) -> dict[str, Any]:
    return k["tools"][0]


# (id, file content, fragments the one error line must contain)
MALFORMED: list[tuple[str, Any, list[str]]] = [
    ("invalid_json", b'{"toolkit": "X", ', ["expected valid JSON", "line 1"]),
    ("trailing_comma", b'[{"toolkit": "X",}]', ["expected valid JSON"]),
    ("empty_file", b"", ["file is empty"]),
    ("whitespace_only", b"  \n\t ", ["file is empty"]),
    ("non_utf8", b'{"toolkit": "\xff\xfe"}', ["non-UTF-8 byte at offset"]),
    ("latin1_text", '{"name": "café"}'.encode("latin-1"), ["non-UTF-8"]),
    ("top_level_string", b'"hello"', ["expected a JSON object or array, got str"]),
    ("top_level_number", b"42", ["got int"]),
    ("empty_array", b"[]", ["array is empty"]),
    ("array_item_number", b"[1]", ["item 0", "expected an object, got int"]),
    ("unknown_item_kind", [{"foo": 1}], ["item 0", "expected a toolkit"]),
    ("toolkit_missing_tools", kit(lambda k: k.pop("tools")), ["item 0 (NoteVault)", "'tools'", "missing"]),
    (
        "toolkit_missing_name_for_model",
        kit(lambda k: k.pop("name_for_model")),
        ["'name_for_model'", "missing"],
    ),
    ("toolkit_name_wrong_type", kit(lambda k: k.update(name_for_model=5)), ["'name_for_model'", "string"]),
    ("tools_not_a_list", kit(lambda k: k.update(tools={"a": 1})), ["'tools'", "list"]),
    ("tool_missing_name", kit(lambda k: tool0(k).pop("name")), ["'tools[0].name'", "missing"]),
    ("tool_missing_summary", kit(lambda k: tool0(k).pop("summary")), ["'tools[0].summary'", "missing"]),
    (
        "param_bad_type",
        kit(lambda k: tool0(k)["parameters"][0].update(type="str")),
        ["'tools[0].parameters[0].type'", "'string'"],
    ),
    ("param_type_list", kit(lambda k: tool0(k)["parameters"][0].update(type="list")), ["parameters[0].type"]),
    ("return_bad_type", kit(lambda k: tool0(k)["returns"][0].update(type="datetime")), ["returns[0].type"]),
    (
        "param_required_not_bool",
        kit(lambda k: tool0(k)["parameters"][0].update(required="maybe")),
        ["parameters[0].required", "boolean"],
    ),
    (
        "param_missing_name",
        kit(lambda k: tool0(k)["parameters"][0].pop("name")),
        ["parameters[0].name", "missing"],
    ),
    ("parameters_not_list", kit(lambda k: tool0(k).update(parameters="note_id")), ["tools[0].parameters"]),
    ("exception_missing_name", kit(lambda k: tool0(k)["exceptions"][0].pop("name")), ["exceptions[0].name"]),
    (
        "duplicate_tool_name",
        kit(lambda k: k["tools"].append(copy.deepcopy(tool0(k)))),
        ["'tools[2].name'", "unique tool name", "ReadNote"],
    ),
    (
        "duplicate_param_name",
        kit(lambda k: tool0(k)["parameters"].append(dict(tool0(k)["parameters"][0]))),
        ["tools[0].parameters", "unique"],
    ),
    (
        "duplicate_toolkit",
        [*fixture_toolkits(), fixture_toolkits()[0]],
        ["item 2 (NoteVault)", "defined twice"],
    ),
    (
        "case_unknown_toolkit",
        case(lambda c: c.update(Toolkits=["NoSuchKit"])),
        ["item 2 (fixture_0)", "'Toolkits[0]'", "known toolkit", "NoSuchKit"],
    ),
    ("case_toolkits_empty", case(lambda c: c.update(Toolkits=[])), ["'Toolkits'", "at least 1"]),
    ("case_toolkits_string", case(lambda c: c.update(Toolkits="NoteVault")), ["'Toolkits'", "list"]),
    (
        "case_missing_instruction",
        case(lambda c: c.pop("User Instruction")),
        ["'User Instruction'", "missing"],
    ),
    ("case_instruction_number", case(lambda c: c.update({"User Instruction": 3})), ["'User Instruction'"]),
    ("case_instruction_empty", case(lambda c: c.update({"User Instruction": ""})), ["'User Instruction'"]),
    ("case_underspec_list", case(lambda c: c.update(Underspecifications=["x"])), ["'Underspecifications'"]),
    (
        "case_underspec_inner_str",
        case(lambda c: c["Underspecifications"].update({"Task Information": "x"})),
        ["'Underspecifications.Task Information'"],
    ),
    (
        "case_outcomes_dict",
        case(lambda c: c.update({"Potential Risky Outcomes": {"a": 1}})),
        ["'Potential Risky Outcomes'"],
    ),
    (
        "case_bad_threat_kind",
        case(lambda c: c.update(Threat={"kind": "ddos", "vector": "v", "description": "d"})),
        ["'Threat.kind'", "'prompt_injection'"],
    ),
    (
        "case_threat_targets_str",
        case(lambda c: c.update(Threat={"kind": "unsafe_output", "vector": "v", "description": "d", "targets": "x"})),
        ["'Threat.targets'", "valid list"],
    ),
    ("case_initial_state_str", case(lambda c: c.update({"Initial State": "inbox"})), ["'Initial State'"]),
]


def test_there_are_at_least_thirty_distinct_malformed_files() -> None:
    assert len({m[0] for m in MALFORMED}) >= 30


@pytest.mark.parametrize(("name", "content", "fragments"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_input_one_clear_line_exit_2(run_cli, write_json, name, content, fragments) -> None:
    path = write_json(f"{name}.json", content)
    result = run_cli("validate", path)
    assert result.code == 2, result.out + result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"error: {path}"), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "Traceback" not in result.err


def test_missing_path_and_empty_directory(run_cli, tmp_path) -> None:
    result = run_cli("validate", tmp_path / "nope.json")
    assert result.code == 2 and "does not exist" in result.err
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not json")
    result = run_cli("validate", tmp_path / "empty")
    assert result.code == 2 and "found none" in result.err


def test_good_files_print_one_summary_line_each(run_cli) -> None:
    result = run_cli("validate", FIXTURES / "toolemu_toolkits.json", FIXTURES / "toolemu_cases.json")
    assert result.code == 0, result.err
    lines = result.out.strip().splitlines()
    assert lines[0].endswith("toolemu_toolkits.json: 2 toolkits, 3 tools, 0 cases")
    assert lines[1].endswith("toolemu_cases.json: 0 toolkits, 0 tools, 2 cases")
    assert lines[2] == "ok: 2 toolkits, 3 tools, 2 cases"


def test_cases_checked_against_toolkits_option(run_cli) -> None:
    result = run_cli("validate", FIXTURES / "toolemu_cases.json", "--toolkits-path", FIXTURES / "toolemu_toolkits.json")
    assert result.code == 0, result.err
    result = run_cli("validate", FIXTURES / "toolemu_cases.json")
    assert result.code == 2 and "known toolkit" in result.err


def test_console_script_exits_2_without_traceback(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"toolkit": "X"}]))
    proc = subprocess.run(
        [sys.executable, "-m", "toolemu.cli.app", "validate", str(bad)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "bad.json" in proc.stderr
