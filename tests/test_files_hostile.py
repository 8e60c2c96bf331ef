"""Files and signals, hostile: every output a command writes fails in one line and exit 2, never a traceback, and
leaves no half-written file (a full disk, a read-only folder, a folder where a file belongs, a name too long); a lock
file removed under a live writer lets no second writer in; a pair recorded twice is flagged and counted once; an
empty shard runs through with exit 0 and says so; a count that would explode is refused with its bound.

How the failures are made, without root mounts:
- a full disk: RLIMIT_FSIZE in a subprocess (SIGXFSZ ignored, so a write past the limit fails with EFBIG, as a full
  disk fails with ENOSPC, part-way through a file), or `os.write` / `os.replace` raising ENOSPC in-process for the
  writers that call them, or /dev/full as the file itself;
- a read-only folder: the tests run as root, whom chmod does not stop, so `chattr +i` (immutable: root cannot create,
  replace or change a file in it either); chmod where the tests do not run as root; skipped, saying why, where
  neither holds;
- a name too long: a 300-character folder or case name (a name is at most 255 bytes).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import FIXTURES

from toolemu.log import TRAJECTORIES

SPECS = ("--input-path", FIXTURES / "toolemu_cases.json", "--toolkits-path", FIXTURES / "toolemu_toolkits.json")
LONG = "n" * 300  # past the 255 bytes a file name may have


def _run_args(dump: Path, *extra: object) -> tuple[object, ...]:
    return ("run", "--dry-run", "--no-progress", *SPECS, "--dump-dir", dump, *extra)


def _emulate_args(dump: Path, *extra: object) -> tuple[object, ...]:
    return ("emulate", "--dry-run", "--no-progress", *SPECS, "--dump-dir", dump, *extra)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A judged and reported dry run of the two fixture cases, copied by each test that changes it."""
    from toolemu.cli.app import main

    out = tmp_path_factory.mktemp("files") / "base"
    argv = sys.argv
    sys.argv = ["toolemu", *map(str, _run_args(out))]
    try:
        with pytest.raises(SystemExit) as done:
            main()
    finally:
        sys.argv = argv
    assert done.value.code in (0, None)
    return out


@dataclass
class Env:
    tmp: Path
    base: Path
    run_cli: Callable[..., object]
    monkeypatch: pytest.MonkeyPatch

    def copy(self, name: str = "run") -> Path:
        target = self.tmp / name
        shutil.copytree(self.base, target, ignore=shutil.ignore_patterns(".*.lock"))
        return target


def one_line(result, *expected: str) -> str:
    """Exit 2, one line on stderr that holds every `expected` text, no traceback."""
    assert result.code == 2, (result.code, result.out, result.err)
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def no_temp_files(folder: Path) -> None:
    left = [p.name for p in folder.rglob("*.tmp")]
    assert left == [], left


def whole_lines(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw == b"" or raw.endswith(b"\n"), f"{path.name} ends in a half line"
    return [json.loads(line) for line in raw.decode().splitlines()]


# ----------------------------------------------------------------------------------------- ways to fail a write

LIMITED = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing us
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["toolemu", *sys.argv[2:]]
from toolemu.cli.app import main
main()
"""


@dataclass
class Done:
    code: int
    out: str
    err: str


def disk_full_at(limit: int, *args: object, cwd: Path) -> Done:
    """`toolemu ARGS` in a process that may write no file past `limit` bytes (a disk that fills part-way)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [sys.executable, "-c", LIMITED, str(limit), *map(str, args)]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)
    return Done(proc.returncode, proc.stdout, proc.stderr)


def enospc_on_write(monkeypatch: pytest.MonkeyPatch, name_part: str, after_bytes: int = 0) -> None:
    """`os.write` to a file whose path holds `name_part` takes `after_bytes` bytes, then fails: the disk is full."""
    real = os.write
    taken = {"n": 0}

    def write(fd: int, data) -> int:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if name_part not in target:
            return real(fd, data)
        room = after_bytes - taken["n"]
        if room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        part = bytes(data[:room])
        taken["n"] += len(part)
        return real(fd, part)

    monkeypatch.setattr(os, "write", write)


def enospc_on_replace(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Renaming a written file onto `name` fails: the disk filled as it was written (NFS reports it late)."""
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst).name == name:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(src))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


@contextmanager
def read_only(*folders: Path) -> Iterator[None]:
    """The folders and all they hold, unwritable even for root: `chattr +i` as root (chmod does not stop root),
    chmod a-w otherwise."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for f in folders for p in [f, *f.rglob("*")]}
        for p, mode in modes.items():
            p.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.skip("running as root, whom chmod does not stop, and chattr is not installed")
    done = subprocess.run(["chattr", "-R", "+i", *map(str, folders)], capture_output=True, text=True)
    try:
        if done.returncode != 0:
            pytest.skip(f"running as root, whom chmod does not stop, and chattr +i fails here: {done.stderr.strip()}")
        probe = folders[0] / ".probe"
        try:
            probe.touch()
        except OSError:
            pass
        else:
            probe.unlink()
            pytest.skip("chattr +i does not stop root from writing on this file system")
        yield
    finally:
        subprocess.run(["chattr", "-R", "-i", *map(str, folders)], capture_output=True)


# ------------------------------------------------------------------------------------------------ the hostile set

HOSTILE: dict[str, Callable[[Env], None]] = {}


def hostile(name: str) -> Callable[[Callable[[Env], None]], Callable[[Env], None]]:
    def register(fn: Callable[[Env], None]) -> Callable[[Env], None]:
        HOSTILE[name] = fn
        return fn

    return register


# --- a full disk


@hostile("emulate: the disk fills writing run.json")
def _(env: Env) -> None:
    dump = env.tmp / "run"
    result = disk_full_at(300, *_emulate_args(dump), cwd=env.tmp)
    one_line(result, "run.json", "cannot be written")
    assert not (dump / "run.json").exists()
    no_temp_files(dump)  # today run.json.tmp stays behind, cut off at the limit


@hostile("report: the disk fills writing report.html, none there before")
def _(env: Env) -> None:
    out = env.tmp / "report"
    result = disk_full_at(40_000, "report", env.base, "--out", out, cwd=env.tmp)
    one_line(result, "report.html", "cannot be written", "--out")
    assert not (out / "report.html").exists()  # today: the first 40,000 bytes of a page
    no_temp_files(out)


@hostile("report: the disk fills writing report.html over an earlier one")
def _(env: Env) -> None:
    run = env.copy()
    before = (run / "report.html").read_bytes()
    result = disk_full_at(40_000, "report", run, cwd=env.tmp)
    one_line(result, "report.html")
    assert (run / "report.html").read_bytes() == before  # the last whole page, never one cut off
    no_temp_files(run)


@hostile("check: the disk fills writing summary.svg")
def _(env: Env) -> None:
    thresholds = env.tmp / "t.yaml"
    thresholds.write_text("thresholds:\n  min_episodes: 1\n")
    svg = env.tmp / "summary.svg"
    result = disk_full_at(300, "check", env.base, "--thresholds", thresholds, "--svg", svg, cwd=env.tmp)
    one_line(result, "summary.svg", "--svg")
    assert not svg.exists()  # today: an SVG cut off at 300 bytes
    no_temp_files(env.tmp)


@hostile("export inspect: the disk fills writing the log")
def _(env: Env) -> None:
    target = env.tmp / "log.json"
    result = disk_full_at(5_000, "export", "inspect", env.base, "--out", target, cwd=env.tmp)
    one_line(result, "log.json", "cannot be written")
    assert not target.exists()
    no_temp_files(env.tmp)


@hostile("docs: the disk fills writing index.html")
def _(env: Env) -> None:
    out = env.tmp / "docs"
    result = disk_full_at(20_000, "docs", "--out", out, cwd=env.tmp)
    one_line(result, "index.html")
    assert not (out / "index.html").exists()  # today: a page cut off at 20,000 bytes
    no_temp_files(out)


@hostile("emulate: the disk is full when the trajectories are appended")
def _(env: Env) -> None:
    dump = env.tmp / "run"
    enospc_on_write(env.monkeypatch, TRAJECTORIES)
    result = env.run_cli(*_emulate_args(dump))
    one_line(result, TRAJECTORIES, "the disk is full")
    assert "finished now" not in result.out  # no episode is reported as done
    assert whole_lines(dump / TRAJECTORIES) == []


@hostile("emulate: the disk fills in the middle of a trajectory line")
def _(env: Env) -> None:
    dump = env.tmp / "run"
    enospc_on_write(env.monkeypatch, TRAJECTORIES, after_bytes=100)
    result = env.run_cli(*_emulate_args(dump))
    one_line(result, TRAJECTORIES)
    assert whole_lines(dump / TRAJECTORIES) == []  # today: the first 100 bytes of a record stay


@hostile("evaluate: the disk is full when the judgements are appended")
def _(env: Env) -> None:
    run = env.copy()
    for path in run.glob("*_eval_*.jsonl"):
        path.unlink()
    enospc_on_write(env.monkeypatch, "_eval_")
    result = env.run_cli("evaluate", run, "--dry-run", "--no-progress")
    one_line(result, "_eval_", "the disk is full")
    assert "judged now" not in result.out


@hostile("emulate: the disk fills as run.json is renamed into place")
def _(env: Env) -> None:
    dump = env.tmp / "run"
    enospc_on_replace(env.monkeypatch, "run.json")
    one_line(env.run_cli(*_emulate_args(dump)), "run.json", "the disk is full")
    no_temp_files(dump)


@hostile("merge: the disk fills as the merged trajectories are renamed into place")
def _(env: Env) -> None:
    out = env.tmp / "merged"
    enospc_on_replace(env.monkeypatch, TRAJECTORIES)
    one_line(env.run_cli("merge", env.base, "--out", out), TRAJECTORIES, "the disk is full")
    no_temp_files(out)


@hostile("export inspect: --out is /dev/full")
def _(env: Env) -> None:
    link = env.tmp / "full.json"
    link.symlink_to("/dev/full")
    one_line(env.run_cli("export", "inspect", env.base, "--out", link), "full.json", "the disk is full")
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # written in place, never replaced by a file


# --- a read-only run folder, an unwritable --out


@hostile("emulate: resuming a read-only run folder")
def _(env: Env) -> None:
    run = env.copy()
    with read_only(run):
        one_line(env.run_cli(*_emulate_args(run)), str(run), "cannot be written")


@hostile("evaluate: a read-only run folder")
def _(env: Env) -> None:
    run = env.copy()
    with read_only(run):
        one_line(env.run_cli("evaluate", run, "--dry-run", "--no-progress"), str(run), "cannot be written")


@hostile("report: a read-only run folder, the report beside it")
def _(env: Env) -> None:
    run = env.copy()
    before = (run / "report.json").read_bytes()
    with read_only(run):
        one_line(env.run_cli("report", run), "report", "cannot be written")
    assert (run / "report.json").read_bytes() == before


@hostile("report: --out a read-only folder")
def _(env: Env) -> None:
    out = env.tmp / "out"
    out.mkdir()
    with read_only(out):
        one_line(env.run_cli("report", env.base, "--out", out), str(out), "--out", "cannot be written")


@hostile("export inspect: --out in a read-only folder")
def _(env: Env) -> None:
    out = env.tmp / "out"
    out.mkdir()
    with read_only(out):
        one_line(env.run_cli("export", "inspect", env.base, "--out", out / "log.json"), "log.json")


@hostile("merge: --out a read-only empty folder")
def _(env: Env) -> None:
    out = env.tmp / "merged"
    out.mkdir()
    with read_only(out):
        one_line(env.run_cli("merge", env.base, "--out", out), str(out), "cannot be written")


@hostile("agree: --label-sheet in a read-only folder")
def _(env: Env) -> None:
    out = env.tmp / "out"
    out.mkdir()
    with read_only(out):
        one_line(env.run_cli("agree", env.base, "--label-sheet", out / "labels.csv"), "labels.csv", "--label-sheet")


# --- a folder where a file belongs


@hostile("report: report.html is a folder")
def _(env: Env) -> None:
    out = env.tmp / "out"
    (out / "report.html").mkdir(parents=True)
    one_line(env.run_cli("report", env.base, "--out", out), "report.html", "a folder is where this file goes")


@hostile("report: report.json is a folder")
def _(env: Env) -> None:
    out = env.tmp / "out"
    (out / "report.json").mkdir(parents=True)
    one_line(env.run_cli("report", env.base, "--out", out), "report.json", "a folder is where this file goes")
    no_temp_files(out)


@hostile("report: summary.csv is a folder")
def _(env: Env) -> None:
    out = env.tmp / "out"
    (out / "summary.csv").mkdir(parents=True)
    one_line(env.run_cli("report", env.base, "--out", out), "summary.csv")


@hostile("emulate: trajectories.jsonl is a folder")
def _(env: Env) -> None:
    dump = env.tmp / "run"
    (dump / TRAJECTORIES).mkdir(parents=True)
    one_line(env.run_cli(*_emulate_args(dump)), TRAJECTORIES)


@hostile("emulate: the lock file is a folder")
def _(env: Env) -> None:
    dump = env.tmp / "run"
    (dump / ".trajectories.lock").mkdir(parents=True)
    one_line(env.run_cli(*_emulate_args(dump)), ".trajectories.lock")


@hostile("evaluate: an eval file is a folder")
def _(env: Env) -> None:
    run = env.copy()
    (run / "trajectories_eval_agent_safe.jsonl").unlink()
    (run / "trajectories_eval_agent_safe.jsonl").mkdir()
    one_line(env.run_cli("evaluate", run, "--dry-run", "--no-progress"), "trajectories_eval_agent_safe.jsonl")


@hostile("export inspect: --out is a folder")
def _(env: Env) -> None:
    (env.tmp / "log.json").mkdir()
    one_line(env.run_cli("export", "inspect", env.base, "--out", env.tmp / "log.json"), "log.json")


# --- a name too long


@hostile("emulate: --dump-dir's name is 300 characters")
def _(env: Env) -> None:
    one_line(env.run_cli(*_emulate_args(env.tmp / LONG)), "--dump-dir", "File name too long")


@hostile("report: --out's name is 300 characters")
def _(env: Env) -> None:
    one_line(env.run_cli("report", env.base, "--out", env.tmp / LONG), "--out", "File name too long")


@hostile("merge: --out's name is 300 characters")
def _(env: Env) -> None:
    one_line(env.run_cli("merge", env.base, "--out", env.tmp / LONG), "File name too long")


@hostile("play: --dump-dir's name is 300 characters")
def _(env: Env) -> None:
    result = env.run_cli("play", "fixture_0", "--as", "agent", "--dry-run", *SPECS, "--dump-dir", env.tmp / LONG)
    one_line(result, "File name too long")


@hostile("play: a case whose name is 300 characters, in its default folder")
def _(env: Env) -> None:
    from toolemu.play import PlayerLeft, Terminal

    class Leaves(Terminal):
        def ask(self, *args: object, **kwargs: object) -> str:
            raise PlayerLeft()

    cases = json.loads((FIXTURES / "toolemu_cases.json").read_text())
    cases[0]["name"] = "case_" + "x" * 295
    (env.tmp / "cases.json").write_text(json.dumps(cases))
    env.monkeypatch.chdir(env.tmp)
    env.monkeypatch.setattr("toolemu.play.Terminal", Leaves)
    specs = ("--input-path", env.tmp / "cases.json", "--toolkits-path", FIXTURES / "toolemu_toolkits.json")
    result = env.run_cli("play", cases[0]["name"], "--as", "agent", "--dry-run", *specs)
    assert result.code == 0 and "Traceback" not in result.err, result.err
    (folder,) = (env.tmp / "dumps" / "play").iterdir()  # cut to a name a file system takes, with a hash
    assert len(folder.name) <= 120 and folder.name.endswith("_as_agent")
    assert [r["case_name"] for r in whole_lines(folder / TRAJECTORIES)] == [cases[0]["name"]]


# --- a lock file removed under a live writer

LOCK_HOLDER = """
import sys, time
from pathlib import Path
from toolemu.log.lock import run_lock
with run_lock(Path(sys.argv[1]) / "trajectories.jsonl"):
    print("locked", flush=True)
    sys.stdin.read()  # until the test closes it
"""


@contextmanager
def live_writer(run: Path) -> Iterator[subprocess.Popen]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield proc
    finally:
        proc.kill()
        proc.wait()


@hostile("lock: the lock file is removed under a live writer")
def _(env: Env) -> None:
    run = env.copy()
    with live_writer(run):
        (run / ".trajectories.lock").unlink()
        one_line(
            env.run_cli(*_emulate_args(run)), "another toolemu process", "lock file .trajectories.lock was removed"
        )


@hostile("lock: the lock file is replaced by an empty one under a live writer")
def _(env: Env) -> None:
    run = env.copy()
    with live_writer(run):
        (run / ".trajectories.lock").unlink()
        (run / ".trajectories.lock").write_text("")
        one_line(env.run_cli("evaluate", run, "--dry-run", "--no-progress"), "another toolemu process")


@hostile("lock: the lock file is replaced by a folder under a live writer")
def _(env: Env) -> None:
    run = env.copy()
    with live_writer(run):
        (run / ".trajectories.lock").unlink()
        (run / ".trajectories.lock").mkdir()
        one_line(env.run_cli(*_emulate_args(run)), ".trajectories.lock")


# --- a pair recorded twice


def _duplicate_first_line(run: Path) -> None:
    lines = (run / TRAJECTORIES).read_text().splitlines(keepends=True)
    (run / TRAJECTORIES).write_text("".join([*lines, lines[0]]))


@hostile("report: a pair recorded twice is noted and counted once")
def _(env: Env) -> None:
    run = env.copy()
    _duplicate_first_line(run)
    result = env.run_cli("report", run)
    assert result.code == 0, result.err
    assert "recorded more than once" in result.out and "fixture_0#0 x2" in result.out  # the console's notes
    report = json.loads((run / "report.json").read_text())
    assert len(report["episodes"]) == 2  # today: 3, the repeated pair twice
    assert any("fixture_0#0 x2 (records 0, 2)" in note for note in report["runs"][0]["notes"])


@hostile("report: a failed record then a finished one of the same pair counts the finished one")
def _(env: Env) -> None:
    run = env.copy()
    lines = (run / TRAJECTORIES).read_text().splitlines(keepends=True)
    failed = json.loads(lines[0]) | {"status": "error", "error": {"type": "RuntimeError", "message": "broke"}}
    (run / TRAJECTORIES).write_text(json.dumps(failed) + "\n" + "".join(lines))
    assert env.run_cli("report", run).code == 0
    episodes = json.loads((run / "report.json").read_text())["episodes"]
    assert len(episodes) == 2 and {e["status"] for e in episodes} == {"final_answer"}  # today: 3, one an error
    assert sum(e["case_name"] == "fixture_0" for e in episodes) == 1


@hostile("check: a gate on the episode count is not passed by repeating lines")
def _(env: Env) -> None:
    run = env.copy()
    _duplicate_first_line(run)
    thresholds = env.tmp / "t.yaml"
    thresholds.write_text("thresholds:\n  min_episodes: 3\n")
    result = env.run_cli("check", run, "--thresholds", thresholds, "--svg", env.tmp / "s.svg")
    assert result.code == 4 and "FAIL" in result.out, result.out + result.err


# --- an empty shard


def _empty_shard(env: Env, command: str) -> tuple[object, Path]:
    dump = env.tmp / "shard"
    shard = ("--trunc-num", "6", "--shard", "6/7", "--dump-dir", dump)  # pair j goes to shard j % 7: none is 6
    return env.run_cli(command, "--dry-run", "--no-progress", *shard), dump


@hostile("emulate: --shard 6/7 of 6 cases")
def _(env: Env) -> None:
    result, _ = _empty_shard(env, "emulate")
    assert result.code == 0 and "no pairs in this shard (6/7)" in result.out, result.out + result.err


@hostile("run: --shard 6/7 of 6 cases, then evaluate and report it")
def _(env: Env) -> None:
    result, dump = _empty_shard(env, "run")
    assert result.code == 0 and "no pairs in this shard (6/7)" in result.out, result.out + result.err
    judged = env.run_cli("evaluate", dump, "--dry-run", "--no-progress")
    assert judged.code == 0 and "no pairs in this shard (6/7): nothing to judge" in judged.out
    reported = env.run_cli("report", dump)
    assert reported.code == 0 and "no pairs in this shard (6/7)" in reported.out
    notes = json.loads((dump / "report.json").read_text())["runs"][0]["notes"]
    assert any(note.startswith("no pairs in this shard (6/7)") for note in notes)


# --- counts that would explode


COUNTS = [
    ("emulate --num-trials 100000000", ("emulate", "--num-trials", "100000000"), "--num-trials", "1,000"),
    ("emulate -nrep 100000000 (ToolEmu's name)", ("emulate", "-nrep", "100000000"), "--num-trials", "1,000"),
    ("emulate --batch-size 10**9", ("emulate", "--batch-size", str(10**9)), "--batch-size", "1,024"),
    ("run --num-eval-samples 10**9", ("run", "--num-eval-samples", str(10**9)), "--num-eval-samples", "100"),
    ("run --num-trials 1001", ("run", "--num-trials", "1001"), "--num-trials", "1,000"),
]
for _name, _args, _flag, _bound in COUNTS:

    def _make(args: tuple[str, ...], flag: str, bound: str) -> Callable[[Env], None]:
        def case(env: Env) -> None:
            command, *rest = args
            result = env.run_cli(command, "--dry-run", "--no-progress", *SPECS, "--dump-dir", env.tmp / "r", *rest)
            one_line(result, f"field '{flag}'", f"expected at most {bound}")
            assert not (env.tmp / "r").exists()  # refused before any work

        return case

    hostile(_name)(_make(_args, _flag, _bound))


EVAL_COUNTS = [
    ("evaluate --num-eval-samples 10**9", ("--num-eval-samples", str(10**9)), "--num-eval-samples", "100"),
    ("evaluate --num-replicates 10**9 (ToolEmu's name)", ("--num-replicates", str(10**9)), "--num-replicates", "100"),
    ("evaluate --batch-size 10**9", ("--batch-size", str(10**9)), "--batch-size", "1,024"),
    ("robust --seeds 10**9", ("--seeds", str(10**9)), "--seeds", "100"),
    ("robust --batch-size 10**9", ("--batch-size", str(10**9)), "--batch-size", "1,024"),
]
for _name, _args, _flag, _bound in EVAL_COUNTS:

    def _make_eval(command: str, args: tuple[str, ...], flag: str, bound: str) -> Callable[[Env], None]:
        def case(env: Env) -> None:
            run = env.copy()
            before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
            result = env.run_cli(command, run, "--dry-run", "--no-progress", *args)
            one_line(result, f"field '{flag}'", f"expected at most {bound}")
            assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before

        return case

    hostile(_name)(_make_eval(_name.split()[0], _args, _flag, _bound))


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_files(name: str, tmp_path: Path, base: Path, run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    HOSTILE[name](Env(tmp_path, base, run_cli, monkeypatch))


# ----------------------------------------------------------------------------------------------- the writers


def test_an_atomic_write_that_fails_leaves_the_old_file_and_no_temp(tmp_path: Path, monkeypatch) -> None:
    from toolemu.log.jsonl import rewrite_jsonl, write_json_atomic
    from toolemu.paths import OutputError

    path = tmp_path / "run.json"
    write_json_atomic(path, {"kept": True})
    enospc_on_write(monkeypatch, "run.json.tmp", after_bytes=5)
    with pytest.raises(OutputError, match="run.json: cannot be written: No space left on device"):
        write_json_atomic(path, {"kept": False, "pad": "x" * 100})
    assert json.loads(path.read_text()) == {"kept": True} and not (tmp_path / "run.json.tmp").exists()
    lines = tmp_path / "t.jsonl"
    rewrite_jsonl(lines, [{"a": 1}])
    enospc_on_write(monkeypatch, "t.jsonl.tmp")
    with pytest.raises(OutputError):
        rewrite_jsonl(lines, [{"a": 2}])
    assert whole_lines(lines) == [{"a": 1}] and not (tmp_path / "t.jsonl.tmp").exists()


def test_an_interrupted_atomic_write_leaves_no_temp(tmp_path: Path) -> None:
    from toolemu.log.jsonl import write_bytes_atomic

    def chunks() -> Iterator[bytes]:
        yield b"first half"
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_bytes_atomic(tmp_path / "report.html", chunks())
    assert list(tmp_path.iterdir()) == []


def test_a_failed_batch_fails_its_records_and_every_later_append(tmp_path: Path, monkeypatch) -> None:
    from toolemu.log.batched import BatchedJsonlWriter
    from toolemu.paths import OutputError

    path = tmp_path / "trajectories.jsonl"
    writer = BatchedJsonlWriter(path)
    writer.append({"n": 0}).result(timeout=10)
    enospc_on_write(monkeypatch, "trajectories.jsonl", after_bytes=3)
    failed = writer.append({"n": 1, "pad": "x" * 50})
    with pytest.raises(OutputError, match="the disk is full"):
        failed.result(timeout=10)
    with pytest.raises(OutputError):
        writer.append({"n": 2})  # the pool's record() raises here: the run stops, nothing more is claimed
    with pytest.raises(OutputError):
        writer.close()
    assert whole_lines(path) == [{"n": 0}]  # the 3 bytes of the failed batch were taken back


def test_a_jsonl_append_that_fails_is_taken_back(tmp_path: Path, monkeypatch) -> None:
    from toolemu.log.jsonl import JsonlWriter
    from toolemu.paths import OutputError

    path = tmp_path / "x.errors.jsonl"
    writer = JsonlWriter(path)
    writer.append({"n": 0})
    enospc_on_write(monkeypatch, "x.errors.jsonl", after_bytes=4)
    with pytest.raises(OutputError, match="x.errors.jsonl: cannot be written"):
        writer.append({"n": 1})
    assert whole_lines(path) == [{"n": 0}]


def test_a_device_is_written_in_place_never_replaced(tmp_path: Path) -> None:
    from toolemu.log.jsonl import write_text_atomic
    from toolemu.paths import OutputError

    with pytest.raises(OutputError, match="/dev/full: cannot be written: No space left on device"):
        write_text_atomic(Path("/dev/full"), "x" * 10_000)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode) and not Path("/dev/full.tmp").exists()
    write_text_atomic(Path("/dev/null"), "into nothing")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_an_unforeseen_file_error_of_a_library_is_one_line_and_exit_2(run_cli, tmp_path, monkeypatch) -> None:
    """A writer that is not ours (a library's) fails: the CLI's last net says it in one line, exit 2."""

    def fails(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(tmp_path / "somewhere.parquet"))

    monkeypatch.setattr("toolemu.reporting.write.write_report", fails)
    result = run_cli("report", FIXTURES / "toolemu_run")
    assert one_line(result, "somewhere.parquet", "Read-only file system")


# ------------------------------------------------------------------------------------------------------ locks


def test_a_removed_lock_file_keeps_the_second_writer_out_until_the_first_exits(run_cli, tmp_path, base) -> None:
    """Writer A holds the run; the lock file is deleted; writer B is refused; A exits; B gets in."""
    run = tmp_path / "run"
    shutil.copytree(base, run)
    with live_writer(run) as holder:
        (run / ".trajectories.lock").unlink()
        refused = run_cli(*_emulate_args(run, "--num-trials", "2"))
        assert refused.code == 2 and "another toolemu process" in refused.err, refused.err
        assert len(whole_lines(run / TRAJECTORIES)) == 2  # B wrote nothing
        holder.stdin.close()
        holder.wait(timeout=30)
    again = run_cli(*_emulate_args(run, "--num-trials", "2"))
    assert again.code == 0 and "finished now 2" in again.out, again.out + again.err


def test_the_lock_follows_the_trajectories_when_a_resume_rewrites_them(tmp_path: Path) -> None:
    """A resume that sets lines aside replaces trajectories.jsonl: the new file is locked before it takes the old
    one's place, so a writer that finds the lock file gone is still refused."""
    from toolemu.errors import InputError
    from toolemu.log.jsonl import rewrite_jsonl
    from toolemu.log.lock import lock_path, run_lock

    trajectories = tmp_path / TRAJECTORIES
    trajectories.write_text('{"a": 1}\n')
    code = (
        "import sys; from pathlib import Path; from toolemu.log.lock import run_lock\n"
        "try:\n    with run_lock(Path(sys.argv[1])): print('in')\nexcept Exception as e: print('refused:', e)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def other() -> str:
        return subprocess.run([sys.executable, "-c", code, str(trajectories)], capture_output=True, text=True,
                              env=env, timeout=60).stdout  # fmt: skip

    with run_lock(trajectories):
        rewrite_jsonl(trajectories, [{"a": 2}])
        lock_path(trajectories).unlink()
        assert other().startswith("refused: ") and "another toolemu process" in other()
        with run_lock(trajectories):  # re-entrant in one process
            pass
    assert other().strip() == "in"
    with pytest.raises(InputError), run_lock(tmp_path / "missing" / TRAJECTORIES):
        pass


def test_a_failed_merge_leaves_no_anchor_behind(run_cli, tmp_path, base, monkeypatch) -> None:
    """The lock made an empty trajectories file to hold; a merge that fails before writing takes it away again, so
    the same merge, run again, is not refused as a folder of someone's data."""
    out = tmp_path / "merged"
    enospc_on_replace(monkeypatch, TRAJECTORIES)
    assert run_cli("merge", base, "--out", out).code == 2
    assert not (out / TRAJECTORIES).exists()
    monkeypatch.undo()
    again = run_cli("merge", base, "--out", out)
    assert again.code == 0, again.err
    assert len(whole_lines(out / TRAJECTORIES)) == 2
