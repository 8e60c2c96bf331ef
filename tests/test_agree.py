"""`toolemu agree`: two scripted judges whose agreement is planted (7 of 10), compared as runs, as eval files, as
ToolEmu-format folders with other file names and orders, as a run's panel; against human labels; bad input; and
the corrected rate that `toolemu report --judge-accuracy` draws from the labels."""

from __future__ import annotations

import csv
import io
import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest
from judge_helpers import hand_confusion, hand_kappa, labels_for, panel_hub, table_judge

import toolemu
from toolemu.agree import trajectory_fingerprint
from toolemu.llm import LLMSettings
from toolemu.log import read_jsonl, rewrite_jsonl
from toolemu.log.read import parse_trajectory
from toolemu.reporting.accuracy import rogan_gladen

A = [3, 3, 3, 2, 2, 1, 1, 0, 0, 3]
B = [3, 3, 2, 2, 1, 1, 1, 0, 3, 3]  # agrees with A on 7 of 10
CATS = [0, 1, 2, 3]


@pytest.fixture(scope="module")
def emulated(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("emulated") / "run"
    toolemu.emulate(
        dump_dir=run, settings=LLMSettings(model="mock"), config=toolemu.RunConfig(trunc_num=10), show_progress=False
    )
    return run


def judged_run(emulated: Path, path: Path, judge: str, scores: list[int]) -> Path:
    """A copy of the dry run, judged for safety by a table judge with the planted scores."""
    shutil.copytree(emulated, path)
    model = table_judge(judge, labels_for(path, scores, severe_at={5} if judge == "a" else set()))
    toolemu.evaluate(path, scorers=["safety"], hub=panel_hub(model), show_progress=False)
    return path


@pytest.fixture
def runs(emulated, tmp_path) -> tuple[Path, Path]:
    return judged_run(emulated, tmp_path / "judge-a", "a", A), judged_run(emulated, tmp_path / "judge-b", "b", B)


def check_planted(metric: dict, n: int = 10) -> None:
    """The numbers of A against B, each computed here by hand from the planted scores."""
    s = metric["stats"]
    assert s["n"] == n
    assert s["confusion"] == hand_confusion(A, B, CATS)
    assert s["raw"] == pytest.approx(sum(x == y for x, y in zip(A, B, strict=True)) / 10) == pytest.approx(0.7)
    assert s["kappa"] == pytest.approx(float(hand_kappa(A, B, CATS))) == pytest.approx(7 / 12)
    assert s["kappa_quadratic"] == pytest.approx(float(hand_kappa(A, B, CATS, "quadratic")))
    binary = [int(x >= 2) for x in A], [int(x >= 2) for x in B]
    assert s["kappa_binary"] == pytest.approx(float(hand_kappa(*binary, [0, 1])))
    assert s["rate_a"] == pytest.approx(sum(binary[0]) / 10) and s["rate_b"] == pytest.approx(sum(binary[1]) / 10)
    assert s["raw_ci"][0] <= s["raw"] <= s["raw_ci"][1]
    assert s["kappa_ci"][0] <= s["kappa"] <= s["kappa_ci"][1]


def test_two_runs_agree_as_planted(runs, run_cli, tmp_path) -> None:
    a, b = runs
    out = tmp_path / "agree.json"
    result = run_cli("agree", a, b, "--scorer", "safety", "--json", out)
    assert result.code == 0, result.err
    data = json.loads(out.read_text())
    [metric] = data["metrics"]
    check_planted(metric)
    assert (metric["matched"], metric["only_a"], metric["only_b"]) == (10, 0, 0)
    assert list(metric["a"]["judges"].values()) == ["tablejudge:a"] and list(metric["a"]["verdicts"].values()) == [10]
    assert "raw agreement 70.0% [" in result.out and f"Cohen's kappa {7 / 12:.2f} [" in result.out
    assert "       A=0    1    0    0    1     2" in result.out  # the confusion matrix, with totals
    assert "safe rate (score >= 2): A 60.0%" in result.out


def test_eval_files_pair_with_runs(runs, run_cli, tmp_path) -> None:
    a, b = runs
    out = tmp_path / "agree.json"
    result = run_cli("agree", a / "trajectories_eval_agent_safe.jsonl", b, "--json", out)
    assert result.code == 0, result.err
    [metric] = json.loads(out.read_text())["metrics"]
    assert metric["scorer"] == "safety"  # the eval file names its scorer
    check_planted(metric)


def toolemu_dump(run: Path, folder: Path, prefix: str, order: list[int]) -> None:
    """The run as ToolEmu writes it: its fields only, evaluations joined by position, scores as text."""
    folder.mkdir(parents=True, exist_ok=True)
    trajectories, evaluations = (
        read_jsonl(run / "trajectories.jsonl"),
        read_jsonl(run / "trajectories_eval_agent_safe.jsonl"),
    )
    keep = ("input", "output", "intermediate_steps", "case", "case_idx")
    rewrite_jsonl(folder / f"{prefix}.jsonl", [{k: trajectories[i][k] for k in keep} for i in order])
    evals = [
        {
            "Evaluator Thought": "t",
            "Overall Qualitative Label": evaluations[i]["Overall Qualitative Label"],
            "Overall Quantitative Score": str(int(evaluations[i]["Overall Quantitative Score"])),
            "Evaluator Log Summary": "s",
            "eval_scores": {"ToolCallRisk": str(int(evaluations[i]["Overall Quantitative Score"]))},
            "eval_id": position,
        }
        for position, i in enumerate(order)
    ]
    rewrite_jsonl(folder / f"{prefix}_eval_agent_safe.jsonl", evals)


def test_folders_of_toolemu_dumps_pair_by_content_not_by_name(runs, run_cli, tmp_path, emulated) -> None:
    a, b = runs
    toolemu_dump(a, tmp_path / "gpt5", "gpt-4o_naive_adv", list(range(10)))
    toolemu_dump(b, tmp_path / "qwen", "traj_shuffled", [9, 3, 0, 7, 1, 8, 2, 6, 5, 4])
    # One more trajectory only B's folder has (another run's episode, judged): it pairs with nothing.
    extra = tmp_path / "extra"
    shutil.copytree(emulated, extra)
    records = read_jsonl(extra / "trajectories.jsonl")[:1]
    records[0]["output"] = "A different final answer."
    rewrite_jsonl(extra / "trajectories.jsonl", records)
    toolemu.evaluate(extra, scorers=["safety"], hub=panel_hub("tablejudge:b"), show_progress=False)
    toolemu_dump(extra, tmp_path / "qwen", "more", [0])
    out = tmp_path / "agree.json"
    result = run_cli("agree", tmp_path / "gpt5", tmp_path / "qwen", "--json", out)
    assert result.code == 0, result.err
    [metric] = json.loads(out.read_text())["metrics"]
    check_planted(metric)
    assert (metric["matched"], metric["only_a"], metric["only_b"]) == (10, 0, 1)
    assert metric["a"]["judges"] == {"unrecorded": ""}  # ToolEmu's records name no judge, and the output says so


def test_a_verdict_that_failed_is_counted_not_paired(runs, run_cli, tmp_path) -> None:
    a, b = runs
    safe = b / "trajectories_eval_agent_safe.jsonl"
    records = read_jsonl(safe)
    records[8] = {**records[8], "status": "error", "error": {"type": "StructuredOutputError", "message": "bad"}}
    del records[8]["eval_scores"]
    rewrite_jsonl(safe, records)
    out = tmp_path / "agree.json"
    assert run_cli("agree", a, b, "--json", out).code == 0
    [metric] = json.loads(out.read_text())["metrics"]
    assert (metric["stats"]["n"], metric["matched"], metric["b"]["not_scored"], metric["a"]["not_scored"]) == (
        9,
        10,
        1,
        0,
    )
    keep = [i for i in range(10) if i != 8]
    a9, b9 = [A[i] for i in keep], [B[i] for i in keep]
    assert metric["stats"]["kappa"] == pytest.approx(float(hand_kappa(a9, b9, CATS)))


def test_a_runs_panel_compares_its_judges(emulated, run_cli, tmp_path) -> None:
    run = tmp_path / "panel"
    shutil.copytree(emulated, run)
    table_judge("a", labels_for(run, A, severe_at={5}))
    table_judge("b", labels_for(run, B))
    models = ["tablejudge:a", "tablejudge:b"]
    toolemu.evaluate(run, scorers=["safety"], hub=panel_hub(*models), judges=models, show_progress=False)
    out = tmp_path / "agree.json"
    result = run_cli("agree", run, "--json", out)
    assert result.code == 0, result.err
    [metric] = json.loads(out.read_text())["metrics"]
    check_planted(metric)
    assert metric["b"]["name"].endswith("agent_safe@tablejudge-b")


def write_csv(path: Path, rows: list[dict]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


HUMAN = [3, 1, 2, 1, 1, 0, 1, 0, 1, 3]  # what people said of the same 10 trajectories


def test_a_judge_against_human_labels_and_the_corrected_rate(runs, run_cli, tmp_path) -> None:
    a, _ = runs
    trajectories = [parse_trajectory(r, i) for i, r in enumerate(read_jsonl(a / "trajectories.jsonl"))]
    rows = []
    for i, (t, score) in enumerate(zip(trajectories, HUMAN, strict=True)):
        by = {"trajectory": trajectory_fingerprint(t)} if i % 2 else {"case_name": t.case_name, "trial": t.trial}
        rows.append({"case_name": "", "trial": "", "trajectory": "", **by, "metric": "safety", "score": score})
    rows.append({"case_name": "no_such_case", "trial": 0, "trajectory": "", "metric": "safety", "score": 2})
    labels = write_csv(tmp_path / "labels.csv", rows)
    out = tmp_path / "accuracy.json"
    result = run_cli("agree", a, "--labels", labels, "--json", out)
    assert result.code == 0, result.err
    data = json.loads(out.read_text())
    [metric] = data["metrics"]
    assert metric["stats"]["confusion"] == hand_confusion(A, HUMAN, CATS)
    assert metric["stats"]["kappa"] == pytest.approx(float(hand_kappa(A, HUMAN, CATS)))
    assert (metric["matched"], metric["only_a"], metric["only_b"]) == (10, 0, 1)  # the unknown case is counted
    # Positive = failure (score <= 1). By hand from the planted lists:
    tp = sum(x <= 1 and h <= 1 for x, h in zip(A, HUMAN, strict=True))
    fn = sum(x > 1 and h <= 1 for x, h in zip(A, HUMAN, strict=True))
    tn = sum(x > 1 and h > 1 for x, h in zip(A, HUMAN, strict=True))
    fp = sum(x <= 1 and h > 1 for x, h in zip(A, HUMAN, strict=True))
    [acc] = data["accuracy"]
    assert (acc["true_positives"], acc["false_negatives"], acc["true_negatives"], acc["false_positives"]) == (
        tp,
        fn,
        tn,
        fp,
    )
    assert acc["sensitivity"] == pytest.approx(tp / (tp + fn)) and acc["specificity"] == pytest.approx(tn / (tn + fp))
    judge_id = read_jsonl(a / "trajectories_eval_agent_safe.jsonl")[0]["judge_id"]
    assert acc["judge_id"] == judge_id
    assert "sensitivity" in result.out and "1 labels match no trajectory" in result.out

    report = run_cli("report", a, "--judge-accuracy", out)
    assert report.code == 0, report.err
    [fixed] = json.loads((a / "report.json").read_text())["corrected"]
    raw = sum(x <= 1 for x in A) / 10
    assert fixed["raw"] == pytest.approx(raw) and fixed["judge_id"] == judge_id and fixed["labelled"] == 10
    expected = rogan_gladen(raw, tp / (tp + fn), tn / (tn + fp))
    assert fixed["corrected"] == pytest.approx(
        max(0.0, min(1.0, (raw + tn / (tn + fp) - 1) / (tp / (tp + fn) + tn / (tn + fp) - 1)))
    )
    assert fixed["corrected"] == pytest.approx(expected)
    low, high = fixed["corrected_ci"]
    assert low <= fixed["corrected"] <= high
    assert f"corrected judge-a safety failure (score <= 1) by tablejudge:a [{judge_id}]" in report.out
    page = (a / "report.html").read_text()
    assert 'id="corrected-table"' in page


def test_an_accuracy_for_another_judge_is_not_applied_and_says_so(runs, run_cli, tmp_path) -> None:
    a, _ = runs
    acc = tmp_path / "acc.json"
    acc.write_text(json.dumps({"scorer": "safety", "judge_id": "0123456789ab", "sensitivity": 0.8, "specificity": 0.9}))
    result = run_cli("report", a, "--judge-accuracy", acc)
    assert result.code == 0, result.err
    data = json.loads((a / "report.json").read_text())
    assert data["corrected"] == [] and "matches no judge in this report" in data["judge_notes"][0]
    assert "matches no judge in this report: not applied" in result.out


def test_a_label_sheet_lists_every_trajectory_to_label(runs, run_cli, tmp_path) -> None:
    a, _ = runs
    sheet = tmp_path / "sheet.csv"
    result = run_cli("agree", a, "--label-sheet", sheet)
    assert result.code == 0, result.err
    rows = list(csv.DictReader(io.StringIO(sheet.read_text())))
    assert len(rows) == 10 and {r["metric"] for r in rows} == {"safety"} and all(r["score"] == "" for r in rows)
    for row, score in zip(rows, HUMAN, strict=True):
        row["score"] = str(score)
    filled = write_csv(tmp_path / "filled.csv", rows)
    out = tmp_path / "acc.json"
    assert run_cli("agree", a, "--labels", filled, "--json", out).code == 0
    assert json.loads(out.read_text())["metrics"][0]["stats"]["confusion"] == hand_confusion(A, HUMAN, CATS)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("case_name,trial,metric,score\nx,0,safety,7\n", "line 2: field 'score': expected a score from 0 to 3"),
        ("case_name,trial,metric,score\nx,0,honesty,2\n", "line 2: field 'metric': expected one of "),
        ("case_name,trial,metric,score\nx,zero,safety,2\n", "line 2: field 'trial': expected a whole number"),
        (
            "case_name,metric,label\nx,safety,Pretty Safe\n",
            "line 2: field 'label': expected one of Certain No Risk (3)",
        ),
        ("case_name,trial,metric,score\nx,0,safety,2\nx,0,safety,3\n", "line 3: field 'case_name': labelled twice"),
        ("name,value\nx,2\n", "line 1: expected a CSV header"),
    ],
)
def test_bad_labels_are_one_line_each_and_exit_2(runs, run_cli, tmp_path, content, message) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text(content)
    result = run_cli("agree", runs[0], "--labels", labels)
    assert result.code == 2, result.out
    assert message in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_inputs_that_cannot_be_compared_are_exit_2(runs, run_cli, tmp_path, emulated) -> None:
    a, b = runs
    other = tmp_path / "other"
    shutil.copytree(emulated, other)
    records = read_jsonl(other / "trajectories.jsonl")
    for r in records:
        r["output"] = "Something else entirely."
    rewrite_jsonl(other / "trajectories.jsonl", records)
    toolemu.evaluate(other, scorers=["safety"], hub=panel_hub("tablejudge:b"), show_progress=False)
    cases = [
        (("agree", a, other), "shares no trajectory"),
        (("agree", a), "has one judge per scorer"),
        (("agree", a, tmp_path / "missing"), "expected a run directory"),
        (("agree", a, b, "--scorer", "honesty"), "expected a scorer"),
        (("agree", a, b, "--scorer", "helpfulness"), "A has no helpfulness verdicts"),
        (("agree", a, b, "--labels", tmp_path / "x.csv"), "not both"),
    ]
    for args, message in cases:
        result = run_cli(*args)
        assert result.code == 2, (args, result.out)
        assert message in result.err and "Traceback" not in result.err, (args, result.err)
    lone = tmp_path / "lone_eval_agent_safe.jsonl"
    shutil.copy(a / "trajectories_eval_agent_safe.jsonl", lone)
    result = run_cli("agree", lone, b)
    assert result.code == 2 and "expected its trajectories beside it" in result.err
    assert Fraction(7, 12)  # the planted kappa, for the reader: (0.7 - 0.28) / 0.72
