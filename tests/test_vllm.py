"""`vllm:<model>`: the managed `vllm serve` (driven by tests/fake_vllm.py) and connecting to a running server."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from toolemu.llm import LLMSettings, ModelConfigError, ModelOptions, build_chat_model, build_hub, user, vllm_server
from toolemu.llm.model import structured_request
from toolemu.llm.options import VLLMOptions

TESTS = Path(__file__).parent
REPO = TESTS.parent
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def gone(pid: int) -> bool:
    """True when the process no longer runs (a zombie nobody reaped counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def wait_for(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class FakeVLLM:
    """A `vllm` executable on disk (a shell wrapper around tests/fake_vllm.py) and what it recorded."""

    def __init__(self, tmp_path: Path):
        self.record = tmp_path / "vllm_record.jsonl"
        self.requests_file = tmp_path / "vllm_requests.jsonl"
        self.bin = tmp_path / "bin" / "vllm"
        self.bin.parent.mkdir()
        self.bin.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{TESTS / "fake_vllm.py"}" "$@"\n')
        self.bin.chmod(0o755)
        self.env = {
            "TOOLEMU_VLLM_BIN": str(self.bin),
            "TOOLEMU_VLLM_REQUIRE_GPU": "0",
            "FAKE_VLLM_RECORD": str(self.record),
            "FAKE_VLLM_REQUESTS": str(self.requests_file),
            "TOOLEMU_VLLM_LOG_DIR": str(tmp_path / "vllm-logs"),
        }

    def _lines(self, path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def starts(self) -> list[dict[str, Any]]:
        return [e for e in self._lines(self.record) if e["event"] == "start"]

    def stops(self) -> list[int]:
        return [e["pid"] for e in self._lines(self.record) if e["event"] == "stop"]

    def requests(self) -> list[dict[str, Any]]:
        return self._lines(self.requests_file)


@pytest.fixture
def fake_vllm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert not vllm_server.running_servers()
    fake = FakeVLLM(tmp_path)
    for name, value in fake.env.items():
        monkeypatch.setenv(name, value)
    yield fake
    vllm_server.shutdown_all()
    for start in fake.starts():
        assert gone(start["pid"]), start


def option_after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_chat_through_a_managed_server(run_cli, fake_vllm: FakeVLLM, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    result = run_cli("chat", "hi", "--model", "vllm:fake-model", "--cache", "off", "--vllm-log-dir", logs)
    assert result.code == 0, result.err
    assert result.out.strip() == "hello from fake-model"
    [start] = fake_vllm.starts()
    argv = start["argv"]
    assert argv[:2] == ["serve", "fake-model"] and option_after(argv, "--host") == "127.0.0.1"
    port = int(option_after(argv, "--port"))
    assert start["api_key"], "the server gets a random VLLM_API_KEY"
    assert fake_vllm.requests()[0]["model"] == "fake-model"
    # The server's output goes to its log file, never to our console.
    [log_file] = logs.glob("*.log")
    assert "INFO loading fake-model" in log_file.read_text() and "INFO loading" not in result.err
    assert f"127.0.0.1:{port}" in result.err and str(log_file) in result.err
    # It keeps running for the process's other roles, until shutdown stops it (gracefully: SIGTERM first).
    assert not gone(start["pid"])
    vllm_server.shutdown_all()
    assert gone(start["pid"]) and fake_vllm.stops() == [start["pid"]]


def test_server_options_and_lora_reach_vllm_serve(run_cli, fake_vllm: FakeVLLM, write_json) -> None:
    flags = [
        "--model",
        "vllm:org/base-model+/adapters/my-lora/",
        "--cache",
        "off",
        "--vllm-tensor-parallel-size",
        "2",
        "--vllm-quantization",
        "awq",
        "--vllm-max-model-len",
        "4096",
        "--vllm-gpu-memory-utilization",
        "0.85",
        "--vllm-dtype",
        "bfloat16",
        "--vllm-arg=--enforce-eager",
        "--vllm-arg",
        "--max-lora-rank 64",
    ]
    result = run_cli("chat", "hi", *flags)
    assert result.code == 0, result.err
    assert result.out.strip() == "hello from my-lora"  # requests name the adapter
    schema = write_json("schema.json", SCHEMA)
    result = run_cli("chat", "hi", *flags, "--schema", schema)
    assert result.code == 0, result.err
    assert json.loads(result.out) == {"answer": "json from my-lora"}

    [start] = fake_vllm.starts()  # the second command found the first one's server
    argv = start["argv"]
    assert argv[:2] == ["serve", "org/base-model"]
    expected = {
        "--tensor-parallel-size": "2",
        "--quantization": "awq",
        "--max-model-len": "4096",
        "--gpu-memory-utilization": "0.85",
        "--dtype": "bfloat16",
        "--lora-modules": "my-lora=/adapters/my-lora/",
        "--max-lora-rank": "64",
    }
    assert {flag: option_after(argv, flag) for flag in expected} == expected
    assert "--enable-lora" in argv and "--enforce-eager" in argv
    plain, structured = fake_vllm.requests()
    assert plain["model"] == structured["model"] == "my-lora"
    fmt = structured["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == SCHEMA


def test_roles_with_the_same_model_share_one_server(fake_vllm: FakeVLLM, tmp_path: Path) -> None:
    settings = LLMSettings(model="vllm:fake-model", cache="off")
    hub = build_hub(settings, ("agent", "emulator", "evaluator"))
    assert len(fake_vllm.starts()) == 1  # started by build_hub, before any call
    for role in ("agent", "emulator", "evaluator"):
        assert hub.model(role).complete([user("hi")]).text == "hello from fake-model"
    assert len(fake_vllm.starts()) == 1 and len(vllm_server.running_servers()) == 1

    # Another model, or the same model with other server options, is another server.
    other = LLMSettings(role_models={"agent": "vllm:fake-model", "emulator": "vllm:other-model"}, cache="off")
    build_hub(other, ("agent", "emulator"))
    tuned = LLMSettings(model="vllm:fake-model", vllm=VLLMOptions(max_model_len=2048), cache="off")
    build_hub(tuned, ("agent",))
    assert [s["argv"][1] for s in fake_vllm.starts()] == ["fake-model", "other-model", "fake-model"]
    assert len(vllm_server.running_servers()) == 3
    # The server options are part of the model's identity (cache key, records); where logs go is not.
    described = tuned.options_for("agent").describe()
    assert described["vllm"] == {"max_model_len": 2048} and "base_url" in described
    assert "vllm" not in ModelOptions(model="openai:gpt-4o-mini").describe()


def test_a_server_that_ignores_sigterm_is_killed(
    fake_vllm: FakeVLLM, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("FAKE_VLLM_IGNORE_TERM", "1")
    monkeypatch.setattr(vllm_server, "STOP_TIMEOUT_S", 0.5)
    build_chat_model(ModelOptions(model="vllm:stubborn"), "agent")
    [start] = fake_vllm.starts()
    [server] = vllm_server.running_servers()
    proc = server.proc
    assert proc is not None and proc.pid == start["pid"]
    with caplog.at_level(logging.WARNING, logger="toolemu.llm"):
        vllm_server.shutdown_all()
    # SIGTERM was sent and waited on for STOP_TIMEOUT_S, then SIGKILL ended it (it never ran its own stop).
    # How many seconds that takes is measured in benchmarks/retry_and_stop_waits.py, not asserted here.
    [warning] = [r for r in caplog.records if "ignored SIGTERM" in r.getMessage()]
    assert warning.args == ("stubborn", 0.5)
    assert proc.returncode == -signal.SIGKILL and gone(start["pid"]) and fake_vllm.stops() == []
    assert not vllm_server.running_servers()


def test_a_server_that_exits_while_starting_is_one_error_line(run_cli, fake_vllm, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_VLLM_EXIT", "3")
    result = run_cli("chat", "hi", "--model", "vllm:big-model", "--cache", "off")
    assert result.code == 2 and "Traceback" not in result.err
    [error] = [line for line in result.err.splitlines() if line.startswith("error:")]
    assert error.startswith("error: vllm:big-model: vllm serve big-model exited with code 3 while starting")
    assert "CUDA out of memory" in error and "vllm-logs" in error  # the log's tail, and where the log is
    assert not vllm_server.running_servers()


def test_a_server_that_never_gets_healthy_times_out(run_cli, fake_vllm, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_VLLM_DELAY", "60")
    result = run_cli("chat", "hi", "--model", "vllm:slow-model", "--cache", "off", "--vllm-startup-timeout", "1")
    assert result.code == 2
    assert "vllm serve slow-model was not healthy after 1s (--vllm-startup-timeout)" in result.err
    assert "INFO loading slow-model" in result.err  # the log's tail is in the error line
    [start] = fake_vllm.starts()
    assert gone(start["pid"]) and not vllm_server.running_servers()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_server_loads_stops_it(fake_vllm: FakeVLLM, tmp_path: Path, sig: signal.Signals) -> None:
    env = {**os.environ, **fake_vllm.env, "FAKE_VLLM_DELAY": "120"}
    cmd = [sys.executable, "-m", "toolemu.cli.app", "chat", "hi", "--model", "vllm:fake-model", "--cache", "off"]
    # Its own session, as a shell job: Ctrl-C goes to the whole foreground group.
    proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        [start] = wait_for(fake_vllm.starts, 60, "the fake vllm to start")
        time.sleep(1.0)  # well inside the health-check loop
        if sig == signal.SIGINT:
            os.killpg(proc.pid, signal.SIGINT)  # what a terminal does on Ctrl-C
        else:
            proc.send_signal(signal.SIGTERM)  # what scancel / kill does
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == (130 if sig == signal.SIGINT else 143), err  # README, Reliability: exit codes
    assert "Traceback" not in err
    assert gone(start["pid"]) and fake_vllm.stops() == [start["pid"]]


def test_missing_vllm_is_one_line_and_exit_2(run_cli, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOOLEMU_VLLM_BIN", str(tmp_path / "no-such-vllm"))
    result = run_cli("chat", "hi", "--model", "vllm:Qwen/Qwen2.5-7B-Instruct", "--cache", "off")
    assert result.code == 2
    assert result.err.strip().splitlines() == [
        f"error: vllm:Qwen/Qwen2.5-7B-Instruct needs vLLM and a GPU (TOOLEMU_VLLM_BIN={tmp_path / 'no-such-vllm'} "
        "is not an executable): pip install 'toolemu[vllm]' on a machine with an NVIDIA GPU, or pass --base-url "
        "to use a running server"
    ]
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        monkeypatch.delenv("TOOLEMU_VLLM_BIN")
        monkeypatch.setenv("PATH", str(tmp_path))
        result = run_cli("chat", "hi", "--model", "vllm:m", "--cache", "off")
        assert result.code == 2
        assert result.err.strip().splitlines() == [
            "error: vllm:m needs vLLM and a GPU: pip install 'toolemu[vllm]' on a machine with an NVIDIA GPU, "
            "or pass --base-url to use a running server"
        ]


def test_no_gpu_is_one_line_and_exit_2(run_cli, fake_vllm: FakeVLLM, monkeypatch) -> None:
    monkeypatch.delenv("TOOLEMU_VLLM_REQUIRE_GPU")
    if Path("/dev/nvidia0").exists():
        pytest.skip("this machine has an NVIDIA GPU")
    monkeypatch.setenv("PATH", str(fake_vllm.bin.parent))  # no nvidia-smi
    result = run_cli("chat", "hi", "--model", "vllm:m", "--cache", "off")
    assert result.code == 2 and len(result.err.strip().splitlines()) == 1
    assert "vllm:m needs vLLM and a GPU, and no NVIDIA GPU was found" in result.err
    assert not fake_vllm.starts()


def test_model_strings_flags_and_structured_mode(run_cli) -> None:
    with pytest.raises(ModelConfigError, match=r"vllm needs a model name: vllm:<hf-id-or-path>"):
        build_chat_model(ModelOptions(model="vllm"), "agent")
    result = run_cli("chat", "hi", "--model", "nonsense:model")
    assert result.code == 2 and "vllm:<hf-id-or-path>" in result.err and "mock" in result.err
    result = run_cli("chat", "hi", "--model", "vllm:m", "--vllm-gpu-memory-utilization", "1.5")
    assert result.code == 2 and "--vllm-gpu-memory-utilization" in result.err and "Traceback" not in result.err
    # vLLM's guided decoding enforces any schema, strict-compatible or not.
    loose = {"type": "object", "properties": {"a": {"type": "object"}}, "required": ["a"]}
    for schema in (SCHEMA, loose):
        how = structured_request(ModelOptions(model="vllm:m"), schema, "agent")
        fmt = how.kwargs["extra_body"]["response_format"]
        assert fmt["type"] == "json_schema" and how.in_request
        assert fmt["json_schema"]["schema"] == schema and not how.strict  # as it is: no strict rewrite needed


# --- connecting to a running server: a real OpenAI-compatible server (llama-cpp-python's) ---


@pytest.fixture
def llama_server(tmp_path: Path):
    from toolemu.llm import default_gguf_path
    from toolemu.llm.vllm_server import free_port

    port = free_port()
    log = (tmp_path / "llama_server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "llama_server.py"), str(default_gguf_path()), str(port), "1024"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )

    def up() -> bool:
        assert proc.poll() is None, (tmp_path / "llama_server.log").read_text()[-2000:]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    try:
        wait_for(up, 120, "the llama.cpp server")
        yield f"http://127.0.0.1:{port}/v1", tmp_path / "llama_server.log"
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.mark.slow
def test_base_url_connects_to_a_running_server(run_cli, fake_vllm: FakeVLLM, llama_server, write_json) -> None:
    base_url, log = llama_server
    assert "use_extra_bufts=False" in log.read_text()
    common = ["--model", "vllm:smollm", "--base-url", base_url, "--cache", "off", "--max-tokens", "24"]
    result = run_cli("chat", "Say hello.", *common)
    assert result.code == 0, result.err
    assert result.out.strip()
    # The llama.cpp server takes `json_object` with a schema, not vLLM's `json_schema`.
    # Greedy, the 135M model loops inside an unbounded string until any max_tokens cuts it off (and a cut-off reply
    # is never used), so the schema bounds the string as a user of a tiny model would; the server enforces it.
    bounded = {**SCHEMA, "properties": {"answer": {"type": "string", "maxLength": 40}}}
    schema = write_json("schema.json", bounded)
    result = run_cli("chat", "Answer in JSON.", *common, "--schema", schema, "--structured", "json_object")
    assert result.code == 0, result.err
    assert isinstance(json.loads(result.out)["answer"], str)
    assert not fake_vllm.starts() and not vllm_server.running_servers()  # nothing was started
