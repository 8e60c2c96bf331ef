"""External agents, run per (case, trial): `--agent mcp-cmd:<command>`, or `--agent-cmd <command>` for short.

How it fits the episode builder. An external agent does not answer `next_turn`: it runs on its own and calls tools
whenever it likes. So its factory makes a `CommandAgent`, an `EpisodeDriver` (`toolemu.episode.builder`): the
runner builds every episode exactly as for our agent (the same builder, pool, batching, resume, shards and SLURM
arrays, one record per pair), and the builder hands the driver the started episode instead of asking it for turns.
The driver then, in the pool's worker thread and an event loop of its own:

1. serves that one episode over MCP (streamable HTTP on a free loopback port, with a token made for it), every
   session of the command sharing the episode (`EpisodeSession`: each call is one turn through the pipeline);
2. runs the command through the shell, with TOOLEMU_MCP_URL, TOOLEMU_MCP_TOKEN, TOOLEMU_INSTRUCTION (scrubbed, as
   the instruction prompt gives it), TOOLEMU_CASE and TOOLEMU_AGENT_ID added to its environment, in a session and
   process group of its own;
3. waits for it to exit, the episode to end (its final_answer call or the step limit; the command then has a few
   seconds to exit before it is stopped), the time limit, or a stop of the run;
4. then ends everything the command started, whichever way the episode ended (`end_processes`): its process group,
   and on Linux every process whose environment carries the episode's TOOLEMU_AGENT_ID (children that left the
   group with setsid); SIGTERM, then SIGKILL for what ignores it.

The command is recorded (run.json, each trajectory) with its keys as *** (`toolemu.secrets.redact_command`), and
those keys are scrubbed from everything written from the moment the command is read.

The final answer is the final_answer tool's argument, else what the command printed. A command that exits non-zero
or runs past its time limit ends the episode in error, with the tail of its stderr (scrubbed of secrets); one that
prints nothing and never called final_answer too. Ctrl-C, SIGTERM or a budget stops the command and leaves the pair
not run, as for our agent.

`toolemu.builtins` registers the kind (on the first lookup of an agent), so this module loads nothing heavy until an
episode runs.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolemu.agents.registry import AgentFactory, AgentSetup
from toolemu.errors import InputError

if TYPE_CHECKING:
    from toolemu.agents import AgentTurn
    from toolemu.episode import Episode
    from toolemu.log import Step
    from toolemu.log.model import ModelDescription
    from toolemu.mcp.episodes import ClientInfo, EpisodeSession
    from toolemu.specs.models import Toolkit

AGENT_KIND = "mcp-cmd"
DEFAULT_TIMEOUT_S = 900.0  # per episode; --agent-timeout
GRACE_S = 5.0  # after the episode ended, how long the command has to exit on its own
KILL_AFTER_S = 2.0  # after SIGTERM, before SIGKILL
STDERR_TAIL = 2000  # characters of the command's stderr kept in an episode error
MAX_STDOUT = 100_000  # characters of the command's output kept as its final answer
POLL_S = 0.02
# In the command's environment, a value made for each episode: how the processes it started are found and ended,
# even one that left its process group.
AGENT_ID_VAR = "TOOLEMU_AGENT_ID"


class CommandError(Exception):
    """The agent's command failed: it crashed, ran out of time, or gave no answer."""


@dataclass(frozen=True)
class CommandAgent:
    """The agent seat of an episode an external command plays over MCP (see the module's docstring)."""

    command: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    format: str = "mcp"

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        raise RuntimeError(f"{AGENT_KIND} agents drive their own episode; they cannot play recorded turns again")

    def drive(self, episode: Episode) -> dict[str, ModelDescription]:
        import anyio

        return anyio.run(self._drive, episode)

    async def _drive(self, episode: Episode) -> dict[str, ModelDescription]:
        import anyio

        from toolemu.mcp.episodes import EpisodeSession
        from toolemu.mcp.serve import new_token
        from toolemu.mcp.server import EpisodeServer, bind, serve_http, url_of

        session = EpisodeSession(episode)
        source = _OneEpisode(session, episode)
        sock, token = bind("127.0.0.1", 0), new_token()
        _register_secret(token)
        stop = anyio.Event()
        raised: Exception | None = None  # raised after the server has stopped (a task group would wrap it)
        async with anyio.create_task_group() as tasks:
            ready = anyio.Event()
            tasks.start_soon(serve_http, EpisodeServer(source), sock, token, stop, ready.set)
            try:
                await ready.wait()
                await self._run(episode, session, url_of(sock), token)
            except Exception as exc:  # noqa: BLE001 - a stop of the run, or a failure: raised once the server is down
                raised = exc
            finally:
                stop.set()
        if raised is not None:
            raise raised
        return {"agent": self._described(session)}

    def _described(self, session: EpisodeSession) -> ModelDescription:
        from toolemu.mcp.serve import agent_model
        from toolemu.secrets import redact_command

        return agent_model(session.client, command=redact_command(self.command))  # its keys as ***

    async def _run(self, episode: Episode, session: EpisodeSession, url: str, token: str) -> None:
        import subprocess

        import anyio

        from toolemu.episode import Interrupted
        from toolemu.secrets import redact

        state = episode.state
        agent_id = secrets.token_hex(12)
        env = {
            **os.environ,
            "TOOLEMU_MCP_URL": url,
            "TOOLEMU_MCP_TOKEN": token,
            "TOOLEMU_INSTRUCTION": redact(state.case.user_instruction),  # as the instruction prompt gives it
            "TOOLEMU_CASE": state.case.name,
            AGENT_ID_VAR: agent_id,
        }
        process = await anyio.open_process(
            ["/bin/sh", "-c", self.command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # a session and group of its own, ended whole; Ctrl-C at the terminal is ours
        )
        output = _Collected(MAX_STDOUT, keep="head")
        errors = _Collected(STDERR_TAIL * 4, keep="tail")
        verdict = ""  # "stopped": the run is stopping; "timeout": past the time limit
        try:
            async with process, anyio.create_task_group() as readers:
                readers.start_soon(output.read, process.stdout)
                readers.start_soon(errors.read, process.stderr)
                ended_at: float | None = None
                deadline = anyio.current_time() + self.timeout_s
                while process.returncode is None:
                    now = anyio.current_time()
                    if episode.state.stop.is_set() or session.stopped is not None:
                        verdict = "stopped"
                    elif session.ended:
                        ended_at = now if ended_at is None else ended_at
                        verdict = "ended" if now - ended_at > GRACE_S else ""
                    elif now > deadline:
                        verdict = "timeout"
                    if verdict:
                        break
                    await anyio.sleep(POLL_S)
                # The command exited, or it is stopped now: either way nothing it started outlives its episode (a
                # child left running would also hold the pipes open).
                await end_processes(process.pid, agent_id)
                with anyio.move_on_after(KILL_AFTER_S):
                    await process.wait()
                readers.cancel_scope.deadline = anyio.current_time() + 1  # a process out of reach may hold them
        finally:  # an error, or the run cancelled under us: the same end, whatever is left
            with anyio.CancelScope(shield=True):
                await end_processes(process.pid, agent_id)
        if verdict == "stopped" or session.stopped is not None:
            raise session.stopped or Interrupted()
        if session.ended:
            return
        if verdict == "timeout":
            message = f"the agent's command ran past its time limit ({self.timeout_s:g} s)"
            session.fail(TimeoutError(), "AgentTimeout", message + errors.tail_note())
            return
        code = process.returncode
        if code != 0:
            how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with status {code}"
            session.fail(CommandError(), "AgentCommandFailed", f"the agent's command {how}" + errors.tail_note())
            return
        answer = output.text().strip()
        if not answer:
            session.fail(
                CommandError(),
                "NoFinalAnswer",
                "the agent's command exited without calling final_answer and printed nothing" + errors.tail_note(),
            )
            return
        session.end("final_answer", answer)


class _OneEpisode:
    """The driver's episode, for every session its command opens."""

    def __init__(self, session: EpisodeSession, episode: Episode):
        from toolemu.mcp.tools import mcp_tools, prompts
        from toolemu.prompts.agent import policy_text

        self.session = session
        self.tools = mcp_tools(episode.state.agent_kits, final_tool=True)
        policy = policy_text([p.text for p in episode.policies]) if episode.policies else ""
        self.prompts = prompts(episode.state.case.user_instruction, policy)

    def open(self, client: ClientInfo) -> EpisodeSession:
        if self.session.client is None:  # the first session's client names the agent
            self.session.client = client
        return self.session

    def closed(self, session: EpisodeSession) -> None:
        """The command may open sessions as it likes: only its exit (or a final answer) ends the episode."""


class _Collected:
    """What a pipe carried: the first (`keep="head"`) or last (`"tail"`) `limit` characters."""

    def __init__(self, limit: int, keep: str):
        self.limit, self.keep = limit, keep
        self.data = bytearray()

    async def read(self, stream: Any) -> None:
        import anyio

        try:
            async for chunk in stream:
                if self.keep == "head":
                    self.data += chunk[: max(0, self.limit * 4 - len(self.data))]
                else:
                    self.data = (self.data + chunk)[-self.limit * 4 :]
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            return

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")
        return text[: self.limit] if self.keep == "head" else text[-self.limit :]

    def tail_note(self) -> str:
        from toolemu.secrets import redact

        tail = self.text()[-STDERR_TAIL:].strip()
        return f"; stderr tail:\n{redact(tail)}" if tail else "; it wrote nothing to stderr"


def agent_processes(pgid: int, agent_id: str) -> list[int]:
    """The live processes an agent's command started: its process group (the shell, and every process that did not
    leave the group: double forks, pipelines, backgrounded jobs), and, where /proc lists processes (Linux), every
    process of ours whose environment carries the episode's `AGENT_ID_VAR`, whatever group or session it moved to
    (`setsid`, `setpgid`, a daemon). Out of reach: a process that left the group and dropped the variable (`env -i`),
    or one that runs as another user; on a system without /proc, one that left the group. A zombie counts as gone.
    Without /proc, the group is returned as [-pgid] while it has a member."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return []
        return [-pgid]
    me, uid = os.getpid(), os.getuid()
    marker = f"{AGENT_ID_VAR}={agent_id}".encode()
    found: list[int] = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rfind(b")") + 2 :].split()
            if fields[0] in (b"Z", b"X"):
                continue
            if int(fields[2]) != pgid:
                if entry.stat().st_uid != uid:
                    continue
                with open(f"/proc/{entry.name}/environ", "rb") as f:
                    if marker not in f.read().split(b"\0"):
                        continue
        except (OSError, IndexError, ValueError):  # gone meanwhile, or not ours to read
            continue
        found.append(int(entry.name))
    return found


def _signal(pgid: int, pids: list[int], sig: signal.Signals) -> None:
    for target in {-pgid, *pids}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(-target, sig) if target < 0 else os.kill(target, sig)


async def end_processes(pgid: int, agent_id: str) -> None:
    """End everything an agent's command started (`agent_processes`): SIGTERM, then SIGKILL to what is still there
    after KILL_AFTER_S (a process that ignores SIGTERM)."""
    import anyio

    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = agent_processes(pgid, agent_id)
        if not left:
            return
        _signal(pgid, left, sig)
        with anyio.move_on_after(KILL_AFTER_S):
            while agent_processes(pgid, agent_id):
                await anyio.sleep(POLL_S * 2)


def _register_secret(token: str) -> None:
    from toolemu.secrets import register_secret_value

    register_secret_value(token)


def command_agent(command: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> AgentFactory:
    """The factory of `--agent mcp-cmd:<command>` (with `--agent-timeout`); it names itself in run.json, the keys in
    the command (`MY_API_KEY=... agent --api-key ...`) as *** (`toolemu.secrets.redact_command`), and they are
    scrubbed from everything written from now on."""
    from toolemu.secrets import redact_command

    command = command.strip()
    if not command:
        raise InputError.single("command line", "expected a command after mcp-cmd:", field="--agent")
    if not timeout_s > 0:
        raise InputError.single("command line", f"expected seconds > 0, got {timeout_s}", field="--agent-timeout")

    def factory(setup: AgentSetup) -> CommandAgent:
        return CommandAgent(command, timeout_s)

    factory.spec = f"{AGENT_KIND}:{redact_command(command)}"  # type: ignore[attr-defined]
    return factory
