"""A small SVG writer for the report's plots: shapes, text, linear axes and colour scales, as inline SVG text.

Every string that reaches the SVG goes through `html.escape` (element text and attribute values alike), and
control characters become U+FFFD, so a run or toolkit name is only ever text. No script, no link, no foreignObject,
no id (several plots share one page): only the elements `Canvas` writes.

Text widths are estimated from the character count (no font metrics: the browser draws the text in its own
sans-serif), which is enough to leave room for labels.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Sequence

CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # written as U+FFFD: a name is only ever text
CHAR_WIDTH = 0.6  # an average sans-serif character's width, in font sizes (a little generous: labels never clip)
FONT = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"
INK = "#222222"
MUTED = "#555555"
GRID = "#e3e3e3"
MISSING = "#eeeeee"

# Colour scales as anchors at even steps, interpolated in between (ColorBrewer's RdYlBu and Blues).
RED_YELLOW_BLUE = (
    "#a50026",
    "#d73027",
    "#f46d43",
    "#fdae61",
    "#fee090",
    "#ffffbf",
    "#e0f3f8",
    "#abd9e9",
    "#74add1",
    "#4575b4",
    "#313695",
)
BLUES = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")


def esc(text: object) -> str:
    """Escape for HTML and SVG text and double- or single-quoted attributes (the page's `e` too)."""
    return html.escape(CONTROL_RE.sub("\ufffd", str(text)), quote=True)


def finite(x: float | None) -> bool:
    return x is not None and math.isfinite(x)


def num(x: float) -> str:
    """A coordinate: two decimals at most, no trailing zeros."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def color_at(anchors: Sequence[str], t: float) -> str:
    """The colour at t in [0, 1] along `anchors` (linear in RGB between neighbours); t is clamped."""
    t = min(1.0, max(0.0, t)) * (len(anchors) - 1)
    i = min(int(t), len(anchors) - 2)
    a, b = _rgb(anchors[i]), _rgb(anchors[i + 1])
    f = t - i
    return "#" + "".join(f"{round(x + (y - x) * f):02x}" for x, y in zip(a, b, strict=True))


class Scale:
    """A linear map from data [low, high] to pixels [start, end] (end may be below start: a y axis)."""

    def __init__(self, low: float, high: float, start: float, end: float):
        self.low, self.high, self.start, self.end = low, high, start, end

    def __call__(self, value: float) -> float:
        span = self.high - self.low or 1.0
        return self.start + (value - self.low) / span * (self.end - self.start)


def nice_ticks(low: float, high: float, most: int = 6) -> list[float]:
    """Round tick values from low to high (inclusive), at most about `most` of them."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / max(1, most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    return [round(first + i * step, 10) for i in range(int((high - first) / step + 1e-9) + 1)]


def tick_text(value: float, percent: bool = False) -> str:
    if percent:
        return f"{100 * value:.0f}%"
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


# Line styles and markers, by name: what the pass^k plot's caption calls them.
DASHES = {"solid": "", "dashed": "6 3", "dotted": "1.5 2.5", "dash-dotted": "6 2.5 1.5 2.5"}


class Canvas:
    """An SVG picture built element by element; `svg()` gives the text."""

    def __init__(self, width: float, height: float, label: str = ""):
        self.width, self.height, self.label = width, height, label
        self.parts: list[str] = []

    # ------------------------------------------------------------------------------------------ shapes

    def rect(self, x: float, y: float, w: float, h: float, fill: str, title: str = "") -> None:
        attrs = f'x="{num(x)}" y="{num(y)}" width="{num(max(0.0, w))}" height="{num(max(0.0, h))}"'
        shape = f'<rect {attrs} fill="{esc(fill)}"'
        self.parts.append(f"{shape}><title>{esc(title)}</title></rect>" if title else f"{shape}/>")

    def line(self, x1: float, y1: float, x2: float, y2: float, stroke: str = INK, width: float = 1.0) -> None:
        self.parts.append(
            f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" stroke="{esc(stroke)}" '
            f'stroke-width="{num(width)}"/>'
        )

    def polyline(self, points: Iterable[tuple[float, float]], stroke: str, width: float = 1.5, dash: str = "") -> None:
        coords = " ".join(f"{num(x)},{num(y)}" for x, y in points)
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(
            f'<polyline points="{coords}" fill="none" stroke="{esc(stroke)}" stroke-width="{num(width)}"{dashed}/>'
        )

    def marker(self, x: float, y: float, shape: str, size: float, fill: str, title: str = "") -> None:
        """A point: "o" circle, "s" square, "^" triangle, "D" diamond; `size` its radius."""
        r = size
        if shape == "s":
            body = f'<rect x="{num(x - r)}" y="{num(y - r)}" width="{num(2 * r)}" height="{num(2 * r)}"'
        elif shape in ("^", "D"):
            pts = (
                [(x, y - r * 1.2), (x + r * 1.1, y + r * 0.8), (x - r * 1.1, y + r * 0.8)]
                if shape == "^"
                else [(x, y - r * 1.3), (x + r, y), (x, y + r * 1.3), (x - r, y)]
            )
            body = '<polygon points="' + " ".join(f"{num(a)},{num(b)}" for a, b in pts) + '"'
        else:
            body = f'<circle cx="{num(x)}" cy="{num(y)}" r="{num(r)}"'
        shape = f'{body} fill="{esc(fill)}"/>'
        self.parts.append(f"<g><title>{esc(title)}</title>{shape}</g>" if title else shape)

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: float = 9,
        anchor: str = "start",
        weight: str = "",
        fill: str = INK,
        rotate: float = 0,
    ) -> None:
        attrs = f'x="{num(x)}" y="{num(y)}" font-size="{num(size)}"'
        if anchor != "start":
            attrs += f' text-anchor="{anchor}"'
        if weight:
            attrs += f' font-weight="{weight}"'
        if fill != INK:
            attrs += f' fill="{esc(fill)}"'
        if rotate:
            attrs += f' transform="rotate({num(rotate)} {num(x)} {num(y)})"'
        self.parts.append(f"<text {attrs}>{esc(text)}</text>")

    # ------------------------------------------------------------------------------------------ pieces

    def swatch(self, x: float, y: float, color: str, size: float = 9) -> None:
        self.rect(x, y - size + 1.5, size, size, color)

    def legend_rows(self, x: float, y: float, items: Sequence[tuple[str, str]], size: float = 8.5) -> float:
        """A swatch and a label per line, from (x, y); returns the y below the last line."""
        for color, label in items:
            self.swatch(x, y, color, size)
            self.text(x + size + 5, y, label, size)
            y += size + 6
        return y

    def x_axis(
        self, scale: Scale, y: float, ticks: Sequence[float], labels: Sequence[str], grid_to: float | None = None
    ) -> None:
        """Ticks and their labels below y; with `grid_to`, light vertical grid lines up to that y."""
        for value, label in zip(ticks, labels, strict=True):
            x = scale(value)
            if grid_to is not None:
                self.line(x, grid_to, x, y, GRID, 0.6)
            self.line(x, y, x, y + 3, MUTED, 0.8)
            self.text(x, y + 13, label, 8.5, "middle", fill=MUTED)
        self.line(scale.start, y, scale.end, y, MUTED, 0.8)

    def y_axis(
        self, scale: Scale, x: float, ticks: Sequence[float], labels: Sequence[str], grid_to: float | None = None
    ) -> None:
        """Ticks and their labels left of x; with `grid_to`, light horizontal grid lines out to that x."""
        for value, label in zip(ticks, labels, strict=True):
            y = scale(value)
            if grid_to is not None:
                self.line(x, y, grid_to, y, GRID, 0.6)
            self.line(x - 3, y, x, y, MUTED, 0.8)
            self.text(x - 5, y + 3, label, 8.5, "end", fill=MUTED)
        self.line(x, scale.start, x, scale.end, MUTED, 0.8)

    def color_bar(
        self,
        x: float,
        top: float,
        height: float,
        anchors: Sequence[str],
        low: float,
        high: float,
        label: str,
        percent: bool = False,
    ) -> None:
        """A vertical colour scale (high at the top) with ticks and a label; steps, not a gradient (a gradient
        needs an id, and ids would clash between the plots of one page)."""
        steps, width = 32, 10
        for i in range(steps):
            self.rect(
                x, top + height * i / steps, width, height / steps + 0.4, color_at(anchors, 1 - (i + 0.5) / steps)
            )
        scale = Scale(low, high, top + height, top)
        for value in nice_ticks(low, high, 5):
            self.line(x + width, scale(value), x + width + 3, scale(value), MUTED, 0.8)
            self.text(x + width + 5, scale(value) + 3, tick_text(value, percent), 8, fill=MUTED)
        self.text(x + width + 34, top + height / 2, label, 8.5, "middle", fill=MUTED, rotate=90)

    def svg(self) -> str:
        label = f' aria-label="{esc(self.label)}"' if self.label else ""
        return (
            f'<svg width="{num(self.width)}" height="{num(self.height)}" '
            f'viewBox="0 0 {num(self.width)} {num(self.height)}" role="img"{label} font-family="{FONT}" '
            f'font-size="9" fill="{INK}">' + "".join(self.parts) + "</svg>"
        )
