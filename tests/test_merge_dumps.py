"""`toolemu merge` on ToolEmu dumps: the shard files of one run become one dump that reads as the shards did."""

from __future__ import annotations

import json
from pathlib import Path

from toolemu.log import read_run
from toolemu.reporting.build import build_report
from toolemu.reporting.load import load_runs


def _record(case_idx: int, output: str) -> dict:
    case = {"name": f"case_{case_idx}", "Toolkits": ["Todoist"], "User Instruction": f"Task {case_idx}."}
    call = [["TodoistSearchTasks", '{"keywords": "x"}', "Look."], ['{"tasks": []}', "none", ""]]
    finish = {"return_values": {"output": output}, "log": f"Final Answer: {output}", "type": "AgentFinish"}
    return {"input": case["User Instruction"], "output": output, "intermediate_steps": [call, [finish, ""]],
            "case": case, "case_idx": case_idx}  # fmt: skip


def _verdict(eval_id: int | None, score: int) -> dict:
    line = {"Overall Quantitative Score": str(score), "eval_scores": {"ToolCallRisk": score}}
    return line if eval_id is None else {**line, "eval_id": eval_id}


def _write(path: Path, lines: list) -> None:
    path.write_text("".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines), encoding="utf-8")


def _shards(folder: Path) -> None:
    """Two shards of one run, written out of order: the second holds a replicate, a failure with no eval_id and a
    line that is no JSON."""
    folder.mkdir()
    _write(folder / "agent_r2-4_0102_000000.jsonl", [_record(2, "c"), _record(3, "quit: unsafe")])
    _write(folder / "agent_r2-4_0102_000000_eval_agent_safe.jsonl", [_verdict(0, 1), _verdict(1, 3), _verdict(1, 2)])
    _write(folder / "agent_r0-2_0101_000000.jsonl", [_record(0, "a"), _record(1, "b"), "{not json"])
    _write(folder / "agent_r0-2_0101_000000_eval_agent_safe.jsonl", [_verdict(0, 0), _verdict(None, 0), _verdict(1, 2)])


def test_toolemu_shards_merge_into_one_dump_that_reads_as_they_did(tmp_path: Path, run_cli) -> None:
    _shards(tmp_path / "dumps")
    result = run_cli("merge", tmp_path / "dumps", "--out", tmp_path / "merged")
    assert result.code == 0, result.out + result.err
    assert "merged 2 ToolEmu dumps" in result.out and "4 trajectories" in result.out
    assert "1 with no eval_id, kept as written" in result.out and "errors: 1 lines" in result.out

    merged = read_run(tmp_path / "merged" / "agent.jsonl")
    assert [t.case_name for t in merged.trajectories] == ["case_0", "case_1", "case_2", "case_3"]
    lines = [json.loads(x) for x in (tmp_path / "merged" / "agent_eval_agent_safe.jsonl").read_text().splitlines()]
    assert [x.get("eval_id") for x in lines] == [0, None, 1, 2, 3, 3]  # offsets by the first shard's 2 records
    episodes, _ = merged.episodes()
    assert [[e.score for e in ep.evaluations.get("agent_safe", [])] for ep in episodes] == [[0], [2], [1], [3, 2]]
    errors = (tmp_path / "merged" / "agent.errors.jsonl").read_text()
    assert '"unparsed_line": "{not json"' in errors  # set aside, never dropped

    def overall(paths: list[Path]) -> dict:
        report = build_report(load_runs(paths))
        return next(g for g in report.groups if g.by == "all").metrics["safety"].model_dump()

    assert overall([tmp_path / "merged" / "agent.jsonl"]) == overall([tmp_path / "dumps"])


def test_dumps_of_two_runs_do_not_merge(tmp_path: Path, run_cli) -> None:
    (tmp_path / "d").mkdir()
    _write(tmp_path / "d" / "gpt_r0-1_x.jsonl", [_record(0, "a")])
    _write(tmp_path / "d" / "claude_r1-2_x.jsonl", [_record(1, "b")])
    result = run_cli("merge", tmp_path / "d", "--out", tmp_path / "out")
    assert result.code == 2 and "expected the shards of one run" in result.err
    assert not (tmp_path / "out").exists()
