"""slurm/: submit.sh's arguments, and a real one-node SLURM cluster on localhost running a sharded run end to end.

The cluster test needs root and Debian's slurm-wlm and munge (CI installs them). It starts its own munged (with its
own key), slurmctld and slurmd, all configured in a temporary directory on free ports, and stops every one of them
and every job process afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import REPO

from toolemu.log import read_jsonl

SUBMIT = REPO / "slurm" / "submit.sh"
CASES = ["comms_email_purge_promotions", "infra_ci_log_injection_unreviewed_deploy"]
TRIALS, SHARDS = 2, 2
JOBS_TIMEOUT_S = 15 * 60
SBIN = ("/usr/sbin", "/sbin", "/usr/local/sbin")


def _submit(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SUBMIT), *map(str, args)], capture_output=True, text=True, timeout=120, env=env, cwd=cwd
    )


# --- submit.sh, without a cluster -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "--run-dir is required"),
        (["--run-dir", "r"], "--shards is required"),
        (["--run-dir", "r", "--shards", "0"], "--shards: expected a whole number >= 1, got '0'"),
        (["--run-dir", "r", "--shards", "2", "--trials", "two"], "--trials: expected a whole number"),
        (["--run-dir", "r", "--shards", "2", "--frobnicate", "1"], "unknown option --frobnicate"),
        (["--run-dir", "r", "--shards"], "--shards needs a value"),
        (["--run-dir", "r", "--shards", "2", "extra"], "unexpected argument 'extra'"),
        (["--run-dir", "r", "--shards", "2", "--kind", "gpu"], "--kind: expected api or vllm"),
        (["--run-dir", "r", "--shards", "2", "--gpus", "1"], "--gpus: only with --kind vllm"),
        (["--run-dir", "r", "--shards", "2", "--kind", "vllm"], "--agent-model is required with --kind vllm"),
        (["--run-dir", "r", "--shards", "2", "--cases", "a b"], "--cases: expected case names"),
        (["--run-dir", "r", "--shards", "2", "--venv", "/nonexistent"], "--venv: expected a virtual environment"),
    ],
)
def test_submit_rejects_bad_arguments_in_one_line(tmp_path, args, fragment) -> None:
    result = _submit("--print-only", *args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout
    assert fragment in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "r").exists()


def test_submit_print_only_shows_the_array_then_the_dependent_finalize(tmp_path) -> None:
    result = _submit(
        "--run-dir=" + str(tmp_path / "run"),
        "--shards", "3",
        "--cases", "a,b",
        "--trials", "2",
        "--kind", "vllm",
        "--agent-model", "Qwen/Qwen2.5-7B-Instruct",
        "--evaluator-model", "vllm:Qwen/Qwen2.5-7B-Instruct",
        "--max-parallel", "2",
        "--extra-args", "--agent-type helpful_ss",
        "--print-only",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    env = dict(line.split("=", 1) for line in lines if line.startswith("TOOLEMU_"))
    assert env["TOOLEMU_CASES"] == "a,b" and env["TOOLEMU_SHARDS"] == "3" and env["TOOLEMU_TRIALS"] == "2"
    assert env["TOOLEMU_RUN_DIR"] == str(tmp_path / "run")
    array, finalize = (line for line in lines if line.startswith("sbatch "))
    assert "--array=0-2%2" in array and "--gres=gpu:1" in array and array.endswith("slurm/vllm.sbatch")
    assert f"--output={tmp_path}/run/logs/emulate-%A_%a.out" in array
    assert "--export=ALL,TOOLEMU_RUN_DIR,TOOLEMU_SHARDS,TOOLEMU_CASES" in array
    assert "--dependency=afterany:" in finalize and finalize.endswith("slurm/finalize.sbatch")
    assert "--gres=gpu:1" in finalize  # a vllm: evaluator needs a GPU in the finalize job too
    assert not (tmp_path / "run").exists()  # nothing was submitted, nothing made


# --- a real one-node cluster ------------------------------------------------------------------------------------


def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    return next((str(Path(d, name)) for d in SBIN if Path(d, name).exists()), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(check, timeout: float, what: str, interval: float = 0.5) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@dataclass
class Cluster:
    root: Path
    conf: Path
    env: dict[str, str]
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)

    def run(self, *cmd: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run(list(cmd), capture_output=True, text=True, env=self.env, timeout=timeout)

    def jobs(self) -> list[str]:
        result = self.run("squeue", "-h", "-o", "%i %j %T %R")
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()

    def start(self, name: str, cmd: list[str], **kw) -> None:
        out = (self.root / "log" / f"{name}.out").open("w")
        self.procs[name] = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env, start_new_session=True, **kw
        )
        out.close()

    def diagnostics(self, run_dir: Path | None = None) -> str:
        parts = []
        files = sorted((self.root / "log").glob("*")) + sorted((self.root / "munge").glob("*.log"))
        if run_dir is not None:
            files += sorted((run_dir / "logs").glob("*"))
        for path in files:
            try:
                text = path.read_text(errors="replace")
            except OSError as exc:
                text = f"({exc})"
            parts.append(f"===== {path} =====\n{text[-6000:]}")
        for name, proc in self.procs.items():
            parts.append(f"{name}: {'running' if proc.poll() is None else f'exited {proc.returncode}'}")
        return "\n".join(parts)


def _our_leftovers(marker: bytes) -> list[int]:
    """Processes whose environment holds this cluster's SLURM_CONF: only what this test started (jobs, stepds)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if marker in (proc / "environ").read_bytes().split(b"\0"):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def _stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def _munge_key(path: Path, uid: int, gid: int) -> None:
    mungekey = _which("mungekey")
    if mungekey:
        subprocess.run([mungekey, "--create", f"--keyfile={path}"], check=True, capture_output=True)
    else:  # munge before 0.5.14 has no mungekey
        path.write_bytes(os.urandom(1024))
    os.chown(path, uid, gid)
    path.chmod(0o400)


def _slurm_conf(root: Path, munge_socket: Path) -> str:
    hw = subprocess.run([_which("slurmd"), "-C"], capture_output=True, text=True, check=True).stdout
    node = next(line for line in hw.splitlines() if line.startswith("NodeName="))
    fields = dict(item.split("=", 1) for item in node.split())
    keep = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory")
    hardware = " ".join(f"{k}={fields[k]}" for k in keep if k in fields)
    return f"""\
ClusterName=toolemu-test
SlurmctldHost=localhost
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=5
NodeName=localhost {hardware} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


@pytest.fixture
def slurm_cluster() -> Iterator[Cluster]:
    if os.geteuid() != 0:
        pytest.skip("needs root to start munged, slurmctld and slurmd on localhost")
    missing = [n for n in ("slurmctld", "slurmd", "munged", "sbatch", "squeue", "sinfo", "scancel") if not _which(n)]
    if missing:
        pytest.skip(f"needs slurm-wlm and munge (apt-get install slurm-wlm munge): missing {', '.join(missing)}")
    try:
        munge_user = pwd.getpwnam("munge")
    except KeyError:
        pytest.skip("needs the 'munge' user, which the munge package creates")

    # Not pytest's tmp_path: munged (running as munge) must be able to reach its directory.
    root = Path(tempfile.mkdtemp(prefix="toolemu-slurm-", dir="/tmp"))
    root.chmod(0o755)
    for sub in ("state", "spool", "log"):
        (root / sub).mkdir()
    munge_dir = root / "munge"
    munge_dir.mkdir(mode=0o755)
    os.chown(munge_dir, munge_user.pw_uid, munge_user.pw_gid)
    munge_socket = munge_dir / "munge.socket"
    conf = root / "slurm.conf"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["SLURM_CONF"] = str(conf)
    cluster = Cluster(root, conf, env)
    try:
        # munge, with a key of its own (the system's /etc/munge is left alone).
        key = munge_dir / "munge.key"
        _munge_key(key, munge_user.pw_uid, munge_user.pw_gid)
        cluster.start(
            "munged",
            [_which("munged"), "--foreground", f"--socket={munge_socket}", f"--key-file={key}",
             f"--pid-file={munge_dir}/munged.pid", f"--log-file={munge_dir}/munged.log",
             f"--seed-file={munge_dir}/munged.seed"],
            user=munge_user.pw_uid, group=munge_user.pw_gid, extra_groups=[], cwd=munge_dir,
        )  # fmt: skip
        _wait_for(lambda: munge_socket.exists() or cluster.procs["munged"].poll() is not None, 20, "munged")
        assert cluster.procs["munged"].poll() is None, cluster.diagnostics()

        conf.write_text(_slurm_conf(root, munge_socket))
        cluster.start("slurmctld", [_which("slurmctld"), "-D", "-f", str(conf)])
        cluster.start("slurmd", [_which("slurmd"), "-D", "-f", str(conf), "-N", "localhost"])

        def idle() -> bool:
            for name, proc in cluster.procs.items():
                assert proc.poll() is None, f"{name} exited {proc.returncode}"
            state = cluster.run("sinfo", "-h", "-N", "-o", "%T")
            return state.returncode == 0 and state.stdout.strip() == "idle"

        try:
            _wait_for(idle, 90, "the node to be idle (sinfo)")
        except AssertionError:
            print(cluster.diagnostics())
            raise
        yield cluster
    finally:
        try:
            if cluster.procs.get("slurmctld") and cluster.procs["slurmctld"].poll() is None:
                ids = [line.split()[0] for line in cluster.jobs()]
                if ids:
                    cluster.run("scancel", *ids)
                    _wait_for(lambda: not cluster.jobs(), 60, "cancelled jobs to end")
        except (AssertionError, subprocess.SubprocessError) as exc:
            print(f"teardown: {exc}")
        finally:
            for name in ("slurmd", "slurmctld", "munged"):
                if name in cluster.procs:
                    _stop(cluster.procs[name])
            for pid in _our_leftovers(f"SLURM_CONF={conf}".encode()):
                print(f"teardown: killing leftover process {pid}")
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if os.environ.get("TOOLEMU_KEEP_SLURM_DIR"):
                print(f"kept {root}")
            else:
                shutil.rmtree(root, ignore_errors=True)


def _run_env(cluster: Cluster) -> dict[str, str]:
    env = dict(cluster.env)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TOOLEMU_MODEL"):
        env.pop(key, None)  # no key: every role is the embedded model, and nothing is paid for
    env["TOOLEMU_LOCAL_THREADS"] = "1"  # one thread per 1-CPU task, so two tasks do not fight over the cores
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


@pytest.mark.slow
@pytest.mark.timeout(JOBS_TIMEOUT_S + 300)
def test_submit_runs_shards_then_merges_evaluates_and_reports(slurm_cluster: Cluster) -> None:
    cluster = slurm_cluster
    run_dir = cluster.root / "run"
    work = cluster.root / "work"  # the jobs' working directory: no .env, no response cache of the repository
    work.mkdir()
    venv = ["--venv", sys.prefix] if Path(sys.prefix, "bin", "activate").exists() else []
    started = time.monotonic()
    try:
        submitted = _submit(
            "--run-dir", run_dir,
            "--shards", SHARDS,
            "--cases", ",".join(CASES),
            "--trials", TRIALS,
            "--max-iterations", "2",
            "--cpus", "1",
            *venv,
            env=_run_env(cluster),
            cwd=work,
        )  # fmt: skip
        assert submitted.returncode == 0, submitted.stderr
        array_id = re.search(r"array job (\d+)", submitted.stdout)[1]
        finalize_id = re.search(r"finalize: job (\d+)", submitted.stdout)[1]

        _wait_for(lambda: not cluster.jobs(), JOBS_TIMEOUT_S, "every job to end (squeue empty)", interval=5)
        elapsed = time.monotonic() - started
        print(f"jobs ended after {elapsed:.0f} s")

        logs = run_dir / "logs"
        for i in range(SHARDS):
            assert (logs / f"emulate-{array_id}_{i}.out").exists()
            assert f"shard {i}/{SHARDS} exited 0" in (logs / f"emulate-{array_id}_{i}.out").read_text()
        finalize_log = (logs / f"finalize-{finalize_id}.out").read_text()

        expected = {(c, t) for c in CASES for t in range(TRIALS)}
        for i in range(SHARDS):  # each shard did its own part
            shard_meta = json.loads((run_dir / f"shard-{i}" / "run.json").read_text())
            assert shard_meta["config"]["shard"] == [i, SHARDS]
        merged = read_jsonl(run_dir / "merged" / "trajectories.jsonl")
        counts = Counter((r["case_name"], r["trial"]) for r in merged)
        assert set(counts) == expected and set(counts.values()) == {1}, counts
        meta = json.loads((run_dir / "merged" / "run.json").read_text())
        assert meta["merge"]["missing"] == [] and len(meta["sources"]) == SHARDS
        assert f"{len(expected)} of {len(expected)} pairs" in finalize_log and "0 missing" in finalize_log

        # 3/3: finalize.sbatch's `toolemu report merged --out report`, over every merged and judged pair.
        assert "3/3 report" in finalize_log and f"done: {run_dir}/report/report.html" in finalize_log, finalize_log
        assert (run_dir / "report" / "report.html").stat().st_size > 0
        report = json.loads((run_dir / "report" / "report.json").read_text())
        reported = Counter((e["case_name"], e["trial"]) for e in report["episodes"])
        assert set(reported) == expected and set(reported.values()) == {1}, reported
        for episode in report["episodes"]:  # judged by step 2/3, each verdict kept (a tiny judge may fail one)
            assert {"safety", "helpfulness"} <= set(episode["scores"]), episode["scores"]
    except BaseException:
        print(cluster.diagnostics(run_dir))
        raise
