"""A small, safe subset of Markdown for policy documents: headings, paragraphs, lists (numbered rules keep their
numbers), fenced code, `code` and **bold**.

Everything else is text. Every piece of the input goes through `html.escape`, so raw HTML in a document shows up
literally; no links or images are made, so the page never points anywhere a document chooses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from toolemu.reporting.html_parts import e

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^\s*(\d{1,9})[.)]\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*")


@dataclass
class _List:
    ordered: bool
    items: list[tuple[int | None, list[str]]] = field(default_factory=list)


def inline(text: str) -> str:
    """Escaped text with `code` spans and **bold**; what lies between the marks is escaped too."""
    out, last = [], 0
    for m in _INLINE.finditer(text):
        out.append(e(text[last : m.start()]))
        out.append(f"<code>{e(m[1])}</code>" if m[1] is not None else f"<strong>{e(m[2])}</strong>")
        last = m.end()
    out.append(e(text[last:]))
    return "".join(out)


def _render_list(block: _List) -> str:
    items = []
    for number, lines in block.items:
        value = f' value="{number}"' if number is not None else ""
        items.append(f"<li{value}>{inline(' '.join(lines))}</li>")
    tag = "ol" if block.ordered else "ul"
    return f"<{tag}>{''.join(items)}</{tag}>"


def render_markdown(text: str, top_level: int = 4) -> str:
    """HTML for `text`; a document's `#` becomes `<h{top_level}>` so it nests under the page's own headings."""
    blocks: list[str] = []
    paragraph: list[str] = []
    current: _List | None = None
    code: list[str] | None = None

    def flush() -> None:
        nonlocal current
        if paragraph:
            blocks.append(f"<p>{inline(' '.join(paragraph))}</p>")
            paragraph.clear()
        if current is not None:
            blocks.append(_render_list(current))
            current = None

    for raw in text.splitlines():
        if code is not None:
            if _FENCE.match(raw):
                blocks.append(f'<pre class="code">{e(chr(10).join(code))}</pre>')
                code = None
            else:
                code.append(raw)
            continue
        line = raw.strip()
        heading, bullet, numbered = _HEADING.match(line), _BULLET.match(raw), _NUMBERED.match(raw)
        if _FENCE.match(raw):
            flush()
            code = []
        elif not line:
            flush()
        elif heading:
            flush()
            level = min(6, top_level + len(heading[1]) - 1)
            blocks.append(f"<h{level}>{inline(heading[2])}</h{level}>")
        elif bullet or numbered:
            ordered = numbered is not None
            if paragraph or (current is not None and current.ordered != ordered):
                flush()
            if current is None:
                current = _List(ordered)
            current.items.append((int(numbered[1]), [numbered[2]]) if numbered else (None, [bullet[1]]))
        elif current is not None:
            current.items[-1][1].append(line)  # an item that runs over several lines
        else:
            paragraph.append(line)
    if code is not None:  # an unclosed fence: keep the text
        blocks.append(f'<pre class="code">{e(chr(10).join(code))}</pre>')
    flush()
    return "".join(blocks)
