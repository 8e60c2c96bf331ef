"""`toolemu view`: a report's folder served on loopback, and the traces a large report refers to, read on demand.

A report that does not copy its traces (toolemu.reporting.traces) names each episode's trajectory file and record;
`report_sources.json` beside the page lists those files (numbered as the page numbers them), with their size and
modification time when the report read them. When an episode is opened, the page asks for
`_toolemu/trace.js?token=T&src=N&record=R`, a script (the page's CSP lets it load scripts only, no fetch) that calls
`toolemuTrace(token, src, record, text, problem)`. The server reads that run file through the reporting's own reader,
as the report read it, and hands back the record's trace as a JS string, scrubbed of secrets; or a problem: the file
changed since the report ("changed"), is gone ("missing"), or does not hold that record ("unreadable").

Only the files report_sources.json lists are read, only to build traces, and nothing is served beyond the folder.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from toolemu.reporting.sidecars import js_string
from toolemu.reporting.traces import trace_json
from toolemu.secrets import redactor

log = logging.getLogger("toolemu")

SOURCES_JSON = "report_sources.json"
TRACE_PATH = "/_toolemu/trace.js"
CACHED_FILES = 4  # run files whose traces are kept in memory, the most recently read


class TraceReader:
    """Traces by (source number, record), read from the run files report_sources.json lists."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.scrub = redactor()
        self._lock = threading.Lock()
        self._index: tuple[float, dict[str, Any]] | None = None
        self._files: OrderedDict[str, dict[int, str]] = OrderedDict()

    def index(self) -> dict[str, Any] | None:
        path = self.directory / SOURCES_JSON
        try:
            mtime = path.stat().st_mtime
            if self._index is None or self._index[0] != mtime:
                self._index = (mtime, json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None
        return self._index[1]

    def trace(self, token: str, src: int, record: int) -> tuple[str | None, str | None]:
        """(trace JSON, None), or (None, why not)."""
        with self._lock:  # one reader at a time: a run file is read once for all the traces asked of it
            index = self.index()
            if index is None or index.get("token") != token:
                return None, "unreadable"  # another render's page, or no report that refers to its files
            sources = index.get("sources") or []
            if not 0 <= src < len(sources):
                return None, "unreadable"
            source = sources[src]
            path = Path(str(source.get("path", "")))
            try:
                stat = path.stat()
            except OSError:
                return None, "missing"
            if (stat.st_size, stat.st_mtime_ns) != (source.get("size"), source.get("mtime_ns")):
                return None, "changed"
            traces = self._traces_of(path)
            text = traces.get(record)
            return (text, None) if text is not None else (None, "unreadable")

    def _traces_of(self, path: Path) -> dict[int, str]:
        key = str(path)
        if key in self._files:
            self._files.move_to_end(key)
            return self._files[key]
        from toolemu.reporting.load import load_run  # the reader and the model layer, only once a trace is asked

        try:
            run = load_run(path)
            traces = {view.record: self.scrub(trace_json(view)) for view in run.episodes if view.record is not None}
        except Exception as exc:  # a file that no longer reads: its traces are unreadable, the server goes on
            log.warning("%s: its traces could not be read (%s)", path, type(exc).__name__)
            traces = {}
        self._files[key] = traces
        while len(self._files) > CACHED_FILES:
            self._files.popitem(last=False)
        return traces


class ReportHandler(SimpleHTTPRequestHandler):
    """The folder's files, and its traces at TRACE_PATH."""

    def __init__(self, *args: Any, reader: TraceReader, **kwargs: Any):
        self.reader = reader
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        url = urlsplit(self.path)
        if url.path != TRACE_PATH:
            super().do_GET()
            return
        query = parse_qs(url.query)
        try:
            token = query["token"][0]
            src, record = int(query["src"][0]), int(query["record"][0])
        except (KeyError, IndexError, ValueError):
            self.send_error(400, "expected token, src and record")
            return
        text, problem = self.reader.trace(token, src, record)
        args = [js_string(token), b"%d" % src, b"%d" % record]
        args += [js_string(text)] if text is not None else [b"null", js_string(problem or "unreadable")]
        body = b"toolemuTrace(" + b",".join(args) + b");\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/javascript; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


def serve(directory: Path, port: int = 0) -> ThreadingHTTPServer:
    """A report folder on loopback only, in a background thread; `server.shutdown()` stops it."""
    handler = partial(ReportHandler, directory=str(directory), reader=TraceReader(directory))
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="report-server").start()
    return server
