"""The same report again (toolemu.reporting.again): `toolemu report` with the same arguments on unchanged files into
an unchanged folder says the last report's console again and makes nothing; anything else makes the report.

- What it prints is what the report printed, stdout and stderr, and no output file is touched.
- A changed byte (its modification time set back), a file come beside a run, an output changed or gone, other
  arguments, other code, a new secret: the report is made again, with the numbers of a report made from nothing.
- A report that failed, or read files written within a tick of the clock, or with the cache off: nothing kept.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from toolemu.reporting import again
from toolemu.reporting import cache as report_cache
from toolemu.reporting import write as write_module

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """A run of ours and one ToolEmu run in two shards."""
    root = tmp_path / "study"
    shutil.copytree(FIXTURES / "release_run", root / "ours" / "release_run")
    dumps = root / "dumps"
    dumps.mkdir()
    for shard, stamp in (("r0-5", "2026_01_01"), ("r5-10", "2026_01_02")):
        for src in sorted((FIXTURES / "toolemu_shards").iterdir()):
            shutil.copy(src, dumps / src.name.replace("traj_shards", f"agentA_{shard}_{stamp}"))
    return root


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many reports were made (write_report called); files count as long settled (RACY_S below zero)."""
    monkeypatch.setattr(report_cache, "RACY_S", -1.0)
    calls: list[int] = []
    real = write_module.write_report

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(write_module, "write_report", counting)
    return calls


def _stats(out: Path) -> dict[str, tuple[int, int, int]]:
    return {
        p.relative_to(out).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size)
        for p in out.rglob("*")
        if p.is_file()
    }


def _groups(out: Path) -> Any:
    return json.loads((out / "report.json").read_text())["groups"]


@pytest.mark.parametrize("secret", [None, "sk-againtest-fedcba9876543210"])
def test_the_same_report_again_is_its_console_again_and_makes_nothing(
    study: Path, tmp_path: Path, made: list[int], run_cli: Any, monkeypatch: pytest.MonkeyPatch, secret: str | None
) -> None:
    if secret is not None:  # a key in the environment from the start: the first report is kept all the same
        monkeypatch.setenv("MY_SERVICE_API_KEY", secret)
    out = tmp_path / "out"
    first = run_cli("report", study / "ours" / "release_run", study / "dumps", "--out", out)
    assert first.code == 0 and "agentA" in first.out and first.err
    written = _stats(out)
    second = run_cli("report", study / "ours" / "release_run", study / "dumps", "--out", out)
    assert (second.code, second.out, second.err) == (0, first.out, first.err)
    assert len(made) == 1 and _stats(out) == written  # nothing made, nothing written
    entries = list((Path(os.environ["TOOLEMU_REPORT_CACHE"]) / again.FOLDER).iterdir())
    assert len(entries) == 1


def test_a_changed_byte_with_its_time_set_back_makes_the_report_again(
    study: Path, tmp_path: Path, made: list[int], run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    assert run_cli("report", study, "--out", out).code == 0
    time.sleep(0.05)  # past a tick of the file system's clock
    safe = study / "dumps" / "agentA_r5-10_2026_01_02_eval_agent_safe.jsonl"
    before, data = safe.stat(), safe.read_bytes()
    changed = data.replace(b'"Overall Quantitative Score": "3"', b'"Overall Quantitative Score": "0"', 1)
    changed = changed.replace(b'{"ToolCallRisk": "3"}', b'{"ToolCallRisk": "0"}', 1)
    assert changed != data and len(changed) == len(data)
    old = _groups(out)
    safe.write_bytes(changed)
    os.utime(safe, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same size and mtime: only the ctime tells
    assert run_cli("report", study, "--out", out).code == 0
    assert len(made) == 2
    monkeypatch.setenv("TOOLEMU_REPORT_CACHE", "off")
    assert run_cli("report", study, "--out", tmp_path / "plain").code == 0
    assert _groups(out) == _groups(tmp_path / "plain") != old  # the new number, not the stale one


def test_a_file_come_beside_a_run_makes_the_report_again(
    study: Path, tmp_path: Path, made: list[int], run_cli: Any
) -> None:
    out = tmp_path / "out"
    assert run_cli("report", study, "--out", out).code == 0
    ours = study / "ours" / "release_run"
    shutil.copy(ours / "trajectories_eval_agent_help.jsonl", ours / "trajectories_eval_agent_help@third.jsonl")
    assert run_cli("report", study, "--out", out).code == 0
    assert len(made) == 2
    assert run_cli("report", study, "--out", out).code == 0
    assert len(made) == 2  # and the new state is the one said again


@pytest.mark.parametrize("change", ["edited", "gone"])
def test_an_output_changed_or_gone_makes_the_report_again(
    study: Path, tmp_path: Path, made: list[int], run_cli: Any, change: str
) -> None:
    out = tmp_path / "out"
    assert run_cli("report", study, "--out", out).code == 0
    page = (out / "summary.csv").read_bytes()
    if change == "edited":
        (out / "summary.csv").write_bytes(page.replace(b",", b";"))
    else:
        (out / "summary.csv").unlink()
    assert run_cli("report", study, "--out", out).code == 0
    assert len(made) == 2 and (out / "summary.csv").read_bytes() == page


def test_other_arguments_code_or_secrets_make_the_report_again(
    study: Path, tmp_path: Path, made: list[int], run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each change comes while the last report's entry still holds (its outputs untouched): only the key tells."""
    out = tmp_path / "out"
    assert run_cli("report", study, "--out", out).code == 0
    assert run_cli("report", study, "--out", out).code == 0 and len(made) == 1
    monkeypatch.setattr(again, "package_hash", lambda root: "another version of the package")
    assert run_cli("report", study, "--out", out).code == 0 and len(made) == 2
    monkeypatch.setenv("MY_SERVICE_API_KEY", "sk-againtest-0123456789abcdef")
    assert run_cli("report", study, "--out", out).code == 0 and len(made) == 3
    monkeypatch.setenv("TOOLEMU_SOMETHING", "1")
    assert run_cli("report", study, "--out", out).code == 0 and len(made) == 4
    assert run_cli("report", study, "--out", out, "--verbose").code == 0 and len(made) == 5
    assert run_cli("report", study, "--out", out, "--verbose").code == 0 and len(made) == 5  # all the same: again


def test_a_report_that_failed_or_read_fresh_files_or_has_no_cache_keeps_nothing(
    study: Path, tmp_path: Path, made: list[int], run_cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "traj.jsonl").write_text(
        '{"foo": "bar"}\n' + (FIXTURES / "toolemu_shards" / "traj_shards.jsonl").read_text()
    )
    for _ in range(2):
        assert run_cli("report", bad, "--out", tmp_path / "bad_out").code == 2  # a problem line: exit 2
    assert len(made) == 2
    monkeypatch.setattr(report_cache, "RACY_S", 3600.0)  # every file changed "just now"
    for _ in range(2):
        assert run_cli("report", study, "--out", tmp_path / "out").code == 0
    assert len(made) == 4
    monkeypatch.setattr(report_cache, "RACY_S", -1.0)
    monkeypatch.setenv("TOOLEMU_REPORT_CACHE", "off")
    for _ in range(2):
        assert run_cli("report", study, "--out", tmp_path / "out").code == 0
    assert len(made) == 6
