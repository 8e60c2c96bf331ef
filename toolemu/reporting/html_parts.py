"""The page's small parts, shared by every HTML renderer of the report: escaping, number formats, table cells.

The page (toolemu.reporting.html) and its sections (`*_html.py`) import these from here and never from each other's
modules, so the renderers form no import circle: the page imports its sections, the sections import this module
and the report model, and this module imports nothing of the report but the SVG writer's escaping.

Every string that came from a file or a model goes through `e` before it reaches the page.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import Any

from toolemu.reporting.svg import esc as e
from toolemu.reporting.svg import finite

__all__ = [
    "PALETTE",
    "STATUS_TITLES",
    "ci_text",
    "column_table",
    "count_cell",
    "csp_policy",
    "e",
    "embed_json",
    "embed_json_text",
    "finite",
    "fmt",
    "mean_text",
    "page",
    "pct",
    "rate_text",
    "run_td",
    "static_text",
    "swatch",
    "table",
    "td",
]

# Okabe-Ito: tells runs apart for colour-blind readers too; cycles past eight runs.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#F0E442")
STATUS_TITLES = {
    "final_answer": "final answer",
    "quit": "quit",
    "max_iterations": "max iterations",
    "token_limit": "token limit",
    "closed": "closed, no answer",
    "stopped": "server stopped, no answer",
    "error": "error",
    "unknown": "unknown",
}

_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")


def embed_json(data: Any) -> str:
    """JSON that is safe inside a <script> element: no `<`, `>` or `&` (so no `</script>` or `<!--`), and no
    U+2028/U+2029. These characters only occur inside JSON strings, where `\\uXXXX` means the same thing."""
    return embed_json_text(json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False))


def embed_json_text(text: str) -> str:
    """A JSON text made safe inside a <script> element, as `embed_json` does."""
    return _JSON_ESCAPE_RE.sub(lambda m: _JSON_ESCAPES[m.group(0)], text)


def csp_policy(nonce: str) -> str:
    return (
        f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'nonce-{nonce}'; "
        "base-uri 'none'; form-action 'none'"
    )


def static_text(name: str, package: str = "reporting") -> str:
    """One of a page's static files (toolemu/<package>/static: the report's, or the docs page's), as text; it goes
    inside a <style> or <script> element, so it may not close one."""
    text = (resources.files("toolemu") / package / "static" / name).read_text(encoding="utf-8")
    if "</style" in text.lower() or "</script" in text.lower():
        raise ValueError(f"{name} must not contain a closing </style> or </script> tag")
    return text


def page(title: str, css: str, body: str, js: str, nonce: str) -> str:
    """A whole page, nothing fetched: a Content-Security-Policy that lets only the scripts and styles carrying this
    render's `nonce` run, no referrer sent, the CSS inline, `body` (already escaped), then the script."""
    return "".join(
        [
            "<!DOCTYPE html>\n",
            '<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{e(csp_policy(nonce))}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="referrer" content="no-referrer">',
            '<link rel="icon" href="data:,">',
            f"<title>{e(title)}</title>",
            f'<style nonce="{nonce}">\n{css}\n</style>',
            "</head><body>",
            body,
            f'\n<script nonce="{nonce}">\n{js}\n</script>',
            "\n</body></html>\n",
        ]
    )


def fmt(x: float | None, digits: int = 2) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def pct(x: float | None) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{100 * x:.1f}%"


def ci_text(ci: Sequence[float] | None, pct: bool = False) -> str:
    if ci is None:
        return ""
    lo, hi = ci
    if pct:  # whole percents: a CI's bounds do not carry a tenth of a percent of meaning
        return "[–]" if not (finite(lo) and finite(hi)) else f"[{100 * lo:.0f}%, {100 * hi:.0f}%]"
    return f"[{fmt(lo)}, {fmt(hi)}]"


def rate_text(value: float | None, ci: tuple[float, float] | None) -> str:
    return f'{pct(value)} <span class="ci">{ci_text(ci, pct=True)}</span>'


def mean_text(value: float | None, ci: tuple[float, float] | None) -> str:
    return f'{fmt(value)} <span class="ci">{ci_text(ci)}</span>'


def swatch(color: str) -> str:
    return f'<span class="swatch" style="background:{e(color)}"></span>'


def count_cell(n: int, warn: bool = False, title: str = "") -> str:
    cls = "num zero" if n == 0 else ("num warn" if warn else "num")
    t = f' title="{e(title)}"' if title else ""
    return f'<td class="{cls}"{t}>{n}</td>'


def table(table_id: str, head: list[str], rows: list[list[str]]) -> str:
    """A narrow table of cells made by `td`; a heading that starts with "#" heads a column of numbers."""
    ths = "".join(f'<th class="num">{e(h[1:])}</th>' if h.startswith("#") else f"<th>{e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    return (
        f'<div class="table-wrap fit"><table class="stats narrow" id="{e(table_id)}"><thead><tr>{ths}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def td(text: str, num: bool = False) -> str:
    return f'<td class="num">{text}</td>' if num else f"<td>{text}</td>"


def run_td(run: str) -> str:
    return td(f'<span class="run-name">{e(run)}</span>')


Columns = Sequence[tuple[str, Callable[[Any], str]]]


def column_table(table_id: str, columns: Columns, items: Iterable[Any]) -> str:
    """A `table` declared column by column: each (heading, cell) heads its column and makes the column's cell of
    every item, one row an item."""
    return table(table_id, [head for head, _ in columns], [[cell(item) for _, cell in columns] for item in items])
