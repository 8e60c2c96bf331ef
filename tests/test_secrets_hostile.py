"""Hostile inputs for secrets (issue 21, item 1): a key given in --base-url (userinfo, percent-encoded, IPv6 host,
query parameters) or echoed back by a server (error bodies, 401s, 500s, unreadable replies) reaches no record, no
cache, no report, no export, no log line and no console line. Each channel gets keys planted in it."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from conftest import FIXTURES
from fake_openai import chat_body
from test_secrets import _fill

from toolemu.llm import LLMSettings, build_hub, user
from toolemu.llm.cache import cache_key
from toolemu.llm.options import ModelDescription, ModelOptions
from toolemu.secrets import redact


def make_key(tag: str) -> str:
    """A key no other test plants: nothing registered elsewhere can hide a miss."""
    return f"sk-{tag}-{hashlib.sha256(tag.encode()).hexdigest()[:20]}"


# A key whose characters need percent-encoding in a URL (each is a way to slip past a plain search).
ODD = "p@ss/w:rd?#&=%+;\"<'>é"


def forms(key: str) -> list[str]:
    """Every form a key may come back in: as given, percent-encoded, JSON- and HTML-escaped."""
    return sorted({key, quote(key, safe=""), json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1],
                   html.escape(key)})  # fmt: skip


def basic(user_part: str, password: str) -> str:
    return base64.b64encode(f"{unquote(user_part)}:{unquote(password)}".encode()).decode()


# --base-url forms: (template, the secret in it as written). {k} is the key, {h} the host:port.
URLS: dict[str, str] = {
    "user_password": "http://user:{k}@{h}/v1",
    "empty_user": "http://:{k}@{h}/v1",
    "token_as_user": "http://{k}@{h}/v1",
    "upper_scheme": "HTTP://user:{k}@{h}/v1",
    "https_no_path": "https://:{k}@{h}",
    "at_in_password": "http://user:{k}@x@{h}/v1",
    "api_key_query": "http://{h}/v1?api_key={k}",
    "key_query": "http://{h}/v1?key={k}",
    "token_second_param": "http://{h}/v1?model=m&access_token={k}",
    "camel_query": "http://{h}/v1?apiKey={k}",
    "amz_signature": "http://{h}/v1?X-Amz-Signature={k}&X-Amz-Date=20240101",
    "dash_query_with_fragment": "http://{h}/v1?api-key={k}#frag",
    "userinfo_and_query": "http://user:{k}@{h}/v1?token={k}",
}
IPV6_URL = "http://user:{k}@[::1]:8443/v1"


def url_of(name: str, key: str, host: str = "api.example.com:8443") -> str:
    return URLS[name].format(k=key, h=host)


# ---------------------------------------------------------------------------------------------------------------
# 1. What records keep of a role's model (describe(): records, cache keys, judge identities) holds no key.


DESCRIBE_CASES = [
    *[(name, URLS[name], False) for name in URLS],
    ("percent_encoded", "http://user:{k}@{h}/v1", True),
    ("percent_encoded_query", "http://{h}/v1?api_key={k}", True),
    ("ipv6_host", IPV6_URL, False),
]


@pytest.mark.parametrize(("name", "template", "encode"), DESCRIBE_CASES, ids=[c[0] for c in DESCRIBE_CASES])
def test_describe_holds_no_key(name: str, template: str, encode: bool) -> None:
    key = make_key(f"describe-{name}") + (ODD if encode else "")
    url = template.format(k=quote(key, safe="") if encode else key, h="api.example.com:8443")
    options = ModelOptions(model="openai:m", base_url=url)
    for text in (json.dumps(options.describe()), options.description().model_dump_json()):
        for form in forms(key):
            assert form not in text, (form, text)
        assert "example.com:8443" in text or "[::1]:8443" in text  # the server is still named
    hub = build_hub(LLMSettings(model="openai:m", base_url=url), ("agent",))
    assert key not in json.dumps(hub.describe()) and quote(key, safe="") not in json.dumps(hub.describe())


PLAIN_URLS = [
    "http://127.0.0.1:8000/v1",
    "https://api.example.com/v1?model=m&tier=free",
    "http://[::1]:8000/v1",
    "http://localhost:11434/v1#section",
]
# The cache key of one fixed request for each plain URL, as 59d79b6+ computed it: runs without credentials keep
# their replay keys.
PINNED_KEYS = {
    "http://127.0.0.1:8000/v1": "91b31f364ba016ec2ef995d49f295c9ac1311382ea52c9f9b4e059d7effdb208",
    "https://api.example.com/v1?model=m&tier=free": "57c3f5de5e0c8fbbb6c92b927a8b8865e6b1661a275deabf06e1cf85dff4f26c",
    "http://[::1]:8000/v1": "c056067a218a3411ebd9575befab058ba0096b206601ec2e92e24775c189205c",
    "http://localhost:11434/v1#section": "701e984f9e1e18bdc85833940fea981187abcbe041f0ea6776547aefa136f5e2",
}


@pytest.mark.parametrize("url", PLAIN_URLS)
def test_a_url_without_credentials_is_described_as_given(url: str) -> None:
    options = ModelOptions(model="openai:m", base_url=url)
    assert options.describe()["base_url"] == url
    expected = options.model_dump(exclude={"api_key_env", "timeout", "max_attempts", "vllm"})
    assert options.describe() == expected


def test_cache_keys_of_plain_urls_do_not_change() -> None:
    for url, pinned in PINNED_KEYS.items():
        options = ModelOptions(model="openai:m", base_url=url, max_tokens=64)
        request = {"model": options.describe(), "messages": [user("hi")], "stop": None, "extra": {}, "tools": None,
                   "salt": ""}  # fmt: skip
        assert cache_key(request) == pinned


def test_a_record_written_with_a_key_in_its_url_is_read_without_it() -> None:
    key = make_key("old-record")
    described = ModelDescription.model_validate({"model": "openai:m", "base_url": f"http://u:{key}@h.example/v1"})
    assert key not in described.model_dump_json() and "h.example" in described.model_dump_json()


# ---------------------------------------------------------------------------------------------------------------
# 2. The redactor scrubs URL userinfo and key-like query parameters in any text, whatever holds the key.


def _contexts(url: str) -> dict[str, str]:
    return {
        "plain": f"connecting to {url} failed",
        "json": json.dumps({"base_url": url}),
        "html": f'<a href="{html.escape(url)}">server</a>',
        "repr": repr({"base_url": url}),
        "markdown": f"see [the server]({url}).",
        "traceback": f'  File "x.py", line 3, in call\nhttpx.ConnectError: {url}: refused',
    }


REDACT_CASES = [
    ("user_password", "plain"),
    ("user_password", "json"),
    ("empty_user", "html"),
    ("token_as_user", "repr"),
    ("upper_scheme", "markdown"),
    ("https_no_path", "traceback"),
    ("at_in_password", "plain"),
    ("api_key_query", "json"),
    ("key_query", "html"),
    ("token_second_param", "plain"),
    ("camel_query", "markdown"),
    ("amz_signature", "repr"),
    ("dash_query_with_fragment", "traceback"),
    ("userinfo_and_query", "json"),
]


@pytest.mark.parametrize(("name", "context"), REDACT_CASES, ids=[f"{n}-{c}" for n, c in REDACT_CASES])
def test_redactor_scrubs_keys_in_urls(name: str, context: str) -> None:
    key = make_key(f"redact-{name}-{context}")
    text = _contexts(url_of(name, key))[context]
    clean = redact(text)
    assert key not in clean, clean
    assert "api.example.com:8443" in clean  # only the key goes


def test_redactor_scrubs_a_percent_encoded_key_in_an_ipv6_url() -> None:
    key = make_key("redact-ipv6") + ODD
    clean = redact(f"POST {IPV6_URL.format(k=quote(key, safe=''))}/chat/completions -> 401")
    assert quote(key, safe="") not in clean and "[::1]:8443" in clean


def test_redactor_scrubs_a_key_query_parameter_without_a_scheme() -> None:
    key = make_key("redact-bare-query")
    clean = redact(f"404 for path=/v1/?api_key={key}chat/completions")
    assert key not in clean


def test_redactor_leaves_urls_without_credentials_alone() -> None:
    text = "see https://api.example.com/v1?model=m&page=2 and postgres://svc:pw@10.0.0.1/db and http://[::1]:80/x"
    assert redact(text) == text  # benchmark content (a postgres URL in a case) is data, not our key


# ---------------------------------------------------------------------------------------------------------------
# 3. A key given in --base-url is scrubbed in every form a server may echo it in.

ECHO_CASES = [
    ("user_password", "raw"),
    ("user_password", "basic"),
    ("token_as_user", "raw"),
    ("empty_user", "basic"),
    ("percent_encoded", "decoded"),
    ("percent_encoded", "basic"),
    ("percent_encoded", "json"),
    ("percent_encoded", "html"),
    ("api_key_query", "raw"),
    ("percent_encoded_query", "decoded"),
]


@pytest.mark.parametrize(("name", "echo"), ECHO_CASES, ids=[f"{n}-{e}" for n, e in ECHO_CASES])
def test_a_key_from_the_url_is_scrubbed_in_every_echoed_form(name: str, echo: str) -> None:
    encode = name.startswith("percent_encoded")
    key = make_key(f"echo-{name}-{echo}") + (ODD if encode else "")
    template = {"percent_encoded": URLS["user_password"], "percent_encoded_query": URLS["api_key_query"]}.get(
        name, URLS.get(name, "")
    )
    written = quote(key, safe="") if encode else key
    LLMSettings(model="openai:m", base_url=template.format(k=written, h="127.0.0.1:9"))
    user_part = "" if name == "empty_user" else "user"
    shown = {
        "raw": key,
        "decoded": key,
        "basic": f"Authorization: Basic {basic(user_part, written) if name != 'token_as_user' else ''}",
        "json": json.dumps({"message": f"bad key {key}"}),
        "html": f"<p>bad key {html.escape(key)}</p>",
    }[echo]
    clean = redact(f"401 Unauthorized: {shown}")
    if echo == "basic":
        assert basic(user_part, written) not in clean
    else:
        for form in forms(key):
            assert form not in clean, (form, clean)


# ---------------------------------------------------------------------------------------------------------------
# 4. Channels, end to end: a loopback server that echoes what it was sent (path with its query, Authorization, the
# decoded Basic credentials) in its replies and its errors.


class EchoServer:
    """An OpenAI-compatible endpoint that echoes its caller's credentials. `status` 200 answers (the echo inside
    every reply: the agent's text, tool input, observations, verdicts); any other status is an error whose body is
    the echo; `kind` "text", "html" or "sse" answers 200 with a body that is not the API's JSON, echo included."""

    def __init__(self, status: int = 200, kind: str = "json", host: str = "127.0.0.1"):
        self.status, self.kind, self.seen = status, kind, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                auth = self.headers.get("Authorization", "")
                decoded = ""
                if auth.startswith("Basic "):
                    decoded = base64.b64decode(auth[6:]).decode("utf-8", "replace")
                echo = f"path={self.path} authorization={auth} credentials={decoded}"
                outer.seen.append(echo)
                status, body, ctype = outer.answer(request, echo)
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        server_class = ThreadingHTTPServer
        if ":" in host:

            class V6(ThreadingHTTPServer):
                address_family = socket.AF_INET6

            server_class = V6
        self.host = host
        self.server = server_class((host, 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, request: dict[str, Any], echo: str) -> tuple[int, str, str]:
        if self.kind == "text":
            return 200, f"upstream proxy error: {echo}", "text/plain"
        if self.kind == "html":
            return 200, f"<html><body><h1>502</h1><pre>{html.escape(echo)}</pre></body></html>", "text/html"
        if self.kind == "sse":
            return 200, f'data: {{"error": {{"message": "{echo}"}}}}\n\n', "text/event-stream"
        if self.status != 200:
            error = {"error": {"message": f"denied: {echo}", "type": "invalid_request_error", "code": "bad_key"}}
            return self.status, json.dumps(error), "application/json"
        fmt = request.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            content = json.dumps(_fill(fmt["json_schema"]["schema"], f"echo {echo}"))
        elif any("\nObservation:" in str(m.get("content")) for m in request["messages"][1:]):
            content = f"Thought: done, {echo}\nFinal Answer: you sent {echo}"
        else:
            content = f'Thought: look up\nAction: NoteVaultReadNote\nAction Input: {{"note_id": {json.dumps(echo)}}}'
        return 200, json.dumps(chat_body(content)), "application/json"

    @property
    def address(self) -> str:
        port = self.server.server_address[1]
        return f"[{self.host}]:{port}" if ":" in self.host else f"{self.host}:{port}"

    def __enter__(self) -> EchoServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolemu.llm import retry

    monkeypatch.setattr(retry, "BASE_WAIT_S", 0.001)
    monkeypatch.setattr(retry, "MAX_WAIT_S", 0.01)


def _all_forms(key: str, url: str) -> list[str]:
    """The key in every form it may be written in, the Basic header's too."""
    userinfo = url.split("://", 1)[1].split("/", 1)[0].rpartition("@")[0]
    user_part, _, password = userinfo.partition(":")
    found = [*forms(key), *forms(unquote(key))]
    if userinfo:
        found.append(basic(user_part, password))
    return found


def _assert_clean(key: str, url: str, texts: dict[str, str | bytes]) -> None:
    for where, text in texts.items():
        blob = text if isinstance(text, bytes) else text.encode()
        for form in _all_forms(key, url):
            assert form.encode() not in blob, (where, form)


def _files(*folders: Path) -> Iterator[Path]:
    for folder in folders:
        if folder.is_file():
            yield folder
        elif folder.exists():
            yield from (p for p in folder.rglob("*") if p.is_file())


RUN_CASES = {
    "user_password": ("http://user:{k}@{h}/v1", False, "127.0.0.1"),
    "token_as_user": ("http://{k}@{h}/v1", False, "127.0.0.1"),
    "percent_encoded": ("http://user:{k}@{h}/v1", True, "127.0.0.1"),
    "api_key_query": ("http://{h}/v1?api_key={k}", False, "127.0.0.1"),
    "key_query_second": ("http://{h}/v1?x=1&key={k}", False, "127.0.0.1"),
    "ipv6_host": ("http://user:{k}@{h}/v1", False, "::1"),
}


@pytest.mark.parametrize("name", list(RUN_CASES))
def test_a_run_with_a_key_in_its_url_writes_it_nowhere(name: str, tmp_path, run_cli, monkeypatch) -> None:
    """run (trajectories, eval files, run.json, report.json/html, cache), then report with frames and the Inspect
    export: every file, and stdout and stderr of each command."""
    monkeypatch.chdir(tmp_path)
    template, encode, host = RUN_CASES[name]
    key = make_key(f"run-{name}") + ("+" + ODD if encode else "")
    written = quote(key, safe="") if encode else key
    run, cache = tmp_path / "run", tmp_path / "cache"
    with EchoServer(host=host) as server:
        url = template.format(k=written, h=server.address)
        result = run_cli(
            "run", "--model", "openai:hostile", "--base-url", url, "--toolkits-path",
            FIXTURES / "toolemu_toolkits.json", "--input-path", FIXTURES / "toolemu_cases.json", "--dump-dir", run,
            "--cache-path", cache / "responses.sqlite", "--no-progress", "--auto",
        )  # fmt: skip
    assert result.code == 0, result.err
    assert len(server.seen) > 5 and all(key in unquote(s) or written in s for s in server.seen)  # it went out
    report = run_cli("report", run, "--out", tmp_path / "report", "--format", "csv", "--format", "parquet")
    export = run_cli("export", "inspect", run, "--out", tmp_path / "inspect.json")
    assert report.code == 0 and export.code == 0, report.err + export.err
    files = list(_files(run, cache, tmp_path / "report", tmp_path / "inspect.json"))
    names = {p.name for p in files}
    assert {"trajectories.jsonl", "run.json", "report.json", "report.html", "responses.sqlite", "inspect.json"} <= names
    assert any(n.endswith(".csv") for n in names) and any(n.endswith(".parquet") for n in names)
    traj = (run / "trajectories.jsonl").read_text()
    assert "you sent" in traj and "authorization=" in traj  # the echo was recorded, scrubbed
    texts: dict[str, str | bytes] = {str(p): p.read_bytes() for p in files}
    texts |= {"run out": result.out, "run err": result.err, "report out": report.out, "report err": report.err,
              "export out": export.out, "export err": export.err}  # fmt: skip
    _assert_clean(key, url, texts)


CHAT_ERRORS = [
    (400, "json", "url"),
    (401, "json", "url"),
    (403, "json", "url"),
    (404, "json", "url"),
    (422, "json", "url"),
    (429, "json", "url"),
    (500, "json", "url"),
    (502, "json", "url"),
    (503, "json", "url"),
    (200, "text", "url"),
    (200, "html", "url"),
    (200, "sse", "url"),
    (500, "json", "env"),
    (400, "json", "env"),
    (500, "json", "query"),
]


@pytest.mark.parametrize(("status", "kind", "source"), CHAT_ERRORS, ids=[f"{s}-{k}-{w}" for s, k, w in CHAT_ERRORS])
def test_chat_says_a_failed_call_in_one_clean_line(status, kind, source, tmp_path, run_cli, monkeypatch) -> None:
    """The server's error body echoes the key (from the URL, or the Bearer header of --api-key-env's variable)."""
    monkeypatch.chdir(tmp_path)
    key = make_key(f"chat-{status}-{kind}-{source}")
    with EchoServer(status, kind) as server:
        flags: list[str] = []
        if source == "env":
            monkeypatch.setenv("ZQ_PLAIN_VARIABLE", key)  # a name no pattern would take for a secret
            url = f"http://{server.address}/v1"
            flags = ["--api-key-env", "ZQ_PLAIN_VARIABLE"]
        elif source == "query":
            url = f"http://{server.address}/v1?api_key={key}"
        else:
            url = f"http://user:{key}@{server.address}/v1"
        result = run_cli("chat", "hello", "--model", "openai:m", "--base-url", url, "--cache", "off", *flags)
    assert server.seen and (key in server.seen[0] or "Basic" in server.seen[0])
    assert result.code in (1, 2), result.err
    assert "Traceback" not in result.err and 'File "' not in result.err
    errors = [line for line in result.err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.err
    _assert_clean(key, url, {"out": result.out, "err": result.err})


@pytest.mark.parametrize("status", [400, 500])
def test_generate_says_a_failed_call_in_one_clean_line(status: int, tmp_path, run_cli, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    key = make_key(f"generate-{status}")
    with EchoServer(status) as server:
        url = f"http://user:{key}@{server.address}/v1"
        result = run_cli(
            "generate", "names", "--domain", "Smart home and IoT", "--per-domain", "2", "--out", tmp_path / "n.json",
            "--model", "openai:m", "--base-url", url, "--cache", "off",
        )  # fmt: skip
    assert result.code in (1, 2) and "Traceback" not in result.err, result.err
    _assert_clean(key, url, {"out": result.out, "err": result.err})


@pytest.mark.parametrize("status", [401, 403])
def test_emulate_refused_key_line_is_clean(status: int, tmp_path, run_cli, monkeypatch) -> None:
    """A refused key stops the command: its "not run (…)" line and the error line name the reason, without the
    key the server echoed."""
    monkeypatch.chdir(tmp_path)
    key = make_key(f"emulate-{status}")
    with EchoServer(status) as server:
        url = f"http://user:{key}@{server.address}/v1"
        result = run_cli(
            "emulate", "--model", "openai:m", "--base-url", url, "--toolkits-path", FIXTURES / "toolemu_toolkits.json",
            "--input-path", FIXTURES / "toolemu_cases.json", "--dump-dir", tmp_path / "run", "--no-progress",
            "--auto", "--cache-path", tmp_path / "c.sqlite",
        )  # fmt: skip
    assert result.code == 2, result.err
    assert "not run (" in result.out + result.err
    texts: dict[str, str | bytes] = {"out": result.out, "err": result.err}
    texts |= {str(p): p.read_bytes() for p in _files(tmp_path)}
    _assert_clean(key, url, texts)


def test_an_unexpected_error_is_one_clean_line(tmp_path, run_cli, monkeypatch) -> None:
    """An error no one planned for (here raised by the model layer with the URL in its message) is one line and
    exit 1, never a traceback."""
    from toolemu.llm import model

    key = make_key("unexpected")
    url = f"http://user:{key}@127.0.0.1:9/v1"

    def boom(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"could not talk to {self.options.base_url}")

    monkeypatch.setattr(model.RoleModel, "complete", boom)
    monkeypatch.chdir(tmp_path)
    result = run_cli("chat", "hello", "--model", "openai:m", "--base-url", url, "--cache", "off")
    assert result.code == 1 and "Traceback" not in result.err
    assert result.err.strip().splitlines()[-1].startswith("error:") and "RuntimeError" in result.err
    _assert_clean(key, url, {"out": result.out, "err": result.err})


def test_a_logged_traceback_is_scrubbed(capsys, monkeypatch) -> None:
    """A log record with exception info: the traceback text is scrubbed like the message."""
    from toolemu.cli.app import setup_logging

    key = make_key("logged-traceback")
    monkeypatch.setenv("ZQ_OTHER_VARIABLE", key)
    from toolemu.secrets import register_secret_env

    register_secret_env("ZQ_OTHER_VARIABLE")
    setup_logging()
    try:
        raise ValueError(f"server said: Bearer {key}")
    except ValueError:
        logging.getLogger("toolemu.test").exception("the call failed")
    err = capsys.readouterr().err
    assert "the call failed" in err and key not in err


def test_the_response_cache_keeps_no_key(tmp_path, monkeypatch) -> None:
    """The cache's stored replies and its keys: a reply echoing the key, under a URL that carries it."""
    key = make_key("cache")
    monkeypatch.chdir(tmp_path)
    with EchoServer() as server:
        url = f"http://user:{key}@{server.address}/v1?api_key={key}"
        settings = LLMSettings(model="openai:m", base_url=url, cache_path=tmp_path / "c" / "responses.sqlite")
        hub = build_hub(settings, ("agent",))
        reply = hub.model("agent").complete([user("hello")])
        assert "credentials=user:" in reply.text  # the reply did echo it
        hub.cache.close()
    _assert_clean(key, url, {str(p): p.read_bytes() for p in _files(tmp_path / "c")})


# ---------------------------------------------------------------------------------------------------------------
# 5. A message cut to length is scrubbed first: a key that straddles the cut must not leave a readable piece.


class RepeatingEchoServer(EchoServer):
    """Its error body is the decoded credentials said over and over after `pad` characters: wherever a message is
    cut (a log line, an error line, a record's error), the cut falls inside a key in one of the pads tried."""

    def __init__(self, status: int, pad: int):
        super().__init__(status)
        self.pad = pad

    def answer(self, request: dict[str, Any], echo: str) -> tuple[int, str, str]:
        credentials = echo.rpartition("credentials=")[2]
        error = {"error": {"message": "~" * self.pad + " ".join([credentials] * 80), "type": "server_error"}}
        return self.status, json.dumps(error), "application/json"


def _assert_no_fragment(key: str, texts: dict[str, str | bytes]) -> None:
    """No 8 characters of the key's random part: a cut-off key gives part of itself away."""
    secret = key.removeprefix("sk-")
    pieces = [secret[i : i + 8] for i in range(len(secret) - 7)]
    for where, text in texts.items():
        blob = text if isinstance(text, bytes) else text.encode()
        for piece in pieces:
            assert piece.encode() not in blob, (where, piece)


# The key is 27 characters and comes back every 33: pads 11 apart put every cut inside it, far enough in.
CUT_CASES = [
    (command, status, pad)
    for command, status in (("chat", 500), ("chat", 401), ("emulate", 500), ("emulate", 401), ("emulate", 400))
    for pad in (0, 11, 22)
]


@pytest.mark.parametrize(("command", "status", "pad"), CUT_CASES, ids=[f"{c}-{s}-pad{p}" for c, s, p in CUT_CASES])
def test_no_piece_of_a_key_survives_a_cut(command: str, status: int, pad: int, tmp_path, run_cli, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    key = "sk-" + hashlib.sha256(f"cut-{command}-{status}-{pad}".encode()).hexdigest()[:24]
    with RepeatingEchoServer(status, pad) as server:
        url = f"http://user:{key}@{server.address}/v1"
        if command == "chat":
            result = run_cli("chat", "hello", "--model", "openai:m", "--base-url", url, "--cache", "off")
        else:
            result = run_cli(
                "emulate", "--model", "openai:m", "--base-url", url, "--toolkits-path",
                FIXTURES / "toolemu_toolkits.json", "--input-path", FIXTURES / "toolemu_cases.json", "--dump-dir",
                tmp_path / "run", "--no-progress", "--auto", "--cache-path", tmp_path / "c.sqlite",
            )  # fmt: skip
    assert result.code in (1, 2), result.err
    texts: dict[str, str | bytes] = {"out": result.out, "err": result.err}
    texts |= {str(p): p.read_bytes() for p in _files(tmp_path)}
    if command == "emulate" and status != 401:
        assert "Error code" in (tmp_path / "run" / "trajectories.jsonl").read_text()  # the failure is recorded
    _assert_no_fragment(key, texts)


# ---------------------------------------------------------------------------------------------------------------
# 6. Scrubbing stays cheap: every line read or written goes through it (a report reads every record).


@pytest.mark.parametrize(
    "text",
    ["=" * 1_000_000, "@" * 1_000_000, "&" + "a" * 1_000_000 + "key=1", "?key=" * 200_000, "http://" * 150_000],
    ids=["equals", "ats", "long-name", "many-keys", "many-schemes"],
)
def test_scrubbing_a_hostile_megabyte_does_not_hang(text: str) -> None:
    import time

    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 5
