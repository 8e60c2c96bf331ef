"""Files beside the page that it loads on demand: each one a script that hands its data, a JS string, to the page.

A page opened from disk (file://) may not fetch a file beside it (Chrome refuses), but it may run a script, so each
sidecar file is one call, `<callback>("<token>", n, "<JSON as a JS string literal>")`, that the page's script
receives and hands to JSON.parse: the data stays a string, so no model text is ever read as code. The token names
one render: the page ignores a file of another render, and the next report deletes the files of earlier ones.

Used for the episodes' traces (toolemu.reporting.traces, `report_traces/`) and for each run's detail and episode list
(toolemu.reporting.html, `report_runs/`).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from pathlib import Path

import orjson

from toolemu.log.jsonl import write_bytes_atomic
from toolemu.paths import output_dir, output_error

_SIDECAR = re.compile(r"^(?P<token>[A-Za-z0-9]+)-(?P<n>\d+)\.js$")
# Line and paragraph separators end a line in a JS string literal before ES2019: escaped like the others.
_JS_LINE_ENDS = (("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029"))


def js_string(text: str) -> bytes:
    """`text` as a double-quoted JS string literal (UTF-8) that evaluates to exactly `text`: a JSON string literal is
    one (JSON's escapes mean the same in JS), once the two line separators JSON leaves raw are escaped too. orjson
    escapes a chunk of millions of quotes six times faster than the standard library, to the same bytes."""
    literal = orjson.dumps(text)
    for raw, escaped in _JS_LINE_ENDS:
        if raw in literal:
            literal = literal.replace(raw, escaped)
    return literal


class SidecarFolder:
    """`<directory>/<name>/<token>-<n>.js`, each calling `callback`; written whole (renamed into place), not fsynced:
    the next report makes them again."""

    def __init__(
        self,
        directory: Path,
        name: str,
        callback: str,
        token: str | None = None,
        scrub: Callable[[str], str] | None = None,
    ):
        self.directory = directory
        self.scrub = scrub or (lambda text: text)
        self.name = name
        self.callback = callback
        self.token = token or secrets.token_hex(8)
        self.files: list[Path] = []

    @property
    def folder(self) -> Path:
        return self.directory / self.name

    def write(self, n: int, text: str) -> Path:
        folder = output_dir(self.directory, "--out") / self.name  # a file in the way is one clear error
        try:
            folder.mkdir(exist_ok=True)
        except OSError as exc:
            raise output_error(folder, exc, "--out") from None
        path = folder / f"{self.token}-{n}.js"
        data = js_string(self.scrub(text))
        call = [self.callback.encode(), b"(", js_string(self.token), b",%d," % n, data, b");\n"]
        write_bytes_atomic(path, b"".join(call), "--out", durable=False)
        self.files.append(path)
        return path

    def remove_stale(self) -> int:
        """Delete the files of earlier renders in the folder (only files named as ours), and the folder when this
        render left nothing in it; returns how many files went."""
        folder = self.folder
        if not folder.is_dir():
            return 0
        try:
            stale = [p for p in folder.iterdir() if (m := _SIDECAR.match(p.name)) and m.group("token") != self.token]
            for path in stale:
                path.unlink()
            if not self.files and not any(folder.iterdir()):
                folder.rmdir()
        except OSError as exc:  # a read-only folder: the new page is written, the old files stay
            raise output_error(folder, exc, "--out") from None
        return len(stale)
