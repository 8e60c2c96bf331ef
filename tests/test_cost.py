"""The full cost: a versioned price table with a source and a date per model; unpriced models named, never $0; the
report's cost per role and judge (the monitor's too), per episode, the judges' share, per judged failure and per
robust failure, in report.json, summary.csv, the page and the console; `run --estimate` against a dry run's actual
calls, `--estimate-from` a run, and `--confirm-above` (asks, or refuses without a terminal).

A paid double stands in for a paid API: `paidmock:<name>` answers as the dry run's scripted models do, but its
provider charges, so its calls are priced by the table (a test table: cheap and judge are priced, others are not);
`paidjudge:<name>` fails the safety of every episode whose instruction has an odd length."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import typer
from conftest import REPO

import toolemu.llm.prices as prices
import toolemu.llm.usage as usage_module
from toolemu.errors import InputError
from toolemu.llm import ScriptedChatModel
from toolemu.llm.dryrun import dry_run_factory, example_from_schema
from toolemu.llm.prices import Price, PriceTable, price_table, read_price_table
from toolemu.llm.registry import Provider, register_provider
from toolemu.llm.usage import Usage, UsageTracker, budget_use, call_usage, usage_line
from toolemu.log import read_jsonl, read_run
from toolemu.reporting.estimate import shipped_profile
from toolemu.specs import load_cases

CHEAP, JUDGE = (1.0, 2.0), (3.0, 4.0)  # USD per million tokens, input and output
TEST_TABLE = PriceTable(
    version="test-1",
    prices=[
        Price(provider="paidmock", model="cheap", input=CHEAP[0], output=CHEAP[1], source="https://t.example/p",
              date=date(2026, 1, 1)),
        Price(provider="paidjudge", model="judge", input=JUDGE[0], output=JUDGE[1], source="https://t.example/p",
              date=date(2026, 1, 1)),
    ],
)  # fmt: skip


def _judge_reply(messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> str:
    schema = ((kwargs.get("extra_body") or {}).get("response_format") or {}).get("schema") or {}
    odd = len(messages[-1]["content"].split("The user's instruction: ", 1)[-1].split("\n", 1)[0]) % 2
    return json.dumps(example_from_schema(schema, lambda branches: branches[-1] if odd else branches[0]))


register_provider(
    Provider("paidmock", dry_run_factory, "paidmock:<name>", needs_model_name=False, paid=True,
             auto_agent_format="tools", structured_auto="json_object", cacheable=False, listed=False)
)  # fmt: skip
register_provider(
    Provider("paidjudge", lambda o, r: ScriptedChatModel(responder=_judge_reply), "paidjudge:<name>",
             needs_model_name=False, paid=True, structured_auto="json_object", cacheable=False, listed=False)
)  # fmt: skip


@pytest.fixture
def test_prices(monkeypatch: pytest.MonkeyPatch) -> PriceTable:
    monkeypatch.setattr(prices, "price_table", lambda: TEST_TABLE)
    monkeypatch.setattr(usage_module, "price_table", lambda: TEST_TABLE)
    return TEST_TABLE


def _total(text: str) -> tuple[int, int]:
    m = re.search(r"^total: ([\d,]+) calls, ([\d,]+) tokens", text, re.M)
    assert m, text
    return int(m[1].replace(",", "")), int(m[2].replace(",", ""))


def _roles(text: str) -> dict[str, tuple[int, int, int, str]]:
    """role -> (calls, prompt, completion, cost) from --estimate's table."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\S+)\s+(\S+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+(.+)$", line)
        if m and m[1] not in ("role", "total:"):
            n = [int(m[i].replace(",", "")) for i in (3, 4, 5)]
            out[m[1]] = (n[0], n[1], n[2], m[6].strip())
    return out


# -------------------------------------------------------------------------------------------- the price table


def test_the_shipped_price_table_is_versioned_with_a_source_and_date_per_model() -> None:
    table = price_table()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", table.version) and len(table.prices) >= 10
    assert all(p.source.startswith("https://") and p.date.year >= 2024 for p in table.prices)
    assert table.lookup("openai", "gpt-4o-mini").input == 0.15  # by name
    assert table.lookup("openai", "gpt-4o-mini-2024-07-18") is table.lookup("openai", "gpt-4o-mini")  # a snapshot
    assert table.lookup("anthropic", "claude-3-5-haiku-20241022").output == 4.00  # an alias's snapshot
    # A name that only starts like a priced one is another model: unpriced, not given the wrong price.
    assert table.lookup("anthropic", "claude-opus-4-5") is None and table.lookup("openai", "gpt-4o-audio") is None
    assert table.lookup("anthropic", "gpt-4o") is None  # prices are per provider


def test_calls_are_priced_by_the_table_free_providers_cost_nothing_and_unpriced_are_counted() -> None:
    priced = call_usage("openai", "gpt-4o-mini", 1_000_000, 1_000_000)
    assert priced.cost_usd == pytest.approx(0.75) and priced.unpriced_calls == 0
    unpriced = call_usage("openai", "brand-new-model", 10, 10)
    assert (unpriced.cost_usd, unpriced.unpriced_calls) == (0.0, 1)
    assert call_usage("vllm", "org/model", 10**6, 10**6).cost_usd == 0
    assert call_usage("mock", "", 5, 5).unpriced_calls == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('version = "1"\n[[prices]]\nprovider = "openai"\nmodel = "m"\ninput = -1\noutput = 1\n'
         'source = "https://x"\ndate = 2026-01-01\n', "field 'prices.0.input'"),
        ('version = "1"\n[[prices]]\nprovider = "openai"\nmodel = "m"\ninput = 1\noutput = 1\ndate = 2026-01-01\n',
         "field 'prices.0.source'"),
        ('version = "1"\n[[prices]]\nprovider = "openai"\nmodel = "m"\ninput = 1\noutput = 1\nsource = "from a blog"\n'
         "date = 2026-01-01\n", "field 'prices.0.source'"),
        ("version = \n", "expected a TOML price table"),
        ('[[prices]]\nprovider = "openai"\n', "field 'version'"),
    ],
)  # fmt: skip
def test_a_bad_price_table_is_one_line_naming_the_entry_and_field(tmp_path, text, expected) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_price_table(path)
    assert len(caught.value.problems) == 1 and expected in str(caught.value) and str(path) in str(caught.value)


def test_the_price_table_ships_in_the_package(tmp_path) -> None:
    src, lib = tmp_path / "src", tmp_path / "lib"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / name, src / name)
    for name in ("toolemu", "assets"):
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    build = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)], cwd=src, capture_output=True, text=True
    )
    assert build.returncode == 0, build.stderr
    assert (lib / "toolemu" / "llm" / "prices.toml").read_bytes() == (REPO / "toolemu/llm/prices.toml").read_bytes()
    assert (lib / "toolemu" / "reporting" / "token_profile.json").is_file()


def test_unpriced_models_are_named_in_the_tracker_the_budget_line_and_the_usage_line() -> None:
    tracker = UsageTracker()
    tracker.record("agent", call_usage("openai", "gpt-4o-mini", 100, 10), model="openai:gpt-4o-mini")
    for _ in range(2):
        tracker.record("emulator", call_usage("openai", "brand-new", 100, 10), model="openai:brand-new")
    assert tracker.unpriced_models() == {"openai:brand-new": 2}
    line = budget_use(tracker, "run").line()
    assert "2 calls unpriced (openai:brand-new: 2 calls)" in line
    assert "+ 2 unpriced calls (openai:brand-new: 2 calls)" in usage_line(tracker.total(), tracker.unpriced_models())
    assert budget_use(tracker, "run").price_table == price_table().version
    assert "unpriced" not in usage_line(Usage(calls=1, cost_usd=0.5))


# ------------------------------------------------------------------------------------------------ the report


@pytest.fixture
def paid_run(tmp_path, run_cli, test_prices) -> Path:
    run = tmp_path / "run"
    result = run_cli(
        "run", "--model", "paidmock:cheap", "--gate", "monitor", "--model", "monitor=paidmock:unlisted",
        "--evaluator-model", "paidjudge:judge", "--scorer", "safety", "--scorer", "checks", "--trunc-num", "6",
        "--dump-dir", run, "--no-progress",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "paidmock:unlisted" in result.out  # the console names the unpriced model (BUDGET and usage lines)
    return run


def _expected(run: Path) -> dict[str, Any]:
    """The run's numbers summed from its own records, by hand."""
    log = read_run(run)
    emulation = sum(u.cost_usd for t in log.trajectories for r, u in t.usage.items() if r != "total")
    judge = sum(ev.usage.cost_usd for evs in log.evaluations.values() for ev in evs)
    monitor = sum(t.usage["monitor"].calls for t in log.trajectories)
    failures = sum(ev.score is not None and ev.score <= 1 for ev in log.evaluations["agent_safe"])
    return {"total": emulation + judge, "judge": judge, "monitor": monitor, "failures": failures, "n": 6}


def test_the_report_gives_cost_per_role_and_judge_and_per_episode_and_failure(paid_run, run_cli, tmp_path) -> None:
    expected = _expected(paid_run)
    assert expected["failures"] > 0 and expected["judge"] > 0 and expected["monitor"] > 0
    report = json.loads((paid_run / "report.json").read_text())
    [cost] = report["costs"]
    roles = {r["role"]: r for r in cost["roles"]}
    assert set(roles) == {"agent", "emulator", "monitor", "judge:safety"}  # checks is a rule: no calls
    assert roles["agent"]["model"] == "paidmock:cheap" and roles["monitor"]["model"] == "paidmock:unlisted"
    assert roles["monitor"]["unpriced_calls"] == expected["monitor"] and roles["monitor"]["cost_usd"] == 0
    agent = roles["agent"]
    priced = agent["prompt_tokens"] * CHEAP[0] + agent["completion_tokens"] * CHEAP[1]
    assert agent["cost_usd"] == pytest.approx(priced / 1e6)
    assert roles["judge:safety"]["judge"] and not agent["judge"]
    assert cost["total_usd"] == pytest.approx(expected["total"])
    assert cost["judge_usd"] == pytest.approx(expected["judge"])
    assert cost["judge_share"] == pytest.approx(expected["judge"] / expected["total"])
    assert cost["per_episode"] == pytest.approx(expected["total"] / 6)
    assert cost["failures"] == {"safety": expected["failures"]}
    assert cost["per_failure"]["safety"] == pytest.approx(expected["total"] / expected["failures"])
    assert cost["unpriced"] == {"paidmock:unlisted": expected["monitor"]} and cost["price_table"] == "test-1"
    # summary.csv, on the run's row; the page: beside the safe rate, and the Cost section naming the unpriced model.
    rows = (paid_run / "summary.csv").read_text().splitlines()
    header, overall = rows[0].split(","), rows[1].split(",")
    assert float(overall[header.index("cost_per_episode")]) == pytest.approx(expected["total"] / 6)
    assert float(overall[header.index("judge_cost_share")]) == pytest.approx(cost["judge_share"])
    assert float(overall[header.index("cost_per_safety_failure")]) == pytest.approx(cost["per_failure"]["safety"])
    assert overall[header.index("unpriced_calls")] == str(expected["monitor"])
    page = (paid_run / "report.html").read_text()
    summary = page[page.index('<section id="summary">') : page.index("</section>")]
    assert 'id="qualifiers-table"' in summary and f"&gt;= ${expected['total'] / 6:.4f}" in summary
    assert 'id="cost"' in page and "Unpriced (not in the price table" in page and "paidmock:unlisted" in page
    console = run_cli("report", paid_run, "--out", tmp_path / "again").out
    assert f"cost run: >= ${expected['total']:.4f} for 6 episodes" in console
    assert f"unpriced (not in the price table, not counted): paidmock:unlisted: {expected['monitor']} calls" in console


def test_the_cost_per_robust_failure_counts_the_re_runs(paid_run, run_cli) -> None:
    result = run_cli("robust", paid_run, "--seeds", "1", "--no-progress")
    assert result.code == 0, result.err
    assert run_cli("report", paid_run).code == 0
    report = json.loads((paid_run / "report.json").read_text())
    [cost], [robust] = report["costs"], report["robust"]
    seed = read_run(paid_run / "robust" / "seed-1")
    spent = sum(u.cost_usd for t in seed.trajectories for r, u in t.usage.items() if r != "total")
    spent += sum(ev.usage.cost_usd for evs in seed.evaluations.values() for ev in evs)
    assert spent > 0 and cost["robust_usd"] == pytest.approx(spent)
    assert cost["robust_failures"] == robust["robust_most"]["count"] > 0
    assert cost["per_robust_failure"] == pytest.approx((cost["total_usd"] + spent) / cost["robust_failures"])


def test_a_monitors_calls_are_its_own_role_in_each_episode(tmp_path, run_cli) -> None:
    run = tmp_path / "run"
    assert run_cli("emulate", "--dry-run", "--gate", "monitor", "--trunc-num", "2", "--dump-dir", run).code == 0
    for record in read_jsonl(run / "trajectories.jsonl"):
        assert record["usage"]["monitor"]["calls"] >= 1 and record["models"]["monitor"]["model"] == "mock"
        parts = sum(u["calls"] for r, u in record["usage"].items() if r != "total")
        assert record["usage"]["total"]["calls"] == parts


def test_a_run_with_no_cost_records_has_no_cost_section(tmp_path) -> None:
    from toolemu.api import report

    run = tmp_path / "toolemu"
    shutil.copytree(REPO / "tests" / "fixtures" / "toolemu_run", run)
    built = report([run / "traj_naive.jsonl"]).report
    assert built.costs == [] and "costs" not in (run / "report.json").read_text()


# ----------------------------------------------------------------------------------------------- the estimate


def test_the_estimate_of_a_dry_run_has_its_actual_calls_and_writes_nothing(tmp_path, run_cli) -> None:
    run = tmp_path / "run"
    args = ["--dry-run", "--trunc-num", "4", "--num-trials", "2", "--dump-dir", run, "--no-progress"]
    estimate = run_cli("run", *args, "--estimate")
    assert estimate.code == 0, estimate.err
    assert not run.exists() and "nothing was run or written" in estimate.out and "method:" in estimate.out
    roles = _roles(estimate.out)
    actual = run_cli("run", *args)
    assert actual.code == 0
    by_role = {m[1]: int(m[2]) for m in re.finditer(r"^  (\w+): (\d+) calls", actual.out, re.M)}
    assert roles["agent"][0] == by_role["agent"] and roles["emulator"][0] == by_role["emulator"]
    judged = sum(v[0] for k, v in roles.items() if k.startswith("judge:"))
    assert judged == by_role["evaluator"]
    total = re.search(r"whole command, usage: (\d+) model calls", actual.out)
    assert total and _total(estimate.out)[0] == int(total[1])
    # From that run's own records, the tokens are its tokens too.
    again = run_cli("run", *args, "--estimate", "--estimate-from", run)
    log = read_run(run)
    spent = sum(t.total_usage.total_tokens for t in log.trajectories)
    spent += sum(ev.usage.total_tokens for evs in log.evaluations.values() for ev in evs)
    assert _total(again.out) == (int(total[1]), spent)


def test_the_estimate_builds_no_model_and_prices_each_roles_model(tmp_path, run_cli, test_prices) -> None:
    def refuse(options: Any, role: str) -> Any:
        raise AssertionError("the estimate built a model")

    register_provider(Provider("nobuild", refuse, "nobuild:<m>", needs_model_name=False, paid=True, listed=False))
    out = tmp_path / "never"
    result = run_cli(
        "run", "--model", "paidmock:cheap", "--simulator-model", "nobuild:x", "--evaluator-model", "paidjudge:judge",
        "--scorer", "safety", "--num-eval-samples", "2", "--trunc-num", "3", "--dump-dir", out, "--estimate",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert not out.exists()
    roles = _roles(result.out)
    profile = shipped_profile()
    cases = [c.name for c in load_cases().cases[:3]]
    agent = [profile.cases[c].roles["agent"] for c in cases]
    prompt, completion = sum(a.prompt_tokens for a in agent), sum(a.completion_tokens for a in agent)
    assert roles["agent"][:3] == (sum(a.calls for a in agent), round(prompt), round(completion))
    assert roles["agent"][3] == f"${(round(prompt) * CHEAP[0] + round(completion) * CHEAP[1]) / 1e6:.4f}"
    judge = [profile.cases[c].judges["safety"] for c in cases]  # two samples each
    assert roles["judge:safety"][0] == 2 * sum(j.calls for j in judge)
    assert roles["emulator"][3] == "unpriced" and "not in the dollars: emulator (nobuild:x)" in result.out
    assert "(at least: some roles are not in it)" in result.out


def test_the_shipped_profile_covers_the_benchmark_and_matches_a_dry_runs_calls(tmp_path) -> None:
    import toolemu

    profile = shipped_profile()
    names = {c.name for c in load_cases().cases}
    assert set(profile.cases) == names and set(profile.cases_with_user) == names
    assert all({"agent", "emulator"} <= set(c.roles) for c in profile.cases.values())
    assert all({"user", "monitor"} <= set(c.roles) for c in profile.cases_with_user.values())
    from toolemu.llm import LLMSettings

    run = tmp_path / "run"
    toolemu.emulate(
        dump_dir=run, settings=LLMSettings(model="mock"), config=toolemu.RunConfig(trunc_num=5), show_progress=False
    )
    for traj in read_run(run).trajectories:  # a stale profile (the episode's shape changed) fails here
        recorded = profile.cases[traj.case_name].roles
        assert {r: u.calls for r, u in traj.usage.items() if r != "total"} == {r: t.calls for r, t in recorded.items()}


@pytest.mark.parametrize(
    ("limit", "code", "says"),
    [
        ("0.000001", 2, "--confirm-above': the estimate, $"),
        ("1000", 0, ""),
    ],
)
def test_confirm_above_refuses_without_a_terminal(tmp_path, run_cli, test_prices, limit, code, says) -> None:
    run = tmp_path / "run"
    result = run_cli(
        "run", "--model", "paidmock:cheap", "--evaluator-model", "paidjudge:judge", "--scorer", "safety",
        "--trunc-num", "2", "--dump-dir", run, "--no-progress", "--confirm-above", limit,
    )  # fmt: skip
    assert result.code == code, result.err
    if code == 2:
        assert says in result.err and result.err.count("\n") == 1 and "no terminal to ask" in result.err
        assert not run.exists()
    else:
        assert (run / "trajectories.jsonl").is_file()


def test_confirm_above_refuses_an_estimate_with_unpriced_calls(tmp_path, run_cli, test_prices) -> None:
    result = run_cli(
        "emulate", "--model", "paidmock:unlisted", "--trunc-num", "2", "--dump-dir", tmp_path / "r",
        "--confirm-above", "1000",
    )  # fmt: skip
    assert result.code == 2 and "its cost is unknown" in result.err and "paidmock:unlisted" in result.err


@pytest.mark.parametrize(("answer", "code"), [(False, 1), (True, 0)])
def test_confirm_above_asks_at_a_terminal(tmp_path, run_cli, test_prices, monkeypatch, answer, code) -> None:
    asked: list[str] = []
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(typer, "confirm", lambda text, **kw: asked.append(text) or answer)
    run = tmp_path / "run"
    result = run_cli(
        "emulate", "--model", "paidmock:cheap", "--trunc-num", "2", "--dump-dir", run, "--no-progress", "--auto",
        "--confirm-above", "0",
    )  # fmt: skip
    assert result.code == code, result.err
    assert len(asked) == 1 and "above --confirm-above $0" in asked[0]
    assert (run / "trajectories.jsonl").is_file() == answer


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--confirm-above", "-1"], "--confirm-above': expected a cost in USD, 0 or more, got -1"),
        (["--estimate-from", "."], "--estimate-from': expected with --estimate or --confirm-above"),
    ],
)
def test_bad_estimate_flags_are_one_line(tmp_path, run_cli, args, message) -> None:
    result = run_cli("run", "--dry-run", "--trunc-num", "1", "--dump-dir", tmp_path / "r", *args)
    assert result.code == 2 and message in result.err and result.err.count("\n") == 1, result.err
