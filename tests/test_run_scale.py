"""What a run of many episodes at once costs per call: one connection per worker to a served model, prompt pieces and
reply schemas built once per run, no cache key without a cache, and a dry run whose memory stays flat."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from fake_openai import chat_body

from toolemu import pool as pool_mod
from toolemu import secrets as secrets_mod
from toolemu.agents import agent as agent_mod
from toolemu.emulator import emulator as emulator_mod
from toolemu.episode import EpisodeSpec
from toolemu.episode.builder import run_episode
from toolemu.llm import LLMSettings, ModelHub, build_hub
from toolemu.llm import model as model_mod
from toolemu.llm.options import ModelOptions
from toolemu.log import RunConfig
from toolemu.log import episode_folder as folder_mod
from toolemu.log.episode_folder import EpisodeFolder
from toolemu.paths import DEFAULT_CASES, DEFAULT_TOOLKITS
from toolemu.runner import run_cases
from toolemu.specs import load_benchmark

MSGS = [{"role": "user", "content": "hi"}]
ROUNDS = 3


class KeepAliveServer:
    """An OpenAI-compatible chat server that keeps connections open (HTTP/1.1), answers after `latency_s`, and
    counts the TCP connections it accepted."""

    def __init__(self, latency_s: float):
        self.connections = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                with lock:
                    outer.connections += 1
                super().setup()

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                time.sleep(latency_s)
                data = json.dumps(chat_body("hello")).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 512  # every worker connects at once
            daemon_threads = True

        lock = threading.Lock()
        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> KeepAliveServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"


def test_every_worker_keeps_its_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    """300 workers, three rounds of calls at once: each worker's connection is kept for its next call. With the SDK's
    default pool (at most 100 kept alive) later rounds opened more: 304 to 509 connections in four of six tries (the
    pool prunes idle connections as responses finish, so how many it closes is a race)."""
    monkeypatch.setenv("FAKE_KEY", "sk-test-fake-key-123456")
    workers = 300
    with KeepAliveServer(latency_s=0.3) as server:
        options = ModelOptions(model="openai:fake-model", base_url=server.base_url, api_key_env="FAKE_KEY")
        model = ModelHub({"agent": options}).model("agent")
        each_round = threading.Barrier(workers)
        failures: list[BaseException] = []

        def worker() -> None:
            try:
                for _ in range(ROUNDS):
                    model.complete(MSGS)
                    each_round.wait(30)
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        threads = [threading.Thread(target=worker) for _ in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert not failures
    assert model.tracker.total().calls == ROUNDS * workers
    assert server.connections <= workers, f"{server.connections} connections for {workers} workers"


def _bench() -> Any:
    return load_benchmark([DEFAULT_TOOLKITS, DEFAULT_CASES])


def test_a_runs_agents_build_their_prompt_and_schema_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each episode gets an agent of its own; the system prompt and the reply schema of one toolkit set are built
    once per run, not once per episode."""
    built: list[str] = []
    for name in ("turn_schema", "describe_toolkits"):
        original = getattr(agent_mod, name)
        monkeypatch.setattr(agent_mod, name, lambda *a, _f=original, _n=name, **k: built.append(_n) or _f(*a, **k))
    bench = _bench()
    hub = build_hub(LLMSettings(model="mock", cache="off"), ("agent", "emulator"))
    config = RunConfig(batch_size=2, case_names=[bench.cases[0].name], num_trials=4, agent_format="tools")
    summary = run_cases(bench, hub, config, tmp_path / "run", show_progress=False)
    assert summary.finished == 4
    assert built.count("turn_schema") == 1 and built.count("describe_toolkits") == 1


def test_toolkits_of_one_name_in_two_benchmarks_get_their_own_prompt() -> None:
    """What an agent remembers is keyed by the toolkit objects, not their names: a second benchmark whose toolkit
    has the same name and another tool gets a prompt and schema of its own."""
    first = _bench()
    second = _bench()
    case = first.cases[0]
    kit = second.toolkits_for(case)[0]
    renamed = kit.tools[0].model_copy(update={"name": kit.tools[0].name + "Renamed"})
    kit.tools[0] = renamed
    hub = build_hub(LLMSettings(model="mock", cache="off"), ("agent", "emulator"))
    spec = EpisodeSpec(agent_format="tools")
    one = run_episode(first, case, 0, 0, hub, spec)
    two = run_episode(second, case, 0, 0, hub, spec)
    assert one.status == two.status == "final_answer"
    assert renamed.name not in json.dumps(one.model_dump(mode="json")["steps"])
    assert two.steps[0].tool == kit.tool_full_name(renamed)


def test_the_emulator_builds_each_tools_reply_schema_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    original = emulator_mod.reply_schema
    monkeypatch.setattr(emulator_mod, "reply_schema", lambda tool, **k: built.append(tool.name) or original(tool, **k))
    bench = _bench()
    hub = build_hub(LLMSettings(model="mock", cache="off"), ("agent", "emulator"))
    config = RunConfig(batch_size=1, case_names=[bench.cases[0].name], num_trials=3, agent_format="tools")
    assert run_cases(bench, hub, config, tmp_path / "run", show_progress=False).finished == 3
    assert len(built) == len(set(built)) >= 1


def test_no_cache_key_is_made_without_a_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--cache off: nothing reads or writes a cache, so no call hashes its whole request."""

    def refuse(request: dict[str, Any]) -> str:
        raise AssertionError("a cache key was made with the cache off")

    monkeypatch.setattr(model_mod, "cache_key", refuse)
    bench = _bench()
    hub = build_hub(LLMSettings(model="mock", cache="off"), ("agent", "emulator"))
    config = RunConfig(batch_size=1, case_names=[bench.cases[0].name], agent_format="tools")
    assert run_cases(bench, hub, config, tmp_path / "run", show_progress=False).finished == 1


def test_a_dry_run_keeps_no_call_in_memory(tmp_path: Path) -> None:
    bench = _bench()
    hub = build_hub(LLMSettings(model="mock", cache="off"), ("agent", "emulator"))
    config = RunConfig(batch_size=2, case_names=[bench.cases[0].name], num_trials=3, agent_format="tools")
    assert run_cases(bench, hub, config, tmp_path / "run", show_progress=False).finished == 3
    assert hub.tracker.total().calls >= 6
    assert hub.model("agent").chat.calls == [] and hub.model("emulator").chat.calls == []  # type: ignore[attr-defined]


def test_an_episode_folder_counts_its_records_without_reading_them_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`toolemu mcp serve` adds one episode per session: the position of each comes from the count it keeps, not
    from reading the whole file again (which made a session's cost grow with the sessions before it). A line
    another writer appended meanwhile is still counted."""
    bench = _bench()
    case = bench.cases[0]
    hub = build_hub(LLMSettings(model="mock", cache="off"), ("agent", "emulator"))
    trajectory = run_episode(bench, case, 0, 0, hub, EpisodeSpec(agent_format="tools"))
    folder = EpisodeFolder.open(tmp_path / "run", RunConfig(agent_format="tools"))
    reads: list[Path] = []
    original = folder_mod.scan_jsonl
    monkeypatch.setattr(folder_mod, "scan_jsonl", lambda path, *a, **k: reads.append(path) or original(path, *a, **k))
    positions = [folder.add(trajectory.model_copy(update={"trial": t}), {"agent": "mock"}) for t in range(5)]
    assert positions == [0, 1, 2, 3, 4] and len(reads) == 1
    with folder.trajectories.open("a") as fh:  # another writer's record
        fh.write(json.dumps(trajectory.model_copy(update={"trial": 5}).model_dump(mode="json")) + "\n")
    assert folder.add(trajectory.model_copy(update={"trial": 6}), {"agent": "mock"}) == 6
    assert len(reads) == 2
    assert len(folder.trajectories.read_text().splitlines()) == 7


def test_the_pool_waits_on_one_queue_not_on_every_item_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    """With 2,048 items in flight, concurrent.futures.wait hooked a waiter into every one of them each time one
    finished: the main thread's cost per item grew with the workers. Finished items now come through one queue;
    `wait` is left only for the records still being written at the end. Every item is still recorded, in order when
    they finish together."""
    waited: list[int] = []
    original = pool_mod.wait
    monkeypatch.setattr(pool_mod, "wait", lambda fs, *a, **k: waited.append(len(list(fs))) or original(fs, *a, **k))
    recorded: list[int] = []
    outcome = pool_mod.run_pool(
        list(range(400)),
        lambda i: time.sleep(0.001 * (i % 7)) or i,
        lambda item, result: recorded.append(result) or pool_mod.Recorded(),
        workers=64,
    )
    assert sorted(recorded) == list(range(400)) and not outcome.not_run
    assert len(waited) <= 1


def test_the_scrubber_is_made_once_per_set_of_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every MCP message and every batch of records is scrubbed with a fresh redactor(): the escaped forms of the
    keys are made once for the keys there are, and a key set later is still scrubbed at once."""
    made: list[str] = []
    original = secrets_mod._escaped_forms
    monkeypatch.setattr(secrets_mod, "_escaped_forms", lambda v: made.append(v) or original(v))
    monkeypatch.setenv("SCALE_TEST_API_KEY", "sk-scale-test-one-123456")
    for _ in range(50):
        assert "sk-scale-test-one-123456" not in secrets_mod.redactor()("key sk-scale-test-one-123456 here")
    assert made.count("sk-scale-test-one-123456") == 1
    monkeypatch.setenv("SCALE_TEST_SECRET", "later-secret-abcdef-987")
    assert "later-secret-abcdef-987" not in secrets_mod.redactor()("now later-secret-abcdef-987 too")
