"""`toolemu mcp serve`: a case's toolkits (or any toolkits) as an MCP server, each session one episode of a run folder.

A session's episode starts at its first tool call and ends with its `final_answer` call, the step limit, a failure,
or the session's close (then with the status `closed`: no answer, counted on its own by the report). It is then
added to the run folder (`toolemu.log.episode_folder`: run.json marks it `mcp`, trials count up per case, nothing is
rewritten), which stays locked against other writers while the server runs; serving the same folder again adds
trials, as `toolemu play` does. A session that calls no tool records nothing. Concurrent sessions are separate
episodes with their own trials. The agent is recorded as the client introduced itself (`mcp:<name>/<version>`).

Ctrl-C, SIGTERM, a budget, a refused key, or an episode that cannot be written stops the server: no call starts,
the calls in flight finish and their results are sent (a second Ctrl-C or SIGTERM stops waiting for them), then
every session is closed and its episode recorded with the status `stopped` and the steps whose results its client
was sent, never one it did not get (`EpisodeSession.cut`). An episode that cannot be written (a full disk) is said
at once in the log, and the command then fails as a run does (exit 2, naming the file).

Over HTTP the server listens on loopback only, unless `allow_remote`: the token then travels in plaintext and the
DNS-rebinding checks are off, which is said in a warning. A token given by the user has at least `MIN_TOKEN_LEN`
characters of RFC 6750's token alphabet (letters, digits, `-._~+/`, then `=`), and is scrubbed from all output.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import secrets
import signal
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from toolemu.episode.builder import EpisodeBuilder, OutsideAgent
from toolemu.episode.spec import EpisodeSpec
from toolemu.errors import InputError
from toolemu.llm import ModelHub
from toolemu.llm.stops import ModelAccessDenied
from toolemu.log import Trajectory
from toolemu.log.episode_folder import EpisodeFolder
from toolemu.log.lock import run_lock
from toolemu.log.model import ModelDescription
from toolemu.log.records import CLOSED_OUTPUT, STOPPED_OUTPUT
from toolemu.mcp.episodes import ClientInfo, EpisodeSession
from toolemu.mcp.server import (
    EpisodeServer,
    NotRecorded,
    bind,
    is_loopback,
    loop_options,
    serve_http,
    serve_stdio,
    url_of,
)
from toolemu.mcp.tools import mcp_tools, prompts
from toolemu.prompts.agent import policy_text
from toolemu.secrets import register_secret_value
from toolemu.specs import Benchmark, Case
from toolemu.specs.models import Toolkit

log = logging.getLogger("toolemu")

AGENT_TYPE, AGENT_FORMAT = "mcp", "mcp"  # what a trajectory says about an agent outside, over MCP
NO_INSTRUCTION = "(no case: the client brings its own task)"
MIN_TOKEN_LEN, MAX_TOKEN_LEN = 16, 1024
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9._~+/-]+=*")  # RFC 6750's b64token: what an Authorization header carries as is


def agent_model(client: ClientInfo | None, **more: str) -> ModelDescription:
    """The agent role of a trajectory played by an MCP client: `mcp:<name>/<version>` as the client introduced itself
    in `initialize`, and that clientInfo under `client` (run.json's models name the agent by the same string)."""
    client = client or ClientInfo()
    return ModelDescription.model_validate({"model": f"mcp:{client.label}", "client": client.describe(), **more})


def served(spec: EpisodeSpec) -> EpisodeSpec:
    """The spec of a served episode: its agent is the client, outside."""
    return dataclasses.replace(spec, agent_type=AGENT_TYPE, agent_format=AGENT_FORMAT)


def toolkit_case(kits: Sequence[Toolkit]) -> Case:
    """A case for serving toolkits with no case of their own: their tools, and no task (the client has one). A case
    names its toolkits as the benchmark keys them: by `toolkit`, which may differ from the `name_for_model` that
    prefixes their tools' names (TapTrustAuthenticator's tools are TapTrust...)."""
    names = [kit.toolkit for kit in kits]
    return Case.model_validate(
        {"name": "mcp-" + "+".join(names), "Toolkits": names, "User Instruction": NO_INSTRUCTION}
    )


def serve_target(bench: Benchmark, case_name: str | None, toolkit_names: Sequence[str]) -> tuple[int, Case, Benchmark]:
    """The case to serve: the named one of `bench`, else one made for the named toolkits (or all loaded ones)."""
    if case_name is not None:
        return (*bench.case_named(case_name, field="--case"), bench)
    unknown = [n for n in toolkit_names if n not in bench.toolkits]
    if unknown:
        raise InputError.single(
            "command line", f"expected names of loaded toolkits, unknown: {', '.join(unknown)}", field="--toolkit"
        )
    kits = [bench.toolkits[n] for n in toolkit_names] if toolkit_names else list(bench.toolkits.values())
    if not kits:
        raise InputError.single("command line", "expected --case NAME, --toolkit NAME or --toolkits-path FILE")
    case = toolkit_case(kits)
    return 0, case, Benchmark(toolkits=dict(bench.toolkits), cases=[case])


class SessionEpisodes:
    """`toolemu mcp serve`'s episodes: one per session, added to the folder as each ends."""

    def __init__(self, builder: EpisodeBuilder, case: Case, case_idx: int, folder: EpisodeFolder, final_tool: bool):
        self.builder, self.case, self.case_idx, self.folder = builder, case, case_idx, folder
        docs = builder.bench.policies_for(case)
        outside = OutsideAgent(AGENT_FORMAT)
        kits = builder.start(case, case_idx, 0, agent=outside).state.agent_kits  # AskUser, with the user on
        self.tools = mcp_tools(kits, final_tool)
        instruction = "" if case.user_instruction == NO_INSTRUCTION else case.user_instruction
        self.prompts = prompts(instruction, policy_text([d.text for d in docs]) if docs else "")
        self.lock = threading.Lock()
        self.recorded: list[Trajectory] = []
        self.unwritten: list[InputError] = []  # episodes that could not be written, with why
        self.sessions: list[EpisodeSession] = []
        self.stopped: BaseException | None = None
        self.stop_seen = threading.Event()
        self._told = threading.Condition(self.lock)
        self._writing = 0  # records being written
        self._next: int | None = None
        # run.json is rewritten whole for each pair it notes, so the pairs of episodes that end while it is being
        # written are noted together by the next rewrite (a group commit): each session still answers only once its
        # pair is in the file. Tickets count the records appended; `_noted` is the last one run.json holds.
        self._noting = threading.Lock()  # one rewrite of run.json at a time
        self._unnoted: list[tuple[tuple[str, int], dict[str, str]]] = []  # appended, waiting for run.json
        self._appended = 0
        self._noted = 0

    def open(self, client: ClientInfo) -> EpisodeSession:
        with self.lock:
            if self._next is None:  # the folder is ours while serving: count on from what it holds
                self._next = self.folder.next_trial(self.case.name)
            trial, self._next = self._next, self._next + 1
        episode = self.builder.start(self.case, self.case_idx, trial, agent=OutsideAgent(AGENT_FORMAT))
        session = EpisodeSession(episode, on_end=self._record, on_stop=self._stop, client=client)
        with self.lock:
            self.sessions.append(session)
        return session

    def closed(self, session: EpisodeSession) -> None:
        """Its client closed the session before a final answer the server saw: `closed`, cut where the client left
        it (a call in flight records it when it returns)."""
        with contextlib.suppress(NotRecorded):  # said in the log; the command fails at its end
            session.cut("closed", CLOSED_OUTPUT)

    def server_closed(self, session: EpisodeSession) -> None:
        """The server closed the session as it stopped: `stopped`, cut as `closed` is."""
        with contextlib.suppress(NotRecorded):
            session.cut("stopped", STOPPED_OUTPUT)

    def settle(self) -> None:
        """Wait until every session's episode is recorded or known not to be (a call in flight at a forced stop
        records its episode when it returns)."""
        with self._told:
            self._told.wait_for(lambda: all(session.told for session in self.sessions) and not self._writing)

    def _record(self, session: EpisodeSession) -> None:
        """Add the episode to the folder; one that cannot be written (a full disk) is said at once, stops the server
        (`NotRecorded`, which the client is told) and fails the command at its end."""
        problem: InputError | None = None
        appended, ticket = False, 0
        with self.lock:
            self._writing += 1
        try:
            trajectory = session.finish({"agent": agent_model(session.client)})
            models = {role: d.model for role, d in trajectory.models.items()}
            with self.lock:
                try:
                    self.folder.append(trajectory)
                except (InputError, OSError) as exc:
                    problem = self._unwritten(exc)
                else:
                    appended = True
                    self.recorded.append(trajectory)
                    self._unnoted.append(((trajectory.case_name, trajectory.trial), models))
                    self._appended += 1
                    ticket = self._appended
            if appended:
                problem = self._note(ticket)
        finally:
            with self.lock:
                self._writing -= 1
                self._told.notify_all()
        where = f"{trajectory.case_name} trial {trajectory.trial} ({trajectory.status})"
        if problem is None:
            log.info("episode recorded: %s", where)
            return
        self.stop_seen.set()
        if appended:  # run.json is written after the record: the record is there, its pair is not noted
            log.error("episode recorded: %s, but %s; the server is stopping", where, problem)
            raise NotRecorded(
                f"this episode was recorded, but the run folder was not ({problem}); the server is stopping"
            )
        log.error("episode NOT recorded: %s: %s; the server is stopping", where, problem)
        raise NotRecorded(f"this episode could not be recorded ({problem}); the server is stopping")

    def _note(self, ticket: int) -> InputError | None:
        """Have run.json hold the pair of the record appended as `ticket`: noted by a rewrite made meanwhile, or by
        this one, which notes every pair waiting. A rewrite that fails leaves them waiting for the next."""
        with self._noting:
            if self._noted >= ticket:
                return None
            with self.lock:
                waiting, self._unnoted, upto = self._unnoted, [], self._appended
            models: dict[str, str] = {}
            for _, played in waiting:
                models.update(played)
            try:
                self.folder.note([pair for pair, _ in waiting], models)
            except (InputError, OSError) as exc:
                with self.lock:
                    self._unnoted[:0] = waiting
                    return self._unwritten(exc)
            self._noted = upto
            return None

    def _unwritten(self, exc: InputError | OSError) -> InputError:
        """(Under the lock.) The problem of a record or of a rewrite of run.json that failed, kept for the end."""
        problem = exc if isinstance(exc, InputError) else InputError.single(self.folder.path, str(exc))
        self.unwritten.append(problem)
        return problem

    def _stop(self, exc: BaseException) -> None:
        with self.lock:
            self.stopped = self.stopped or exc
        self.stop_seen.set()


@dataclass
class ServeResult:
    folder: Path
    episodes: list[Trajectory] = field(default_factory=list)
    stop_kind: str = ""  # "", "interrupted", "terminated", "budget", "access", "unwritten"
    stop_reason: str = ""
    unwritten: list[InputError] = field(default_factory=list)  # episodes that could not be written
    stopped_episodes: int = 0  # episodes recorded as `stopped`


def new_token() -> str:
    return secrets.token_urlsafe(24)


def check_token(token: str, where: str = "token", file: str = "command line") -> str:
    """A token the user gave: long enough to guess at no better than a made one, and sendable as it is in an
    Authorization header (RFC 6750's token alphabet). `where`: the flag or variable that gave it."""
    if len(token) < MIN_TOKEN_LEN:
        got = "an empty one" if not token else f"{len(token)}"
        raise InputError.single(
            file, f"expected a token of at least {MIN_TOKEN_LEN} characters, got {got}", field=where
        )
    if len(token) > MAX_TOKEN_LEN or not TOKEN_SHAPE.fullmatch(token):
        raise InputError.single(
            file,
            f"expected a token of at most {MAX_TOKEN_LEN} letters, digits and -._~+/ (then =), as an Authorization "
            "header carries it: no spaces, no other characters",
            field=where,
        )
    return token


def check_address(host: str, allow_remote: bool) -> None:
    """Loopback only, unless `allow_remote`; then a warning says what that gives away."""
    if is_loopback(host):
        return
    shown = f"[{host}]" if ":" in host else host
    if not allow_remote:
        raise InputError.single(
            "command line",
            f"{shown} is not a loopback address: the bearer token would travel in plaintext and the DNS-rebinding "
            "checks would be off; serve on 127.0.0.1 (or localhost, [::1]) and put TLS in front, or give "
            "--allow-remote to serve it anyway",
            field="--http",
        )
    log.warning(
        "warning: serving on %s, not loopback (--allow-remote): anyone who can reach it and read the bearer token "
        "on the wire (plain HTTP) can play episodes into this run folder, and the DNS-rebinding checks are off",
        shown,
    )


def serve(
    bench: Benchmark,
    hub: ModelHub,
    spec: EpisodeSpec,
    dump_dir: Path,
    *,
    final_tool: bool = True,
    case_name: str | None = None,
    toolkit_names: Sequence[str] = (),
    http: tuple[str, int] | None = None,
    token: str | None = None,
    announce: Callable[[str, str], None] | None = None,
    allow_remote: bool = False,
) -> ServeResult:
    """Serve until the client closes stdio (one session), or until the server stops (Ctrl-C, SIGTERM, a budget, a
    refused key, an episode it cannot write). Each session is an episode of `spec` (the hub lists its roles but the
    agent's); `final_tool`: a session ends with the final_answer tool, else only when its client closes it.
    `announce(url, token)` is told where the HTTP server listens, once it does; `token`: the one HTTP clients must
    send (default: a new one); `allow_remote`: listen beyond loopback."""
    if http is not None:
        check_address(http[0], allow_remote)
        if token is not None:
            check_token(token)
    case_idx, case, bench = serve_target(bench, case_name, toolkit_names)
    spec = served(spec)
    builder = EpisodeBuilder(hub, spec, bench)  # a bad gate is bad input, found before anything is written
    folder = EpisodeFolder.open(dump_dir, spec.run_config(mcp="final_answer" if final_tool else "close"))
    builder.run_id = folder.run_id
    result = ServeResult(dump_dir)
    with run_lock(folder.trajectories):
        source = SessionEpisodes(builder, case, case_idx, folder, final_tool)
        sock = None
        if http is not None:
            try:
                sock = bind(*http)
            except OSError as exc:
                where = f"{http[0]}:{http[1]}"
                raise InputError.single("command line", f"cannot listen on {where}: {exc}", field="--http") from None
            token = token or new_token()
        server = EpisodeServer(source)
        anyio.run(_main, server, source, result, sock, token, announce, backend_options=loop_options())
        source.settle()  # a call in flight at a forced stop records its episode when it returns
        result.episodes = list(source.recorded)
        result.stopped_episodes = sum(t.status == "stopped" for t in source.recorded)
        result.unwritten = list(source.unwritten)
        if result.unwritten:
            result.stop_kind, result.stop_reason = "unwritten", str(result.unwritten[0])
        elif source.stopped is not None and not result.stop_kind:
            result.stop_kind = "access" if isinstance(source.stopped, ModelAccessDenied) else "budget"
            result.stop_reason = str(source.stopped)
        builder.spec.after_run(folder.path)  # the gate audit, a replay's reuse
    return result


async def _main(
    server: EpisodeServer,
    source: SessionEpisodes,
    result: ServeResult,
    sock: socket.socket | None,
    token: str | None,
    announce: Callable[[str, str], None] | None,
) -> None:
    stop, force = anyio.Event(), anyio.Event()

    def halt() -> None:
        """The server stops (not the client closing stdio): the sessions it closes are `stopped`."""
        stop.set()

    async with anyio.create_task_group() as watchers:
        if threading.current_thread() is threading.main_thread():
            watchers.start_soon(_on_signals, halt, stop, force, result)
        watchers.start_soon(_on_model_stop, halt, stop, source)
        if sock is None:
            async with anyio.create_task_group() as serving:
                serving.start_soon(_stdio_until, server, stop)
                await stop.wait()
                server.stop()
                await server.drain(force)
                await server.close_sessions()
                serving.cancel_scope.cancel()
        else:
            assert token is not None
            url = url_of(sock)

            def ready() -> None:
                if announce is not None:
                    announce(url, token)
                register_secret_value(token)  # shown once, where the person asked for it; scrubbed from all else

            await serve_http(server, sock, token, stop, ready, force)
        watchers.cancel_scope.cancel()


async def _stdio_until(server: EpisodeServer, stop: anyio.Event) -> None:
    try:
        await serve_stdio(server)
    finally:
        stop.set()


async def _on_model_stop(halt: Callable[[], None], stop: anyio.Event, source: SessionEpisodes) -> None:
    """A budget, a refused key or an episode not written stops the server."""
    while not source.stop_seen.is_set() and not stop.is_set():
        await anyio.sleep(0.05)
    if source.stop_seen.is_set():
        halt()


async def _on_signals(halt: Callable[[], None], stop: anyio.Event, force: anyio.Event, result: ServeResult) -> None:
    """Ctrl-C or SIGTERM stops the server; one while it is stopping stops waiting for the calls in flight."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            if not stop.is_set():
                result.stop_kind = "terminated" if signum == signal.SIGTERM else "interrupted"
                halt()
            else:
                force.set()
                log.warning("stopping now: the calls in flight are cut, their steps not recorded")
