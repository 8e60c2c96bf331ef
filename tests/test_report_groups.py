"""A study's files as runs: shards combine into one run (ToolEmu's `_r<a>-<b>_` dumps, our `--shard` run dirs),
`--group-by` chooses otherwise, and paired comparisons are made only where asked (`--baseline`, `--compare`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from toolemu.log import read_jsonl
from toolemu.reporting.build import ALL_PAIRS_MAX_RUNS
from toolemu.reporting.groups import group_runs

RUN = FIXTURES / "toolemu_run"
STEM = "traj_naive"


def write_lines(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def shard_dumps(folder: Path, prefix: str, bounds: list[tuple[int, int]]) -> list[Path]:
    """The fixture's six episodes split the way ToolEmu writes shards: one dump per case range, each with its own
    eval files numbering eval_id from 0."""
    folder.mkdir(parents=True, exist_ok=True)
    trajectories = read_jsonl(RUN / f"{STEM}.jsonl")
    evals = {t: read_jsonl(RUN / f"{STEM}_eval_{t}.jsonl") for t in ("agent_safe", "agent_help")}
    written = []
    for a, b in bounds:
        stem = f"{prefix}_r{a}-{b}_2026_11_23"
        write_lines(folder / f"{stem}.jsonl", trajectories[a:b])
        for eval_type, records in evals.items():
            write_lines(
                folder / f"{stem}_eval_{eval_type}.jsonl", [{**r, "eval_id": r["eval_id"] - a} for r in records[a:b]]
            )
        written.append(folder / f"{stem}.jsonl")
    return written


def report(run_cli, *args) -> dict:
    result = run_cli("report", *map(str, args))
    assert result.code == 0, result.err
    out = Path(args[list(args).index("--out") + 1])
    return json.loads((out / "report.json").read_text())


def without_cis(value):
    """The numbers but the bootstrap CIs (one generator draws them for the whole report, run after run)."""
    if isinstance(value, dict):
        return {k: without_cis(v) for k, v in value.items() if not k.endswith("_ci") and k != "run"}
    return [without_cis(v) for v in value] if isinstance(value, list) else value


def numbers(data: dict, run: str) -> list[dict]:
    return [without_cis(g) for g in data["groups"] if g["run"] == run]


def test_toolemu_shards_under_one_prefix_are_one_run_with_the_numbers_of_the_whole(tmp_path, run_cli) -> None:
    study = tmp_path / "study"
    shard_dumps(study, "gpt4_naive", [(3, 6), (0, 3)])  # written out of order: read in case order
    shard_dumps(study, "claude_naive", [(0, 2), (2, 6)])
    data = report(run_cli, study, "--out", tmp_path / "out")
    assert [r["run"] for r in data["runs"]] == ["claude_naive", "gpt4_naive"]
    gpt4 = next(r for r in data["runs"] if r["run"] == "gpt4_naive")
    assert [Path(s).name for s in gpt4["sources"]] == [
        "gpt4_naive_r0-3_2026_11_23.jsonl",
        "gpt4_naive_r3-6_2026_11_23.jsonl",
    ]
    # The combined run counts like the unsharded dump: every episode, every evaluation line, failures too.
    whole = report(run_cli, RUN / f"{STEM}.jsonl", "--out", tmp_path / "whole")
    assert numbers(data, "gpt4_naive") == numbers(whole, STEM) == numbers(data, "claude_naive")
    overall = next(g for g in data["groups"] if g["run"] == "gpt4_naive" and g["by"] == "all")
    assert overall["episodes"] == 6 and overall["metrics"]["safety"]["n"] == 4
    # Episodes point at the shard and record their trajectory is in.
    episodes = [e for e in data["episodes"] if e["run"] == "gpt4_naive"]
    assert [(Path(e["source"]).name, e["record"]) for e in episodes][2:4] == [
        ("gpt4_naive_r0-3_2026_11_23.jsonl", 2),
        ("gpt4_naive_r3-6_2026_11_23.jsonl", 0),
    ]
    assert read_jsonl(Path(episodes[3]["source"]))[0]["input"] == episodes[3]["instruction"]
    # Two runs: the one pair is compared, as before.
    assert {(p["a"], p["b"]) for p in data["paired"]} == {("claude_naive", "gpt4_naive")}


def test_overlapping_shards_are_combined_and_said_to_overlap(tmp_path, run_cli, caplog) -> None:
    study = tmp_path / "study"
    shard_dumps(study, "gpt4_naive", [(0, 4), (2, 6)])  # a range run twice
    data = report(run_cli, study, "--out", tmp_path / "out")
    [run] = data["runs"]
    assert next(g for g in data["groups"] if g["by"] == "all")["episodes"] == 8  # every record counts
    assert any("overlap (r0-4, r2-6)" in note for note in run["notes"])


def test_group_by_a_regex_none_and_bad_values(tmp_path, run_cli) -> None:
    study = tmp_path / "study"
    shard_dumps(study, "gpt4_naive", [(0, 3), (3, 6)])
    shard_dumps(study, "gpt4_quit", [(0, 6)])
    by_model = report(run_cli, study, "--group-by", r"/(gpt4)_", "--out", tmp_path / "a")
    assert [r["run"] for r in by_model["runs"]] == ["gpt4"]
    assert next(g for g in by_model["groups"] if g["by"] == "all")["episodes"] == 12
    named = report(run_cli, study, "--group-by", r"_(?P<run>naive|quit)_r", "--out", tmp_path / "b")
    assert [r["run"] for r in named["runs"]] == ["naive", "quit"]
    apart = report(run_cli, study, "--group-by", "none", "--out", tmp_path / "c")
    assert len(apart["runs"]) == 3 and len(apart["paired"]) == 3 * 2  # three runs: every pair, two scorers
    for bad in ("(unclosed", "no_group_here"):
        result = run_cli("report", study, "--group-by", bad, "--out", tmp_path / "d")
        assert result.code == 2 and result.err.count("\n") == 1 and "--group-by" in result.err


@pytest.fixture
def our_shards(tmp_path, run_cli) -> Path:
    runs = tmp_path / "runs"
    for i in range(2):
        common = ["--dry-run", "--trunc-num", "3", "--num-trials", "2", "--no-progress"]
        emulated = run_cli("emulate", *common, "--shard", f"{i}/2", "--dump-dir", runs / f"naive-shard{i}")
        assert emulated.code == 0, emulated.err
        assert run_cli("evaluate", runs / f"naive-shard{i}", "--dry-run", "--no-progress").code == 0
    assert run_cli("run", "--dry-run", "--trunc-num", "3", "--num-trials", "2", "--agent-type", "helpful_ss",
                   "--dump-dir", runs / "helpful", "--no-progress").code == 0  # fmt: skip
    return runs


def test_our_shard_dirs_combine_and_group_by_a_metadata_key(our_shards, tmp_path, run_cli) -> None:
    shards = [our_shards / "naive-shard0", our_shards / "naive-shard1"]
    data = report(run_cli, *shards, our_shards / "helpful", "--out", tmp_path / "out")
    assert [r["run"] for r in data["runs"]] == ["naive", "helpful"]
    overall = {g["run"]: g for g in data["groups"] if g["by"] == "all"}
    assert overall["naive"]["episodes"] == 6 and overall["naive"]["metrics"]["safety"]["n"] == 6
    assert {(e["case_name"], e["trial"]) for e in data["episodes"] if e["run"] == "naive"} == {
        (e["case_name"], e["trial"]) for e in data["episodes"] if e["run"] == "helpful"
    }
    assert [g.label for g in group_runs([*shards, our_shards / "helpful"], "agent_type")] == ["naive", "helpful_ss"]
    by_type = report(run_cli, *shards, our_shards / "helpful", "--group-by", "agent_type", "--out", tmp_path / "t")
    assert [r["run"] for r in by_type["runs"]] == ["naive", "helpful_ss"]


def test_comparisons_only_where_asked(tmp_path, run_cli) -> None:
    runs = [tmp_path / "many" / name for name in ("a", "b", "c", "d")]
    for run in runs:  # more runs than ALL_PAIRS_MAX_RUNS: no pair by default
        assert run_cli("run", "--dry-run", "--trunc-num", "2", "--dump-dir", run, "--no-progress").code == 0
    assert len(runs) > ALL_PAIRS_MAX_RUNS
    default = report(run_cli, *runs, "--out", tmp_path / "o1")
    assert default["paired"] == [] and default["paired_note"].startswith("none")
    assert "--baseline" in (tmp_path / "o1" / "report.html").read_text()
    against = report(run_cli, *runs, "--baseline", "c", "--out", tmp_path / "o2")
    assert {(p["a"], p["b"]) for p in against["paired"]} == {("c", "a"), ("c", "b"), ("c", "d")}
    scored = {"safety", "helpfulness", "realism", "awareness"}  # the default scorers with a value on these cases
    assert {p["scorer"] for p in against["paired"]} == scored
    assert len(against["paired"]) == 3 * len(scored) and against["paired_note"] == "each run against the baseline c"
    chosen = report(run_cli, *runs, "--compare", "a,d", "--out", tmp_path / "o3")
    assert {(p["a"], p["b"]) for p in chosen["paired"]} == {("a", "d")}
    every = report(run_cli, *runs, "--compare", "all", "--out", tmp_path / "o4")
    assert len({(p["a"], p["b"]) for p in every["paired"]}) == 6
    for flags in (("--baseline", "nobody"), ("--compare", "a,nobody"), ("--compare", "a")):
        result = run_cli("report", *runs, *flags, "--out", tmp_path / "o5")
        assert result.code == 2 and result.err.count("\n") == 1 and flags[0] in result.err
