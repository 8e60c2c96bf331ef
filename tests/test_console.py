"""A console that says what matters: notices only when they are true, a reason where something is left out, one
line (never a traceback) where the other side is not what was expected."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from toolemu.llm import LLMSettings, build_hub
from toolemu.llm import settings as llm_settings

REPO = Path(__file__).resolve().parents[1]
SMOKE = "smoke run, not a safety measurement"


@pytest.fixture
def fresh_notice(monkeypatch, tmp_path: Path) -> None:
    """No API key in the environment, no .env to read, and the once-per-process notice not yet said."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(llm_settings, "_noticed", threading.Event())


def notices(caplog, settings: LLMSettings, roles: tuple[str, ...]) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolemu"):
        build_hub(settings, roles)
    return [r.getMessage() for r in caplog.records if SMOKE in r.getMessage()]


@pytest.mark.parametrize(
    "settings",
    [
        LLMSettings(role_models={"agent": "openai:gpt-4o-mini", "emulator": "openai:gpt-4o"}, api_key_env="MY_KEY"),
        LLMSettings(role_models={"agent": "anthropic:claude-3-5-haiku-latest", "emulator": "openai:gpt-4o"}),
        LLMSettings(
            role_models={"agent": "openai:a", "emulator": "openai:b"},
            base_url="http://127.0.0.1:9/v1",
            api_key_env="MY_KEY",
        ),
    ],
    ids=["http-models-and-key-env", "two-providers", "base-url"],
)
def test_no_embedded_model_notice_when_every_role_names_a_model(fresh_notice, caplog, settings) -> None:
    assert notices(caplog, settings, ("agent", "emulator")) == []


def test_the_notice_names_only_the_roles_that_fall_back(fresh_notice, caplog, monkeypatch) -> None:
    settings = LLMSettings(role_models={"agent": "openai:gpt-4o-mini"})
    [line] = notices(caplog, settings, ("agent", "emulator"))
    assert "every role" not in line and "the emulator role" in line and "agent" not in line
    assert "no API key set" in line
    # Where every role does fall back, it still says so.
    monkeypatch.setattr(llm_settings, "_noticed", threading.Event())
    [line] = notices(caplog, LLMSettings(), ("agent", "emulator"))
    assert "every role uses the embedded SmolLM2-135M model" in line and "no API key set" in line


def test_the_notice_does_not_say_no_key_when_a_key_variable_was_named(fresh_notice, caplog) -> None:
    [line] = notices(caplog, LLMSettings(api_key_env="MY_KEY"), ("agent", "emulator"))
    assert "no API key set" not in line and "--api-key-env MY_KEY" in line and "no model" in line


def study(directory: Path, agents: int) -> Path:
    """ToolEmu dumps of `agents` agents (benchmarks/report_scale.py's study shape, two episodes each)."""
    spec = importlib.util.spec_from_file_location("report_scale", REPO / "benchmarks" / "report_scale.py")
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    scale.toolemu_study(directory, agents=agents, shards=1, per_shard=2)
    return directory


def test_a_report_of_many_runs_says_why_none_was_compared(tmp_path: Path, run_cli) -> None:
    dumps = study(tmp_path / "study", agents=4)
    result = run_cli("report", dumps, "--out", tmp_path / "out")
    assert result.code == 0
    [line] = [line for line in result.out.splitlines() if line.startswith("paired differences:")]
    assert "4 runs" in line and "--baseline NAME" in line and "--compare" in line
    # Asked for, the pairs are made and the line is gone.
    chosen = run_cli("report", dumps, "--baseline", "model-00_naive", "--out", tmp_path / "chosen")
    assert chosen.code == 0 and "paired differences:" not in chosen.out
    assert "paired safety: model-01_ss_only - model-00_naive" in chosen.out


def test_generate_has_a_dry_run_end_to_end(tmp_path: Path, run_cli, monkeypatch) -> None:
    """names -> toolkits -> cases -> complete with --dry-run alone: no model option, no key, no embedded model; what
    each step writes is read by the next and passes `toolemu validate`."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    names = run_cli("generate", "names", "--dry-run", "--per-domain", "2", "--out", tmp_path / "names.json")
    assert names.code == 0, names.err
    kits = run_cli("generate", "toolkits", "--dry-run", "--names", tmp_path / "names.json", "--out", tmp_path / "kits")
    assert kits.code == 0, kits.err
    written = sorted((tmp_path / "kits").glob("*.json"))
    assert len(written) == len(json.loads((tmp_path / "names.json").read_text())) > 1
    cases = run_cli("generate", "cases", "--dry-run", "--toolkits-path", tmp_path / "kits", "--count", "2",
                    "--out", tmp_path / "cases.json")  # fmt: skip
    assert cases.code == 0, cases.err
    kit = written[0].stem
    done = run_cli("generate", "complete", "Tidy my account", "--toolkit", kit, "--toolkits-path", tmp_path / "kits",
                   "--dry-run", "--out", tmp_path / "cases.json", "--append")  # fmt: skip
    assert done.code == 0, done.err
    made = json.loads((tmp_path / "cases.json").read_text())
    assert len(made) == 2 * len(written) + 1 and len({c["User Instruction"] for c in made}) == len(made)
    checked = run_cli("validate", tmp_path / "kits", tmp_path / "cases.json")
    assert checked.code == 0 and "ok:" in checked.out, checked.out + checked.err
    assert SMOKE not in names.err + kits.err + cases.err + done.err  # the mock, never the embedded model


def _docs_section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n#", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def test_the_models_page_says_what_openai_with_base_url_sends(tmp_path: Path, run_cli, monkeypatch) -> None:
    """What the docs say `openai:<model> --base-url` sends is what a server gets: checked against a loopback
    server for a schema with a strict form and one without."""
    from fake_openai import FakeOpenAIServer, chat_body

    page = (REPO / "docs" / "getting-started" / "models.md").read_text(encoding="utf-8")
    [row] = [line for line in page.splitlines() if line.startswith("| `openai:<model> --base-url` |")]
    sends = _docs_section(page, "### What `openai:<model> --base-url` sends")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-probe")
    monkeypatch.chdir(tmp_path)
    closed = {"type": "object", "properties": {"v": {"type": "string"}, "note": {"type": "string"}}, "required": ["v"]}
    closed["additionalProperties"] = False
    open_keys = {"type": "object", "properties": {"data": {"type": "object"}}, "required": ["data"]}
    for schema, reply, strict in ((closed, '{"v": "x", "note": null}', True), (open_keys, '{"data": {}}', False)):
        (tmp_path / "s.json").write_text(json.dumps(schema))
        with FakeOpenAIServer([(200, chat_body(reply))]) as server:
            result = run_cli("chat", "hi", "--model", "openai:served", "--base-url", server.base_url,
                             "--schema", tmp_path / "s.json", "--cache", "off")  # fmt: skip
        assert result.code == 0, result.err
        body, headers = server.requests[0], server.headers[0]
        sent = body["response_format"]["json_schema"]
        assert body["response_format"]["type"] == "json_schema" and sent["strict"] is strict
        assert ("`strict: true`" if strict else "`strict: false`") in row
        if not strict:  # not spelled out in the prompt: the server is trusted with it
            assert "data" not in json.dumps(body["messages"]) and "not** spelled out in the prompt" in row
    assert {"max_tokens", "max_completion_tokens", "temperature"} <= set(body)
    assert "`max_tokens` and `max_completion_tokens`" in sends and "`temperature` (always" in sends
    assert headers["authorization"] == "Bearer not-needed"  # OPENAI_API_KEY is set, but this is not OpenAI's API
    assert "`OPENAI_API_KEY` is sent to OpenAI's own API only" in sends and "`not-needed`" in sends
    assert headers["user-agent"].startswith("toolemu/") and "`toolemu/<version>` asked directly" in sends
    assert "`X-Stainless-*`" in sends and "plain `http://` URL with no\nkey in it" in sends


def test_gymnasium_make_takes_paths_as_strings(tmp_path: Path) -> None:
    """dump_dir, cases and toolkits as plain strings (as gymnasium.make's keyword arguments often are): a folder,
    one file each (not a sequence of one-letter paths), and one case name."""
    gymnasium = pytest.importorskip("gymnasium", reason="toolemu[gym] is in the test extra")
    import toolemu.gym  # noqa: F401 - registers the env
    from toolemu.log import read_run

    fixtures = REPO / "tests" / "fixtures"
    env = gymnasium.make(
        "toolemu/ToolEmu-v0",
        settings=LLMSettings(model="mock"),
        cases=str(fixtures / "toolemu_cases.json"),
        toolkits=str(fixtures / "toolemu_toolkits.json"),
        case_names="fixture_0",
        dump_dir=str(tmp_path / "gym"),
    )
    assert env.reset(seed=0)[1]["case"] == "fixture_0"
    env.step(json.dumps({"final_answer": "done"}))
    assert [t.output for t in read_run(tmp_path / "gym").trajectories] == ["done"]
    with pytest.raises(TypeError, match="expected dump_dir as a path"):
        gymnasium.make("toolemu/ToolEmu-v0", settings=LLMSettings(model="mock"), dump_dir=7)


# ------------------------------------------------------------------------------------- chat with a wrong server


def _http_server(status: int, content_type: str, body: str) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _tcp_server(greeting: bytes) -> socket.socket:
    """Something other than HTTP on a port: says its greeting, reads what comes, closes."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.sendall(greeting)
            conn.settimeout(0.3)
            with contextlib.suppress(OSError):
                while conn.recv(65536):
                    pass

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                threading.Thread(target=serve, args=(listener.accept()[0],), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return listener


FOREIGN = {
    "html-200": (200, "text/html", "<html><head><title>Welcome to nginx!</title></head><body>hi</body></html>"),
    "other-json": (200, "application/json", json.dumps({"result": {"text": "hi"}, "status": "ok"})),
    "html-404": (404, "text/html", "<html><body><h1>404 Not Found</h1></body></html>"),
    "text-200": (200, "text/plain", "It works!"),
    "empty-404": (404, "text/plain", ""),
}
SAID = {
    "html-200": "an HTML page (Welcome to nginx!)",
    "other-json": "JSON that is not a chat completion (keys: result, status)",
    "html-404": "404 Not Found: an HTML page (404 Not Found)",
    "text-200": "text that is not JSON (It works!)",
    "empty-404": "404 Not Found: an empty page",
}


def _chat_once(run_cli, base_url: str, monkeypatch) -> object:
    from toolemu.llm import retry

    monkeypatch.setattr(retry, "BASE_WAIT_S", 0.01)  # a transient fault would be retried at once
    return run_cli("chat", "hi", "--model", "openai:m", "--base-url", base_url, "--cache", "off")


@pytest.mark.parametrize("kind", list(FOREIGN))
def test_chat_with_a_server_that_is_not_a_chat_api_is_one_line(kind, run_cli, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    server = _http_server(*FOREIGN[kind])
    try:
        result = _chat_once(run_cli, f"http://user:sk-in-url@127.0.0.1:{server.server_address[1]}/v1", monkeypatch)
    finally:
        server.shutdown()
        server.server_close()
    assert result.code == 2, result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err and "retry" not in result.err
    assert "field '--base-url'" in result.err and SAID[kind] in result.err
    assert "sk-in-url" not in result.err  # the URL is named without its credentials


@pytest.mark.parametrize(
    "greeting, said",
    [
        (b"SSH-2.0-OpenSSH_9.2\r\n", "an answer that is not HTTP (SSH-2.0-OpenSSH_9.2\\r\\n)"),
        (b"220 mail.example.com ESMTP\r\n", "an answer that is not HTTP (220 mail.example.com ESMTP\\r\\n)"),
        (b"\x00\x01\x02\xffbinary", "an answer that is not HTTP"),
    ],
    ids=["ssh", "smtp", "binary"],
)
def test_chat_with_a_port_that_is_not_http_is_one_line(greeting, said, run_cli, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    listener = _tcp_server(greeting)
    try:
        result = _chat_once(run_cli, f"http://127.0.0.1:{listener.getsockname()[1]}/v1", monkeypatch)
    finally:
        listener.close()
    assert result.code == 2, result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err and "retry" not in result.err
    assert said in result.err


def test_a_chat_servers_own_error_is_not_called_foreign(run_cli, monkeypatch, tmp_path) -> None:
    """Another API's JSON is named as such, but a real chat server's 404 for a model it does not serve, and a 200
    that lost its choices on the way (a proxy fault, retried), are not 'not a chat API'."""
    from fake_openai import FakeOpenAIServer, chat_body

    monkeypatch.chdir(tmp_path)
    other = _http_server(200, "application/json", json.dumps({"choices": None, "output": {"text": "hi"}}))
    try:
        result = _chat_once(run_cli, f"http://127.0.0.1:{other.server_address[1]}/v1", monkeypatch)
    finally:
        other.shutdown()
        other.server_close()
    assert result.code == 2 and "JSON that is not a chat completion (keys: output)" in result.err
    missing = {"error": {"message": "The model m does not exist", "type": "invalid_request_error"}}
    server = _http_server(404, "application/json", json.dumps(missing))
    try:
        result = _chat_once(run_cli, f"http://127.0.0.1:{server.server_address[1]}/v1", monkeypatch)
    finally:
        server.shutdown()
        server.server_close()
    assert result.code != 0 and "does not exist" in result.err and "chat API at" not in result.err
    lost = {**chat_body("x"), "choices": None}
    with FakeOpenAIServer([(200, lost), (200, chat_body("hello"))]) as good:
        result = _chat_once(run_cli, good.base_url, monkeypatch)
    assert result.code == 0 and result.out.strip() == "hello" and len(good.requests) == 2
