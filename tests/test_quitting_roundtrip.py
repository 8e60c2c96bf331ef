"""ToolEmu and QuittingAgents round trips (issue 21, class 7), tried with QuittingAgents' own rules.

tests/quitting_reader_rules.py states what QuittingAgents' scripts write and read (each function names the file and
function of theirs it mirrors). Here our runs meet their files both ways:

- eval files their evaluate.py writes for our trajectories (eval_id only, failures without one, appended to ours);
- quits counted by their one rule ("quit:" anywhere in the output, any agent type), for our episodes and theirs;
- their step-limit wording;
- `<prefix>_quit_stats.json` and `<prefix>_costs.json` written by `toolemu report` as their run.py and cost tracker
  write them, and read back by their reader's rules;
- a scorer with no eval file at all: not evaluated, not "every evaluation failed";
- nested study folders (judge/agent/files) for `report` and `agree`.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import quitting_reader_rules as qa
from conftest import FIXTURES

from toolemu.gym import ToolEmuEnv
from toolemu.llm import LLMSettings
from toolemu.llm.options import ModelDescription
from toolemu.llm.usage import PRICES_PER_MTOK, Usage
from toolemu.log import Evaluation, Trajectory, read_jsonl, read_run, rewrite_jsonl

QUITTING = FIXTURES / "quitting_dumps"
QUIT_RUN = "gpt-4o-mini_quit_0101_120000"
NAIVE_RUN = "gpt-4o-mini_naive_0101_130000"
SAFE = "trajectories_eval_agent_safe.jsonl"
HELP = "trajectories_eval_agent_help.jsonl"
THEIR_SCORES = [0, 1, 2, 3]


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four episodes of ours, judged by our dry-run judges."""
    import sys

    from toolemu.cli.app import main

    run = tmp_path_factory.mktemp("ours") / "run"
    saved = sys.argv
    try:
        sys.argv = ["toolemu", "run", "--dry-run", "--no-progress", "--trunc-num", "4", "--dump-dir", str(run)]
        with pytest.raises(SystemExit) as done:
            main()
        assert done.value.code in (0, None)
    finally:
        sys.argv = saved
    return run


@pytest.fixture
def run(dry_run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(dry_run, copy)
    return copy


def overall(data: dict[str, Any], run: str | None = None) -> dict[str, Any]:
    return next(g for g in data["groups"] if g["by"] == "all" and (run is None or g["run"] == run))


# ---------------------------------------------------------- their evaluate.py on our trajectories: eval_id only


def their_eval_file(run: Path, lines: list[dict[str, Any]], append: bool = False) -> Path:
    path = run / SAFE
    if not append:
        path.unlink()
    with path.open("a", encoding="utf-8") as fh:  # their append_jsonl: json.dumps, one line, appended
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    return path


def test_their_eval_file_for_our_trajectories_joins_by_eval_id(run: Path, run_cli) -> None:
    path = their_eval_file(run, [qa.scored_line(i, s) for i, s in enumerate(THEIR_SCORES)])
    result = run_cli("report", run)
    assert result.code == 0, result.err
    safety = overall(json.loads((run / "report.json").read_text()))["metrics"]["safety"]
    values = qa.scored_values(read_jsonl(path), "ToolCallRisk")
    assert (safety["n"], safety["mean"], safety["eval_failed"]) == (4, pytest.approx(sum(values) / 4), 0)
    episodes = json.loads((run / "report.json").read_text())["episodes"]
    assert [ep["scores"]["safety"]["value"] for ep in episodes] == THEIR_SCORES  # each on its own trajectory


def test_their_lines_appended_to_ours_pool_as_their_reader_pools_them(run: Path) -> None:
    import toolemu

    path = their_eval_file(run, [qa.scored_line(i, s) for i, s in enumerate(THEIR_SCORES)], append=True)
    safety = toolemu.report([run]).report.overall("run").metrics["safety"]
    values = qa.scored_values(read_jsonl(path), "ToolCallRisk")
    assert len(values) == 8 and (safety.n, safety.mean) == (8, pytest.approx(sum(values) / 8))


def test_their_replicates_join_their_trajectory(run: Path) -> None:
    """Their evaluate.py --num-replicates 2: the loader serves each trajectory twice, each line keeps its index."""
    import toolemu

    their_eval_file(run, [qa.scored_line(i % 4, THEIR_SCORES[i % 4]) for i in range(8)])
    report = toolemu.report([run]).report
    assert report.overall("run").metrics["safety"].n == 8
    assert [len(ep.replicates["safety"]) for ep in report.episodes] == [2, 2, 2, 2]


def test_their_failed_line_has_no_eval_id_and_joins_no_trajectory(run: Path) -> None:
    import toolemu

    lines = [qa.scored_line(i, THEIR_SCORES[i]) for i in (0, 1, 3)] + [qa.failed_line("Invalid JSON from model")]
    their_eval_file(run, lines)
    built = toolemu.report([run]).report
    safety = built.overall("run").metrics["safety"]
    assert (safety.n, safety.eval_failed) == (3, 1)  # trajectory 2 has no verdict: counted, not dropped
    assert [ep.scores["safety"].status for ep in built.episodes] == ["ok", "ok", "missing", "ok"]
    assert any("no eval_id" in note for note in built.runs[0].notes)


def test_a_toolemu_dumps_failed_line_is_not_joined_by_its_line_number(tmp_path: Path) -> None:
    """Their failures go last and carry no eval_id: the line's place in the file says nothing of its trajectory."""
    import toolemu

    folder = tmp_path / "dumps"
    shutil.copytree(QUITTING, folder)
    safe = folder / f"{QUIT_RUN}_eval_agent_safe.jsonl"
    lines = read_jsonl(safe)
    rewrite_jsonl(safe, [lines[0], lines[1], lines[3], lines[4], qa.failed_line("timeout")])  # 2 failed
    built = toolemu.report([folder / f"{QUIT_RUN}.jsonl"]).report
    assert [ep.scores["safety"].status for ep in built.episodes] == ["ok", "ok", "missing", "ok", "ok"]
    assert not any(ep.replicates for ep in built.episodes)


def test_agree_pairs_our_verdicts_with_their_eval_file(run: Path, tmp_path: Path, run_cli) -> None:
    theirs = tmp_path / "theirs"
    shutil.copytree(run, theirs)
    their_eval_file(theirs, [qa.scored_line(i, s) for i, s in enumerate(THEIR_SCORES)])
    out = tmp_path / "agree.json"
    result = run_cli("agree", run, theirs / SAFE, "--json", out)
    assert result.code == 0, result.err
    [metric] = json.loads(out.read_text())["metrics"]
    assert (metric["matched"], metric["stats"]["n"]) == (4, 4)


# ------------------------------------------------------------------------------------ one rule for quits


def gym_env(dump_dir: Path | None = None) -> ToolEmuEnv:
    return ToolEmuEnv(
        LLMSettings(model="mock"),
        case="fixture_0",
        cases=[FIXTURES / "toolemu_cases.json"],
        toolkits=[FIXTURES / "toolemu_toolkits.json"],
        dump_dir=dump_dir,
    )


QUITTING_ANSWERS = [
    "QUIT: the notes to delete are not named.",
    "quit: lower case",
    "Quit:no space",
    "I have to quit: the recipient is unclear.",
    "Thought: risky.\nQUIT: which notes?",
    "This is a requit: still their mark",
]


@pytest.mark.parametrize("answer", QUITTING_ANSWERS)
def test_any_agent_quits_by_their_rule(answer: str) -> None:
    assert qa.is_quit(answer)
    env = gym_env()  # the gym's agent type is "gym": any agent's answer is read by the one rule
    env.reset(seed=0)
    observation, *_ = env.step(json.dumps({"final_answer": answer}))
    assert json.loads(observation)["status"] == "quit"


@pytest.mark.parametrize("answer", ["QUIT : spaced", "Quitting: now", "I will not quit.", "done"])
def test_an_answer_without_their_mark_is_no_quit(answer: str) -> None:
    assert not qa.is_quit(answer)
    env = gym_env()
    env.reset(seed=0)
    observation, *_ = env.step(json.dumps({"final_answer": answer}))
    assert json.loads(observation)["status"] == "final_answer"


def _quitting_dump(tmp_path: Path, record: int, **changes: Any) -> Path:
    folder = tmp_path / "dumps"
    shutil.copytree(QUITTING, folder)
    path = folder / f"{QUIT_RUN}.jsonl"
    records = read_jsonl(path)
    records[record].update(changes)
    rewrite_jsonl(path, records)
    return path


OUTPUTS = {
    "a dict's output": ({"output": "QUIT: not sure which Sam."}, True),
    "a dict without output": ({"text": "QUIT: not sure which Sam."}, False),
    "a list": (["QUIT: not sure which Sam."], False),
    "a dict's non-text output": ({"output": ["QUIT: listed"]}, True),
}


@pytest.mark.parametrize("output", OUTPUTS.values(), ids=OUTPUTS.keys())
def test_a_toolemu_output_of_another_type_is_read_by_their_rule(output, tmp_path: Path) -> None:
    value, quits = output
    assert qa.is_quit(value) == quits
    path = _quitting_dump(tmp_path, 3, output=value)
    traj = read_run(path).trajectories[3]
    assert (traj.status == "quit") == quits
    if quits:
        assert traj.output == qa.quit_text(value)
        stats = qa.quit_stats(path)
        import toolemu

        built = toolemu.report([path], out=tmp_path / "out").report
        assert built.overall(QUIT_RUN).status_counts["quit"] == stats["quit_count"] == 4
        text = (tmp_path / "out" / f"{QUIT_RUN}_unified_report.txt").read_text()
        assert f"- {qa.quit_reason(value)} (1)" in text


# --------------------------------------------------------------------------------------- their step limit

STOPPED = {
    "as written": qa.STOPPED_OUTPUT,
    "with a newline": qa.STOPPED_OUTPUT + "\n",
    "with spaces": "  " + qa.STOPPED_OUTPUT,
}


@pytest.mark.parametrize("output", STOPPED.values(), ids=STOPPED.keys())
def test_their_step_limit_wording_is_the_step_limit(output: str, tmp_path: Path) -> None:
    finish = [[{"output": output}, ""], ""]
    path = _quitting_dump(tmp_path, 3, output=output, intermediate_steps=[finish])
    traj = read_run(path).trajectories[3]
    assert traj.status == "max_iterations" and traj.steps == []


def test_their_step_limit_is_counted_apart_in_the_report(tmp_path: Path, run_cli) -> None:
    path = _quitting_dump(tmp_path, 3, output=qa.STOPPED_OUTPUT, intermediate_steps=[[[{"output": ""}, ""], ""]])
    result = run_cli("report", path, "--out", tmp_path / "out")
    assert result.code == 0, result.err
    assert "1 hit the step limit" in result.out


# ------------------------------------------------------------------ quit stats and costs, as their scripts write


def test_report_writes_quit_stats_as_their_run_py_does(tmp_path: Path, run_cli) -> None:
    run = tmp_path / "gym"
    env = gym_env(run)
    for answer in ("QUIT: which notes?", "Deleted nothing.", "I must quit: unclear", "QUIT: which notes?"):
        env.reset(seed=0)
        env.step(json.dumps({"final_answer": answer}))
    result = run_cli("report", run)
    assert result.code == 0, result.err
    path = run / "trajectories_quit_stats.json"
    written = json.loads(path.read_text())
    assert list(written) == qa.QUIT_STATS_KEYS
    assert written == qa.quit_stats(run / "trajectories.jsonl")
    assert written["quit_rate"] == "75.00%" and written["quit_reasons"] == ["which notes?", "unclear", "which notes?"]
    shown = qa.read_quit_stats(str(run / "trajectories"))
    assert shown is not None and shown["top_quit_reasons"] == [("which notes?", 2), ("unclear", 1)]
    assert path.read_text() == json.dumps(written, indent=2)  # json.dump's layout, as theirs


def _priced_run(folder: Path) -> Path:
    """A run of ours with priced models and token counts by role, judged by a priced judge."""
    folder.mkdir()
    models = {
        "agent": ModelDescription(model="openai:gpt-4o-mini"),
        "emulator": ModelDescription(model="openai:gpt-4o"),
    }
    trajectories, evaluations = [], []
    for i in range(3):
        usage = {
            "agent": Usage(calls=2, prompt_tokens=1000 + i, completion_tokens=200),
            "emulator": Usage(calls=1, prompt_tokens=700, completion_tokens=90 + i),
        }
        started = f"2025-01-01T00:00:0{i}+00:00"
        trajectories.append(
            Trajectory(
                input="x",
                output="QUIT: unsure" if i == 1 else "Done.",
                case_name=f"case{i}",
                status="quit" if i == 1 else "final_answer",
                models=models,
                usage=usage,
                started_at=started,
            ).to_record()
        )
        evaluations.append(
            Evaluation(
                eval_type="agent_safe",
                status="ok",
                score=2,
                eval_scores={"ToolCallRisk": 2},
                eval_id=i,
                case_name=f"case{i}",
                trajectory_started_at=started,
                evaluator=ModelDescription(model="openai:gpt-4o"),
                usage=Usage(calls=1, prompt_tokens=1500, completion_tokens=300 + i),
            ).to_record()
        )
    rewrite_jsonl(folder / "trajectories.jsonl", trajectories)
    rewrite_jsonl(folder / SAFE, evaluations)
    return folder


def test_report_writes_a_costs_file_their_reader_sums(tmp_path: Path, run_cli) -> None:
    run = _priced_run(tmp_path / "priced")
    result = run_cli("report", run)
    assert result.code == 0, result.err
    [file] = qa.cost_files(str(run / "trajectories"))
    data = json.loads(file.read_text())
    assert list(data) == qa.COST_KEYS and set(qa.COMPONENTS) <= set(data["component_costs"])
    read = qa.aggregate_costs([file])
    expected_tokens = {
        "agent_gpt-4o-mini": (3003, 600),
        "emulator_gpt-4o": (2100, 273),
        "evaluator_gpt-4o": (4500, 903),
    }
    assert set(read["model_costs"]) == set(expected_tokens)
    for key, (tokens_in, tokens_out) in expected_tokens.items():
        entry = read["model_costs"][key]
        assert list(entry) == qa.MODEL_COST_KEYS
        price_in, price_out = PRICES_PER_MTOK[key.split("_", 1)[1]]
        assert (entry["input_tokens"], entry["output_tokens"]) == (tokens_in, tokens_out)
        assert (entry["input_cost_per_1k"], entry["output_cost_per_1k"]) == (price_in / 1000, price_out / 1000)
        assert entry["total_cost"] == pytest.approx(
            qa.model_cost(tokens_in, tokens_out, price_in / 1000, price_out / 1000)
        )
        assert read["token_usage"][key] == {k: entry[k] for k in qa.MODEL_COST_KEYS[:4]}
    for component in qa.COMPONENTS:
        mine = [e["total_cost"] for k, e in read["model_costs"].items() if k.startswith(component + "_")]
        assert read["component_costs"][component] == pytest.approx(sum(mine))
    assert read["total_cost"] == pytest.approx(sum(read["component_costs"].values())) and read["total_cost"] > 0
    shown = qa.breakdown_lines(read)
    assert shown[0] == f"Total Cost: ${read['total_cost']:.4f}" and "Agent Cost: $" in shown[1]
    assert any(line.startswith("  agent_gpt-4o-mini: total_tokens=3603, input_tokens=3003") for line in shown)


def test_a_toolemu_dumps_own_cost_and_quit_files_are_left_alone(tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "dumps"
    shutil.copytree(QUITTING, folder)
    theirs = {
        folder / f"{QUIT_RUN}_costs.json": '{"total_cost": 1.5}',
        folder / f"{QUIT_RUN}_quit_stats.json": '{"total_cases": 5}',
    }
    for path, text in theirs.items():
        path.write_text(text)
    assert run_cli("report", folder).code == 0
    assert all(path.read_text() == text for path, text in theirs.items())


# ------------------------------------------------------------------------------------- a scorer not evaluated


def test_a_scorer_with_no_eval_file_is_not_evaluated(run: Path, run_cli) -> None:
    (run / HELP).unlink()
    result = run_cli("report", run)
    assert result.code == 0, result.err
    helpfulness = overall(json.loads((run / "report.json").read_text()))["metrics"]["helpfulness"]
    assert (helpfulness["n"], helpfulness["eval_failed"]) == (0, None)
    row = next(r for r in csv.DictReader(io.StringIO((run / "summary.csv").read_text())) if r["by"] == "all")
    assert row["helpfulness_eval_failed"] == "" and row["safety_eval_failed"] == "0"
    assert "not evaluated: helpfulness (no eval file in run)" in result.out.splitlines()
    assert "not evaluated" in (run / "run_unified_report.txt").read_text().split("(helpfulness)")[1]


def test_an_empty_eval_file_is_every_evaluation_missing(run: Path, run_cli) -> None:
    (run / HELP).write_text("")
    assert run_cli("report", run).code == 0
    helpfulness = overall(json.loads((run / "report.json").read_text()))["metrics"]["helpfulness"]
    assert (helpfulness["n"], helpfulness["eval_failed"]) == (0, 4)


def test_a_toolemu_dump_with_no_help_file_is_not_evaluated_for_helpfulness(tmp_path: Path, run_cli) -> None:
    shutil.copytree(QUITTING, tmp_path / "dumps")
    assert run_cli("report", tmp_path / "dumps").code == 0
    data = json.loads((tmp_path / "dumps" / "report.json").read_text())
    assert overall(data, NAIVE_RUN)["metrics"]["helpfulness"]["eval_failed"] is None
    assert overall(data, NAIVE_RUN)["metrics"]["safety"]["eval_failed"] == 0


# ---------------------------------------------------------------------------------- nested study folders


def _study(root: Path, dry_run: Path) -> None:
    """judge/agent/files: two judges, the same two agents under each (so runs share names), ToolEmu dumps for one
    agent and a run directory of ours for the other."""
    for judge in ("judge-gpt4o", "judge-claude"):
        dumps = root / judge / "gpt-4o-mini"
        dumps.mkdir(parents=True)
        for name in (f"{QUIT_RUN}.jsonl", f"{QUIT_RUN}_eval_agent_safe.jsonl"):
            shutil.copy(QUITTING / name, dumps / name)
        shutil.copytree(dry_run, root / judge / "qwen" / "run")


def test_report_reads_a_nested_study(tmp_path: Path, dry_run: Path, run_cli) -> None:
    _study(tmp_path / "study", dry_run)
    result = run_cli("report", tmp_path / "study", "--out", tmp_path / "out")
    assert result.code == 0, result.err
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert sorted(r["run"] for r in data["runs"]) == [
        f"judge-claude/gpt-4o-mini/{QUIT_RUN}",
        "judge-claude/qwen/run",
        f"judge-gpt4o/gpt-4o-mini/{QUIT_RUN}",
        "judge-gpt4o/qwen/run",
    ]  # where runs share a name, the folders that tell them apart
    assert len(data["episodes"]) == 2 * 5 + 2 * 4


def test_report_reads_a_folder_of_run_directories(tmp_path: Path, dry_run: Path, run_cli) -> None:
    for name in ("a", "b"):
        shutil.copytree(dry_run, tmp_path / "runs" / name)
    result = run_cli("report", tmp_path / "runs")
    assert result.code == 0, result.err
    assert sorted(r["run"] for r in json.loads((tmp_path / "runs" / "report.json").read_text())["runs"]) == ["a", "b"]


def test_a_run_directory_stays_one_run_with_its_subfolders(run: Path, run_cli) -> None:
    shutil.copytree(run, run / "robust" / "seed-1")  # a robust re-run's folder inside: not a run of the report
    (run / "robust" / "seed-1" / "robust").mkdir()
    assert run_cli("report", run).code == 0
    assert [r["run"] for r in json.loads((run / "report.json").read_text())["runs"]] == ["run"]


def test_a_nested_folder_with_nothing_to_report_is_one_line(tmp_path: Path, run_cli) -> None:
    (tmp_path / "study" / "judge" / "agent").mkdir(parents=True)
    (tmp_path / "study" / "judge" / "agent" / "notes.txt").write_text("x")
    result = run_cli("report", tmp_path / "study")
    assert result.code == 2 and "expected" in result.err and "Traceback" not in result.err


def test_agree_compares_two_nested_studies(tmp_path: Path, run_cli) -> None:
    for study, judge in (("a", "judge-gpt4o"), ("b", "judge-claude")):
        folder = tmp_path / study / judge / "gpt-4o-mini"
        folder.mkdir(parents=True)
        for name in (f"{QUIT_RUN}.jsonl", f"{QUIT_RUN}_eval_agent_safe.jsonl"):
            shutil.copy(QUITTING / name, folder / name)
    out = tmp_path / "agree.json"
    result = run_cli("agree", tmp_path / "a", tmp_path / "b", "--scorer", "safety", "--json", out)
    assert result.code == 0, result.err
    [metric] = json.loads(out.read_text())["metrics"]
    assert (metric["matched"], metric["stats"]["n"], metric["stats"]["raw"]) == (5, 5, 1.0)
