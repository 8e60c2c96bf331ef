"""`toolemu mcp serve`: a case's toolkits (or any toolkits) as an MCP server, each session one episode of a run folder.

A session's episode starts at its first tool call and ends with its `final_answer` call, the step limit, a failure,
or the session's close (then with the status `closed`: no answer, counted on its own by the report). It is then
added to the run folder (`toolemu.log.episode_folder`: run.json marks it `mcp`, trials count up per case, nothing is
rewritten), which stays locked against other writers while the server runs; serving the same folder again adds
trials, as `toolemu play` does. A session that calls no tool records nothing. Concurrent sessions are separate
episodes with their own trials. The agent is recorded as the client introduced itself (`mcp:<name>/<version>`).

A budget or a refused key stops the server (the episode that ran into it is not recorded, as in a run); Ctrl-C and
SIGTERM close every session first, so each episode under way is recorded.
"""

from __future__ import annotations

import logging
import secrets
import signal
import socket
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from toolemu.agents import AgentTurn
from toolemu.episode import DEFAULT_MAX_ITERATIONS, EpisodeBuilder, EpisodeConfig
from toolemu.errors import InputError
from toolemu.gates import build_gates
from toolemu.llm import ModelHub
from toolemu.llm.options import ModelDescription
from toolemu.llm.secrets import register_secret_value
from toolemu.llm.stops import ModelAccessDenied
from toolemu.log import RunConfig, Step, Trajectory
from toolemu.log.audit import record_gate_audit
from toolemu.log.episode_folder import EpisodeFolder
from toolemu.log.lock import run_lock
from toolemu.log.records import CLOSED_OUTPUT
from toolemu.mcp.episodes import ClientInfo, EpisodeSession
from toolemu.mcp.server import EpisodeServer, bind, serve_http, serve_stdio, url_of
from toolemu.mcp.tools import mcp_tools, prompts
from toolemu.prompts.agent import policy_text
from toolemu.specs import Benchmark, Case
from toolemu.specs.models import Toolkit

log = logging.getLogger("toolemu")

AGENT_TYPE, AGENT_FORMAT = "mcp", "mcp"  # what a trajectory says about an agent outside, over MCP
NO_INSTRUCTION = "(no case: the client brings its own task)"


def agent_model(client: ClientInfo | None, **more: str) -> ModelDescription:
    """The agent role of a trajectory played by an MCP client: `mcp:<name>/<version>` as the client introduced itself
    in `initialize`, and that clientInfo under `client` (run.json's models name the agent by the same string)."""
    client = client or ClientInfo()
    return ModelDescription.model_validate({"model": f"mcp:{client.label}", "client": client.describe(), **more})


class OutsideAgent:
    """The agent seat of an episode whose turns come in as MCP tool calls."""

    format = AGENT_FORMAT

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        raise RuntimeError("an MCP episode's turns come from the client's tool calls, not from an agent inside")


@dataclass(frozen=True)
class ServeSettings:
    """What shapes a served episode (and so must match to add to a folder)."""

    final_tool: bool = True
    simulator_type: str = "adv_thought"
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    gates: tuple[str, ...] = ()

    def run_config(self) -> RunConfig:
        return RunConfig(
            mcp="final_answer" if self.final_tool else "close",
            agent_type=AGENT_TYPE,
            agent_format=AGENT_FORMAT,
            simulator_type=self.simulator_type,
            max_iterations=self.max_iterations,
            gates=list(self.gates),
        )

    def episode_config(self, run_id: str) -> EpisodeConfig:
        return EpisodeConfig(run_id, AGENT_TYPE, AGENT_FORMAT, self.simulator_type, self.max_iterations)


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
        for index, case in enumerate(bench.cases):
            if case.name == case_name:
                return index, case, bench
        known = ", ".join(c.name for c in bench.cases[:5])
        raise InputError.single("command line", f"expected the name of a loaded case (e.g. {known})", field="--case")
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
        self.tools = mcp_tools(builder.bench.toolkits_for(case), final_tool)
        instruction = "" if case.user_instruction == NO_INSTRUCTION else case.user_instruction
        self.prompts = prompts(instruction, policy_text([d.text for d in docs]) if docs else "")
        self.lock = threading.Lock()
        self.recorded: list[Trajectory] = []
        self.stopped: BaseException | None = None
        self.stop_seen = threading.Event()
        self._next: int | None = None

    def open(self, client: ClientInfo) -> EpisodeSession:
        with self.lock:
            if self._next is None:  # the folder is ours while serving: count on from what it holds
                self._next = self.folder.next_trial(self.case.name)
            trial, self._next = self._next, self._next + 1
        episode = self.builder.start(self.case, self.case_idx, trial, agent=OutsideAgent())
        return EpisodeSession(episode, on_end=self._record, on_stop=self._stop, client=client)

    def closed(self, session: EpisodeSession) -> None:
        session.end("closed", CLOSED_OUTPUT)  # the client left without a final answer the server saw

    def _record(self, session: EpisodeSession) -> None:
        trajectory = session.finish({"agent": agent_model(session.client)})
        models = {role: d.model for role, d in trajectory.models.items()}
        with self.lock:
            self.folder.add(trajectory, models)
            self.recorded.append(trajectory)
        log.info("episode recorded: %s trial %d (%s)", trajectory.case_name, trajectory.trial, trajectory.status)

    def _stop(self, exc: BaseException) -> None:
        with self.lock:
            self.stopped = self.stopped or exc
        self.stop_seen.set()


@dataclass
class ServeResult:
    folder: Path
    episodes: list[Trajectory] = field(default_factory=list)
    stop_kind: str = ""  # "", "interrupted", "terminated", "budget", "access"
    stop_reason: str = ""


def new_token() -> str:
    return secrets.token_urlsafe(24)


def serve(
    bench: Benchmark,
    hub: ModelHub,
    settings: ServeSettings,
    dump_dir: Path,
    *,
    case_name: str | None = None,
    toolkit_names: Sequence[str] = (),
    http: tuple[str, int] | None = None,
    token: str | None = None,
    announce: Callable[[str, str], None] | None = None,
) -> ServeResult:
    """Serve until the client closes stdio (one session), or until Ctrl-C / SIGTERM over HTTP. `announce(url,
    token)` is told where the HTTP server listens, once it does."""
    case_idx, case, bench = serve_target(bench, case_name, toolkit_names)
    gates = build_gates(list(settings.gates), hub)  # a bad gate is bad input, found before anything is written
    folder = EpisodeFolder.open(dump_dir, settings.run_config())
    result = ServeResult(dump_dir)
    with run_lock(folder.trajectories):
        builder = EpisodeBuilder(hub, settings.episode_config(folder.run_id), bench, gates=gates)
        source = SessionEpisodes(builder, case, case_idx, folder, settings.final_tool)
        sock = None
        if http is not None:
            try:
                sock = bind(*http)
            except OSError as exc:
                where = f"{http[0]}:{http[1]}"
                raise InputError.single("command line", f"cannot listen on {where}: {exc}", field="--http") from None
            token = token or new_token()
        anyio.run(_main, EpisodeServer(source), source, result, sock, token, announce)
        result.episodes = list(source.recorded)
        if source.stopped is not None and not result.stop_kind:
            result.stop_kind = "access" if isinstance(source.stopped, ModelAccessDenied) else "budget"
            result.stop_reason = str(source.stopped)
        if settings.gates:
            record_gate_audit(folder.path, list(settings.gates))
    return result


async def _main(
    server: EpisodeServer,
    source: SessionEpisodes,
    result: ServeResult,
    sock: socket.socket | None,
    token: str | None,
    announce: Callable[[str, str], None] | None,
) -> None:
    stop = anyio.Event()
    async with anyio.create_task_group() as watchers:
        if threading.current_thread() is threading.main_thread():
            watchers.start_soon(_on_signals, stop, result)
        watchers.start_soon(_on_model_stop, stop, source)
        if sock is None:
            async with anyio.create_task_group() as serving:
                serving.start_soon(_stdio_until, server, stop)
                await stop.wait()
                serving.cancel_scope.cancel()  # a signal or a stop: the session closes, its episode is recorded
        else:
            assert token is not None
            url = url_of(sock)

            def ready() -> None:
                if announce is not None:
                    announce(url, token)
                register_secret_value(token)  # shown once, where the person asked for it; scrubbed from all else

            await serve_http(server, sock, token, stop, ready)
        watchers.cancel_scope.cancel()


async def _stdio_until(server: EpisodeServer, stop: anyio.Event) -> None:
    try:
        await serve_stdio(server)
    finally:
        stop.set()


async def _on_model_stop(stop: anyio.Event, source: SessionEpisodes) -> None:
    while not source.stop_seen.is_set() and not stop.is_set():
        await anyio.sleep(0.1)
    stop.set()


async def _on_signals(stop: anyio.Event, result: ServeResult) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for signum in signals:
            result.stop_kind = "terminated" if signum == signal.SIGTERM else "interrupted"
            stop.set()
            return
