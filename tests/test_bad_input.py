"""Every input is checked at the door: a bad flag, spec file, record, run.json, cache or output path gets exit 2 and
one line on stderr that names the flag or the file, never a traceback.

Each case builds its input in its own folder and returns the command line and what the error line must name.
"""

from __future__ import annotations

import copy
import json
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import fixture_cases, fixture_toolkits

from toolemu.api import run as run_api
from toolemu.llm import LLMSettings
from toolemu.runner import RunConfig

Build = Callable[[Path, Path], tuple[list[Any], str]]  # (case folder, a finished dry run to copy) -> (argv, names)


@dataclass(frozen=True)
class Bad:
    id: str
    build: Build


CASES: list[Bad] = []


def bad(case_id: str) -> Callable[[Build], Build]:
    def add(build: Build) -> Build:
        CASES.append(Bad(case_id, build))
        return build

    return add


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small dry run, emulated, judged and reported; each case copies it before spoiling it."""
    folder = tmp_path_factory.mktemp("finished") / "run"
    run_api(dump_dir=folder, settings=LLMSettings(model="mock"), config=RunConfig(trunc_num=2), show_progress=False)
    return folder


def _copy(run: Path, where: Path) -> Path:
    target = where / "run"
    shutil.copytree(run, target)
    return target


def _insert_line(path: Path, line: bytes) -> None:
    """A bad line between whole records (so no record is lost and nothing else changes)."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([lines[0], line + b"\n", *lines[1:]]))


# --- flags ------------------------------------------------------------------------------------------------------

EMULATE_FLAGS: list[tuple[list[str], str]] = [
    (["-bs", "0"], "--batch-size"),
    (["--batch-size", "-4"], "--batch-size"),
    (["--num-trials", "0"], "--num-trials"),
    (["--num-trials", "-2"], "--num-trials"),
    (["--start-index", "-3"], "--start-index"),
    (["--trunc-num", "0"], "--trunc-num"),
    (["--trunc-num", "-1"], "--trunc-num"),
    (["--max-iterations", "0"], "--max-iterations"),
    (["--max-iterations", "-7"], "--max-iterations"),
    (["--max-calls", "0"], "--max-calls"),
    (["--max-calls", "-12"], "--max-calls"),
    (["--max-total-tokens", "0"], "--max-total-tokens"),
    (["--max-total-tokens", "-1"], "--max-total-tokens"),
    (["--max-cost", "nan"], "--max-cost"),
    (["--max-cost", "inf"], "--max-cost"),
    (["--max-cost", "-0.5"], "--max-cost"),
    (["--max-cost", "0"], "--max-cost"),
    (["--timeout", "0"], "--timeout"),
    (["--timeout", "-30"], "--timeout"),
    (["--timeout", "nan"], "--timeout"),
    (["--timeout", "inf"], "--timeout"),
    (["--temperature", "nan"], "--temperature"),
    (["--temperature", "-0.1"], "--temperature"),
    (["--temperature", "7"], "--temperature"),
    (["--temperature", "-inf"], "--temperature"),
    (["--agent-temperature", "nan"], "--agent-temperature"),
    (["--agent-temperature", "2.5"], "--agent-temperature"),
    (["--max-tokens", "0"], "--max-tokens"),
    (["--max-tokens", "-64"], "--max-tokens"),
    (["--base-url", "no scheme at all"], "--base-url"),
    (["--base-url", "ftp://127.0.0.1/v1"], "--base-url"),
    (["--base-url", "http://"], "--base-url"),
    (["--base-url", "http://127.0.0.1:123456/v1"], "--base-url"),
    (["--base-url", "localhost:8000/v1"], "--base-url"),
    (["--base-url", "http://exa mple.com/v1"], "--base-url"),
    (["--api-key-env", "sk-live key"], "--api-key-env"),
    (["--api-key-env", "9STARTS_WITH_DIGIT"], "--api-key-env"),
    (["--api-key-env", "HAS-DASH"], "--api-key-env"),
    (["--cache", "sometimes"], "--cache"),
    (["--structured", "xml"], "--structured"),
    (["--shard", "3/2"], "--shard"),
    (["--shard", "one/two"], "--shard"),
    (["--case-names", " , ,"], "--case-names"),
    (["--case-names", "no_such_case"], "--case-names"),
    (["--agent-type", "reckless"], "--agent-type"),
    (["--agent-format", "yaml"], "--agent-format"),
    (["--simulator-type", "dreamy"], "--simulator-type"),
    (["--vllm-gpu-memory-utilization", "1.5"], "--vllm-gpu-memory-utilization"),
    (["--vllm-tensor-parallel-size", "0"], "--vllm-tensor-parallel-size"),
    (["--vllm-startup-timeout", "-1"], "--vllm-startup-timeout"),
    (["--agent", "no_such_module_anywhere:factory"], "--agent"),
    (["-bs", "two"], "--batch-size"),
    (["--num-trials", "1.5"], "--num-trials"),
    (["--max-cost", "cheap"], "--max-cost"),
    (["--no-such-flag"], "--no-such-flag"),
]
for args, flag in EMULATE_FLAGS:
    bad(f"emulate {' '.join(args)}")(
        lambda tmp, _run, args=args, flag=flag: (
            ["emulate", "--dry-run", "--no-progress", "--dump-dir", tmp / "d", *args],
            flag,
        )
    )

MODEL_STRINGS: list[tuple[list[str], str]] = [
    (["--agent-model", "nope:model"], "--agent-model"),
    (["--model", "emulator=nowhere:model"], "--model emulator="),
    (["--simulator-model", "nowhere:model"], "--simulator-model"),
    (["--model", "openai"], "openai"),
    (["--model", "monitor=::"], "--model monitor="),
]
for args, names in MODEL_STRINGS:
    bad(f"emulate {' '.join(args)}")(
        lambda tmp, _run, args=args, names=names: (["emulate", "--no-progress", "--dump-dir", tmp / "d", *args], names)
    )

RUN_FLAGS: list[tuple[list[str], str]] = [
    (["--num-eval-samples", "0"], "--num-eval-samples"),
    (["--num-eval-samples", "-3"], "--num-eval-samples"),
    (["--scorer", "vibes"], "--scorer"),
    (["--scorer", "no_such_module:scorer"], "--scorer"),
    (["--evaluator-model", "judge-without-provider"], "--evaluator-model"),
]
for args, flag in RUN_FLAGS:
    bad(f"run {' '.join(args)}")(
        lambda tmp, _run, args=args, flag=flag: (
            ["run", "--no-progress", "--dump-dir", tmp / "d", *(["--dry-run"] if "model" not in flag else []), *args],
            flag,
        )
    )


@bad("evaluate --eval-type agent_vibes")
def _(tmp: Path, run: Path):
    return ["evaluate", _copy(run, tmp), "--dry-run", "--eval-type", "agent_vibes"], "--eval-type"


@bad("evaluate --num-eval-samples 0")
def _(tmp: Path, run: Path):
    return ["evaluate", _copy(run, tmp), "--dry-run", "--num-eval-samples", "0"], "--num-eval-samples"


@bad("evaluate --max-calls -1")
def _(tmp: Path, run: Path):
    return ["evaluate", _copy(run, tmp), "--dry-run", "--max-calls", "-1"], "--max-calls"


@bad("evaluate a path that is not there")
def _(tmp: Path, run: Path):
    return ["evaluate", tmp / "nowhere", "--dry-run"], "nowhere"


@bad("view --port 70000")
def _(tmp: Path, run: Path):
    return ["view", tmp, "--port", "70000", "--no-browser"], "--port"


@bad("view --port -1")
def _(tmp: Path, run: Path):
    return ["view", tmp, "--port", "-1", "--no-browser"], "--port"


@bad("check without --thresholds")
def _(tmp: Path, run: Path):
    return ["check", _copy(run, tmp)], "--thresholds"


@bad("check: a trajectory line that is not a record")
def _(tmp: Path, run: Path):
    target = _copy(run, tmp)
    _insert_line(target / "trajectories.jsonl", b"[]")
    thresholds = tmp / "thresholds.yaml"
    thresholds.write_text("thresholds:\n  min_episodes: 1\n")
    return ["check", target, "--thresholds", thresholds], "trajectories.jsonl"


@bad("check: thresholds that are not numbers")
def _(tmp: Path, run: Path):
    thresholds = tmp / "thresholds.yaml"
    thresholds.write_text("thresholds:\n  min_safe_rate: .nan\n")
    return ["check", _copy(run, tmp), "--thresholds", thresholds], "thresholds.yaml"


@bad("chat --schema with a duplicate key")
def _(tmp: Path, run: Path):
    schema = tmp / "schema.json"
    schema.write_text('{"type": "object", "type": "array"}')
    return ["chat", "hi", "--model", "mock", "--schema", schema], "schema.json"


# --- spec files -------------------------------------------------------------------------------------------------


def _spec_case(case_id: str, write: Callable[[Path], list[Path]], names: str | None = None) -> None:
    """`toolemu validate` on the files `write` puts in the folder; the error names the first file (or `names`)."""

    def build(tmp: Path, _run: Path):
        files = write(tmp)
        return ["validate", *files], names or files[0].name

    bad(f"spec: {case_id}")(build)


def _json_file(name: str, data: Any) -> Callable[[Path], list[Path]]:
    def write(tmp: Path) -> list[Path]:
        path = tmp / name
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return [path]

    return write


def _bytes_file(name: str, data: bytes) -> Callable[[Path], list[Path]]:
    def write(tmp: Path) -> list[Path]:
        path = tmp / name
        path.write_bytes(data)
        return [path]

    return write


def _kits(change: Callable[[list[dict]], None]) -> list[dict]:
    kits = copy.deepcopy(fixture_toolkits())
    change(kits)
    return kits


def _bench(change: Callable[[list[dict], list[dict]], None]) -> list[dict]:
    kits, cases = copy.deepcopy(fixture_toolkits()), copy.deepcopy(fixture_cases())
    change(kits, cases)
    return [*kits, *cases]


def _set(path: list[Any], value: Any) -> Callable[[list[dict]], None]:
    def change(kits: list[dict]) -> None:
        target: Any = kits
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return change


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


TOOLKIT_NAME_FAULTS: list[tuple[str, list[Any], Any]] = [
    ("NUL in a tool name", [0, "tools", 0, "name"], "Read\x00Note"),
    ("newline in a tool name", [0, "tools", 0, "name"], "Read\nNote"),
    ("space in a tool name", [0, "tools", 0, "name"], "Read Note"),
    ("slash in a tool name", [0, "tools", 0, "name"], "Read/Note"),
    ("empty tool name", [0, "tools", 0, "name"], ""),
    ("space in name_for_model", [0, "name_for_model"], "Note Vault"),
    ("name_for_model starts with a digit", [0, "name_for_model"], "9Vault"),
    ("dot in name_for_model", [0, "name_for_model"], "Note.Vault"),
    ("empty name_for_model", [0, "name_for_model"], ""),
    ("tab in a toolkit name", [0, "toolkit"], "Note\tVault"),
    ("escape in a parameter name", [0, "tools", 0, "parameters", 0, "name"], "note\x1bid"),
    ("newline in a return name", [1, "tools", 0, "returns", 0, "name"], "tx\nid"),
    ("empty tools", [0, "tools"], []),
    ("tools is an object", [0, "tools"], {"name": "ReadNote"}),
    ("parameter type not JSON's", [0, "tools", 0, "parameters", 0, "type"], "str"),
    ("name_for_model missing", [0, "name_for_model"], None),
    ("a tool that is a string", [0, "tools", 0], "ReadNote"),
    ("NaN-free but deeply nested extra key", [0, "extra"], json.loads(_deep(80))),
]
for case_id, where, value in TOOLKIT_NAME_FAULTS:
    _spec_case(case_id, _json_file("kits.json", _kits(_set(where, value))))

CASE_FAULTS: list[tuple[str, Callable[[list[dict], list[dict]], None]]] = [
    ("two cases with one name", lambda k, c: c[1].update(name=c[0]["name"])),
    ("newline in a case name", lambda k, c: c[0].update(name="fixture\n0")),
    ("Toolkits empty", lambda k, c: c[0].update(Toolkits=[])),
    ("Toolkits a string", lambda k, c: c[0].update(Toolkits="NoteVault")),
    ("empty instruction", lambda k, c: c[0].update({"User Instruction": ""})),
    ("unknown toolkit", lambda k, c: c[0].update(Toolkits=["Nope"])),
    ("unknown threat kind", lambda k, c: c[0].update(Threat={"kind": "ghosts", "vector": "x", "description": "y"})),
    ("two tools with one name", lambda k, c: k[0]["tools"].append(copy.deepcopy(k[0]["tools"][0]))),
    ("an item that is neither", lambda k, c: c.append({"title": "what is this"})),
    ("an item that is a number", lambda k, c: c.append(7)),
]
for case_id, change in CASE_FAULTS:
    _spec_case(case_id, _json_file("bench.json", _bench(change)))

RAW_FAULTS: list[tuple[str, bytes]] = [
    ("duplicate key in a toolkit", b'{"toolkit": "A", "toolkit": "B", "name_for_model": "A", "tools": []}'),
    ("duplicate key deep in a tool", b'{"toolkit": "A", "name_for_model": "A", "tools": [{"name": "X", "name": "Y"}]}'),
    ("duplicate key in a case", b'{"name": "c", "Toolkits": ["A"], "User Instruction": "x", "User Instruction": "y"}'),
    ("NaN in a toolkit", b'{"toolkit": "A", "name_for_model": "A", "tools": [], "risks": NaN}'),
    ("Infinity in a case", b'{"name": "c", "Toolkits": ["A"], "User Instruction": "x", "score": Infinity}'),
    ("nested 100000 deep", _deep(100_000).encode()),
    ("nested 70 deep", _deep(70).encode()),
    ("latin-1 bytes", b'{"toolkit": "Caf\xe9"}'),
    ("UTF-16 with a BOM", '{"toolkit": "A"}'.encode("utf-16")),
    ("an empty file", b""),
    ("only whitespace", b"  \n\t \n"),
    ("cut short", b'[{"toolkit": "A", "name_for_model": "A", "tools": [{"name": '),
    ("a bare string", b'"hello"'),
    ("a bare number", b"42"),
    ("null", b"null"),
    ("an empty array", b"[]"),
    ("an array holding a number", b"[7]"),
    ("trailing garbage", b'{"toolkit": "A"} and more'),
    ("JSON lines, not JSON", b'{"toolkit": "A"}\n{"toolkit": "B"}\n'),
]
for case_id, raw in RAW_FAULTS:
    _spec_case(case_id, _bytes_file("spec.json", raw))


@bad("spec: one case name in two files")
def _(tmp: Path, run: Path):
    kits, cases = tmp / "kits.json", tmp / "a.json"
    kits.write_text(json.dumps(fixture_toolkits()))
    cases.write_text(json.dumps(fixture_cases()[:1]))
    other = tmp / "b.json"
    other.write_text(json.dumps(fixture_cases()[:1]))
    return ["validate", kits, cases, other], "b.json"


@bad("spec: an unnamed case whose given name clashes")
def _(tmp: Path, run: Path):
    cases = copy.deepcopy(fixture_cases())
    cases[0]["name"] = "bench_3"  # the loader names the unnamed second case (item 3 of bench.json) bench_3 too
    path = tmp / "bench.json"
    path.write_text(json.dumps([*fixture_toolkits(), *cases]))
    return ["validate", path], "bench.json"


@bad("spec: a folder with no .json files")
def _(tmp: Path, run: Path):
    (tmp / "empty").mkdir()
    return ["validate", tmp / "empty"], "empty"


@bad("spec: a path that is not there")
def _(tmp: Path, run: Path):
    return ["validate", tmp / "missing.json"], "missing.json"


@bad("emulate --input-path with a duplicate key")
def _(tmp: Path, run: Path):
    path = tmp / "cases.json"
    path.write_text('[{"name": "a", "name": "b", "Toolkits": ["NoteVault"], "User Instruction": "x"}]')
    kits = tmp / "kits.json"
    kits.write_text(json.dumps(fixture_toolkits()))
    return [
        "emulate",
        "--dry-run",
        "--input-path",
        path,
        "--toolkits-path",
        kits,
        "--dump-dir",
        tmp / "d",
    ], "cases.json"


@bad("emulate --toolkits-path with a space in a name")
def _(tmp: Path, run: Path):
    kits = tmp / "kits.json"
    kits.write_text(json.dumps(_kits(_set([0, "name_for_model"], "Note Vault"))))
    return ["emulate", "--dry-run", "--toolkits-path", kits, "--dump-dir", tmp / "d"], "kits.json"


# --- records of a run -------------------------------------------------------------------------------------------

BAD_LINES: list[tuple[str, bytes]] = [
    ("an array", b"[1, 2, 3]"),
    ("a string", b'"just text"'),
    ("a number", b"3.14"),
    ("null", b"null"),
    ("true", b"true"),
    ("non-UTF-8 bytes", b'{"input": "caf\xe9"}'),
    ("nested 100000 deep", _deep(100_000).encode()),
    ("a torn record in the middle", b'{"input": "half a rec'),
    ("NaN", b'{"input": "x", "cost_usd": NaN}'),
    ("trial is a word", b'{"schema_version": "1", "input": "x", "case_name": "c", "trial": "abc", "status": "quit"}'),
    ("an unknown status", b'{"schema_version": "1", "input": "x", "case_name": "c", "trial": 0, "status": "boom"}'),
    ("steps not a list", b'{"schema_version": "1", "input": "x", "case_name": "c", "status": "quit", "steps": 5}'),
]
for case_id, line in BAD_LINES:

    def report_build(tmp: Path, run: Path, line: bytes = line):
        target = _copy(run, tmp)
        _insert_line(target / "trajectories.jsonl", line)
        return ["report", target], "trajectories.jsonl"

    def evaluate_build(tmp: Path, run: Path, line: bytes = line):
        target = _copy(run, tmp)
        _insert_line(target / "trajectories.jsonl", line)
        return ["evaluate", target, "--dry-run", "--no-progress"], "trajectories.jsonl"

    bad(f"report: trajectory line {case_id}")(report_build)
    bad(f"evaluate: trajectory line {case_id}")(evaluate_build)

BAD_EVAL_LINES: list[tuple[str, bytes]] = [
    ("an array", b'[{"eval_type": "agent_safe"}]'),
    ("non-UTF-8 bytes", b'{"Evaluator Thought": "\xff\xfe"}'),
    ("NaN score", b'{"eval_type": "agent_safe", "status": "ok", "Overall Quantitative Score": NaN}'),
    ("trial is a word", b'{"schema_version": "1", "eval_type": "agent_safe", "status": "ok", "trial": "abc"}'),
    ("an unknown status", b'{"schema_version": "1", "eval_type": "agent_safe", "status": "maybe"}'),
    ("nested 100000 deep", _deep(100_000).encode()),
]
for case_id, line in BAD_EVAL_LINES:

    def eval_build(tmp: Path, run: Path, line: bytes = line):
        target = _copy(run, tmp)
        _insert_line(target / "trajectories_eval_agent_safe.jsonl", line)
        return ["report", target], "trajectories_eval_agent_safe.jsonl"

    bad(f"report: evaluation line {case_id}")(eval_build)

BAD_RUN_FILES: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("cut short", b'{"run_id": "x", "config": {'),
    ("an array", b"[]"),
    ("not UTF-8", b'{"run_id": "\xff"}'),
    ("no run_id", b'{"config": {}}'),
    ("expected_pairs a number", b'{"run_id": "x", "expected_pairs": 3}'),
    ("nested 100000 deep", _deep(100_000).encode()),
]
for case_id, raw in BAD_RUN_FILES:

    def resume_build(tmp: Path, run: Path, raw: bytes = raw):
        target = _copy(run, tmp)
        (target / "run.json").write_bytes(raw)
        return ["emulate", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", target], "run.json"

    bad(f"resume: run.json {case_id}")(resume_build)


@bad("resume: run.json that is a folder")
def _(tmp: Path, run: Path):
    target = _copy(run, tmp)
    (target / "run.json").unlink()
    (target / "run.json").mkdir()
    return ["emulate", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", target], "run.json"


@bad("report: a ToolEmu dump with a string line")
def _(tmp: Path, run: Path):
    from conftest import FIXTURES

    shutil.copytree(FIXTURES / "toolemu_run", tmp / "dump")
    _insert_line(tmp / "dump" / "traj_naive.jsonl", b'"not a record"')
    return ["report", tmp / "dump" / "traj_naive.jsonl"], "traj_naive.jsonl"


@bad("merge: a shard whose run.json is an array")
def _(tmp: Path, run: Path):
    target = _copy(run, tmp)
    (target / "run.json").write_text("[]")
    return ["merge", target, "--out", tmp / "merged"], "run.json"


# --- caches -----------------------------------------------------------------------------------------------------


def _chat_with_cache(path: Path, *extra: str) -> list[Any]:
    # A cached provider, so the cache is opened; nothing is sent: the bad cache stops the command first.
    return ["chat", "hi", "--model", "openai:x", "--base-url", "http://127.0.0.1:9/v1", "--cache-path", path, *extra]


@bad("cache: a folder")
def _(tmp: Path, run: Path):
    (tmp / "cache.sqlite").mkdir()
    return _chat_with_cache(tmp / "cache.sqlite"), "cache.sqlite"


@bad("cache: a text file")
def _(tmp: Path, run: Path):
    (tmp / "cache.sqlite").write_text("these are my notes, not a database\n" * 20)
    return _chat_with_cache(tmp / "cache.sqlite"), "cache.sqlite"


@bad("cache: a text file, read-only")
def _(tmp: Path, run: Path):
    (tmp / "cache.sqlite").write_text("x" * 500)
    return _chat_with_cache(tmp / "cache.sqlite", "--cache", "ro"), "cache.sqlite"


@bad("cache: a SQLite file cut short")
def _(tmp: Path, run: Path):
    path = tmp / "cache.sqlite"
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.executemany("INSERT INTO responses VALUES (?, ?)", [(str(i), "v" * 900) for i in range(400)])
    db.close()
    path.write_bytes(path.read_bytes()[:8192])
    return _chat_with_cache(path), "cache.sqlite"


@bad("cache: only SQLite's magic, then noise")
def _(tmp: Path, run: Path):
    (tmp / "cache.sqlite").write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 4)
    return _chat_with_cache(tmp / "cache.sqlite"), "cache.sqlite"


@bad("cache: under a file")
def _(tmp: Path, run: Path):
    (tmp / "plain").write_text("a file")
    return _chat_with_cache(tmp / "plain" / "cache.sqlite"), "cache.sqlite"


# --- where output goes --------------------------------------------------------------------------------------------


@bad("emulate --dump-dir is a file")
def _(tmp: Path, run: Path):
    (tmp / "taken").write_text("mine")
    return ["emulate", "--dry-run", "--no-progress", "--dump-dir", tmp / "taken"], "--dump-dir"


@bad("run --dump-dir under a file")
def _(tmp: Path, run: Path):
    (tmp / "taken").write_text("mine")
    return ["run", "--dry-run", "--no-progress", "--dump-dir", tmp / "taken" / "run"], "--dump-dir"


@bad("report --out is a file")
def _(tmp: Path, run: Path):
    (tmp / "out").write_text("mine")
    return ["report", _copy(run, tmp), "--out", tmp / "out"], "--out"


@bad("report --out under a file")
def _(tmp: Path, run: Path):
    (tmp / "out").write_text("mine")
    return ["report", _copy(run, tmp), "--out", tmp / "out" / "sub"], "--out"


@bad("merge --out is a file")
def _(tmp: Path, run: Path):
    (tmp / "out").write_text("mine")
    return ["merge", _copy(run, tmp), "--out", tmp / "out"], "--out"


@bad("merge --out holds someone's files")
def _(tmp: Path, run: Path):
    (tmp / "out").mkdir()
    (tmp / "out" / "notes.txt").write_text("mine")
    return ["merge", _copy(run, tmp), "--out", tmp / "out"], "--out"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_naming_it_and_exit_2(case: Bad, run_cli, tmp_path, finished_run, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # a cache or dump a case creates by default stays in its folder
    argv, names = case.build(tmp_path, finished_run)
    result = run_cli(*argv)
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert "Traceback" not in result.err + result.out
    assert result.code == 2, (result.code, result.err[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert names in lines[0], lines[0]


def test_there_are_at_least_a_hundred_bad_inputs() -> None:
    assert len(CASES) >= 100 and len({c.id for c in CASES}) == len(CASES)
