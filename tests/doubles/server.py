"""The loopback HTTP side shared by both doubles: fault injection, the request log, counters."""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from doubles.behaviour import REFUSALS, Reply, respond
from doubles.config import DoubleConfig
from doubles.conversation import BadRequest, Conversation


@dataclass
class Exchange:
    """One request and what the double answered."""

    index: int
    path: str
    request: dict[str, Any]
    status: int
    response: Any  # the body answered: an object, or a Gemini error list
    kind: str  # the reply's kind, or rate_limited / server_error / bad_request / internal_error
    repair: str = ""  # structured | react | "" (see conversation.py)
    wrap: str = ""
    finish: str = ""  # stop | stop_sequence | length | tool_calls, before the API's own naming
    attempt: int = 1  # how many times this exact body has arrived, this one included
    early: bool = False  # a retry that came before the Retry-After it was given had passed
    retry_after_s: float | None = None
    received_at: float = 0.0
    long_ids: list[str] = field(default_factory=list)
    after_refusal: bool = False  # a repair that asks again after one of this double's refusals (the model's doing)


class DoubleServer:
    """A chat API on 127.0.0.1 (a free port) answering like a strong model. Subclasses speak one API."""

    api = ""
    chat_path = ""
    call_id_prefix = ""

    def __init__(self, config: DoubleConfig | None = None, **knobs: Any):
        self.config = (config or DoubleConfig()).with_(**knobs)
        self.log: list[Exchange] = []
        self.counters: Counter[str] = Counter()
        self.long_strings: dict[str, str] = {}  # marker id -> the whole string, as the double sent it
        self.internal_errors: list[str] = []  # tracebacks: a bug in the double, never a model behaviour
        self._lock = threading.Lock()
        self._attempts: Counter[str] = Counter()
        self._retry_deadline: dict[str, float] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real APIs
            disable_nagle_algorithm = True  # headers and body go out as separate writes: no 40 ms ACK stall

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, headers, body = outer.handle(self.path, raw)
                self._send(status, headers, body)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {}, {"object": "list", "data": [{"id": "double", "object": "model"}]})
                else:
                    self._send(404, {}, {"error": {"message": f"no route {self.path}"}})

            def _send(self, status: int, headers: dict[str, str], body: Any) -> None:
                data = json.dumps(body, ensure_ascii=False).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name=f"{self.api}-double", daemon=True
        )  # a short poll interval: stop() returns at once

    # --- lifecycle ---------------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        raise NotImplementedError

    def start(self) -> DoubleServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> DoubleServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what subclasses provide ---------------------------------------------------------------------------
    def read(self, request: dict[str, Any]) -> Conversation:
        raise NotImplementedError

    def render(self, request: dict[str, Any], conv: Conversation, reply: Reply, reply_id: str) -> dict[str, Any]:
        raise NotImplementedError

    def error_body(self, status: int, message: str, param: str | None = None, code: str | None = None) -> Any:
        raise NotImplementedError

    # --- one request ---------------------------------------------------------------------------------------
    def handle(self, path: str, raw: bytes) -> tuple[int, dict[str, str], Any]:
        received = time.monotonic()
        try:
            request = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return self._record(path, {}, 400, {}, self.error_body(400, "body is not JSON"), "bad_request", received)
        if path.split("?")[0].rstrip("/") != self.chat_path:
            return self._record(
                path, request, 404, {}, self.error_body(404, f"no route {path}"), "bad_request", received
            )
        if request.get("stream"):
            body = self.error_body(400, "the double does not stream; call it without stream=True")
            return self._record(path, request, 400, {}, body, "bad_request", received)
        key = hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()
        with self._lock:
            self._attempts[key] += 1
            attempt = self._attempts[key]
            early = received < self._retry_deadline.get(key, 0.0)
        try:
            fault = self._fault(key, attempt)
            if fault is not None:
                status, headers, body, kind = fault
                wait = self.config.retry_after_s if status == 429 else None
                if wait is not None:
                    with self._lock:
                        self._retry_deadline[key] = received + wait
                return self._record(path, request, status, headers, body, kind, received, attempt, early, wait)
            try:
                conv = self.read(request)
            except BadRequest as exc:  # what the real API rejects: the caller's bug, answered as the API does
                body = self.error_body(400, str(exc), exc.param, exc.code)
                return self._record(path, request, 400, {}, body, "bad_request", received, attempt, early)
            rng = random.Random(f"{self.config.seed}|{key}")
            reply = respond(conv, self.config, rng, self.call_id_prefix)
            body = self.render(request, conv, reply, key[:24])
        except Exception:  # noqa: BLE001 - a bug in the double: answered, kept, and visible to tests
            trace = traceback.format_exc()
            with self._lock:
                self.internal_errors.append(trace)
            body = self.error_body(500, "the double failed: " + trace.strip().splitlines()[-1])
            return self._record(path, request, 500, {}, body, "internal_error", received, attempt, early)
        with self._lock:
            self.long_strings.update(reply.long_strings)
        after_refusal = bool(conv.repair) and conv.last_assistant.strip() in REFUSALS
        return self._record(
            path, request, 200, {}, body, reply.kind, received, attempt, early, None, conv.repair, reply, after_refusal
        )

    def _fault(self, key: str, attempt: int) -> tuple[int, dict[str, str], dict[str, Any], str] | None:
        """A 429 or 5xx, drawn per (request, attempt): a retry of the same body draws again."""
        cfg = self.config
        rng = random.Random(f"{cfg.seed}|fault|{key}|{attempt}")
        if rng.random() < cfg.rate_limit_rate:
            headers = {
                "Retry-After": str(max(1, math.ceil(cfg.retry_after_s))),
                "retry-after-ms": str(int(cfg.retry_after_s * 1000)),
            }
            return 429, headers, self.error_body(429, "Rate limit reached; please retry later."), "rate_limited"
        if cfg.server_error_codes and rng.random() < cfg.server_error_rate:
            status = rng.choice(cfg.server_error_codes)
            return (
                status,
                {},
                self.error_body(status, "The server had an error processing your request."),
                "server_error",
            )
        return None

    def _record(
        self,
        path: str,
        request: dict[str, Any],
        status: int,
        headers: dict[str, str],
        body: Any,  # an API's error body may be a list (Gemini's OpenAI-compatible endpoint)
        kind: str,
        received: float,
        attempt: int = 1,
        early: bool = False,
        retry_after: float | None = None,
        repair: str = "",
        reply: Reply | None = None,
        after_refusal: bool = False,
    ) -> tuple[int, dict[str, str], Any]:
        with self._lock:
            self.log.append(
                Exchange(
                    len(self.log),
                    path,
                    request,
                    status,
                    body,
                    kind,
                    repair,
                    reply.wrap if reply else "",
                    reply.finish if reply else "",
                    attempt,
                    early,
                    retry_after,
                    received,
                    [i for i, _ in reply.long_strings] if reply else [],
                    after_refusal,
                )
            )
            self.counters.update(["requests", f"status:{status}", f"kind:{kind}"])
            if repair:
                self.counters[f"repair:{repair}"] += 1
            if reply is not None and reply.wrap:
                self.counters[f"wrap:{reply.wrap}"] += 1
            if early:
                self.counters["early_retry"] += 1
        return status, headers, body

    # --- for tests and benchmarks --------------------------------------------------------------------------
    def exchanges(self, kind: str | None = None, status: int | None = None) -> list[Exchange]:
        with self._lock:
            return [e for e in self.log if (kind is None or e.kind == kind) and (status is None or e.status == status)]
