"""The MCP server (the official `mcp` SDK's low-level server) in front of episodes, over stdio or streamable HTTP.

Each MCP session gets its episode from an `EpisodeSource` at its first tool call, and the source hears when the
session closes: `toolemu mcp serve` opens one episode per session (`toolemu.mcp.serve`), an external agent's
command shares its (case, trial)'s one episode across whatever sessions it opens (`toolemu.mcp.command`).

The SDK's own input validation is off: a call that breaks the spec goes through the episode pipeline like any other,
and the agent gets the same InvalidRequestException our agent would see (as an MCP tool error, `isError`).

A request whose method this protocol version does not have (`server/discover`, which clients on the `mcp` 2.x SDK
send first to learn the server's era) is answered with JSON-RPC's "Method not found" (-32601), the answer those
clients take as "use the initialize handshake"; a notification we do not know is dropped, as JSON-RPC says. Neither
is logged: the SDK would warn with every validation error of its request union.

Every message to the client goes out scrubbed of secrets (`scrub_message`): tool results, prompts, tool lists and
errors, over either transport, as the records keep them.

Over HTTP, the endpoint is `http://HOST:PORT/mcp`; a request without `Authorization: Bearer <token>` is refused
(401) before the SDK sees it, and on a loopback address the Host header must name loopback (DNS rebinding).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import socket
import threading
import typing
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, Protocol

import anyio
import uvicorn
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage

from toolemu.mcp.episodes import FINAL_TOOL, ClientInfo, EpisodeSession
from toolemu.mcp.scrub import scrub_message
from toolemu.mcp.tools import prompt_result
from toolemu.version import __version__

ENDPOINT = "/mcp"
SERVER_NAME = "toolemu"
UNKNOWN_CLIENT = "unknown"

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class _ClosedStreamNoise(logging.Filter):
    """The SDK logs an error when a session's stream is closed under it as the server shuts down: the normal end."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError)


class _OurValidation(logging.Filter):
    """The SDK warns of a call to a tool it did not list: the episode validates every call (and says so)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Tool '%s' not listed")


logging.getLogger("mcp.server.streamable_http").addFilter(_ClosedStreamNoise())
logging.getLogger("mcp.server.lowlevel.server").addFilter(_OurValidation())


class EpisodeSource(Protocol):
    """Where a server's sessions get their episodes, and what every session is shown."""

    tools: list[types.Tool]
    prompts: dict[str, tuple[types.Prompt, str]]

    def open(self, client: ClientInfo) -> EpisodeSession:
        """The episode of a session that made its first call; `client`: how the client introduced itself."""
        ...

    def closed(self, session: EpisodeSession) -> None:
        """A session whose episode `session` is has closed."""
        ...


class _Slot:
    """One MCP session's episode, opened at its first call."""

    def __init__(self, source: EpisodeSource):
        self.source = source
        self.lock = threading.Lock()
        self.session: EpisodeSession | None = None

    def episode(self, client: ClientInfo) -> EpisodeSession:
        with self.lock:
            if self.session is None:
                self.session = self.source.open(client)
            return self.session


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
    found" and dropping a notification of one (see the module's docstring)."""
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


class _ScrubbedSends:
    """A session's write stream whose every message is scrubbed on its way out, whatever the transport (stdio's
    stdout bypasses the console's scrubbing)."""

    def __init__(self, stream: Any):
        self._stream = stream

    async def send(self, message: SessionMessage) -> None:
        await self._stream.send(scrub_message(message))

    def send_nowait(self, message: SessionMessage) -> None:
        self._stream.send_nowait(scrub_message(message))

    async def __aenter__(self) -> _ScrubbedSends:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class EpisodeServer(Server[Any, Any]):
    """The low-level server, with each session's run wrapped: its episode opens at its first call and the source is
    told when the session ends (the request handlers run in tasks of `run`, so they see its slot)."""

    def __init__(self, source: EpisodeSource):
        super().__init__(SERVER_NAME, version=__version__)
        self.source = source
        self._register()

    async def run(self, read_stream: Any, write_stream: Any, *args: Any, **kwargs: Any) -> None:
        slot = _Slot(self.source)
        token = _SLOT.set(slot)
        write_stream = _ScrubbedSends(write_stream)  # no secret reaches the client, whatever the message
        sink, screened = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        try:
            async with anyio.create_task_group() as screening:
                screening.start_soon(_screen, read_stream, sink, write_stream)
                await super().run(screened, write_stream, *args, **kwargs)
                screening.cancel_scope.cancel()
        finally:
            _SLOT.reset(token)
            if slot.session is not None:
                with anyio.CancelScope(shield=True):  # the episode is recorded even as the server shuts down
                    await anyio.to_thread.run_sync(self.source.closed, slot.session)

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
            slot, client, call_id = _SLOT.get(), self._client(), f"mcp-{self.request_context.request_id}"

            def play() -> Any:
                session = slot.episode(client)
                if name == FINAL_TOOL and any(t.name == FINAL_TOOL for t in source.tools):
                    answer = (arguments or {}).get("answer")
                    return session.answer(answer if isinstance(answer, str) else json.dumps(answer))
                return session.call(name, arguments or {}, call_id)

            result = await anyio.to_thread.run_sync(play)
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


async def serve_stdio(server: EpisodeServer) -> None:
    """One session over this process's stdin and stdout, until the client closes it."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0: any free one); an address that cannot be bound raises OSError."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
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


def bearer_guard(app: ASGIApp, token: str) -> ASGIApp:
    """Only requests to the endpoint with the bearer token reach `app`: others get 404, or 401 without the token."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if scope["path"].rstrip("/") != ENDPOINT:
            await _refuse(send, 404, "not found: the MCP endpoint is /mcp")
            return
        given = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        if not hmac.compare_digest(given, expected):
            await _refuse(send, 401, "unauthorized: send the server's token as Authorization: Bearer <token>")
            return
        await app(scope, receive, send)

    return guarded


async def _refuse(send: Send, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _Uvicorn(uvicorn.Server):
    """uvicorn without its signal handlers: the caller decides what a signal does (and a worker thread has none)."""

    def capture_signals(self) -> Any:
        import contextlib

        return contextlib.nullcontext()


def security_for(host: str) -> TransportSecuritySettings:
    """On loopback, the Host and Origin headers must name loopback (no DNS rebinding); elsewhere the token guards."""
    if not is_loopback(host):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *(f"{h}:*" for h in hosts)],
        allowed_origins=[f"http://{h}:*" for h in hosts],
    )


async def serve_http(
    server: EpisodeServer,
    sock: socket.socket,
    token: str,
    stop: anyio.Event,
    started: Callable[[], None] | None = None,
) -> None:
    """Streamable HTTP on `sock` until `stop` is set; then every session closes (its episode is recorded)."""
    host = sock.getsockname()[0]
    manager = StreamableHTTPSessionManager(app=server, security_settings=security_for(host), session_idle_timeout=None)
    config = uvicorn.Config(
        bearer_guard(manager.handle_request, token),
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
        web.should_exit = True
