"""The leaderboard first, on the page and the console; a page and a folder that stay small; a quiet console.

A study is made as ToolEmu and safety-persists write one: dumps named `{agent}_emu-{emulator}_eval-{judge}_{variant}
_r{range}_{stamp}.jsonl` with their eval files (benchmarks/report_scale.py writes the shape, the names are given
here), and the real files of that naming in tests/fixtures/corpus/safety-persists, whose names the peer's own
parser read (expected.json).
"""

from __future__ import annotations

import html as htmllib
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest
from browser import REPO

from toolemu.reporting.leaderboard import identity, leaderboard, name_parts
from toolemu.reporting.model import GroupStats, MetricStats, Report, RunInfo
from toolemu.scorers import HELPFULNESS, SAFETY

CORPUS = REPO / "tests" / "fixtures" / "corpus" / "safety-persists"
# Who is who in each agent's dumps of the study below: (emulator, judge, variant); variant "" for none.
PEOPLE = [
    ("gpt-4o", "gpt-4o-mini", "int4"),
    ("Qwen_Qwen3-8B", "gpt-5-mini", ""),
    ("Qwen_Qwen3-8B", "Qwen_Qwen3-32B", "int8"),
]


def _scale():
    spec = importlib.util.spec_from_file_location("report_scale", REPO / "benchmarks" / "report_scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def named_study(directory: Path, agents: int = 6, shards: int = 2, per_shard: int = 3) -> dict[str, tuple]:
    """A study in safety-persists' naming; returns each run's label and (agent, emulator, judge, variant)."""
    raw = directory.parent / (directory.name + "-raw")
    _scale().toolemu_study(raw, agents=agents, shards=shards, per_shard=per_shard)
    directory.mkdir(parents=True)
    runs = {}
    for path in sorted(raw.iterdir()):
        m = re.match(r"^(model-(\d+)_\w+?)(_r\d+-\d+_.*)$", path.name)
        agent, n, rest = m.group(1), int(m.group(2)), m.group(3)
        emulator, judge, variant = PEOPLE[n % len(PEOPLE)]
        label = f"{agent}_emu-{emulator}_eval-{judge}" + (f"_{variant}" if variant else "")
        path.rename(directory / f"{label}{rest}")
        runs[label] = (agent, emulator, judge, variant)
    return runs


def stats(n: int, rate: float | None, evaluated: bool = True) -> MetricStats:
    return MetricStats(
        scorer="",
        n=n,
        binarized_rate=rate,
        binarized_ci=None if rate is None else (max(0.0, rate - 0.1), min(1.0, rate + 0.1)),
        eval_failed=0 if evaluated else None,
    )


def board_report(rates: dict[str, tuple[float | None, float | None]]) -> Report:
    """Runs of ours (their models recorded) with the given safe and helpful rates."""
    runs, groups = [], []
    for run, (safe, helpful) in rates.items():
        runs.append(RunInfo(run=run, source=f"{run}/trajectories.jsonl", format="ours", agent=f"{run} (naive)"))
        groups.append(
            GroupStats(
                run=run,
                by="all",
                key="all",
                episodes=10,
                status_counts={"final_answer": 9, "error": 1},
                metrics={"safety": stats(9, safe), "helpfulness": stats(9, helpful)},
            )
        )
    return Report(generated_at="now", scorers=[SAFETY, HELPFULNESS], runs=runs, groups=groups)


# ------------------------------------------------------------------------------------------------ the model


def test_the_board_orders_runs_by_the_headline_rate_then_the_next_then_the_name() -> None:
    report = board_report(
        {
            "c": (0.5, 0.9),
            "a": (0.8, 0.1),
            "no-safety": (None, 1.0),
            "b": (0.5, 0.9),  # c's equal: by name
            "d": (0.5, 0.95),  # the same safe rate as b and c, more helpful
        }
    )
    board = leaderboard(report)
    assert [r.run for r in board.rows] == ["a", "d", "b", "c", "no-safety"]
    assert [r.rank for r in board.rows] == [1, 2, 3, 4, 5]
    assert board.order_by == "safety" and "safe rate" in board.order_note
    a = board.rows[0]
    assert a.episodes == 10 and a.errored == 1 and a.run_index == 1
    assert a.cells["safety"].rate == 0.8 and a.cells["safety"].ci == (0.7000000000000001, 0.9)
    assert a.identity.agent == "a (naive)" and a.identity.named_by == "run records"


def test_a_lower_is_better_headline_puts_the_lowest_first() -> None:
    attack = SAFETY.model_copy(update={"name": "attack", "higher_is_better": False, "rate_name": "attack success"})
    report = board_report({"x": (0.2, 0.5), "y": (0.6, 0.5)})
    report.scorers = [attack, HELPFULNESS]
    for g in report.groups:
        g.metrics["attack"] = g.metrics.pop("safety")
    assert [r.run for r in leaderboard(report).rows] == ["x", "y"]


def test_names_are_read_as_the_peers_own_parser_reads_them() -> None:
    expected = json.loads((CORPUS / "expected.json").read_text())
    checked = 0
    for name, numbers in expected["files"].items():
        peer = numbers.get("src/utils/toolemu_utils.py:parse_toolemu_filename")
        if peer is None:
            continue
        ours = name_parts(name)
        assert ours is not None, name
        quantization = "" if peer["quantization"] == "none" else peer["quantization"]
        assert (ours["agent"], ours["emulator"], ours["judge"], ours["variant"]) == (
            peer["agent_model"],
            peer["emu_model"],
            peer["eval_model"],
            quantization,
        )
        checked += 1
    assert checked == 2
    # Model names hold underscores; the variant is a quantisation; a name of another form is none of this.
    assert name_parts("Qwen_Qwen3-8B_emu-Qwen_Qwen3-32B_eval-Qwen_Qwen3-32B_int8_r0-15_0511_193906.jsonl") == {
        "agent": "Qwen_Qwen3-8B",
        "emulator": "Qwen_Qwen3-32B",
        "judge": "Qwen_Qwen3-32B",
        "variant": "int8",
    }
    assert name_parts("model-00_naive_r0-15_2026_11_01__12_00_00.jsonl") is None


def test_recorded_models_come_before_the_file_name() -> None:
    ours = RunInfo(
        run="x_emu-a_eval-b",
        source="x_emu-a_eval-b/trajectories.jsonl",
        format="ours",
        agent="gpt-4o (naive)",
        emulator="gpt-4o-mini (std_thought)",
        evaluator="",
    )
    who = identity(ours)
    assert (who.agent, who.emulator, who.judge) == ("gpt-4o (naive)", "gpt-4o-mini (std_thought)", "b")
    assert who.named_by == "run records and file name"
    dump = RunInfo(
        run="m_emu-e_eval-j_fp16",
        source="d/m_emu-e_eval-j_fp16_r0-3_x.jsonl",
        format="toolemu",
        agent="m_emu-e_eval-j_fp16",
    )
    who = identity(dump)
    assert (who.agent, who.emulator, who.judge, who.variant, who.named_by) == ("m", "e", "j", "fp16", "file name")


# ------------------------------------------------------------------------------------------- page, console


def leaderboard_rows(page: str) -> list[dict[str, str]]:
    table = re.search(r'<table class="stats leaderboard" id="leaderboard-table">(.*?)</table>', page, re.S).group(1)
    heads = [htmllib.unescape(re.sub(r"<[^>]+>", "", h)) for h in re.findall(r"<th[^>]*>(.*?)</th>", table)]
    rows = []
    for k, tr in re.findall(r'<tr class="lb-row" data-run="(\d+)"[^>]*>(.*?)</tr>', table, re.S):
        cells = [htmllib.unescape(v) for v in re.findall(r'<td[^>]*data-v="([^"]*)"', tr)]
        rows.append({"k": int(k), **dict(zip(heads, cells, strict=True))})
    return rows


def test_a_study_reports_its_leaderboard_first_with_who_is_who_from_the_file_names(tmp_path, run_cli) -> None:
    runs = named_study(tmp_path / "study")
    result = run_cli("report", tmp_path / "study", "--out", tmp_path / "out")
    assert result.code == 0, result.err
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    safe = {
        g["run"]: (g["metrics"]["safety"]["binarized_rate"], g["metrics"]["helpfulness"]["binarized_rate"])
        for g in data["groups"]
        if g["by"] == "all"
    }
    order = sorted(safe, key=lambda run: (-safe[run][0], -safe[run][1], run))
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    # The leaderboard is the page's first table, before the summary's.
    assert page.index('id="leaderboard-table"') < page.index("<table", page.index('id="leaderboard-table"') + 1)
    assert page.index('id="leaderboard-table"') < page.index('id="summary-table"')
    rows = leaderboard_rows(page)
    labels = [r["run"] for r in data["runs"]]
    assert [labels[r["k"]] for r in rows] == order
    assert [int(r["#"]) for r in rows] == list(range(1, len(runs) + 1))
    for row in rows:  # named as safety-persists names them: the agent stands for the run, its name on hover
        label = labels[row["k"]]
        assert f'title="{label} (names from the file name)"' in page
        agent, emulator, judge, variant = runs[label]
        assert (row["Agent"], row["Emulator"], row["Judge"], row["Variant"]) == (agent, emulator, judge, variant)
        assert float(row[next(h for h in row if h.startswith("safe "))]) == pytest.approx(safe[label][0])
        assert row["N"] == "6"
    # Each run's detail names its emulator and judge (it said "emulator -" and "evaluator -" for such dumps).
    for label, (_, emulator, judge, _) in runs.items():
        k = [r["run"] for r in data["runs"]].index(label)
        card = page[page.index(f'id="run-{k}"') :]
        card = card[: card.index("</details>")]
        assert f"<dt>emulator</dt><dd>{emulator}</dd>" in card and f"<dt>judge</dt><dd>{judge}</dd>" in card
    # The console opens with it, in the same order; emulator and judge differ between runs, so each row names them.
    lines = result.out.splitlines()
    assert lines[0].startswith(f"Leaderboard: {len(runs)} runs by safe rate")
    assert lines[1].split() == ["#", "agent", "emulator", "judge", "variant", "N", "safe", "helpful"]
    for rank, (line, run) in enumerate(zip(lines[3 : 3 + len(runs)], order, strict=True), 1):
        agent, emulator, judge, variant = runs[run]
        cells = line.split()[:5]
        assert cells[0] == str(rank)
        for cell, full in zip(cells[1:], [agent, emulator, judge, variant or "-"], strict=True):
            assert cell == full or (cell.endswith("…") and full.startswith(cell[:-1])), (cell, full)  # 80 columns


def test_the_corpus_run_names_its_emulator_and_judge(tmp_path, run_cli) -> None:
    shutil.copytree(CORPUS / "output", tmp_path / "output")
    result = run_cli("report", tmp_path / "output", "--out", tmp_path / "out")
    assert result.code == 0, result.err
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    [row] = leaderboard_rows(page)
    assert (row["Agent"], row["Emulator"], row["Judge"]) == ("gpt-fake-agent", "gpt-fake-emulator", "gpt-fake-judge")
    assert "<dt>emulator</dt><dd>gpt-fake-emulator</dd>" in page and "<dt>judge</dt><dd>gpt-fake-judge</dd>" in page
    assert "from the file names" in page
    unified = next((tmp_path / "out").glob("*_unified_report.txt")).read_text()
    assert "\nemulator: gpt-fake-emulator\nevaluator: gpt-fake-judge\n" in unified  # it said "-" for both


def report_lines(result) -> list[str]:
    return (result.out + result.err).splitlines()


def test_the_console_says_at_most_40_lines_for_any_number_of_runs(tmp_path, run_cli) -> None:
    small = named_study(tmp_path / "small", agents=3, shards=1, per_shard=2)
    result = run_cli("report", tmp_path / "small", "--out", tmp_path / "o1")
    assert result.code == 0, result.err
    lines = report_lines(result)
    assert len(lines) <= 40 and lines[0].startswith("Leaderboard: 3 runs")
    assert sum(1 for line in lines for run in small if run.split("_emu-")[0] in line) >= 3  # every row shown
    _scale().toolemu_study(tmp_path / "many", agents=90, shards=2, per_shard=1)
    result = run_cli("report", tmp_path / "many", "--out", tmp_path / "o2")
    assert result.code == 0, result.err
    lines = report_lines(result)
    assert len(lines) <= 40, "\n".join(lines)
    assert lines[0].startswith("Leaderboard: 90 runs")
    assert any(line.startswith("... and ") and "more runs" in line for line in lines)
    assert not any(line.startswith("model-") and "episodes:" in line for line in lines)  # no per-run table
    # --verbose: every run's table, every line.
    verbose = run_cli("report", tmp_path / "many", "--out", tmp_path / "o3", "--verbose")
    assert verbose.code == 0, verbose.err
    out = verbose.out
    assert len(out.splitlines()) > 90 * 5
    for n in (0, 45, 89):
        assert re.search(rf"^model-{n:02d}_\w+ *\n\d+ episodes: ", out, re.M), n


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def test_a_study_report_is_a_small_part_of_its_input_and_refers_to_the_run_files(tmp_path, run_cli) -> None:
    _scale().toolemu_study(tmp_path / "study", agents=14, shards=2, per_shard=8)  # about 15 MB of dumps
    result = run_cli("report", tmp_path / "study", "--out", tmp_path / "out")
    assert result.code == 0, result.err
    out = tmp_path / "out"
    assert folder_size(out) <= folder_size(tmp_path / "study") / 4
    assert not (out / "report_traces").exists()
    sources = json.loads((out / "report_sources.json").read_text())
    assert len(sources["sources"]) == 28 and all(Path(s["path"]).is_file() for s in sources["sources"])
    page = (out / "report.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page, re.S).group(1))
    assert data["traces"]["mode"] == "referenced" and data["traces"]["token"] == sources["token"]
    # Asked to, the traces are copied beside the page: a folder that opens anywhere, as large as they are.
    copied = run_cli("report", tmp_path / "study", "--out", tmp_path / "copied", "--copy-traces")
    assert copied.code == 0, copied.err
    assert (tmp_path / "copied" / "report_traces").is_dir() and not (
        tmp_path / "copied" / "report_sources.json"
    ).exists()
    assert folder_size(tmp_path / "copied") > folder_size(tmp_path / "study") / 2


# ---------------------------------------------------------------------------------------- size, in a browser


def big_report(runs: int, cases: int):
    from test_report_html import make_report

    names = tuple(f"agent-{i:03d}_emu-e{i % 3}_eval-j{i % 2}" for i in range(runs))
    report = make_report(runs=names, cases=cases, trials=1)
    for info in report.runs:  # who is who from the names, as for ToolEmu's dumps
        info.emulator = info.evaluator = ""
    return report


def render_into(folder: Path, report) -> Path:
    from toolemu.reporting import traces
    from toolemu.reporting.html import render_html, run_sidecars

    folder.mkdir()
    store = traces.TraceStore(folder, reference=True)
    for view in report.episodes:
        view.trace_id = store.add(view)
    store.close()
    sidecars = run_sidecars(folder)
    (folder / "report.html").write_text(render_html(report, store, sidecars), encoding="utf-8")
    return folder / "report.html"


def test_the_page_does_not_grow_with_episodes_and_little_with_runs(tmp_path) -> None:
    base = render_into(tmp_path / "base", big_report(40, 20)).stat().st_size
    more_episodes = render_into(tmp_path / "episodes", big_report(40, 80)).stat().st_size
    more_runs = render_into(tmp_path / "runs", big_report(160, 20)).stat().st_size
    assert more_episodes <= base * 1.05  # 4x the episodes: in the runs' files, not the page
    per_run = (more_runs - base) / 120
    assert per_run < 8_000, per_run  # 10 MB would take well over a thousand runs
    assert more_runs < 10_000_000
    files = sorted((tmp_path / "episodes" / "report_runs").iterdir())
    assert len(files) == 40 and sum(f.stat().st_size for f in files) > more_episodes


def test_a_large_page_shows_its_leaderboard_at_once_and_loads_a_run_when_opened(driver, tmp_path) -> None:
    import time

    report = big_report(160, 20)
    page = render_into(tmp_path / "big", report)
    start = time.perf_counter()
    driver.get(page.as_uri())
    ready = driver.execute_script("return document.body.getAttribute('data-ready')")
    first_screen = time.perf_counter() - start
    assert ready == "1" and first_screen < 3.0, first_screen
    table = driver.find_element("id", "leaderboard-table")
    assert table.is_displayed() and table.location["y"] < driver.execute_script("return window.innerHeight")
    rows = driver.find_elements("css selector", "#leaderboard-table tr.lb-row")
    assert len(rows) == 160
    # Sorted by a heading: the run names, then the other way.
    heading = driver.find_element("xpath", "//table[@id='leaderboard-table']//th[normalize-space()='Agent']")
    heading.click()
    names = [r.get_attribute("data-v") for r in driver.find_elements("css selector", "#leaderboard-table td.lb-run")]
    assert names == sorted(names)
    heading.click()
    names = [r.get_attribute("data-v") for r in driver.find_elements("css selector", "#leaderboard-table td.lb-run")]
    assert names == sorted(names, reverse=True)
    # Filtered: by the search, then by a judge.
    search = driver.find_element("id", "lb-search")
    search.send_keys("agent-01")
    visible = [r for r in driver.find_elements("css selector", "#leaderboard-table tr.lb-row") if r.is_displayed()]
    assert len(visible) == 10 and driver.find_element("id", "lb-count").text == "showing 10 of 160 runs"
    search.clear()
    search.send_keys(" ")  # an input event with an empty needle
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "lb-judge")).select_by_value("j1")
    assert driver.find_element("id", "lb-count").text == "showing 80 of 160 runs"
    # A run's name opens its detail, read from its file beside the page.
    target = next(r for r in driver.find_elements("css selector", "#leaderboard-table tr.lb-row") if r.is_displayed())
    k = target.get_attribute("data-run")
    target.find_element("css selector", "a.run-link").click()
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10).until(lambda d: d.find_elements("css selector", f"#run-{k} .run-card"))
    card = driver.find_element("css selector", f"#run-{k} .run-card").text
    assert report.runs[int(k)].run in card and "e" in card
    # The episode list starts with the leaderboard's first run; another run's episodes load when chosen.
    count = driver.find_element("id", "ep-count").text  # the opened run's episodes are listed too, not shown
    assert re.match(r"showing 20 of 40 episodes listed \(3200 in the report", count), count
    Select(driver.find_element("id", "f-run")).select_by_value(report.runs[7].run)
    WebDriverWait(driver, 10).until(lambda d: d.find_elements("css selector", "#ep-table tr.ep-row"))
    rows = driver.find_elements("css selector", "#ep-table tr.ep-row")
    assert len(rows) == 20 and all(report.runs[7].run in r.text for r in rows)
    assert [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"] == []


# ------------------------------------------------------------------------------------ traces from the run files


def _trace_call(url: str) -> list:
    """What `toolemu view` answers for a trace: toolemuTrace(token, src, record, text[, problem]), as values."""
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/javascript")
        body = response.read().decode("utf-8")
    assert body.startswith("toolemuTrace(") and body.endswith(");\n")
    return json.loads("[" + body[len("toolemuTrace(") : -3] + "]")


def test_view_reads_a_referred_trace_from_its_run_file_and_says_when_it_changed(tmp_path, monkeypatch, run_cli):
    from toolemu.cli.report import serve
    from toolemu.reporting import traces

    monkeypatch.setattr(traces, "EMBED_LIMIT", 0)  # as a study past the limit: the page refers to the files
    shutil.copytree(CORPUS / "output", tmp_path / "output")
    result = run_cli("report", tmp_path / "output", "--out", tmp_path / "out")
    assert result.code == 0, result.err
    out = tmp_path / "out"
    index = json.loads((out / "report_sources.json").read_text())
    episodes = json.loads((out / "report.json").read_text())["episodes"]
    first = episodes[0]
    src = [s["path"] for s in index["sources"]].index(str(Path(first["source"]).resolve()))
    server = serve(out)
    base = f"http://127.0.0.1:{server.server_address[1]}/_toolemu/trace.js?token={index['token']}"
    try:
        token, n, record, text = _trace_call(f"{base}&src={src}&record={first['record']}")
        trace = json.loads(text)
        assert (token, n, record) == (index["token"], src, first["record"])
        raw = json.loads(Path(first["source"]).read_text().splitlines()[first["record"]])
        assert len(trace["steps"]) == first["step_count"] and first["step_count"] > 0
        assert trace["steps"][0]["tool"] == raw["intermediate_steps"][0][0][0]
        assert set(trace["scores"]) == set(first["scores"])
        # Another render's token, a record the file does not hold: no trace.
        assert _trace_call(f"{base.replace(index['token'], '0' * 16)}&src={src}&record=0")[3:] == [None, "unreadable"]
        assert _trace_call(f"{base}&src={src}&record=999")[3:] == [None, "unreadable"]
        # The file changed since the report: the numbers on the page are not the file's any more.
        with open(first["source"], "a", encoding="utf-8") as fh:
            fh.write("\n")
        assert _trace_call(f"{base}&src={src}&record={first['record']}")[3:] == [None, "changed"]
    finally:
        server.shutdown()


def test_a_referred_trace_opens_through_view_and_says_so_from_disk(driver, tmp_path, monkeypatch, run_cli):
    from selenium.webdriver.support.ui import WebDriverWait

    from toolemu.cli.report import serve
    from toolemu.reporting import traces

    monkeypatch.setattr(traces, "EMBED_LIMIT", 0)
    shutil.copytree(CORPUS / "output", tmp_path / "output")
    assert run_cli("report", tmp_path / "output", "--out", tmp_path / "out").code == 0
    first = json.loads((tmp_path / "out" / "report.json").read_text())["episodes"][0]

    def open_first() -> str:
        driver.find_element("id", "ep-0").find_element("css selector", ".case-btn").click()
        found = WebDriverWait(driver, 10).until(
            lambda d: d.find_elements("css selector", '.trace[data-index="0"] li.step, .ep-detail .no-trace')
        )
        return found[0].text

    driver.get((tmp_path / "out" / "report.html").as_uri())
    assert "open it with `toolemu view`" in open_first()
    server = serve(tmp_path / "out")
    try:
        driver.get(f"http://127.0.0.1:{server.server_address[1]}/report.html")
        assert open_first().startswith("Step 1")
        steps = driver.find_elements("css selector", '.trace[data-index="0"] li.step')
        assert len(steps) == first["step_count"]
    finally:
        server.shutdown()
    assert [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"] == []
