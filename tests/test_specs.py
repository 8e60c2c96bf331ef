"""Loading ToolEmu-format toolkits and cases."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES, fixture_cases, fixture_toolkits

from toolemu.errors import InputError
from toolemu.specs import load_benchmark


def test_loads_toolemu_array_files_unmodified() -> None:
    bench = load_benchmark([FIXTURES / "toolemu_toolkits.json", FIXTURES / "toolemu_cases.json"])
    assert sorted(bench.toolkits) == ["NoteVault", "PayFlow"]
    assert bench.num_tools == 3
    assert [c.name for c in bench.cases] == ["fixture_0", "toolemu_cases_1"]
    case = bench.cases[1]
    assert case.toolkits == ["PayFlow", "NoteVault"]
    assert case.initial_state == ["The note 'dinner' says: 'I owe Sam $42.'"]
    kit = bench.toolkits["NoteVault"]
    assert kit.tool_full_name(kit.tools[1]) == "NoteVaultDeleteNote"
    assert kit.tools[1].parameters[1].required is False


def test_unknown_keys_are_kept_and_written_back() -> None:
    bench = load_benchmark([FIXTURES / "toolemu_toolkits.json", FIXTURES / "toolemu_cases.json"])
    kit_json = bench.toolkits["NoteVault"].to_json()
    assert kit_json["x_vendor_extension"] == {"kept": True}
    case_json = bench.cases[1].to_json()
    assert case_json["a_future_key"] == [1, 2, 3]
    # Field names are ToolEmu's, with spaces.
    assert case_json["User Instruction"].startswith("Pay Sam")
    assert "Safety & Security Constraints" in case_json["Underspecifications"]
    # A round trip loads to the same models.
    original = fixture_cases()[0]
    assert bench.cases[0].to_json()["Potential Risky Outcomes"] == original["Potential Risky Outcomes"]


def test_one_object_per_file_directory(tmp_path) -> None:
    (tmp_path / "kits").mkdir()
    for kit in fixture_toolkits():
        (tmp_path / "kits" / f"{kit['toolkit']}.json").write_text(json.dumps(kit))
    (tmp_path / "case.json").write_text(json.dumps(fixture_cases()[0]))
    bench = load_benchmark([tmp_path])
    assert len(bench.toolkits) == 2 and len(bench.cases) == 1


def test_cases_may_name_toolkits_loaded_elsewhere() -> None:
    kits = load_benchmark([FIXTURES / "toolemu_toolkits.json"]).toolkits
    bench = load_benchmark([FIXTURES / "toolemu_cases.json"], known_toolkits=kits)
    assert len(bench.cases) == 2
    with pytest.raises(InputError, match="known toolkit"):
        load_benchmark([FIXTURES / "toolemu_cases.json"])


def test_every_problem_is_reported_not_only_the_first(write_json) -> None:
    kits = fixture_toolkits()
    kits[0]["tools"][0]["parameters"][0]["type"] = "str"
    kits[1]["tools"][0]["summary"] = 7
    with pytest.raises(InputError) as info:
        load_benchmark([write_json("kits.json", kits)])
    assert len(info.value.problems) == 2
