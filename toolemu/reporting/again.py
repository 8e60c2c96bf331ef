"""The same report again: `toolemu report` with the same arguments, on files not written since, by the same code,
into a folder the last such report left as it was, says that report's console again and reads or writes nothing.

A report of unchanged runs is already made from the report cache (toolemu.reporting.cache), but it still starts
the report's code, reads every run's entry and writes every output again: at the published study's size that is
about three times a bare parse of the study. This is the step before it, taken before any of the report's code is
imported. Its entry (`again/<key>.json` in the report cache's folder) is keyed by

- the arguments after `report`, the working directory, the `TOOLEMU_*` variables and those that shape the console
  (its width, colour, whether it is a terminal);
- the code: every file of the `toolemu` package, the interpreter, and the versions of the libraries that compute
  and print a report;
- the secrets this process knows (toolemu.reporting.cache.secrets_fingerprint: a new key is a new entry);

and holds the stat (device, inode, size, modification and change times in nanoseconds) of every file below each
run folder named (beside each file named, and each `--fidelity` and `--judge-accuracy` path), the stat of every
file the report wrote, and what it printed. It is used only where every one of those files has the same stat now,
and no other file has appeared: a write sets the change time, which no user can set back. An entry is stored only
for a report that ended with exit code 0, whose inputs did not change while it ran, none of them changed within
RACY_S of its end. Anything unexpected is a miss and the report is made; an entry is never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from toolemu.reporting import cache as report_cache
from toolemu.reporting.cache import ReportCache, cache_dir, package_hash, secrets_fingerprint

FORMAT = 1
FOLDER = "again"
MAX_FILES = 100_000  # a walk past this many files is not worth a shortcut: the report is made
# Libraries whose version changes what a report computes or prints.
LIBRARIES = ("pydantic", "pydantic_core", "numpy", "scipy", "statsmodels", "pandas", "orjson", "rich", "typer")
# Variables that shape the console's look, beside every TOOLEMU_* one.
CONSOLE_VARIABLES = ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM", "COLORTERM", "TTY_COMPATIBLE")
PATH_OPTIONS = ("judge_accuracy", "fidelity")

Stat = list[int]  # device, inode, size, mtime_ns, ctime_ns


def _stat(path: str) -> Stat:
    st = os.stat(path)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


# ------------------------------------------------------------------------------------------------ the key


def _code() -> str:
    from importlib import metadata

    h = hashlib.sha256(sys.version.encode() + b"\0")
    h.update(package_hash(Path(__file__).resolve().parents[1]).encode())
    for name in LIBRARIES:
        try:
            h.update(f"{name}={metadata.version(name)}\0".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name}=-\0".encode())
    return h.hexdigest()


def _console() -> list[Any]:
    state: list[Any] = []
    for stream in (sys.stdout, sys.stderr):
        try:
            tty = stream.isatty()
            size = tuple(os.get_terminal_size(stream.fileno())) if tty else None
        except (AttributeError, OSError, ValueError):
            tty, size = None, None
        state.append([tty, size, getattr(stream, "encoding", None)])
    return state


def _secrets(cache: ReportCache) -> str:
    """The secrets known now, fingerprinted as the report cache does (with its salt, made here if there is none)."""
    from toolemu.secrets import secret_values

    return secrets_fingerprint(cache.salt()) if secret_values() else "none"


def _key(args: list[str], cache: ReportCache) -> str:
    secrets = _secrets(cache)
    variables = {k: v for k, v in os.environ.items() if k.startswith("TOOLEMU_") or k in CONSOLE_VARIABLES}
    what = [FORMAT, args, os.getcwd(), sorted(variables.items()), _console(), _code(), secrets]
    return hashlib.sha256(json.dumps(what, default=str).encode()).hexdigest()


# ----------------------------------------------------------------------------------------------- the files


def _roots(params: dict[str, Any]) -> list[tuple[str, bool]] | None:
    """Where the report reads: (a folder or file, whether to walk below it). A run folder is walked whole; a file
    named is read with what lies beside it (its eval files, its run.json). None: a path that is not there."""
    roots: list[tuple[str, bool]] = []
    for dump in params.get("dumps") or []:
        path = os.path.abspath(dump)
        if os.path.isdir(path):
            roots.append((path, True))
        elif os.path.isfile(path):
            roots.append((os.path.dirname(path), False))
        else:
            return None
    for name in PATH_OPTIONS:
        value = params.get(name)
        for given in value if isinstance(value, list | tuple) else [value] if value is not None else []:
            path = os.path.abspath(given)
            if not os.path.exists(path):
                return None
            roots.append((path, os.path.isdir(path)))
    return roots


def _walk(roots: list[tuple[str, bool]], skip: str | None) -> dict[str, Stat] | None:
    """Every file below (or in) each root, by its absolute path, with its stat; `skip`: a folder left out (the
    report cache's, which every report writes). None: too many files, or one that went while it was walked."""
    found: dict[str, Stat] = {}
    try:
        for root, deep in roots:
            if os.path.isfile(root):
                found[root] = _stat(root)
                continue
            for folder, dirs, files in os.walk(root, followlinks=True):
                if skip is not None:
                    dirs[:] = [d for d in dirs if os.path.join(folder, d) != skip]
                if not deep:
                    dirs[:] = []
                for name in files:
                    path = os.path.join(folder, name)
                    found[path] = _stat(path)
                if len(found) > MAX_FILES:
                    return None
    except OSError:
        return None
    return found


# ---------------------------------------------------------------------------------------------- the entry


class _Plan:
    """One report's shortcut: its key, the cache it lives in, and where the report reads."""

    def __init__(self, cache: ReportCache, key: str, roots: list[tuple[str, bool]]):
        self.cache, self.key, self.roots = cache, key, roots
        self.skip = os.path.abspath(cache.root)

    @property
    def entry(self) -> Path:
        return self.cache.root / FOLDER / f"{self.key}.json"

    def said_again(self) -> bool:
        """Print the stored console where every file is as the entry has it; False (and nothing printed) else."""
        try:
            entry = json.loads(self.entry.read_bytes())
        except (OSError, ValueError):
            return False
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            return False
        try:
            outputs: dict[str, Stat] = entry["outputs"]
            if any(_stat(path) != stat for path, stat in outputs.items()):
                return False
            now = _walk(self.roots, self.skip)
            if now is None or {p: s for p, s in now.items() if p not in outputs} != entry["inputs"]:
                return False
            console = [(sys.stdout if stream == "out" else sys.stderr, str(text)) for stream, text in entry["console"]]
        except (OSError, KeyError, TypeError, ValueError, AttributeError):
            return False
        for stream, text in console:  # past here it is said: a closed console fails as the report's own would
            stream.write(text)
        sys.stdout.flush()
        sys.stderr.flush()
        return True

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Run the report with its console copied and its writes noted; store the entry if it ended with 0 and its
        inputs held still."""
        from toolemu.log.jsonl import noting_writes

        before = _walk(self.roots, self.skip)
        console: list[list[str]] = []
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = _Copy(sys.stdout, "out", console), _Copy(sys.stderr, "err", console)  # type: ignore[assignment]
        code: object = 0
        try:
            with noting_writes() as written:
                try:
                    yield
                except SystemExit as exc:
                    code = exc.code
                    raise
        finally:
            sys.stdout, sys.stderr = saved
            if code in (0, None) and before is not None:
                self._store(before, written, console)

    def _store(self, before: dict[str, Stat], written: list[Path], console: list[list[str]]) -> None:
        ended = time.time()
        outputs: dict[str, Stat] = {}
        try:
            for path in dict.fromkeys(os.path.abspath(p) for p in written):
                if not os.path.isfile(path):
                    return  # written in place (a pipe, a device): not there to be found again
                outputs[path] = _stat(path)
        except OSError:
            return  # a file it wrote is gone already
        after = _walk(self.roots, self.skip)
        if after is None:
            return
        inputs = {p: s for p, s in after.items() if p not in outputs}
        if inputs != {p: s for p, s in before.items() if p not in outputs}:
            return  # an input changed (or came, or went) while the report ran: what it read is not known
        if any(ended - max(s[3], s[4]) / 1e9 <= report_cache.RACY_S for s in inputs.values()):
            return  # written within a tick of the clock: a later write might keep the same stat
        entry = {"format": FORMAT, "inputs": inputs, "outputs": outputs, "console": console}
        self.cache._write(self.entry, json.dumps(entry).encode())


class _Copy:
    """A console stream that also keeps what is written to it, in order with the other stream's."""

    def __init__(self, stream: TextIO, name: str, kept: list[list[str]]):
        self._stream, self._name, self._kept = stream, name, kept

    def write(self, text: Any) -> int:
        written = self._stream.write(text)
        if isinstance(text, str):
            if self._kept and self._kept[-1][0] == self._name:
                self._kept[-1][1] += text
            else:
                self._kept.append([self._name, text])
        return written

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def plan(args: list[str], parse: Callable[[list[str]], dict[str, Any] | None]) -> _Plan | None:
    """The shortcut for `toolemu ARGS`, or None: not a report, the report cache is off, or a path is not there.
    `parse`: the report command's parameters as the command line reads them (None: not a report, or arguments it
    does not read quietly)."""
    if not args or args[0] != "report" or "--help" in args:
        return None
    root = cache_dir()
    params = parse(args[1:]) if root is not None else None
    roots = _roots(params) if params is not None else None
    if root is None or roots is None:
        return None
    cache = ReportCache(root, _warned=True)  # a cache that cannot be written is the report's to say, once
    return _Plan(cache, _key(args, cache), roots)
