"""Every episode's full trace (its steps and the judges' texts), kept out of the report's list and loaded when opened.

A study's traces are as large as its files (hundreds of MB), too large for a page, and a report that copied them
would be as large as its input; the list of episodes needs only a summary of each. So the traces are serialised as
they are read, in chunks of CHUNK_EPISODES, and the reader holds only summaries:

- while they are small (up to EMBED_LIMIT bytes), the chunks are kept in the page itself, each in its own
  `<script type="application/json">` block that the viewer parses when one of its episodes is opened: a small report
  opened from disk shows every trace;
- past that, a report refers to its run files (`reference=True`, what `toolemu report` does): the store drops what it
  held and serialises nothing more, the page names each episode's file and record, and `toolemu view` reads the
  trace from there when it is opened (toolemu.reporting.serve). The report folder stays a small part of its input;
- or, when asked (`toolemu report --copy-traces`, and a store made without `reference`), every chunk goes to a
  sidecar file beside the page, `report_traces/<token>-<n>.js`, that the viewer loads as a script (a `fetch` of a
  JSON file is refused on file://, a script is not): toolemu.reporting.sidecars. The folder then opens anywhere, on
  any machine, and is as large as the traces.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

from toolemu.reporting.model import EpisodeView
from toolemu.reporting.sidecars import SidecarFolder, js_string

__all__ = ["CHUNK_EPISODES", "EMBED_LIMIT", "TRACES_DIR", "TraceStore", "js_string", "store_views", "trace_json"]

CHUNK_EPISODES = 64  # episodes per chunk: one chunk is parsed when one of its episodes is opened
EMBED_LIMIT = 2_000_000  # bytes of trace JSON a page holds itself; past it the traces are referred to, or copied
TRACES_DIR = "report_traces"
TRACES_CALLBACK = "toolemuTraces"
TRACE_FIELDS = {"steps", "scores", "ledger"}  # the rest of an episode is in the list's summary


def trace_json(view: EpisodeView) -> str:
    """An episode's trace: its steps and every judge's verdict with its texts (NaN and infinities as null)."""
    return view.model_dump_json(include=TRACE_FIELDS)


class TraceStore:
    """Traces by id (the order they were added), in chunks; in memory until EMBED_LIMIT, then, with a `directory`,
    referred to (`reference`: nothing more is kept) or copied to sidecar files under it. Without a directory
    (a page rendered on its own) every trace stays in memory."""

    def __init__(
        self, directory: Path | None = None, scrub: Callable[[str], str] | None = None, reference: bool = False
    ):
        self.directory = directory
        self.reference = reference
        self.scrub = scrub or (lambda text: text)
        self.count = 0
        self.embedded: list[str] = []  # chunk JSON texts, while the traces are small
        self.referenced = False  # past the limit with `reference`: the page names each episode's file and record
        self.token = secrets.token_hex(8)  # names this render's sidecar files, so a stale page never reads them
        self._folder = SidecarFolder(directory, TRACES_DIR, TRACES_CALLBACK, self.token) if directory else None
        self._pending: list[str] = []
        self._bytes = 0
        self._sidecar = False

    @property
    def files(self) -> list[Path]:
        return self._folder.files if self._folder else []

    @property
    def in_files(self) -> bool:
        return bool(self.files)

    @property
    def wants_traces(self) -> bool:
        """False once the traces are referred to: `add` keeps nothing, so a reader need not build them."""
        return not self.referenced

    def add(self, view: EpisodeView) -> int | None:
        """Store a full view's trace; returns its id (None: referred to, not kept)."""
        if self.referenced:
            return None
        return self.add_text(trace_json(view))

    def add_text(self, text: str) -> int | None:
        """`add` of a trace already serialised (`trace_json`), as a report cache keeps it."""
        if self.referenced:
            return None
        self._pending.append(text)
        self._bytes += len(text)
        trace_id = self.count
        self.count += 1
        if len(self._pending) == CHUNK_EPISODES:
            self._close_chunk()
        elif self.reference and self._past_limit():
            self._refer()
        return trace_id

    def close(self) -> None:
        """Write out what is pending; after this, `embedded` or `files` holds every chunk (none when referred)."""
        if self._pending:
            self._close_chunk()

    def _past_limit(self) -> bool:
        return self.directory is not None and self._bytes > EMBED_LIMIT

    def _refer(self) -> None:
        self.referenced = True
        self.embedded, self._pending = [], []

    def _close_chunk(self) -> None:
        if self.reference and self._past_limit():
            self._refer()
            return
        chunk = self.scrub("[" + ",".join(self._pending) + "]")
        self._pending = []
        if self._past_limit() and not self._sidecar:
            self._sidecar = True  # past the limit: every chunk goes to a file, this one (maybe the first) too
            for n, earlier in enumerate(self.embedded):
                self._write(n, earlier)
            self.embedded = []
        if self._sidecar:
            self._write(len(self.files), chunk)
        else:
            self.embedded.append(chunk)

    def _write(self, n: int, chunk: str) -> None:
        assert self._folder is not None
        self._folder.write(n, chunk)

    def remove_stale(self) -> int:
        """Delete the sidecar files of earlier renders in this folder (only files named as ours); returns how many."""
        return self._folder.remove_stale() if self._folder else 0


def store_views(views: list[EpisodeView], store: TraceStore | None = None) -> TraceStore:
    """Every view's trace in a store (a new one in memory unless given), and its id in the view's `trace_id`; a
    summary read back from report.json has no steps to show (None). The store is closed."""
    store = store or TraceStore()
    for view in views:
        view.trace_id = store.add(view) if view.step_count is None else None
    store.close()
    return store
