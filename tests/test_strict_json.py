"""One strict-JSON reader (toolemu.strict_json) for spec files, a run's records, a submission's files: what it
refuses, named by place, and every reader giving the same words for the same text."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolemu import strict_json
from toolemu.errors import InputError
from toolemu.log.jsonl import scan_jsonl
from toolemu.specs.load import read_json_items
from toolemu.strict_json import NotStrictJson

REFUSED = {
    "NaN": (b'{"a": {"b": NaN}}', "constant", "a.b: expected a finite number, got NaN"),
    "Infinity": (b'{"a": [1, Infinity]}', "constant", "a[1]: expected a finite number, got Infinity"),
    "-Infinity": (b'{"a": -Infinity}', "constant", "a: expected a finite number, got -Infinity"),
    "past a float": (b'{"a": 1e999}', "constant", "a: expected a finite number, got 1e999"),
    "a key twice": (b'{"a": {"k": 1, "k": 2}}', "key", "a.k: expected each key once, it is given twice"),
    "a lone surrogate": (b'{"a": "x\\ud800"}', "surrogate", "a: expected Unicode text, found the escape \\ud800"),
    "a byte order mark": (b'\xef\xbb\xbf{"a": 1}', "encoding", "expected UTF-8 text with no byte order mark"),
    "not UTF-8": (b'{"a": "\xff"}', "encoding", "expected UTF-8 text, found byte 0xff at offset 7"),
    "a trailing comma": (b'{"a": 1,}', "syntax", "expected valid JSON, Expecting property name enclosed in"),
    "too deep": (b"[" * 70 + b"]" * 70, "depth", "expected JSON nested at most 64 deep"),
}


@pytest.mark.parametrize(("raw", "kind", "words"), REFUSED.values(), ids=REFUSED.keys())
def test_the_strict_reader_refuses_what_is_not_strict_json(raw: bytes, kind: str, words: str) -> None:
    parsed = strict_json.parse(raw)
    assert parsed.value is None
    [problem] = parsed.problems
    assert problem.kind == kind and str(problem).startswith(words)
    with pytest.raises(NotStrictJson) as raised:
        strict_json.loads(raw)
    assert raised.value.problem == problem


def test_every_problem_is_named_and_strict_json_reads_as_json() -> None:
    parsed = strict_json.parse(b'{"x": NaN, "y": {"z": 1, "z": 2}, "w": [Infinity]}')
    assert [str(p) for p in parsed.problems] == [
        "x: expected a finite number, got NaN",
        "y.z: expected each key once, it is given twice",
        "w[0]: expected a finite number, got Infinity",
    ]
    assert strict_json.loads('{"a": [1, 2.5, "\\ud83d\\ude00", null]}') == {"a": [1, 2.5, "\U0001f600", None]}


def test_a_run_record_keeps_a_keys_last_value_and_reads_past_a_float_as_toolemu_does() -> None:
    """What a run's records allow beside strict JSON (as ToolEmu's readers): never NaN."""
    options = {"keys_once": False, "finite": False, "max_depth": None}
    assert strict_json.loads('{"k": 1, "k": 2, "big": 1e999}', **options) == {"k": 2, "big": float("inf")}
    with pytest.raises(NotStrictJson, match="got NaN"):
        strict_json.loads('{"k": NaN}', **options)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"toolkit": "X", "n": NaN}', "n: expected a finite number, got NaN"),
        ('{"toolkit": "X", "toolkit": "Y"}', "toolkit: expected each key once, it is given twice"),
        ('{"toolkit": "X\\udc00"}', "toolkit: expected Unicode text, found the escape \\udc00"),
    ],
)
def test_spec_files_and_run_records_are_read_by_the_one_reader(tmp_path: Path, text: str, words: str) -> None:
    """The same text, the same words: in a spec file (one InputError naming the file) and a run's JSONL line
    (a problem naming the file and line) alike, where the record reader refuses it too."""
    spec = tmp_path / "kit.json"
    spec.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_json_items(spec)
    assert str(spec) in str(raised.value) and words in str(raised.value)
    if "each key once" in words:
        return  # a run's records keep a key's last value, as ToolEmu's readers do
    records = tmp_path / "traj.jsonl"
    records.write_text('{"ok": 1}\n' + text + "\n", encoding="utf-8")
    content = scan_jsonl(records)
    assert content.records == [{"ok": 1}]
    [problem] = content.problems
    assert problem.startswith(f"{records}: line 2: ") and words in problem


def test_the_gym_and_the_mcp_server_read_messages_by_the_one_reader() -> None:
    """A gym action naming a key twice and an MCP message holding NaN or a lone surrogate: the strict reader's words."""
    from toolemu.gym.actions import ActionError, parse_action
    from toolemu.mcp.wire import PARSE_ERROR, Refusal, screen

    with pytest.raises(ActionError, match=r"^tool: expected each key once, it is given twice$"):
        parse_action('{"tool": "NoteVaultReadNote", "tool": "NoteVaultDeleteNote", "input": {}}')
    for value, words in (("NaN", "query: expected a finite number, got NaN"), ('"a\\ud800"', "expected Unicode text")):
        message = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": '
        refused = screen((message + '{"query": ' + value + "}}}").encode())
        assert isinstance(refused, Refusal) and refused.code == PARSE_ERROR and words in refused.reason


def test_run_json_and_probe_files_are_read_by_the_one_reader(tmp_path: Path) -> None:
    from toolemu.fidelity.probes import read_probe_file
    from toolemu.log import read_meta

    run_file = tmp_path / "run.json"
    run_file.write_text('{"config": {"trunc_num": NaN}}', encoding="utf-8")
    with pytest.raises(InputError, match=r"run\.json.*config\.trunc_num: expected a finite number, got NaN"):
        read_meta(run_file)
    probes = tmp_path / "NoteVault.json"
    probes.write_text('{"toolkit": "NoteVault", "toolkit": "Other"}', encoding="utf-8")
    with pytest.raises(InputError, match=r"NoteVault\.json.*toolkit: expected each key once, it is given twice"):
        read_probe_file(probes)


def test_nesting_counts_arrays_and_objects_inside_one_another_the_value_included() -> None:
    """One bound for every reader (the spec loader and the MCP server counted so; the submission checker counted
    places, letting an empty array one level past the bound through)."""
    assert strict_json.parse("[" * 64 + "]" * 64).ok
    assert strict_json.parse('{"a": ' + "[" * 63 + "1" + "]" * 63 + "}").ok
    for text in ("[" * 65 + "]" * 65, '{"a": ' + "[" * 64 + "]" * 64 + "}"):
        [problem] = strict_json.parse(text).problems
        assert problem.kind == "depth"
