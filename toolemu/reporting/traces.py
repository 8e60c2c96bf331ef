"""Every episode's full trace (its steps and the judges' texts), kept out of the report's list and loaded when opened.

A study's traces are as large as its dumps (hundreds of MB), too large for one page, while the list of episodes
needs only a summary of each. So the traces are written as they are read, in chunks of CHUNK_EPISODES, and the
reader holds only summaries:

- small reports keep their chunks in the page itself, each in its own `<script type="application/json">` block that
  the viewer parses when one of its episodes is opened;
- past EMBED_LIMIT bytes the chunks go to sidecar files beside the page, `report_traces/<token>-<n>.js`, that the
  viewer loads with a script element carrying the page's CSP nonce (a `fetch` of a JSON file is refused on file://,
  a script is not). Each file is one call, `toolemuTraces("<token>", n, "<chunk JSON as a JS string>")`: the data
  stays a string literal, which the viewer hands to JSON.parse, so no model text is ever read as code.

`toolemu view` serves the folder, so the sidecar files load over loopback HTTP as well.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from pathlib import Path

import orjson

from toolemu.log.jsonl import write_bytes_atomic
from toolemu.paths import output_dir, output_error
from toolemu.reporting.model import EpisodeView

CHUNK_EPISODES = 64  # episodes per chunk: one chunk is parsed when one of its episodes is opened
EMBED_LIMIT = 4_000_000  # bytes of trace JSON a page holds itself; past it every chunk goes to sidecar files
TRACES_DIR = "report_traces"
TRACE_FIELDS = {"steps", "scores", "ledger"}  # the rest of an episode is in the list's summary
_SIDECAR = re.compile(r"^(?P<token>[A-Za-z0-9]+)-(?P<n>\d+)\.js$")
# Line and paragraph separators end a line in a JS string literal before ES2019: escaped like the others.
_JS_LINE_ENDS = (("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def trace_json(view: EpisodeView) -> str:
    """An episode's trace: its steps and every judge's verdict with its texts (NaN and infinities as null)."""
    return view.model_dump_json(include=TRACE_FIELDS)


def js_string(text: str) -> bytes:
    """`text` as a double-quoted JS string literal (UTF-8) that evaluates to exactly `text`: a JSON string literal is
    one (JSON's escapes mean the same in JS), once the two line separators JSON leaves raw are escaped too. orjson
    escapes a chunk of millions of quotes six times faster than the standard library, to the same bytes."""
    literal = orjson.dumps(text)
    for raw, escaped in _JS_LINE_ENDS:
        if raw in literal:
            literal = literal.replace(raw, escaped)
    return literal


class TraceStore:
    """Traces by id (the order they were added), in chunks; in memory until EMBED_LIMIT, then in sidecar files
    under `directory` (None: always in memory, for a page rendered on its own)."""

    def __init__(self, directory: Path | None = None, scrub: Callable[[str], str] | None = None):
        self.directory = directory
        self.token = secrets.token_hex(8)  # names this render's sidecar files, so a stale page never reads them
        self.scrub = scrub or (lambda text: text)
        self.count = 0
        self.embedded: list[str] = []  # chunk JSON texts, while the traces are small
        self.files: list[Path] = []
        self._pending: list[str] = []
        self._bytes = 0
        self._sidecar = False

    @property
    def in_files(self) -> bool:
        return bool(self.files)

    def add(self, view: EpisodeView) -> int:
        """Store a full view's trace; returns its id."""
        text = trace_json(view)
        self._pending.append(text)
        self._bytes += len(text)
        trace_id = self.count
        self.count += 1
        if len(self._pending) == CHUNK_EPISODES:
            self._close_chunk()
        return trace_id

    def close(self) -> None:
        """Write out what is pending; after this, `embedded` or `files` holds every chunk."""
        if self._pending:
            self._close_chunk()

    def _close_chunk(self) -> None:
        chunk = self.scrub("[" + ",".join(self._pending) + "]")
        self._pending = []
        if self.directory is not None and not self._sidecar and self._bytes > EMBED_LIMIT:
            self._sidecar = True  # past the limit: every chunk goes to a file, this one (maybe the first) too
            for n, earlier in enumerate(self.embedded):
                self._write(n, earlier)
            self.embedded = []
        if self._sidecar:
            self._write(len(self.files), chunk)
        else:
            self.embedded.append(chunk)

    def _write(self, n: int, chunk: str) -> None:
        assert self.directory is not None
        folder = output_dir(self.directory, "--out") / TRACES_DIR  # a file in the way is one clear error
        try:
            folder.mkdir(exist_ok=True)
        except OSError as exc:
            raise output_error(folder, exc, "--out") from None
        path = folder / f"{self.token}-{n}.js"
        call = [b"toolemuTraces(", js_string(self.token), b",%d," % n, js_string(chunk), b");\n"]
        write_bytes_atomic(path, b"".join(call), "--out", durable=False)  # remade by the next report
        self.files.append(path)

    def remove_stale(self) -> int:
        """Delete the sidecar files of earlier renders in this folder (only files named as ours); returns how many."""
        if self.directory is None or not (self.directory / TRACES_DIR).is_dir():
            return 0
        folder = self.directory / TRACES_DIR
        try:
            stale = [p for p in folder.iterdir() if (m := _SIDECAR.match(p.name)) and m.group("token") != self.token]
            for path in stale:
                path.unlink()
            if not self.in_files and not any(folder.iterdir()):
                folder.rmdir()
        except OSError as exc:  # a read-only folder: the new page is written, the old sidecar files stay
            raise output_error(folder, exc, "--out") from None
        return len(stale)


def store_views(views: list[EpisodeView], store: TraceStore | None = None) -> TraceStore:
    """Every view's trace in a store (a new one in memory unless given), and its id in the view's `trace_id`; a
    summary read back from report.json has no steps to show (None). The store is closed."""
    store = store or TraceStore()
    for view in views:
        view.trace_id = store.add(view) if view.step_count is None else None
    store.close()
    return store
