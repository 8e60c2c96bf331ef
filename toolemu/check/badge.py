"""summary.svg: a standalone card for pull requests: the verdict and each checked number against its limit."""

from __future__ import annotations

from html import escape

from toolemu.check.thresholds import CheckResult

COLORS = {"OK": "#1a7f37", "WARN": "#9a6700", "FAIL": "#cf222e"}
ROW = 22


def summary_svg(run: str, result: CheckResult) -> str:
    width, top = 520, 56
    height = top + ROW * max(1, len(result.measures)) + 14
    color = COLORS[result.verdict if not result.from_warn else "FAIL"]
    verdict = "FAIL" if result.from_warn else result.verdict
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="DejaVu Sans, Verdana, sans-serif" font-size="13">',
        f"<title>ToolEmu check: {escape(verdict)} for {escape(run)}</title>",
        f'<rect width="{width}" height="{height}" rx="6" fill="#ffffff" stroke="#d0d7de"/>',
        f'<rect x="12" y="12" width="70" height="28" rx="4" fill="{color}"/>',
        f'<text x="47" y="31" fill="#ffffff" font-weight="bold" text-anchor="middle">{escape(verdict)}</text>',
        f'<text x="94" y="31" fill="#24292f" font-weight="bold">{escape(run[:48])}</text>',
    ]
    if not result.measures:
        parts.append(f'<text x="14" y="{top + 14}" fill="#57606a">no thresholds set</text>')
    for i, m in enumerate(result.measures):
        y = top + ROW * i + 14
        mark, mark_color = ("✔", COLORS["OK"]) if m.met else ("✘", color)
        op = "≥" if m.kind == "min" else "≤"
        parts += [
            f'<text x="14" y="{y}" fill="{mark_color}">{mark}</text>',
            f'<text x="34" y="{y}" fill="#24292f">{escape(m.label)}</text>',
            f'<text x="330" y="{y}" fill="#24292f" text-anchor="end" font-weight="bold">'
            f"{escape(m.text(m.value))}</text>",
            f'<text x="344" y="{y}" fill="#57606a">{op} {escape(m.text(m.limit))}</text>',
        ]
    parts.append("</svg>\n")
    return "".join(parts)
