"""The run log: one reader returns typed records for our runs and for ToolEmu dumps; nothing is dropped silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES

from toolemu.errors import InputError
from toolemu.log import CaseView, JsonlWriter, read_meta, read_run, run_files, scan_jsonl
from toolemu.log.layout import FolderListing, eval_files_among
from toolemu.log.toolemu_format import score_number

TOOLEMU_RUN = FIXTURES / "toolemu_run" / "traj_naive.jsonl"


def test_a_toolemu_dump_is_upgraded_to_typed_records() -> None:
    run = read_run(TOOLEMU_RUN)
    assert run.format == "toolemu" and run.meta is None
    first = run.trajectories[0]
    assert first.status == "final_answer" and first.case_name == "fixture_0"
    assert [s.tool for s in first.steps] == ["NoteVaultSearchNotes", "NoteVaultDeleteNote"]
    assert first.steps[0].tool_input == {"query": "shopping"}  # ToolEmu's JSON text, parsed
    assert first.steps[0].emulator_thought.startswith("Simulator Thought")
    assert run.trajectories[2].status == "max_iterations"
    assert run.trajectories[5].status == "error" and "Timeout" in run.trajectories[5].error.message
    assert set(run.evaluations) == {"agent_safe", "agent_help"}
    episodes, notes = run.episodes()
    assert notes == []
    safety = [ep.evaluation("agent_safe") for ep in episodes]
    assert [e.value_of("ToolCallRisk") for e in safety] == [3.0, 1.0, 2.0, None, 0.0, None]
    assert safety[3].status == "error" and safety[5].status == "error" and "Timeout" in safety[5].error.message


def test_our_run_reads_back_typed(tmp_path, run_cli) -> None:
    assert run_cli("run", "--dry-run", "--trunc-num", "2", "--dump-dir", tmp_path, "--no-progress").code == 0
    run = read_run(tmp_path)
    assert run.format == "ours" and run.meta is not None and run.meta.selection.trunc_num == 2
    assert len(run.trajectories) == 2 and all(t.schema_version for t in run.trajectories)
    episodes, notes = run.episodes()
    assert notes == [] and all(ep.evaluation("agent_safe").status == "ok" for ep in episodes)
    assert episodes[0].evaluation("agent_safe").scorer == "safety"


@pytest.mark.parametrize(
    ("raw", "value"),
    [(2, 2.0), ("3", 3.0), ("2 (Possible Mild Risk)", 2.0), (" 1.5 ", 1.5), ("NaN", None), ("high", None),
     (True, None), (None, None), (float("inf"), None)],
)  # fmt: skip
def test_scores_read_as_the_forks_write_them(raw, value) -> None:
    assert score_number(raw) == value


def test_unreadable_lines_are_reported_not_dropped(tmp_path) -> None:
    path = tmp_path / "trajectories.jsonl"
    good = json.loads(TOOLEMU_RUN.read_text().splitlines()[0])
    path.write_bytes(
        json.dumps(good).encode() + b"\n"
        + b"[1, 2, 3]\n"
        + b'"a string"\n'
        + b"\xff\xfe not utf-8\n"
        + b"[" * 100_000 + b"\n"
        + b'{"input": "torn'
    )  # fmt: skip
    content = scan_jsonl(path)
    assert len(content.records) == 1 and len(content.problems) == 5
    assert [n for n, _ in content.bad_lines] == [2, 3, 4, 5, 6]
    assert any("expected a JSON object, got list" in p for p in content.problems)
    assert any("UTF-8" in p for p in content.problems)
    assert any("nested too deeply" in p for p in content.problems)
    run = read_run(path)
    assert len(run.trajectories) == 1 and len(run.problems) == 5
    kept = content.unparsed_records("set aside")
    assert kept[0] == {"unparsed_line": "[1, 2, 3]", "line": 2, "note": "set aside"}


def test_a_record_of_ours_with_a_bad_field_is_named_with_its_line(tmp_path) -> None:
    path = tmp_path / "trajectories.jsonl"
    path.write_text(json.dumps({"schema_version": "1", "input": "x", "case_name": "c", "trial": "abc",
                                "status": "final_answer"}) + "\n")  # fmt: skip
    run = read_run(path)
    assert run.trajectories == [] and "line 1" in run.problems[0] and "'trial'" in run.problems[0]


def test_case_view_is_lenient_with_foreign_cases() -> None:
    view = CaseView.of({"Toolkits": "Single", "User Instruction": 5, "Potential Risky Outcomes": None,
                        "Underspecifications": "none", "Threat": {"kind": ""}})  # fmt: skip
    assert view.toolkits == ["Single"] and view.user_instruction == "5" and view.potential_risky_outcomes == []
    assert view.underspecifications.task_information == [] and view.threat is None
    assert CaseView.of("not a dict").name == ""


def test_run_json_that_is_not_one_is_a_clear_error(tmp_path) -> None:
    for text in ("", "{", "[]", '{"config": {}}', "\xff"):
        (tmp_path / "run.json").write_text(text, encoding="latin-1")
        with pytest.raises(InputError) as err:
            read_meta(tmp_path / "run.json")
        assert "run.json" in str(err.value)


def test_eval_files_beside_a_dump_are_found_by_type(tmp_path) -> None:
    for f in TOOLEMU_RUN.parent.iterdir():
        shutil.copy(f, tmp_path)
    extra = tmp_path / "traj_naive_eval_agent_help_ignore_safety.jsonl"
    shutil.copy(tmp_path / "traj_naive_eval_agent_help.jsonl", extra)
    (tmp_path / "traj_naive_eval_agent_safe.errors.jsonl").write_text("")
    files = run_files(tmp_path / "traj_naive.jsonl")
    assert set(files.eval_files()) == {"agent_safe", "agent_help", "agent_help_ignore_safety"}


def test_writer_redacts_and_appends_typed_records(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-0123456789")
    run = read_run(TOOLEMU_RUN)
    traj = run.trajectories[0].model_copy(update={"output": "key sk-test-SECRET-0123456789"})
    out = tmp_path / "t.jsonl"
    JsonlWriter(out).append(traj)
    assert "SECRET" not in out.read_text() and "***" in out.read_text()


def test_the_library_refuses_the_counts_the_cli_refuses() -> None:
    """toolemu.run(config=RunConfig(num_trials=10**8)) is the same typo as --num-trials 100000000."""
    import pydantic

    from toolemu.log import RunConfig

    for field, bound in (("num_trials", 1000), ("batch_size", 1024)):
        assert getattr(RunConfig(**{field: bound}), field) == bound
        with pytest.raises(pydantic.ValidationError):
            RunConfig(**{field: bound + 1})


def test_a_folder_listing_finds_each_dumps_eval_files_as_a_scan_of_the_names_would(tmp_path: Path) -> None:
    names = [
        "a.jsonl",
        "a_eval_agent_safe.jsonl",
        "a_eval_agent_safe.errors.jsonl",
        "a_eval_agent_help#rejudge.jsonl",
        "a_eval_agent_help@judge-b.jsonl",
        "a_eval_b.jsonl",  # itself a dump whose stem holds the infix
        "a_eval_b_eval_agent_safe.jsonl",
        "a_eval_.jsonl",
        "a_eval_x.json",
        "ab_eval_agent_safe.jsonl",
        "a[1]*.jsonl",
        "a[1]*_eval_agent_safe.jsonl",
        "x_eval_a_eval_agent_safe.jsonl",
    ]
    listing = FolderListing(names)
    for stem in ("a", "a_eval_b", "a[1]*", "ab", "x", "x_eval_a", "missing"):
        dump = tmp_path / f"{stem}.jsonl"
        for rejudged in (False, True):
            prefix = stem + "_eval_"
            scanned = {}  # every name read against the prefix, as before the index
            for name in sorted(n for n in names if n.startswith(prefix) and n.endswith(".jsonl")):
                kind = name[len(prefix) : -len(".jsonl")]
                if kind and not kind.endswith(".errors") and kind.endswith("#rejudge") == rejudged:
                    scanned[kind] = tmp_path / name
            assert eval_files_among(dump, listing, rejudged) == scanned, (stem, rejudged)
            assert eval_files_among(dump, names, rejudged) == scanned
    assert set(eval_files_among(tmp_path / "a.jsonl", listing)) == {
        "agent_safe",
        "agent_help@judge-b",
        "b",
        "b_eval_agent_safe",
    }
