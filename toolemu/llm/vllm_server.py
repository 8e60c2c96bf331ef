"""One `vllm serve` process on loopback: start it, wait until it is healthy, stop it (and every one at exit).

The server runs in its own session (so its own process group): a terminal's Ctrl-C reaches only us, and we stop
the whole group, engine workers included. Servers are shared: one per (command line), process-wide.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("toolemu.llm")

HOST = "127.0.0.1"
POLL_S = 0.5
STOP_TIMEOUT_S = 20.0  # after SIGTERM, before SIGKILL
LOG_DIR_ENV = "TOOLEMU_VLLM_LOG_DIR"  # where server logs go when --vllm-log-dir is not given (default: a temp dir)
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback never goes through a proxy


class ServerStartError(RuntimeError):
    """The server exited or stayed unhealthy while starting; the message is one line with its log's tail."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def log_tail(path: Path, lines: int = 6, chars: int = 600) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    tail = " | ".join(kept) or "(empty log)"
    return tail if len(tail) <= chars else "..." + tail[-chars:]


class VLLMServer:
    def __init__(self, command: list[str], label: str, api_key: str | None, log_dir: Path | None):
        self.command, self.label, self.api_key = command, label, api_key
        self.port = free_port()
        named = log_dir or os.environ.get(LOG_DIR_ENV)
        folder = Path(named) if named else Path(tempfile.mkdtemp(prefix="toolemu-vllm-"))
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / f"vllm-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.ready = False

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self, timeout: float) -> None:
        argv = [*self.command, "--host", HOST, "--port", str(self.port)]
        env = dict(os.environ)
        if self.api_key:
            env["VLLM_API_KEY"] = self.api_key  # not on the command line, where `ps` would show it
        log.info("starting vllm serve %s on %s:%d (log: %s)", self.label, HOST, self.port, self.log_path)
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        started = time.monotonic()
        try:
            self._wait_healthy(timeout)
        except BaseException:  # Ctrl-C while it loads, or a failed start: never leave it behind
            self.stop()
            raise
        self.ready = True
        log.info("vllm serve %s is ready after %.0fs", self.label, time.monotonic() - started)

    def _status(self, path: str) -> int:
        """The HTTP status of GET path (0: no answer)."""
        request = urllib.request.Request(f"http://{HOST}:{self.port}{path}")
        if self.api_key:
            request.add_header("Authorization", f"Bearer {self.api_key}")
        try:
            with _NO_PROXY.open(request, timeout=5) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)
        except (urllib.error.URLError, OSError, ValueError):
            return 0

    def _healthy(self) -> bool:
        if self._status("/health") != 200:
            return False
        # With the user's own --api-key we cannot list models, but a 401 still says the API is up.
        return self._status("/v1/models") in ((200,) if self.api_key else (200, 401))

    def _wait_healthy(self, timeout: float) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while True:
            code = self.proc.poll()
            if code is not None:
                raise ServerStartError(
                    f"vllm serve {self.label} exited with code {code} while starting "
                    f"(log {self.log_path}): {log_tail(self.log_path)}"
                )
            if self._healthy():
                return
            if time.monotonic() > deadline:
                raise ServerStartError(
                    f"vllm serve {self.label} was not healthy after {timeout:.0f}s (--vllm-startup-timeout) "
                    f"(log {self.log_path}): {log_tail(self.log_path)}"
                )
            time.sleep(POLL_S)

    def stop(self) -> None:
        """SIGTERM the server's process group, wait, then SIGKILL whatever is left of it."""
        proc = self.proc
        if proc is None:
            return
        try:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                log.warning("vllm serve %s ignored SIGTERM for %.0fs; killing it", self.label, STOP_TIMEOUT_S)
        finally:  # also after a second Ctrl-C while it shuts down
            _signal_group(proc.pid, signal.SIGKILL)  # and engine workers that outlived the main process
            proc.wait()
            self.proc = None
        log.debug("vllm serve %s stopped", self.label)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


# The process-wide registry: one server per command line, shared by every role that asks for it.
_LOCK = threading.RLock()  # re-entrant: a SIGTERM handler may run while the main thread holds it
_SERVERS: dict[tuple[str, ...], VLLMServer] = {}
_STARTING: dict[tuple[str, ...], threading.Lock] = {}
_PREVIOUS_HANDLERS: dict[int, Any] = {}
_ATEXIT = False


def shared_server(
    command: list[str], label: str, api_key: str | None, log_dir: Path | None, timeout: float
) -> VLLMServer:
    """The running server for this command line, started (and waited for) if there is none yet."""
    global _ATEXIT
    key = tuple(command)
    with _LOCK:
        if key in _SERVERS and _SERVERS[key].ready:
            return _SERVERS[key]
        starting = _STARTING.setdefault(key, threading.Lock())
        if not _ATEXIT:
            atexit.register(shutdown_all)
            _ATEXIT = True
    _install_signal_handlers()
    with starting:  # another thread may be starting the same server: wait for it, then share it
        with _LOCK:
            if key in _SERVERS and _SERVERS[key].ready:
                return _SERVERS[key]
        server = VLLMServer(command, label, api_key, log_dir)
        with _LOCK:
            _SERVERS[key] = server  # registered before it starts, so exit handlers can stop it while it loads
        try:
            server.start(timeout)
        except BaseException:
            with _LOCK:
                _SERVERS.pop(key, None)
            raise
        return server


def running_servers() -> list[VLLMServer]:
    with _LOCK:
        return list(_SERVERS.values())


def shutdown_all() -> None:
    """Stop every server this process started (at exit, on SIGTERM/SIGHUP, and in tests)."""
    with _LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for server in servers:
        server.stop()


def _install_signal_handlers() -> None:
    """SIGTERM / SIGHUP would end us without atexit: stop the servers first, then let the signal do its work.

    SIGINT stays Python's: it raises KeyboardInterrupt, which the CLI turns into exit 130, and atexit stops the
    servers. Handlers can only be set from the main thread; elsewhere atexit alone has to do.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if sig in _PREVIOUS_HANDLERS:
            continue
        previous = signal.getsignal(sig)
        if previous == signal.SIG_IGN:  # e.g. under nohup: leave it ignored
            continue
        _PREVIOUS_HANDLERS[sig] = previous
        signal.signal(sig, _on_exit_signal)


def _on_exit_signal(signum: int, frame: Any) -> None:
    shutdown_all()
    previous = _PREVIOUS_HANDLERS.pop(signum, signal.SIG_DFL)
    if callable(previous):
        signal.signal(signum, previous)
        handler: Callable[[int, Any], Any] = previous
        handler(signum, frame)
        return
    signal.signal(signum, signal.SIG_DFL if previous is None else previous)
    os.kill(os.getpid(), signum)  # the default action, as if we had never caught it
