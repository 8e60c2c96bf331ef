"""`toolemu mcp serve --http` under load (issue 29): sessions that end together share one rewrite of run.json,
run.json is not parsed again while it is the file the server last wrote, a reply is one JSON body, and the server
runs on uvloop and httptools."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx
import pytest
import uvicorn
from test_mcp_edges import answers, http_session, message  # noqa: F401 - http_session is a fixture

from toolemu.episode import EpisodeBuilder, EpisodeSpec
from toolemu.llm import LLMSettings, build_hub
from toolemu.log import episode_folder as folder_mod
from toolemu.log.episode_folder import EpisodeFolder
from toolemu.log.layout import RUN_FILE
from toolemu.log.meta import RunMeta, read_meta, write_meta
from toolemu.mcp.episodes import ClientInfo
from toolemu.mcp.serve import SessionEpisodes, serve_target, served
from toolemu.mcp.server import NotRecorded, loop_options
from toolemu.specs import load_cases

CASE = "comms_email_purge_promotions"


def _source(folder_path: Path) -> SessionEpisodes:
    """The episodes of `toolemu mcp serve --case CASE --dry-run`, as its command makes them."""
    case_idx, case, bench = serve_target(load_cases(), CASE, ())
    hub = build_hub(LLMSettings(model="mock", cache="off"), ("emulator",))
    spec = served(EpisodeSpec())
    builder = EpisodeBuilder(hub, spec, bench)
    folder = EpisodeFolder.open(folder_path, spec.run_config(mcp="final_answer"))
    builder.run_id = folder.run_id
    return SessionEpisodes(builder, case, case_idx, folder, final_tool=True)


def _wait_for(condition: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_sessions_that_end_while_run_json_is_written_are_noted_by_one_rewrite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run.json is rewritten whole to note each episode's pair (an O(n) write per session made a server's cost grow
    with its sessions). Seven sessions that end while the first one's rewrite is on disk wait for it, and the next
    rewrite notes all seven: two rewrites for eight sessions, every pair noted, in the order the records were
    appended, each session answered only after its pair is in the file."""
    source = _source(tmp_path / "run")
    sessions = [source.open(ClientInfo(name="client")) for _ in range(8)]
    writes: list[int] = []
    writing, release = threading.Event(), threading.Event()
    original = folder_mod.write_meta

    def slow_write(path: Path, meta: RunMeta) -> None:
        writes.append(len(meta.expected_pairs))
        if len(writes) == 1:
            writing.set()
            assert release.wait(30)
        original(path, meta)

    monkeypatch.setattr(folder_mod, "write_meta", slow_write)
    answered: dict[int, bool] = {}

    def end(i: int) -> None:
        result = sessions[i].answer(f"done {i}")
        answered[i] = not result.is_error and (tmp_path / "run" / RUN_FILE).exists()

    first = threading.Thread(target=end, args=(0,))
    first.start()
    assert writing.wait(30)
    others = [threading.Thread(target=end, args=(i,)) for i in range(1, 8)]
    for thread in others:
        thread.start()
    records = tmp_path / "run" / "trajectories.jsonl"
    _wait_for(lambda: len(records.read_text().splitlines()) == 8)  # every record appended, its pair waiting
    assert answered == {}  # nobody is answered before their pair is noted
    release.set()
    for thread in [first, *others]:
        thread.join(30)
    assert answered == dict.fromkeys(range(8), True)
    assert writes == [1, 8]
    meta = read_meta(tmp_path / "run" / RUN_FILE)
    trials = [t for _, t in meta.expected_pairs]
    assert sorted(trials) == list(range(8)) and {c for c, _ in meta.expected_pairs} == {CASE}
    assert [json.loads(line)["trial"] for line in records.read_text().splitlines()] == trials  # the same order
    assert source.unwritten == [] and len(source.recorded) == 8


def test_a_failed_rewrite_of_run_json_is_said_and_its_pairs_are_noted_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewrite that fails (a full disk) fails the session that made it, which is told its episode was recorded
    but the folder was not, and the command fails at its end; the pairs it held are not lost from the queue."""
    source = _source(tmp_path / "run")
    first, second = source.open(ClientInfo()), source.open(ClientInfo())
    original = folder_mod.write_meta
    calls: list[int] = []

    def full_once(path: Path, meta: RunMeta) -> None:
        calls.append(len(meta.expected_pairs))
        if len(calls) == 1:
            raise OSError(28, "No space left on device")
        original(path, meta)

    monkeypatch.setattr(folder_mod, "write_meta", full_once)
    with pytest.raises(NotRecorded, match=r"was recorded, but the run folder was not .*No space left on device"):
        first.answer("done")  # the server tells its client this, and stops
    assert len(source.unwritten) == 1 and len(source.recorded) == 1
    second.answer("done")
    assert calls == [1, 2]  # the second rewrite notes the first session's pair too
    assert [t for _, t in read_meta(tmp_path / "run" / RUN_FILE).expected_pairs] == [0, 1]


def test_run_json_is_parsed_again_only_when_another_writer_changed_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each episode added rewrote run.json after parsing it again, in case another writer (a gate audit) had added
    to it: a parse that grows with the episodes. It is parsed again only when it is no longer the file last
    written here; what another writer added is kept."""
    source = _source(tmp_path / "run")
    reads: list[Path] = []
    original = folder_mod.read_meta
    monkeypatch.setattr(folder_mod, "read_meta", lambda path: reads.append(path) or original(path))
    for _ in range(4):
        source.open(ClientInfo()).answer("done")
    assert len(reads) == 1  # once, for the first: the folder was opened before the stamp was taken
    run_file = tmp_path / "run" / RUN_FILE
    other = read_meta(run_file).model_copy(update={"models": {"judge": "another-writer"}})
    write_meta(run_file, other)
    source.open(ClientInfo()).answer("done")
    assert len(reads) == 2
    meta = read_meta(run_file)
    assert meta.models.get("judge") == "another-writer" and [t for _, t in meta.expected_pairs] == list(range(5))


def test_a_tool_call_over_http_is_answered_with_one_json_body(http_session: tuple[str, dict[str, str]]) -> None:  # noqa: F811
    """The server sends nothing but the reply while a call runs, so the reply is one JSON body (streamable HTTP
    lets a server answer either way, and clients take both): an SSE stream per POST cost a fifth of the server's
    CPU per session."""
    url, headers = http_session
    body = message(id=7, method="tools/call", params={"name": "PostboxMailSearchEmails", "arguments": {"query": "x"}})
    response = httpx.post(url, content=body, headers=headers, timeout=60)
    assert response.status_code == 200, response.text[:300]
    assert response.headers["content-type"].startswith("application/json")
    (answer,) = answers(response)
    assert answer["id"] == 7 and answer["result"]["content"], answer


def test_the_server_runs_on_uvloop_and_parses_http_with_httptools() -> None:
    """Both are dependencies where they build (uvloop: not on Windows); each cut the server's CPU per session."""

    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert loop_options() == {"use_uvloop": True}
    assert anyio.run(loop_module, backend_options=loop_options()).startswith("uvloop")
    config = uvicorn.Config(lambda scope, receive, send: None, log_config=None)
    config.load()
    assert config.http_protocol_class.__name__ == "HttpToolsProtocol"
