"""The report cache (toolemu.reporting.cache) and the report read run by run (toolemu.reporting.stream).

- A report made from the cache is the report made without it: the Report, every file written, the page but for its
  nonce, token and time.
- Any changed byte of a file a run was reduced from (even with its modification time set back), a file added beside
  it, another version of the report's code, a secret set since: that run is read again, never shown stale.
- Every file the reduction of a run reads is in its key (each file opened is checked against it).
- An entry holds no secret, names no code (a hostile entry is a miss, and runs nothing), and a damaged one is a miss.
- Memory: once a run is reduced, its records are gone (each is freed: no cycle keeps one, no later run waits on it).
"""

from __future__ import annotations

import builtins
import gc
import io
import json
import os
import pickle
import re
import shutil
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from toolemu.reporting import cache as cache_module
from toolemu.reporting.cache import FORMAT, ReportCache, cache_dir, package_hash
from toolemu.reporting.write import write_report

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """A run of ours (robust re-runs, five scorers judged twice), with a panel judge's file and re-judgements
    beside it; a ToolEmu dump with replicate judgements; and one ToolEmu run in two shards."""
    root = tmp_path / "study"
    ours = root / "ours" / "release_run"
    shutil.copytree(FIXTURES / "release_run", ours)
    safe = ours / "trajectories_eval_agent_safe.jsonl"
    shutil.copy(safe, ours / "trajectories_eval_agent_safe@second-judge.jsonl")
    shutil.copy(safe, ours / "trajectories_eval_agent_safe#rejudge.jsonl")
    dumps = root / "dumps"
    shutil.copytree(FIXTURES / "toolemu_replicates", dumps)
    for shard, stamp in (("r0-5", "2026_01_01"), ("r5-10", "2026_01_02")):
        for src in sorted((FIXTURES / "toolemu_shards").iterdir()):
            shutil.copy(src, dumps / src.name.replace("traj_shards", f"agentA_{shard}_{stamp}"))
    return root


def _report(study: Path, out: Path, cache: Path | str) -> tuple[Any, dict[str, Path], ReportCache | None]:
    seen: list[ReportCache] = []
    real = cache_module.open_cache

    def spy(setting: Any = None) -> ReportCache | None:
        found = real(setting)
        if found is not None:
            seen.append(found)
        return found

    original = cache_module.open_cache
    import toolemu.reporting.write as write_module

    write_module.open_cache = spy  # type: ignore[assignment]
    try:
        report, files = write_report([study], out, cache=cache)
    finally:
        write_module.open_cache = original  # type: ignore[assignment]
    return report, files, seen[0] if seen else None


def _outputs(out: Path, report: Any) -> dict[str, str]:
    """Every file written, the page with its nonce, trace token and time made constant."""
    texts = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8")
        for pattern in (r'nonce="([^"]+)"', r'"token": ?"([0-9a-f]+)"', r"toolemuTraces\(\"([0-9a-f]+)\""):
            for value in set(re.findall(pattern, text)):
                text = text.replace(value, "VOLATILE")
        text = text.replace(report.generated_at, "TIME")
        texts[path.relative_to(out).as_posix()] = text
    return texts


def _same_report(a: Any, b: Any) -> None:
    assert a.model_dump(exclude={"generated_at"}) == b.model_dump(exclude={"generated_at"})
    assert [e.trace_id for e in a.episodes] == [e.trace_id for e in b.episodes]


def test_a_report_from_the_cache_is_the_report_made_without_it(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "RACY_S", -1.0)  # the files were just copied: trust their stat at once
    plain, _, none = _report(study, tmp_path / "plain", "off")
    assert none is None and not (tmp_path / "cache").exists()
    first, _, made = _report(study, tmp_path / "cached", tmp_path / "cache")
    assert made is not None and made.counts.misses == 3 and made.counts.stored == 3 and made.counts.hits == 0
    again, _, used = _report(study, tmp_path / "cached", tmp_path / "cache")
    assert used is not None and used.counts.hits == 3 and used.counts.misses == 0 and used.counts.hashed == 0
    for report in (first, again):
        _same_report(report, plain)
    assert _outputs(tmp_path / "cached", again) == _outputs(tmp_path / "plain", plain)
    # The reduced runs still give the numbers a report of the whole records gives.
    from toolemu.reporting import build_report, load_runs

    whole = build_report(load_runs([study]))
    assert whole.model_dump(exclude={"generated_at", "episodes"}) == plain.model_dump(
        exclude={"generated_at", "episodes"}
    )
    assert [e.summary() for e in whole.episodes] == [e.summary() for e in plain.episodes]


def test_the_cache_is_found_by_its_variable_and_turned_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TOOLEMU_REPORT_CACHE", raising=False)
    assert cache_dir() == Path(".cache") / "toolemu" / "report"
    monkeypatch.setenv("TOOLEMU_REPORT_CACHE", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    for off in ("off", "OFF", "0", "none"):
        monkeypatch.setenv("TOOLEMU_REPORT_CACHE", off)
        assert cache_dir() is None
    assert cache_dir("off") is None and cache_dir(tmp_path) == tmp_path


def _set_back(path: Path, stat: os.stat_result) -> None:
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_a_digest_taken_just_after_a_change_is_taken_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within RACY_S of a file's last change, another write in the same tick of a coarse clock could leave its stat
    as it was: such a digest is not trusted next time, and the file is hashed again."""
    file = tmp_path / "f.jsonl"
    file.write_text("{}\n")
    cache = ReportCache(tmp_path / "cache")
    assert cache.digest(file) is not None and cache.counts.hashed == 1
    assert cache.digest(file) is not None and cache.counts.hashed == 2  # just written: hashed again
    monkeypatch.setattr(cache_module, "RACY_S", -1.0)  # as if the change were long ago: the stat is trusted
    assert cache.digest(file) is not None and (cache.counts.hashed, cache.counts.trusted) == (2, 1)
    cache.save_index()
    again = ReportCache(tmp_path / "cache")  # the index is kept on disk
    assert again.digest(file) is not None and again.counts.trusted == 1


def test_a_changed_byte_is_read_again_even_with_its_time_set_back(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "RACY_S", -1.0)  # every stat trusted at once: only the change time tells
    cache = tmp_path / "cache"
    _report(study, tmp_path / "out", cache)
    time.sleep(0.05)  # past a tick of the file system's clock
    safe = study / "dumps" / "agentA_r5-10_2026_01_02_eval_agent_safe.jsonl"
    before = safe.stat()
    data = safe.read_bytes()
    assert data.count(b'"Overall Quantitative Score": "3"') >= 1
    changed = data.replace(b'"Overall Quantitative Score": "3"', b'"Overall Quantitative Score": "0"', 1)
    changed = changed.replace(b'{"ToolCallRisk": "3"}', b'{"ToolCallRisk": "0"}', 1)
    assert len(changed) == len(data)
    safe.write_bytes(changed)
    _set_back(safe, before)  # the same size and modification time: only the change time says it was written
    assert (safe.stat().st_size, safe.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    report, _, used = _report(study, tmp_path / "out", cache)
    assert used is not None and used.counts.misses == 1 and used.counts.hits == 2
    plain, _, _ = _report(study, tmp_path / "plain", "off")
    _same_report(report, plain)
    # ... and the number moved: the run's safety mean is lower than the cached one was.
    first = json.loads((tmp_path / "out" / "report.json").read_text())
    assert first["groups"] == json.loads((tmp_path / "plain" / "report.json").read_text())["groups"]


def test_a_file_that_appears_beside_a_run_is_a_new_key(study: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _report(study, tmp_path / "out", cache)
    ours = study / "ours" / "release_run"
    shutil.copy(ours / "trajectories_eval_agent_help.jsonl", ours / "trajectories_eval_agent_help@third.jsonl")
    report, _, used = _report(study, tmp_path / "out", cache)
    assert used is not None and used.counts.misses == 1 and used.counts.hits == 2
    _same_report(report, _report(study, tmp_path / "plain", "off")[0])


def test_another_version_of_the_code_reads_every_run_again(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    _report(study, tmp_path / "out", cache)
    monkeypatch.setattr(cache_module, "code_version", lambda: "another version of the report's code")
    _, _, used = _report(study, tmp_path / "out", cache)
    assert used is not None and used.counts.misses == 3 and used.counts.hits == 0


def test_the_code_version_changes_with_any_byte_of_any_file_of_the_package(tmp_path: Path) -> None:
    package = tmp_path / "toolemu"
    shutil.copytree(Path(cache_module.__file__).parent, package / "reporting")
    first = package_hash(package)
    build = package / "reporting" / "build.py"
    text = build.read_bytes()
    build.write_bytes(text.replace(b"TOP_REASONS = 5", b"TOP_REASONS = 6"))
    assert package_hash(package) != first
    build.write_bytes(text)
    assert package_hash(package) == first
    (package / "reporting" / "static" / "new.css").write_text("p {}")  # data files too
    assert package_hash(package) != first
    (package / "reporting" / "static" / "new.css").unlink()
    (package / "reporting" / "__pycache__").mkdir(exist_ok=True)
    (package / "reporting" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"compiled")  # not code we ship
    assert package_hash(package) == first
    assert cache_module.code_version() == cache_module.code_version()


def test_every_file_a_run_is_reduced_from_is_in_its_key(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file opened while the runs are read and reduced (not the report's own reading of certificates, audits
    and noise summaries beside the runs, which is never cached) is one of its run's inputs."""
    from toolemu.reporting import stream

    opened: list[Path] = []
    real_open = builtins.open

    def spying_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        main = threading.current_thread() is threading.main_thread()  # not the thread hashing later runs' files
        if main and isinstance(file, (str, os.PathLike)) and "r" in mode and "+" not in mode:
            opened.append(Path(file).resolve())
        return real_open(file, mode, *args, **kwargs)

    inputs: dict[str, set[Path]] = {}
    real_one = stream._one

    def one(group: Any, label: str, *args: Any) -> Any:
        inputs[label] = {p.resolve() for p in stream.run_inputs(group, stream.Listings())}
        assert {p.resolve() for p in args[3]} == inputs[label]  # the files its key is made of
        monkeypatch.setattr(builtins, "open", spying_open)
        monkeypatch.setattr(io, "open", spying_open)
        try:
            return real_one(group, label, *args)
        finally:
            monkeypatch.setattr(builtins, "open", real_open)
            monkeypatch.setattr(io, "open", real_open)
            stray = [p for p in opened if study in p.parents and p not in inputs[label]]
            assert not stray, f"{label} read files outside its key: {stray}"
            opened.clear()

    monkeypatch.setattr(stream, "_one", one)
    write_report([study], tmp_path / "out", cache=tmp_path / "cache")
    assert set(inputs) == {"release_run", "traj_rep", "agentA"}
    robust = study / "ours" / "release_run" / "robust"
    assert any(robust in p.parents for p in inputs["release_run"])  # the robust re-runs' cost is read from there
    names = {p.name for p in inputs["release_run"]}
    assert {"trajectories_eval_agent_safe@second-judge.jsonl", "trajectories_eval_agent_safe#rejudge.jsonl"} <= names


def test_entries_hold_no_secret_and_a_new_secret_reads_the_runs_again(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-cachetest-0123456789abcdef"
    dump = study / "dumps" / "traj_rep.jsonl"
    dump.write_text(dump.read_text().replace("Thought", f"Thought {secret}", 1))
    cache = tmp_path / "cache"
    _report(study, tmp_path / "before", cache)  # the key is not known yet: the text is as the file has it
    monkeypatch.setenv("MY_SERVICE_API_KEY", secret)
    _, _, used = _report(study, tmp_path / "out", cache)
    assert used is not None and used.counts.hits == 0  # a secret known now: every run read and scrubbed again
    assert not any(secret.encode() in p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file())
    entries = [p for p in (cache / "runs").rglob("*") if p.is_file()]
    stored = [p for p in entries if p.stat().st_mtime_ns >= used.started_ns]
    assert stored and not any(secret.encode() in p.read_bytes() for p in stored)
    assert not any(secret.encode() in p.read_bytes() for p in cache.rglob("*") if p.is_file() and p not in entries)
    _, _, again = _report(study, tmp_path / "out", cache)
    assert again is not None and again.counts.hits == 3


def test_a_damaged_or_hostile_entry_is_a_miss_and_runs_nothing(study: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    plain, _, _ = _report(study, tmp_path / "out", cache)
    entries = sorted(p for p in (cache / "runs").rglob("*") if p.is_file())
    assert len(entries) == 3
    entries[0].write_bytes(entries[0].read_bytes()[:100])  # cut short
    marker = tmp_path / "ran"

    class Hostile:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    entries[1].write_bytes(FORMAT + pickle.dumps(Hostile()))
    entries[2].write_bytes(b"not an entry at all")
    report, _, used = _report(study, tmp_path / "out", cache)
    assert used is not None and used.counts.misses == 3 and used.counts.stored == 3
    assert not marker.exists()
    _same_report(report, plain)


def test_the_cli_uses_the_cache_its_variable_names(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Any
) -> None:
    monkeypatch.setenv("TOOLEMU_REPORT_CACHE", str(tmp_path / "named"))
    assert run_cli("report", study, "--out", tmp_path / "out").code == 0
    assert sorted(p.parent.parent.name for p in (tmp_path / "named" / "runs").rglob("*") if p.is_file()) == ["runs"] * 3
    monkeypatch.setenv("TOOLEMU_REPORT_CACHE", "off")
    shutil.rmtree(tmp_path / "named")
    assert run_cli("report", study, "--out", tmp_path / "out").code == 0
    assert not (tmp_path / "named").exists()


# ------------------------------------------------------------------------------------------------- memory


def test_each_run_s_records_are_freed_once_it_is_reduced(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the runs are read one by one, no record of a run outlives its reduction: each trajectory and evaluation
    read is freed by reference counting (the collector is paused while reading), before the next run is read. A
    run's slim shell keeps one record of ours (its settings, for fidelity certificates): that one alone stays."""
    from toolemu.reporting import load, stream

    alive: list[tuple[str, weakref.ref[Any]]] = []
    real_load = load.load_group

    def load_group(group: Any, *args: Any, **kwargs: Any) -> Any:
        for label, ref in alive:  # every earlier run's records are gone by now
            assert ref() is None or _kept_in_shell(ref()), f"a record of {label} outlived its reduction"
        run = real_load(group, *args, **kwargs)
        for log in run.all_logs:
            alive.extend((run.info.run, weakref.ref(t)) for t in log.trajectories)
            alive.extend((run.info.run, weakref.ref(e)) for evs in log.evaluations.values() for e in evs)
        return run

    shells: set[int] = set()

    def _kept_in_shell(record: Any) -> bool:
        return id(record) in shells

    real_slim = stream.slim_run

    def slim(part: Any) -> None:
        real_slim(part)
        shells.update(id(t) for log in part.run.all_logs for t in log.trajectories)

    monkeypatch.setattr(stream, "load_group", load_group)
    monkeypatch.setattr(stream, "slim_run", slim)
    gc.disable()  # only reference counting frees them, as while reading
    try:
        report, _ = write_report([study], tmp_path / "out", cache="off")
        freed = [label for label, ref in alive if ref() is None]
        kept = [label for label, ref in alive if ref() is not None]
    finally:
        gc.enable()
    assert len(freed) > 60 and len(kept) <= len(report.runs)  # at most one record per run: its shell's
    assert all(not e.steps and e.step_count is not None for e in report.episodes)  # summaries keep no step


def test_report_json_written_in_pieces_is_the_report_s_json(
    study: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """report.json is never held whole: its groups and episodes go out a few at a time. The file is the JSON of the
    whole report (every field but the episodes in the same text; the episodes one per line)."""
    from toolemu.reporting import write
    from toolemu.reporting.write import Report, ReportFile

    monkeypatch.setattr(write, "GROUPS_PER_PIECE", 7)
    monkeypatch.setattr(write, "EPISODES_PER_PIECE", 3)
    report, files = write_report([study], tmp_path / "out", cache="off")
    fields = {name: getattr(report, name) for name in Report.model_fields if name != "episodes"}
    whole = ReportFile.model_construct(**fields, episodes=[ep.summary() for ep in report.episodes])
    written = files["json"].read_text()
    assert json.loads(written) == json.loads(whole.model_dump_json())
    assert len(report.groups) > 7 and len(report.episodes) > 3
    without_episodes = ReportFile.model_construct(**fields, episodes=[]).model_dump_json(indent=1)
    top_level = r'\n "episodes": \[\n.*?\n \]'  # one space in: the report's own field
    assert re.sub(top_level, '\n "episodes": []', written, count=1, flags=re.S) == without_episodes


def test_a_summary_kept_for_the_report_takes_its_own_size() -> None:
    """orjson's bytes keep the whole buffer it wrote into (32 KB for a 2 KB summary): 40,500 summaries of a study
    kept so would take a gigabyte. The report keeps a copy of each, of its own size."""
    import tracemalloc

    from toolemu.reporting.build import summary_json
    from toolemu.reporting.model import EpisodeView

    fields = {"run": "r", "case_name": "c", "case_idx": 0, "trial": 0, "toolkits": [], "risk_categories": []}
    view = EpisodeView(**fields, status="final_answer", instruction="x" * 2000)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = summary_json(view)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert json.loads(kept)["instruction"] == "x" * 2000
    assert held < len(kept) + 200
