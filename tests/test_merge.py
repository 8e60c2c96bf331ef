"""Sharded runs (`toolemu emulate --shard i/n`) and `toolemu merge`: every (case, trial) once, nothing lost."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from toolemu.log import RETRIED_ERRORS, RUN_FILE, TRAJECTORIES, read_jsonl
from toolemu.runner import RunConfig, shard_pairs

CASES, TRIALS, SHARDS = 4, 2, 3


def _shard(run_cli, dump, i, n=SHARDS, *extra):
    result = run_cli(
        "emulate",
        "--dry-run",
        "--no-progress",
        "--trunc-num",
        str(CASES),
        "--num-trials",
        str(TRIALS),
        "--shard",
        f"{i}/{n}",
        "--dump-dir",
        dump,
        *extra,
    )
    assert result.code == 0, result.err
    return result


@pytest.fixture
def shards(run_cli, tmp_path):
    dirs = [tmp_path / f"shard-{i}" for i in range(SHARDS)]
    for i, d in enumerate(dirs):
        _shard(run_cli, d, i)
    return dirs


def _meta(path):
    return json.loads((path / RUN_FILE).read_text())


def _pairs(records):
    return Counter((r["case_name"], r["trial"]) for r in records)


def test_shard_pairs_partition_the_selection() -> None:
    pairs = list(range(17))
    for n in (1, 2, 3, 5, 17, 20):
        parts = [shard_pairs(pairs, (i, n)) for i in range(n)]
        assert sorted(p for part in parts for p in part) == pairs  # union = all, and disjoint
        assert all(part == pairs[i::n] for i, part in enumerate(parts))
    assert shard_pairs(pairs, None) == pairs
    with pytest.raises(ValueError, match="0 <= i < n"):
        RunConfig(shard=(2, 2))


def test_shards_are_disjoint_and_cover_every_pair(shards) -> None:
    metas = [_meta(d) for d in shards]
    everything = {(c, t) for c in metas[0]["selected_cases"] for t in range(TRIALS)}
    assert len(everything) == CASES * TRIALS
    expected = [{tuple(p) for p in m["expected_pairs"]} for m in metas]
    done = [set(_pairs(read_jsonl(d / TRAJECTORIES))) for d in shards]
    assert expected == done
    assert sum(len(e) for e in expected) == len(everything) and set().union(*expected) == everything
    assert [m["config"]["shard"] for m in metas] == [[i, SHARDS] for i in range(SHARDS)]
    # Pair j of the selection (cases in order x trials) is shard j % n's.
    order = [(c, t) for c in metas[0]["selected_cases"] for t in range(TRIALS)]
    assert [[list(p) for p in order[i::SHARDS]] for i in range(SHARDS)] == [m["expected_pairs"] for m in metas]


def test_resubmitting_a_shard_resumes_it_and_another_shard_is_refused(run_cli, shards) -> None:
    again = _shard(run_cli, shards[1], 1)
    assert "already done 3, finished now 0" in again.out
    assert len(read_jsonl(shards[1] / TRAJECTORIES)) == 3
    other = run_cli("emulate", "--dry-run", "--no-progress", "--shard", "0/3", "--dump-dir", shards[1])
    assert other.code == 2 and "same run settings" in other.err and "Traceback" not in other.err


@pytest.mark.parametrize("value", ["3/3", "a/b", "-1/2", "1", "1/0", "0/2/4"])
def test_bad_shard_is_one_clear_error(run_cli, tmp_path, value) -> None:
    result = run_cli("emulate", "--dry-run", "--dump-dir", tmp_path, "--shard", value)
    assert result.code == 2 and "--shard" in result.err and "0 <= i < n" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_merge_gives_every_pair_exactly_once(run_cli, shards, tmp_path) -> None:
    out = tmp_path / "merged"
    result = run_cli("merge", *shards, "--out", out)
    assert result.code == 0, result.err
    assert "8 of 8 pairs (8 finished, 0 failed), 0 missing, 0 duplicates" in result.out
    records = read_jsonl(out / TRAJECTORIES)
    counts = _pairs(records)
    assert len(counts) == CASES * TRIALS and set(counts.values()) == {1}
    meta = _meta(out)
    assert [tuple(p) for p in meta["expected_pairs"]] == [(r["case_name"], r["trial"]) for r in records]  # in order
    assert "shard" not in meta["config"] and meta["config"]["agent_type"] == "naive"
    assert meta["run_id"] not in {_meta(d)["run_id"] for d in shards}
    assert [s["shard"] for s in meta["sources"]] == [[i, SHARDS] for i in range(SHARDS)]
    assert not (out / RETRIED_ERRORS).exists()
    # Merging again into the same --out gives the same bytes.
    first = {name: (out / name).read_bytes() for name in (TRAJECTORIES, RUN_FILE)}
    assert run_cli("merge", *shards, "--out", out).code == 0
    assert first == {name: (out / name).read_bytes() for name in (TRAJECTORIES, RUN_FILE)}


def test_a_deleted_shard_is_reported_as_missing_pairs(run_cli, shards, tmp_path) -> None:
    lost = {tuple(p) for p in _meta(shards[1])["expected_pairs"]}
    shutil.rmtree(shards[1])
    out = tmp_path / "merged"
    result = run_cli("merge", shards[0], shards[2], "--out", out)
    assert result.code == 1
    assert "3 missing" in result.out and "shard 1/3 (no directory given): 3:" in result.out
    assert "resubmit" in result.err
    assert set(_pairs(read_jsonl(out / TRAJECTORIES))) | lost == {
        (c, t) for c in _meta(out)["selected_cases"] for t in range(TRIALS)
    }
    assert {tuple(p) for p in _meta(out)["merge"]["missing"]} == lost

    # The shard's directory is there but it never finished anything: still missing, now from a given shard.
    (tmp_path / "shard-1").mkdir()
    _shard(run_cli, tmp_path / "shard-1", 1)
    (tmp_path / "shard-1" / TRAJECTORIES).unlink()
    again = run_cli("merge", *shards, "--out", out)
    assert again.code == 1 and "missing (no record) from shard 1/3: 3:" in again.out


def test_a_duplicate_is_reported_and_kept_in_the_errors_file(run_cli, shards, tmp_path) -> None:
    extra = read_jsonl(shards[0] / TRAJECTORIES)[0]
    with (shards[2] / TRAJECTORIES).open("a") as fh:
        fh.write(json.dumps({**extra, "output": "the second one"}) + "\n")
    out = tmp_path / "merged"
    result = run_cli("merge", *shards, "--out", out)
    assert result.code == 0, result.err
    assert "1 duplicates" in result.out and f"{extra['case_name']}#{extra['trial']}" in result.out
    records = read_jsonl(out / TRAJECTORIES)
    assert set(_pairs(records).values()) == {1}
    kept = next(r for r in records if (r["case_name"], r["trial"]) == (extra["case_name"], extra["trial"]))
    assert kept["output"] == extra["output"]  # the first one
    errors = read_jsonl(out / RETRIED_ERRORS)
    assert [(e["output"], e["merge"]["reason"]) for e in errors] == [("the second one", "duplicate")]


def test_failed_pairs_are_reported_apart_and_nothing_is_lost(run_cli, shards, tmp_path) -> None:
    path = shards[0] / TRAJECTORIES
    records = read_jsonl(path)
    records[0] = {**records[0], "status": "error", "error": {"type": "X", "message": "boom"}}
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "merged"
    result = run_cli("merge", *shards, "--out", out)
    assert result.code == 0, result.err  # present, though failed: nothing is missing
    assert "(7 finished, 1 failed), 0 missing" in result.out and "failed (kept with status error" in result.out
    merged = read_jsonl(out / TRAJECTORIES)
    assert len(merged) == 8 and sum(r["status"] == "error" for r in merged) == 1

    # Resubmitting the shard re-runs the failed pair; its failed attempt is kept in the merge's errors file.
    again = _shard(run_cli, shards[0], 0)
    assert "already done 2, finished now 1" in again.out
    result = run_cli("merge", *shards, "--out", out)
    assert "(8 finished, 0 failed)" in result.out
    assert [e["merge"]["reason"] for e in read_jsonl(out / RETRIED_ERRORS)] == ["retried"]


def test_shards_of_different_settings_are_refused(run_cli, shards, tmp_path) -> None:
    odd = tmp_path / "odd"
    _shard(run_cli, odd, 1, SHARDS, "--max-iterations", "3")
    result = run_cli("merge", shards[0], odd, shards[2], "--out", tmp_path / "merged")
    assert result.code == 2 and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert "apart from the shard" in result.err and "max_iterations (3 here, 15 there)" in result.err
    assert not (tmp_path / "merged").exists()


def test_merge_refuses_to_write_over_a_run(run_cli, shards, tmp_path) -> None:
    into_source = run_cli("merge", *shards, "--out", shards[0])
    assert into_source.code == 2 and "--out" in into_source.err
    over_run = run_cli("merge", shards[0], shards[1], "--out", shards[2])
    assert over_run.code == 2
    twice = run_cli("merge", shards[0], shards[0], "--out", tmp_path / "m")
    assert twice.code == 2 and "given twice" in twice.err
    not_a_run = run_cli("merge", tmp_path, "--out", tmp_path / "m")
    assert not_a_run.code == 2 and "run.json" in not_a_run.err


def test_run_dirs_written_before_sharding_still_resume_and_merge(run_cli, tmp_path) -> None:
    old = tmp_path / "old"
    run_cli("emulate", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", old)
    meta = _meta(old)
    (old / RUN_FILE).write_text(json.dumps({"run_id": meta["run_id"], "config": meta["config"]}))  # the old layout
    again = run_cli("emulate", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", old)
    assert again.code == 0 and "already done 2, finished now 0" in again.out
    (old / RUN_FILE).write_text(json.dumps({"run_id": meta["run_id"], "config": meta["config"]}))
    result = run_cli("merge", old, "--out", tmp_path / "merged")
    assert result.code == 0 and "2 of 2 pairs" in result.out
    assert len(read_jsonl(tmp_path / "merged" / TRAJECTORIES)) == 2
