"""The MCP server (the official `mcp` SDK's low-level server) in front of episodes, over stdio or streamable HTTP.

Each MCP session gets its episode from an `EpisodeSource` at its first tool call, and the source hears when the
session closes: `toolemu mcp serve` opens one episode per session (`toolemu.mcp.serve`), an external agent's
command shares its (case, trial)'s one episode across whatever sessions it opens (`toolemu.mcp.command`).

The SDK's own input validation is off: a call that breaks the spec goes through the episode pipeline like any other,
and the agent gets the same InvalidRequestException our agent would see (as an MCP tool error, `isError`). What
breaks JSON-RPC or MCP itself never reaches the SDK: `toolemu.mcp.wire` answers it with JSON-RPC's error (a parse
error, an invalid request, a method not found, invalid params) and one line in the log, over stdio and HTTP alike.
The SDK's own log lines are cut to one line each.

Stopping (`stop`, then `close_sessions`): no call starts once the server is stopping (a call that comes is told so,
and adds no step); the calls in flight finish and their results are sent (unless `force` is set: a second Ctrl-C or
SIGTERM); then every session is closed, each episode cut where its client left it (`EpisodeSession.cut`: the steps
whose results the client was sent, never one it did not get) and told to the source.

Over HTTP, the endpoint is `http://HOST:PORT/mcp`; a request without `Authorization: Bearer <token>` is refused
(401) before the SDK sees it, and on a loopback address the Host header must name loopback (DNS rebinding).
"""

from __future__ import annotations

import contextlib
import hmac
import importlib.util
import ipaddress
import json
import logging
import os
import socket
import threading
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Protocol

import anyio
import uvicorn
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp.shared.message import SessionMessage
from starlette.requests import HTTPConnection

from toolemu.mcp.episodes import FINAL_TOOL, CallResult, ClientInfo, EpisodeSession
from toolemu.mcp.scrub import scrub_message
from toolemu.mcp.tools import prompt_result
from toolemu.mcp.wire import INVALID_PARAMS, MAX_MESSAGE_BYTES, METHOD_NOT_FOUND, Refusal, screen, too_big
from toolemu.secrets import clip
from toolemu.version import __version__

ENDPOINT = "/mcp"
SERVER_NAME = "toolemu"
UNKNOWN_CLIENT = "unknown"
DELIVERY_WAIT_S = 5.0  # once the calls in flight are done, how long a stop waits for their answers to go out
CUT_WAIT_S = 1.0  # the same, for the answers saying a call was cut (a forced stop)
STOPPING_TEXT = "The server is stopping: no new calls. This episode is recorded as it stands."
# Once nothing is left to answer, how long a stop still serves what a session sends next before closing it: the
# `mcp` SDK's client lists the tools right after a call's answer (to check the result against the tool's schema),
# and a session closed under that request failed its client's whole session, not just the request.
QUIET_S = 0.25
CUT_TEXT = (
    "The server stopped before this call's result: the call is not part of the episode, which is recorded without it."
)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("toolemu")


class NotRecorded(Exception):
    """An episode could not be written to the run folder (said in the log where it happened): the server stops, and
    the command fails (exit 2)."""


class _ClosedStreamNoise(logging.Filter):
    """The SDK logs an error when a session's stream is closed under it as the server shuts down: the normal end."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError)


class _OurValidation(logging.Filter):
    """The SDK warns of a call to a tool it did not list: the episode validates every call (and says so)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Tool '%s' not listed")


class _OneLine(logging.Handler):
    """The SDK's and the web server's warnings and errors, each one line of our log (its first line, and the type
    and first line of its exception): never a traceback or a page of validation errors."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING:
            return
        try:
            text = record.getMessage().strip()
        except Exception:  # noqa: BLE001 - a record whose arguments do not fit its message
            text = str(record.msg)
        line = text.splitlines()[0] if text else record.name
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            reason = str(exc).strip().splitlines()
            line += f" ({type(exc).__name__}{': ' + reason[0] if reason else ''})"
        log.log(record.levelno, "%s: %s", record.name, clip(line, 300))


logging.getLogger("mcp.server.streamable_http").addFilter(_ClosedStreamNoise())
logging.getLogger("mcp.server.lowlevel.server").addFilter(_OurValidation())
for _name in ("mcp", "uvicorn", "sse_starlette"):
    _logger = logging.getLogger(_name)
    _logger.handlers[:] = [_OneLine()]
    _logger.propagate = False


class EpisodeSource(Protocol):
    """Where a server's sessions get their episodes, and what every session is shown."""

    tools: list[types.Tool]
    prompts: dict[str, tuple[types.Prompt, str]]

    def open(self, client: ClientInfo) -> EpisodeSession:
        """The episode of a session that made its first call; `client`: how the client introduced itself."""
        ...

    def closed(self, session: EpisodeSession) -> None:
        """A session whose episode `session` is has closed (its client closed it). A source may also have
        `server_closed(session)`, for a session the server closed as it stopped (else `closed` hears of those)."""
        ...


class _Slot:
    """One MCP session's episode, opened at its first call, and the answers to its calls not yet sent."""

    def __init__(self, source: EpisodeSource):
        self.source = source
        self.lock = threading.Lock()
        self.session: EpisodeSession | None = None
        self.due: dict[Any, int | None] = {}  # answers to go out: request id -> the steps once its step is in

    def episode(self, client: ClientInfo) -> EpisodeSession:
        with self.lock:
            if self.session is None:
                self.session = self.source.open(client)
            return self.session

    def sent(self, message: SessionMessage) -> None:
        """`message` went out: if it answers a call, the client has that call's step."""
        root = message.message.root
        if isinstance(root, types.JSONRPCResponse | types.JSONRPCError):
            steps = self.due.pop(root.id, None)
            if steps is not None and self.session is not None:
                self.session.received(steps)


_SLOT: ContextVar[_Slot] = ContextVar("toolemu_mcp_slot")


def _methods(union: type[Any]) -> frozenset[str]:
    """The method names of one of the SDK's message unions (ClientRequest, ClientNotification)."""
    members = typing.get_args(union.model_fields["root"].annotation)
    return frozenset(m for member in members for m in typing.get_args(member.model_fields["method"].annotation))


REQUEST_METHODS = _methods(types.ClientRequest)
NOTIFICATION_METHODS = _methods(types.ClientNotification)


def _unknown_method(message: SessionMessage | Exception) -> str | None:
    """The method of a request or notification this protocol version does not have, else None."""
    if not isinstance(message, SessionMessage):
        return None
    root = message.message.root
    if isinstance(root, types.JSONRPCRequest) and root.method not in REQUEST_METHODS:
        return root.method
    if isinstance(root, types.JSONRPCNotification) and root.method not in NOTIFICATION_METHODS:
        return root.method
    return None


async def _screen(source: Any, sink: Any, write_stream: Any) -> None:
    """Pass the client's messages on to the session, answering a request of an unknown method with "Method not
    found" and dropping a notification of one (the transports screen them first: this is for any other)."""
    async with source, sink:
        try:
            async for message in source:
                method = _unknown_method(message)
                if method is None:
                    await sink.send(message)
                    continue
                root = message.message.root
                if isinstance(root, types.JSONRPCRequest):
                    error = types.ErrorData(code=types.METHOD_NOT_FOUND, message=f"Method not found: {method}")
                    reply = types.JSONRPCError(jsonrpc="2.0", id=root.id, error=error)
                    await write_stream.send(SessionMessage(types.JSONRPCMessage(reply)))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            return  # the session or the transport closed: the session ends as it would have


async def _deliver(source: Any, write_stream: Any, slot: _Slot) -> None:
    """Pass the session's messages on to the transport, noting each call whose answer went out."""
    async with source:
        try:
            async for message in source:
                try:
                    await write_stream.send(scrub_message(message))  # no secret reaches the client
                finally:
                    slot.sent(message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            return


class EpisodeServer(Server[Any, Any]):
    """The low-level server, with each session's run wrapped: its episode opens at its first call and the source is
    told when the session ends (the request handlers run in tasks of `run`, so they see its slot)."""

    def __init__(self, source: EpisodeSource):
        super().__init__(SERVER_NAME, version=__version__)
        self.source = source
        self.stopping = False  # no call starts (see `stop`)
        self.running = 0  # calls in the episode pipeline
        self._count = threading.Lock()
        self._live: dict[anyio.CancelScope, _Slot] = {}  # the sessions under way
        self._waiting: set[anyio.CancelScope] = set()  # calls waiting for the pipeline
        self._register()

    @property
    def answers_due(self) -> int:
        """Answers to calls that are yet to go out."""
        return sum(len(slot.due) for slot in list(self._live.values()))

    async def run(self, read_stream: Any, write_stream: Any, *args: Any, **kwargs: Any) -> None:
        slot = _Slot(self.source)
        token = _SLOT.set(slot)
        scope = anyio.CancelScope()
        self._live[scope] = slot
        try:
            with scope:
                await self._run(slot, read_stream, write_stream, *args, **kwargs)
        finally:
            _SLOT.reset(token)
            try:
                if slot.session is not None:
                    end = self.source.closed
                    if scope.cancel_called:  # the server closed it (`close_sessions`), not its client
                        end = getattr(self.source, "server_closed", end)
                    with anyio.CancelScope(shield=True):  # the episode is recorded even as the server shuts down
                        await anyio.to_thread.run_sync(end, slot.session)
            finally:
                del self._live[scope]

    async def _run(self, slot: _Slot, read_stream: Any, write_stream: Any, *args: Any, **kwargs: Any) -> None:
        """The SDK's run of one session, between the screening of what comes in and the noting of what goes out."""
        sink, screened = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        out, delivering = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as delivery:
            delivery.start_soon(_deliver, delivering, write_stream, slot)
            async with out, anyio.create_task_group() as screening:
                screening.start_soon(_screen, read_stream, sink, write_stream)
                await super().run(screened, out, *args, **kwargs)
                screening.cancel_scope.cancel()

    def stop(self) -> None:
        """No call starts from now on."""
        with self._count:
            self.stopping = True

    async def drain(self, force: anyio.Event | None = None, answers: Callable[[], int] | None = None) -> None:
        """Wait for the calls in flight to finish and their answers to go out (`answers`: more of them, a
        transport's), unless `force` is set meanwhile."""

        def done() -> bool:
            return force is not None and force.is_set()

        while self.running and not done():
            await anyio.sleep(0.02)
        if done():  # the calls still in flight are cut: each is answered so, and its step is not the client's
            for waiting in list(self._waiting):
                waiting.cancel()
        with anyio.move_on_after(CUT_WAIT_S if done() else DELIVERY_WAIT_S):
            quiet_since: float | None = None
            while True:
                if self._waiting or self.answers_due or (answers is not None and answers()):
                    quiet_since = None
                elif done():
                    break
                elif quiet_since is None:
                    quiet_since = anyio.current_time()
                elif anyio.current_time() - quiet_since >= QUIET_S:
                    break
                await anyio.sleep(0.02)

    async def close_sessions(self) -> None:
        """Close every session: each episode is cut where its client left it and told to the source."""
        for scope in list(self._live):
            scope.cancel()
        while self._live:
            await anyio.sleep(0.01)

    def _client(self) -> ClientInfo:
        """The clientInfo of this session's `initialize`: its name and version, as the client gave them."""
        params = self.request_context.session.client_params
        if params is None:
            return ClientInfo(UNKNOWN_CLIENT)
        info = params.clientInfo
        return ClientInfo(info.name or UNKNOWN_CLIENT, info.version or "", getattr(info, "title", None) or "")

    def _register(self) -> None:
        source = self.source

        @self.list_tools()
        async def list_tools() -> list[types.Tool]:
            return source.tools

        @self.call_tool(validate_input=False)  # the episode validates, with the messages our agent gets
        async def call_tool(name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
            slot, client, request_id = _SLOT.get(), self._client(), self.request_context.request_id
            call_id = f"mcp-{request_id}"

            def play() -> CallResult:
                with self._count:
                    if self.stopping:
                        return CallResult(STOPPING_TEXT, is_error=True)
                    self.running += 1
                try:
                    session = slot.episode(client)
                    if name == FINAL_TOOL and any(t.name == FINAL_TOOL for t in source.tools):
                        answer = (arguments or {}).get("answer")
                        return session.answer(answer if isinstance(answer, str) else json.dumps(answer))
                    return session.call(name, arguments or {}, call_id)
                except NotRecorded as exc:  # no call starts after it: the server is stopping
                    self.stop()
                    return CallResult(str(exc), is_error=True)
                except Exception as exc:  # noqa: BLE001 - the client is told; the server goes on or stops
                    log.error(
                        "mcp: a call to %s failed: %s: %s", clip(name, 80), type(exc).__name__, clip(str(exc), 300)
                    )
                    return CallResult(clip(f"The call failed: {type(exc).__name__}: {exc}", 500), is_error=True)
                finally:
                    with self._count:
                        self.running -= 1

            # A forced stop cuts the call: its thread is left to finish, and the step it makes is not the client's.
            with anyio.CancelScope() as waiting:
                self._waiting.add(waiting)
                try:
                    result = await anyio.to_thread.run_sync(play, abandon_on_cancel=True)
                finally:
                    self._waiting.discard(waiting)
            if waiting.cancelled_caught:
                result = CallResult(CUT_TEXT, is_error=True)
            slot.due[request_id] = result.steps  # to go out; with a step of the client's once it does
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=result.text)], isError=result.is_error
            )

        @self.list_prompts()
        async def list_prompts() -> list[types.Prompt]:
            return [prompt for prompt, _ in source.prompts.values()]

        @self.get_prompt()
        async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
            if name not in source.prompts:
                raise ValueError(f"unknown prompt {name!r}; prompts: {', '.join(source.prompts)}")
            prompt, text = source.prompts[name]
            return prompt_result(prompt, text)


def _refused(refusal: Refusal, where: str) -> None:
    if not refusal.quiet:
        log.warning("mcp: %s a message (%s): %s", "refused" if refusal.answer else "dropped", where, refusal.message)


# stdio: our own transport rather than the SDK's, whose reads of stdin block in a worker thread that no stop can
# cancel (a client that keeps stdin open kept the server from stopping), and which passed on what it could not read.


def _read_lines(fd: int, lines: Callable[[bytes | None], None]) -> None:
    """Read `fd` to its end, one call of `lines` per line (None at the end); a line past the size limit is given
    cut, to be refused. Runs in a daemon thread: a read that never returns keeps nothing from stopping."""
    pending, skipping = b"", False
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            if pending.strip() and not skipping:
                lines(pending)
            lines(None)
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if not skipping:
                lines(line)
            skipping = False
        if len(pending) > MAX_MESSAGE_BYTES:
            if not skipping:
                lines(pending)  # over the limit: refused as too big
            pending, skipping = b"", True


@contextlib.asynccontextmanager
async def stdio_streams(stdin: int = 0, stdout: int = 1) -> AsyncIterator[tuple[Any, Any]]:
    """The client's messages from `stdin` and ours to `stdout`, one JSON-RPC message a line, each screened."""
    to_session, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, outgoing = anyio.create_memory_object_stream[SessionMessage | bytes](0)  # bytes: a refusal
    raw_in, raw_lines = anyio.create_memory_object_stream[bytes | None](16)
    token = anyio.lowlevel.current_token()

    def hand_over(line: bytes | None) -> None:
        try:
            anyio.from_thread.run(raw_in.send, line, token=token)
        except Exception:  # noqa: BLE001 - the server has stopped listening
            raise SystemExit from None

    def pump() -> None:
        with contextlib.suppress(SystemExit):
            _read_lines(stdin, hand_over)

    async def read() -> None:
        async with to_session, raw_lines:
            async for line in raw_lines:
                if line is None:
                    return
                if not line.strip():
                    continue
                message = too_big(len(line)) if len(line) > MAX_MESSAGE_BYTES else screen(line)
                if isinstance(message, Refusal):
                    _refused(message, "stdin")
                    if message.answer:
                        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                            await to_client.send(json.dumps(message.error()).encode() + b"\n")
                    continue
                await to_session.send(SessionMessage(message))

    written = anyio.Event()

    async def write() -> None:
        try:
            async with outgoing:
                async for message in outgoing:
                    data = (  # a refusal comes as its bytes: its id may be null, which no SDK message can have
                        message
                        if isinstance(message, bytes)
                        else (message.message.model_dump_json(by_alias=True, exclude_none=True) + "\n").encode()
                    )
                    await anyio.to_thread.run_sync(_write_all, stdout, data, abandon_on_cancel=True)
        finally:
            written.set()

    threading.Thread(target=pump, name="toolemu-mcp-stdin", daemon=True).start()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield from_client, to_client
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(CUT_WAIT_S):
                await to_client.aclose()  # what is already on its way is written first
                await written.wait()
            tasks.cancel_scope.cancel()


def _write_all(fd: int, data: bytes) -> None:
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        pass  # the client is gone: nothing to tell it


async def serve_stdio(server: EpisodeServer) -> None:
    """One session over this process's stdin and stdout, until the client closes it."""
    async with stdio_streams() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def is_loopback(host: str) -> bool:
    """A loopback address, given as one (127.0.0.0/8, ::1, ::ffff:127.x.y.z) or as `localhost`. Any other name is
    not: what it resolves to can change under the server (DNS rebinding)."""
    host = host.strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or (mapped is not None and mapped.is_loopback)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free one); an address that cannot be bound raises OSError."""
    host = host.strip("[]")
    if host.lower() == "localhost":
        host = "127.0.0.1"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(False)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{ENDPOINT}"


class HttpFront:
    """What stands before the SDK over HTTP: the endpoint, the token, each message screened (`toolemu.mcp.wire`),
    and the requests open, so that a stop can wait for the answers under way and then end the streams left open
    (a client's event stream never ends by itself) rather than leave them to the web server's forced shutdown."""

    def __init__(self, app: ASGIApp, token: str, security: TransportSecuritySettings | None = None):
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.security = TransportSecurityMiddleware(security)
        self.stopping = False  # no new session
        # The sessions are being closed: a request of one is answered as the protocol answers a request of a session
        # that has ended (404, which the SDK's client turns into an error of that request alone).
        self.closing = False
        self.posts = 0  # requests open (the answer to a call goes out on the request's own stream)
        self._open: set[anyio.CancelScope] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"].rstrip("/") != ENDPOINT:
            await _respond(send, 404, {"error": "not found: the MCP endpoint is /mcp"})
            return
        given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        if not hmac.compare_digest(given, self.expected):
            await _respond(
                send, 401, {"error": "unauthorized: send the server's token as Authorization: Bearer <token>"}
            )
            return
        post = scope["method"] == "POST"
        refused = await self.security.validate_request(HTTPConnection(scope), is_post=post)  # Host, Origin
        if refused is not None:
            await refused(scope, receive, send)
            return
        if post:
            body = await _body(receive)
            message = too_big(MAX_MESSAGE_BYTES + 1) if body is None else screen(body)
            if isinstance(message, Refusal):
                _refused(message, "HTTP")
                await _respond(send, _http_status(message), message.error() if message.answer else None)
                return
            in_session = any(k == b"mcp-session-id" for k, _ in scope["headers"])
            if (self.stopping and not in_session) or self.closing:
                request_id = getattr(message.root, "id", None)
                error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32000, "message": STOPPING_TEXT}}
                await _respond(send, 404 if in_session else 503, error)
                return
            receive = _replayed(body or b"", receive)
            self.posts += 1
        started, complete = False, False

        async def tracked(event: dict[str, Any]) -> None:
            nonlocal started, complete
            started = started or event["type"] == "http.response.start"
            complete = complete or (event["type"] == "http.response.body" and not event.get("more_body", False))
            await send(event)

        try:
            with anyio.CancelScope() as cancel:
                self._open.add(cancel)
                await self.app(scope, receive, tracked)
        finally:
            self._open.discard(cancel)
            self.posts -= post
        if cancel.cancelled_caught and not complete:  # ended by the stop: end the response as HTTP wants it ended
            if started:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            else:
                await _respond(
                    send, 503, {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": STOPPING_TEXT}}
                )

    def close(self) -> None:
        """End every request still open (the event streams clients keep open)."""
        for cancel in list(self._open):
            cancel.cancel()


def _http_status(refusal: Refusal) -> int:
    """A request answered with an error is a 200 like any answer; what is no acceptable message at all is a 400 (413
    when too big), as the streamable HTTP transport says; a notification dropped quietly is a 202 as if taken."""
    if refusal.too_big:
        return 413
    if refusal.answer and refusal.code in (METHOD_NOT_FOUND, INVALID_PARAMS):
        return 200
    return 202 if refusal.quiet and not refusal.answer else 400


async def _body(receive: Receive) -> bytes | None:
    """The request's body, or None once it passes the size limit."""
    chunks, size = [], 0
    while True:
        event = await receive()
        if event["type"] != "http.request":
            return b"".join(chunks)
        chunk = event.get("body", b"")
        size += len(chunk)
        if size > MAX_MESSAGE_BYTES:
            return None
        chunks.append(chunk)
        if not event.get("more_body", False):
            return b"".join(chunks)


def _replayed(body: bytes, receive: Receive) -> Receive:
    """`receive` with the body already read given again first."""
    given = False

    async def again() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


async def _respond(send: Send, status: int, payload: dict[str, Any] | None) -> None:
    body = json.dumps(payload).encode() if payload is not None else b""
    headers = [(b"content-length", str(len(body)).encode())]
    if payload is not None:
        headers.append((b"content-type", b"application/json"))
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _Uvicorn(uvicorn.Server):
    """uvicorn without its signal handlers: the caller decides what a signal does (and a worker thread has none)."""

    def capture_signals(self) -> Any:
        return contextlib.nullcontext()


def security_for(host: str) -> TransportSecuritySettings:
    """On loopback, the Host and Origin headers must name loopback (no DNS rebinding): the usual names and the address
    bound; elsewhere (`--allow-remote`) the token alone guards."""
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    bound = host.strip("[]")
    hosts = list(dict.fromkeys(["127.0.0.1", "localhost", "[::1]", f"[{bound}]" if ":" in bound else bound]))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *(f"{h}:*" for h in hosts)],
        allowed_origins=[f"http://{h}:*" for h in hosts],
    )


def loop_options() -> dict[str, Any]:
    """anyio's backend options for the server's event loop: uvloop where it is installed (not on Windows). It took
    about a tenth off the server's CPU per session (docs/PERFORMANCE.md)."""
    return {"use_uvloop": True} if importlib.util.find_spec("uvloop") is not None else {}


async def serve_http(
    server: EpisodeServer,
    sock: socket.socket,
    token: str,
    stop: anyio.Event,
    started: Callable[[], None] | None = None,
    force: anyio.Event | None = None,
) -> None:
    """Streamable HTTP on `sock` until `stop` is set; then the server stops (see the module's docstring: `force`
    cuts the calls in flight) and every session closes, its episode told to the source."""
    host = sock.getsockname()[0]
    # Each reply is one JSON body, not an SSE stream: the server sends nothing else while a call runs (no progress,
    # logs or requests of its own), and a stream per POST was about a fifth of the server's CPU per session.
    manager = StreamableHTTPSessionManager(
        app=server, security_settings=security_for(host), session_idle_timeout=None, json_response=True
    )
    front = HttpFront(manager.handle_request, token, security_for(host))
    config = uvicorn.Config(
        front,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    web = _Uvicorn(config)
    async with manager.run(), anyio.create_task_group() as tasks:
        tasks.start_soon(web.serve, [sock])
        while not web.started:
            await anyio.sleep(0.005)
        if started is not None:
            started()
        await stop.wait()
        front.stopping = True
        server.stop()
        await server.drain(force, lambda: front.posts)
        front.closing = True
        await server.close_sessions()
        front.close()
        web.should_exit = True
