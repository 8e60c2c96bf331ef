"""A loopback HTTP proxy that answers some requests with a fault and forwards the rest to a backend.

Faults, as a flaky network or gateway produces them:

    rate_limit   429 with Retry-After (seconds) and retry-after-ms
    server_error 500
    unavailable  503
    hang         no answer for longer than the client waits, then the connection closes
    drop         the connection closes before any answer
    truncated    the backend's 200, cut in half (Content-Length matches the cut body: the JSON is broken)
    invalid      a 200 whose JSON lacks what the API promises (no choices)

Requests are told apart by their body: the same body again is a retry of it (or the same request made by another
trial: a body's count of unharmed answers is how many requests shared it). A fault is drawn per (body, attempt)
from a seed, or taken from a fixed `schedule` (one kind or "ok" per request, in order). `max_faults` caps the faults
one body gets, so a client that keeps to its attempt bound always gets through.

    with FaultProxy(backend.base_url, rate=0.2, seed=1) as proxy:
        ... base_url=proxy.base_url ...
        proxy.injected, proxy.attempts, proxy.successes, proxy.early_retries()
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import socket
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("rate_limit", "server_error", "unavailable", "hang", "drop", "truncated", "invalid")
_FORWARDED_HEADERS = ("authorization", "content-type", "x-api-key", "anthropic-version")


@dataclass
class Attempt:
    key: str
    number: int  # 1 for the first time this body arrived
    kind: str  # a fault kind, or "ok" (forwarded as it came back)
    at: float


@dataclass
class FaultProxy:
    backend: str  # the backend's base URL, e.g. http://127.0.0.1:1234/v1
    rate: float = 0.2
    seed: int = 0
    kinds: tuple[str, ...] = FAULT_KINDS
    schedule: list[str] | None = None
    max_faults: int | None = None  # per body
    retry_after_s: int = 1
    retry_after_ms: int | None = 300  # None: only the Retry-After header (whole seconds)
    hang_s: float = 2.0
    log: list[Attempt] = field(default_factory=list)
    injected: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._attempts: Counter[str] = Counter()
        self._faults: Counter[str] = Counter()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items() if k.lower() in _FORWARDED_HEADERS}
                outer._handle(self, body, headers)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    # --- lifecycle -------------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        path = self.backend.split("//", 1)[1].partition("/")[2]
        return f"http://127.0.0.1:{self._server.server_address[1]}/{path}".rstrip("/")

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # --- figures ---------------------------------------------------------------------------------------------
    @property
    def attempts(self) -> Counter[str]:
        """Requests per body."""
        with self._lock:
            return Counter(a.key for a in self.log)

    @property
    def successes(self) -> Counter[str]:
        """Requests per body that were forwarded unharmed: how many requests shared the body."""
        with self._lock:
            return Counter(a.key for a in self.log if a.kind == "ok")

    @property
    def retry_after_wait(self) -> float:
        return self.retry_after_ms / 1000 if self.retry_after_ms is not None else self.retry_after_s

    def early_retries(self) -> int:
        """Arrivals of a body before the Retry-After its 429 asked for had passed, beyond what the other requests
        sharing that body account for. Exact for bodies sent once; where several requests share a body (trials of
        one case), another request's retries can look early, so a run with trials checks the client's waits."""
        successes, early = self.successes, 0
        with self._lock:
            by_key: dict[str, list[Attempt]] = {}
            for a in self.log:
                by_key.setdefault(a.key, []).append(a)
        for key, attempts in by_key.items():
            for limited in (a for a in attempts if a.kind == "rate_limit"):
                window = [a for a in attempts if limited.at < a.at < limited.at + self.retry_after_wait]
                early += max(0, len(window) - (successes[key] - 1))
        return early

    # --- one request -----------------------------------------------------------------------------------------
    def _choose(self, key: str) -> tuple[int, str]:
        with self._lock:
            self._attempts[key] += 1
            number = self._attempts[key]
            if self.schedule is not None:
                kind = self.schedule.pop(0) if self.schedule else "ok"
            else:
                rng = random.Random(f"{self.seed}|{key}|{number}")
                capped = self.max_faults is not None and self._faults[key] >= self.max_faults
                kind = rng.choice(self.kinds) if rng.random() < self.rate and not capped else "ok"
            if kind != "ok":
                self._faults[key] += 1
                self.injected[kind] += 1
            self.log.append(Attempt(key, number, kind, time.monotonic()))
            return number, kind

    def _handle(self, handler: BaseHTTPRequestHandler, body: bytes, headers: dict[str, str]) -> None:
        key = hashlib.sha256(handler.path.encode() + b"\0" + body).hexdigest()[:32]
        _, kind = self._choose(key)
        if kind == "drop":
            _close(handler)
            return
        if kind == "hang":
            time.sleep(self.hang_s)
            _close(handler)
            return
        if kind in ("rate_limit", "server_error", "unavailable"):
            status = {"rate_limit": 429, "server_error": 500, "unavailable": 503}[kind]
            extra = {"Retry-After": str(self.retry_after_s)} if kind == "rate_limit" else {}
            if kind == "rate_limit" and self.retry_after_ms is not None:
                extra["retry-after-ms"] = str(self.retry_after_ms)
            error = {"error": {"message": f"injected {kind}", "type": kind, "param": None, "code": kind}}
            _send(handler, status, json.dumps(error).encode(), extra)
            return
        status, data = self._forward(handler.path, body, headers)
        if kind == "truncated" and status == 200:
            data = data[: len(data) // 2]
        elif kind == "invalid" and status == 200:
            reply = json.loads(data)
            data = json.dumps({**reply, "choices": [] if random.Random(key).random() < 0.5 else None}).encode()
        _send(handler, status, data, {})

    def _forward(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        origin = self.backend.split("//", 1)[1].partition("/")[0]
        request = urllib.request.Request(f"http://{origin}{path}", data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=60) as resp:  # noqa: S310 - loopback only
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()


class _Server(ThreadingHTTPServer):
    request_queue_size = 64  # eight workers and their retries connect at once; the default backlog is 5


def _send(handler: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str]) -> None:
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
    except OSError:  # the client gave up first (it timed out)
        pass


def _close(handler: BaseHTTPRequestHandler) -> None:
    handler.close_connection = True
    with contextlib.suppress(OSError):  # the client may have gone already
        handler.connection.shutdown(socket.SHUT_RDWR)
