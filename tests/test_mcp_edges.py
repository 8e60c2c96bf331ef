"""The edges of `toolemu mcp serve`: the addresses it listens on, the tokens it takes, and what it does with messages
that break JSON-RPC or MCP, over HTTP and stdio.

- Addresses: loopback only (127.0.0.0/8, ::1, ::ffff:127.x, `localhost` in any case), with the DNS-rebinding checks
  on and the address bound among the Host names taken; any other address or name is refused (exit 2, one line)
  unless `--allow-remote`, which serves it with a warning.
- Tokens given by the user: at least 16 characters of RFC 6750's alphabet, else one line and exit 2; scrubbed.
- Messages: answered with JSON-RPC's own errors (-32700 parse error, -32600 invalid request, -32601 method not
  found, -32602 invalid params) with the request's id where it has a usable one, never HTTP 500, never silence; one
  line of log each, never a traceback or a page of pydantic errors; the session goes on."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_agent_helpers import CASE, TOOLEMU, announced, records

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "edge-test", "version": "1"}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
REFUSED_WAIT_S = 30  # a refusal takes a second or two; a server that serves instead is stopped after this


def serve_args(dump: Path, *extra: str) -> list[str]:
    return [*TOOLEMU, "mcp", "serve", "--case", CASE, "--dry-run", "--cache", "off", "--dump-dir", str(dump), *extra]


def server_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONSAFEPATH": "1", **extra}  # the toolemu of the test's interpreter


def refused(dump: Path, *extra: str, env: dict[str, str] | None = None) -> str:
    """The one line a refused `mcp serve` prints, having started nothing (exit 2)."""
    try:
        done = subprocess.run(
            serve_args(dump, *extra),
            capture_output=True,
            text=True,
            env=env or server_env(),
            cwd=dump.parent,
            timeout=REFUSED_WAIT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"served instead of refusing: {exc.stdout!r}")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "url:" not in done.stdout and not dump.exists()  # refused before any work
    return lines[0]


def stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        pytest.fail(f"the server did not stop: {err[-2000:]}")
    return process.returncode, err


def start_http(dump: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str, str]:
    process = subprocess.Popen(
        serve_args(dump, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or server_env(),
        cwd=dump.parent,
    )
    found = announced(process, ("url", "token"), timeout=60)
    if not {"url", "token"} <= found.keys():
        _, err = stop(process)
        pytest.fail(f"not served: {found}; {err}")
    return process, found["url"], found["token"]


def initialize(url: str, token: str, host: str | None = None) -> httpx.Response:
    headers = {**ACCEPT, "Authorization": f"Bearer {token}", **({"Host": host} if host else {})}
    return httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}, headers=headers)


# Addresses.


@pytest.mark.parametrize(
    "address",
    ["0.0.0.0:0", "[::]:0", "192.168.1.10:8765", "myhost.example:8765", "example.com:0", "[fe80::1]:0", "10.0.0.1:0"],
)
def test_an_address_beyond_loopback_is_refused_without_allow_remote(tmp_path: Path, address: str) -> None:
    line = refused(tmp_path / "run", "--http", address)
    assert line.startswith("error: command line: field '--http': ") and "is not a loopback address" in line
    assert "--allow-remote" in line and "plaintext" in line


def test_allow_remote_serves_beyond_loopback_with_a_warning_and_still_needs_the_token(tmp_path: Path) -> None:
    process, url, token = start_http(tmp_path / "run", "--http", "0.0.0.0:0", "--allow-remote")
    try:
        assert url.startswith("http://0.0.0.0:")
        local = url.replace("0.0.0.0", "127.0.0.1")
        assert httpx.post(local, json={}, headers=ACCEPT).status_code == 401
        assert initialize(local, token).status_code == 200
    finally:
        _, err = stop(process)
    warning = [line for line in err.splitlines() if "--allow-remote" in line]
    assert len(warning) == 1 and "0.0.0.0" in warning[0] and "plain HTTP" in warning[0], err


def test_allow_remote_without_http_is_refused(tmp_path: Path) -> None:
    line = refused(tmp_path / "run", "--allow-remote")
    assert "expected --http with --allow-remote" in line


@pytest.mark.parametrize(
    ("address", "host"),
    [
        ("127.0.0.2:0", "127.0.0.2"),  # all of 127.0.0.0/8 is loopback, and its clients name the address bound
        ("[::ffff:127.0.0.1]:0", "[::ffff:127.0.0.1]"),  # IPv4 loopback, mapped into IPv6
    ],
)
def test_loopback_in_other_spellings_is_served_with_the_dns_rebinding_checks(
    tmp_path: Path, address: str, host: str
) -> None:
    process, url, token = start_http(tmp_path / "run", "--http", address)
    try:
        port = url.rsplit(":", 1)[1].split("/")[0]
        answered = initialize(url, token, host=f"{host}:{port}")
        assert answered.status_code == 200, answered.text
        assert initialize(url, token, host="evil.example").status_code in (400, 421)  # DNS rebinding
        assert initialize(url, token, host=f"evil.example:{port}").status_code in (400, 421)
    finally:
        rc, err = stop(process)
    assert rc == 130 and "Traceback" not in err, err


@pytest.mark.parametrize(
    ("address", "host"), [("localhost:0", "localhost"), ("LOCALHOST:0", "localhost"), ("[::1]:0", "[::1]")]
)
def test_the_usual_loopback_names_are_served(tmp_path: Path, address: str, host: str) -> None:
    process, url, token = start_http(tmp_path / "run", "--http", address)
    try:
        port = url.rsplit(":", 1)[1].split("/")[0]
        assert initialize(url, token, host=f"{host}:{port}").status_code == 200
        assert initialize(url, token, host="evil.example").status_code in (400, 421)
    finally:
        stop(process)


# Tokens.


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("", "at least 16 characters, got an empty one"),
        ("a", "at least 16 characters, got 1"),
        ("abcde", "at least 16 characters, got 5"),
        ("fifteen-chars-x", "at least 16 characters, got 15"),
        ("abcdefgh ijklmnopq", "no spaces"),
        ("  sixteen-chars-token  ", "no spaces"),
        ("pässwörd-pässwörd-1", "letters, digits and -._~+/"),
        ("abcdefghijklmnop\tq", "no spaces"),
        ("abcdefghijklmnop\u200bq", "letters, digits and -._~+/"),  # a zero-width space
    ],
)
def test_a_token_too_short_or_not_sendable_is_refused(tmp_path: Path, token: str, expected: str) -> None:
    line = refused(tmp_path / "run", "--http", "127.0.0.1:0", "--token", token)
    assert line.startswith("error: command line: field '--token': expected a token") and expected in line, line
    assert len(token.strip()) < 5 or token.strip() not in line  # a refused token is not printed either


def test_a_short_token_in_the_environment_is_refused_naming_the_variable(tmp_path: Path) -> None:
    line = refused(tmp_path / "run", "--http", "127.0.0.1:0", env=server_env(TOOLEMU_MCP_TOKEN="short"))
    assert line == "error: environment: field 'TOOLEMU_MCP_TOKEN': expected a token of at least 16 characters, got 5"


def test_a_token_of_16_characters_is_taken_and_scrubbed_from_what_is_written(tmp_path: Path) -> None:
    """A client that echoes the token into a call: the record and the log have `***`, never the token."""
    dump, token = tmp_path / "run", "Tok3n-of-16-char"
    process, url, given = start_http(dump, "--http", "127.0.0.1:0", "--token", token)
    try:
        assert given == token
        headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
        opened = initialize(url, token)
        headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        call = {"name": "PostboxMailSearchEmails", "arguments": {"query": f"token {token}"}}
        httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}, headers=headers)
    finally:
        _, err = stop(process)
    (record,) = records(dump)
    assert token not in json.dumps(record) and record["steps"][0]["tool_input"] == {"query": "token ***"}
    assert token not in err


# Messages over HTTP: one server, one session, each message on its own.


def deep(levels: int) -> str:
    return "[" * levels + "1" + "]" * levels


def call(arguments: str, request_id: str = "5") -> bytes:
    text = f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{{"name":"PostboxMailSearchEmails",'
    return (text + f'"arguments":{arguments}}}}}').encode()


def message(**fields: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **fields}).encode()


# (body, HTTP status, JSON-RPC error code, id of the answer)
BODIES: dict[str, tuple[bytes, int, int, Any]] = {
    "invalid UTF-8": (b'{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"x":"\xff\xfe"}}', 400, -32700, None),
    "a lone UTF-16 surrogate's bytes": (call('{"query":"@"}').replace(b"@", b"\xed\xa0\x80"), 400, -32700, None),
    "truncated JSON": (b'{"jsonrpc":"2.0","id":5,"method":"tools/li', 400, -32700, None),
    "NaN": (call('{"query":NaN}'), 400, -32700, None),
    "-Infinity": (call('{"query":-Infinity}'), 400, -32700, None),
    "5 MiB": (call(json.dumps({"query": "x" * (5 * 1024 * 1024)})), 413, -32600, None),
    "arguments 5,000 deep": (call(f'{{"query":{deep(5000)}}}'), 200, -32602, 5),
    "arguments 100 deep": (call(f'{{"query":{deep(100)}}}', '"deep-100"'), 200, -32602, "deep-100"),
    "a message 5,000 deep": (deep(5000).encode(), 400, -32600, None),
    'jsonrpc "1.0"': (json.dumps({"jsonrpc": "1.0", "id": 5, "method": "tools/list"}).encode(), 400, -32600, 5),
    "no jsonrpc": (json.dumps({"id": 5, "method": "tools/list"}).encode(), 400, -32600, 5),
    "a batch": (json.dumps([json.loads(message(id=5, method="tools/list"))]).encode(), 400, -32600, None),
    "an empty batch": (b"[]", 400, -32600, None),
    "id null": (message(id=None, method="tools/list"), 400, -32600, None),
    "id true": (message(id=True, method="tools/list"), 400, -32600, None),
    "id 1.5": (message(id=1.5, method="tools/list"), 400, -32600, None),
    "id an object": (message(id={"a": 1}, method="tools/list"), 400, -32600, None),
    "id an array": (message(id=[5], method="tools/list"), 400, -32600, None),
    "an unknown method": (message(id=5, method="tools/explode"), 200, -32601, 5),
    "params a string": (message(id=5, method="tools/call", params="PostboxMailSearchEmails"), 200, -32602, 5),
    "params an array": (message(id=5, method="tools/list", params=[1, 2]), 200, -32602, 5),
    "arguments a string": (call('"query=x"'), 200, -32602, 5),
    "a tool name that is a number": (message(id=5, method="tools/call", params={"name": 5}), 200, -32602, 5),
    "initialize without its params' fields": (message(id=5, method="initialize", params={}), 200, -32602, 5),
    "a number": (b"42", 400, -32600, None),
    "null": (b"null", 400, -32600, None),
    "no method": (message(id=5), 400, -32600, 5),
    "a method that is a number": (message(id=5, method=5), 400, -32600, 5),
}


# What the error message names, where more than its code is owed: the field that is wrong.
SAYS = {
    "arguments a string": "params.arguments: Input should be a valid dictionary",
    "a tool name that is a number": "params.name: Input should be a valid string",
    "params a string": '"params" of tools/call must be an object',
    "arguments 5,000 deep": "nest more than 64 deep",
    "id null": '"id" must be a string or an integer, got null',
}


@pytest.fixture(scope="module")
def http_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    dump = tmp_path_factory.mktemp("edges") / "run"
    process, url, token = start_http(dump, "--http", "127.0.0.1:0")
    try:
        opened = initialize(url, token)
        assert opened.status_code == 200, opened.text
        headers = {**ACCEPT, "Authorization": f"Bearer {token}", "mcp-session-id": opened.headers["mcp-session-id"]}
        headers["mcp-protocol-version"] = HELLO["protocolVersion"]
        httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        yield url, headers
    finally:
        stop(process)


def answers(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a response: a JSON body, or an event stream's data lines."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return [json.loads(d) for d in data if d]
    return [response.json()]


@pytest.mark.parametrize("name", list(BODIES))
def test_a_broken_message_over_http_gets_json_rpcs_own_error(
    http_session: tuple[str, dict[str, str]], name: str
) -> None:
    url, headers = http_session
    body, status, code, answer_id = BODIES[name]
    response = httpx.post(url, content=body, headers=headers, timeout=60)
    assert response.status_code == status, (response.status_code, response.text[:500])
    assert response.headers["content-type"].startswith("application/json")
    (answer,) = answers(response)
    assert answer["jsonrpc"] == "2.0" and answer["id"] == answer_id, answer
    assert answer["error"]["code"] == code and "\n" not in answer["error"]["message"], answer
    assert len(answer["error"]["message"]) < 300, answer  # one short line, not a page of pydantic errors
    assert SAYS.get(name, "") in answer["error"]["message"], answer
    # The session goes on.
    listed = httpx.post(url, content=message(id="after", method="tools/list"), headers=headers, timeout=60)
    assert listed.status_code == 200 and "tools" in answers(listed)[0]["result"]


def test_ten_broken_messages_are_ten_lines_of_log(tmp_path: Path) -> None:
    """Not a traceback, not 199 lines of pydantic's errors: one line each, naming what was wrong."""
    dump = tmp_path / "run"
    process, url, token = start_http(dump, "--http", "127.0.0.1:0")
    names = [
        "invalid UTF-8",
        "arguments 5,000 deep",
        "arguments a string",
        "a tool name that is a number",
        "params a string",
        "id null",
        'jsonrpc "1.0"',
        "a batch",
        "truncated JSON",
        "no method",
    ]
    try:
        opened = initialize(url, token)
        headers = {**ACCEPT, "Authorization": f"Bearer {token}", "mcp-session-id": opened.headers["mcp-session-id"]}
        headers["mcp-protocol-version"] = HELLO["protocolVersion"]
        for name in names:
            assert httpx.post(url, content=BODIES[name][0], headers=headers, timeout=60).status_code != 500
    finally:
        _, err = stop(process)
    lines = err.strip().splitlines()
    refusals = [line for line in lines if line.startswith("toolemu: mcp: refused a message (HTTP): ")]
    assert len(refusals) == 10, err
    assert len(lines) <= 10 + 3, err  # and the server's own: how to send the token, what it recorded, how it stopped
    for noise in ("Traceback", "pydantic", "validation error", "For further information", "Exception"):
        assert noise not in err, err


# Messages over stdio: one server, its stdin kept open; each message followed by a ping, so that what the server
# answered (or not) to each is known.


class Stdio:
    def __init__(self, dump: Path):
        self.process = subprocess.Popen(
            serve_args(dump),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(),
            cwd=dump.parent,
        )
        self.pending = b""
        self.pings = 0

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def until_ping(self, timeout: float = 60) -> list[dict[str, Any]]:
        """Everything the server writes until it answers a ping sent now."""
        self.pings += 1
        mark = f"ping-{self.pings}"
        self.send(message(id=mark, method="ping"))
        assert self.process.stdout is not None
        seen: list[dict[str, Any]] = []
        fd, deadline = self.process.stdout.fileno(), time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            assert chunk, "the server stopped"
            *lines, self.pending = (self.pending + chunk).split(b"\n")
            seen += [json.loads(line) for line in lines if line.strip()]
            if any(m.get("id") == mark for m in seen):
                return [m for m in seen if m.get("id") != mark]
        raise AssertionError(f"no answer to the ping: {seen}")


@pytest.fixture(scope="module")
def stdio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stdio]:
    server = Stdio(tmp_path_factory.mktemp("edges-stdio") / "run")
    try:
        server.send(message(id="init", method="initialize", params=HELLO))
        server.until_ping()
        server.send(message(method="notifications/initialized"))
        yield server
    finally:
        assert server.process.stdin is not None
        server.process.stdin.close()
        try:
            server.process.wait(60)
        except subprocess.TimeoutExpired:
            server.process.kill()
        server.process.stdin = None  # closed above: nothing to flush
        server.process.communicate()


STDIO_BODIES = [
    "invalid UTF-8",
    "a lone UTF-16 surrogate's bytes",
    "truncated JSON",
    "NaN",
    "arguments 5,000 deep",
    'jsonrpc "1.0"',
    "a batch",
    "id null",
    "id true",
    "params a string",
    "arguments a string",
    "a tool name that is a number",
    "a number",
    "no method",
]


@pytest.mark.parametrize("name", STDIO_BODIES)
def test_a_broken_message_over_stdio_gets_json_rpcs_own_error(stdio_server: Stdio, name: str) -> None:
    body, _, code, answer_id = BODIES[name]
    stdio_server.send(body)
    (answer,) = stdio_server.until_ping()  # one answer, and no other message (a log notification) about it
    assert answer["jsonrpc"] == "2.0" and answer["id"] == answer_id, answer
    assert answer["error"]["code"] == code and len(answer["error"]["message"]) < 300, answer
    assert SAYS.get(name, "") in answer["error"]["message"], answer


def test_a_line_over_the_size_limit_over_stdio_is_refused_and_the_next_one_read(stdio_server: Stdio) -> None:
    stdio_server.send(call(json.dumps({"query": "x" * (5 * 1024 * 1024)})))
    (answer,) = stdio_server.until_ping()
    assert answer["id"] is None and answer["error"]["code"] == -32600, answer


def test_broken_messages_over_stdio_are_one_line_of_log_each(tmp_path: Path) -> None:
    server = Stdio(tmp_path / "run")
    names = ["arguments a string", "a tool name that is a number", "truncated JSON", "id null", "a batch"]
    try:
        server.send(message(id="init", method="initialize", params=HELLO))
        server.until_ping()
        for name in names:
            server.send(BODIES[name][0])
        server.until_ping()
    finally:
        assert server.process.stdin is not None
        server.process.stdin.close()
        server.process.stdin = None
        _, err = server.process.communicate(timeout=60)
    lines = err.decode().strip().splitlines()
    refusals = [line for line in lines if line.startswith("toolemu: mcp: refused a message (stdin): ")]
    assert len(refusals) == len(names) and len(lines) == len(names) + 1, lines  # and "episodes recorded: 0"
    for noise in ("Traceback", "pydantic", "validation error", "For further information"):
        assert noise not in err.decode(), err
