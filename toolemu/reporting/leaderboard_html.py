"""The page's leaderboard: the first table on the page, one row per run, sortable and filterable.

The table is written whole by the server side (it reads without JavaScript); the page's script (static/report.js)
sorts it by any column (each cell carries the value it sorts by in `data-v`) and filters its rows by a search and by
emulator, judge and variant. A run's name links to its detail further down (#run-<n>), which loads on demand.

Every string that came from a file (run, model and variant names) goes through `e`.
"""

from __future__ import annotations

from toolemu.reporting.html_parts import ci_text, e, pct, swatch
from toolemu.reporting.leaderboard import Leaderboard, LeaderCell, LeaderRow

NOTE = (
    "One row per run. Rates are the share of a run's scored evaluations at or above each scorer's threshold, with "
    "bootstrap 95% CIs; N counts its episodes. Who is who comes from what the run recorded, else from its file "
    "names. Click a heading to sort, type or choose to filter; a run's name opens its detail."
)
FILTERS = (("emulator", "Emulator"), ("judge", "Judge"), ("variant", "Variant"))


def _num(value: float | int | None) -> str:
    return "" if value is None else repr(float(value))


def _rate_cell(cell: LeaderCell | None, name: str) -> str:
    if cell is None or cell.failed is None:
        return '<td class="num na" data-v="" title="the run has no eval file of this scorer">not evaluated</td>'
    failed = (
        f' <span class="sub warn" title="evaluations that errored or are missing">{cell.failed} failed</span>'
        if cell.failed
        else ""
    )
    title = f"{cell.n} scored evaluations of {name}"
    return (
        f'<td class="num" data-v="{_num(cell.rate)}" title="{e(title)}">{pct(cell.rate)}'
        f'<span class="ci">{ci_text(cell.ci, pct=True)}</span>{failed}</td>'
    )


def _text_cell(text: str, key: str) -> str:
    return f'<td class="lb-{key}" data-v="{e(text)}">{e(text) if text else "<span class=sub>–</span>"}</td>'


def _row(row: LeaderRow, board: Leaderboard, shown: list[str], colors: dict[str, str]) -> str:
    ident = row.identity
    label = ident.agent if board.named_by_files else row.run
    title = row.run + (f" (names from the {ident.named_by})" if ident.named_by else "")
    cells = [
        f'<td class="num rank" data-v="{row.rank}">{row.rank}</td>',
        f'<td class="lb-run" data-v="{e(label)}" title="{e(title)}"><a class="run-link" href="#run-{row.run_index}">'
        f'{swatch(colors.get(row.run, "#7F7F7F"))}<span class="run-name">{e(label)}</span></a></td>',
        *(_text_cell(getattr(ident, key), key) for key in shown),
        f'<td class="num strong" data-v="{row.episodes}">{row.episodes}</td>',
        f'<td class="num{" warn" if row.errored else " zero"}" data-v="{row.errored}">{row.errored}</td>',
        *(_rate_cell(row.cells.get(s.name), s.name) for s in board.scorers),
    ]
    data = "".join(f' data-{key}="{e(getattr(ident, key))}"' for key, _ in FILTERS)
    return f'<tr class="lb-row" data-run="{row.run_index}"{data}>{"".join(cells)}</tr>'


def _filters(board: Leaderboard) -> str:
    parts = [
        '<label class="filter grow"><span class="filter-label">Search</span>'
        '<input id="lb-search" type="search" placeholder="run, agent, emulator, judge, variant…" '
        'aria-label="filter the leaderboard"></label>'
    ]
    for key, title in FILTERS:
        values = sorted({getattr(r.identity, key) for r in board.rows} - {""})
        if len(values) < 2:
            continue
        options = "".join(f'<option value="{e(v)}">{e(v)}</option>' for v in values)
        parts.append(
            f'<label class="filter"><span class="filter-label">{title}</span><select id="lb-{key}" data-key="{key}">'
            f'<option value="">all</option>{options}</select></label>'
        )
    count = f"{len(board.rows)} run{'s' if len(board.rows) != 1 else ''}"
    parts.append(f'<div class="filter end"><span id="lb-count" class="count">showing {count}</span></div>')
    return f'<div class="filters lb-filters" role="search">{"".join(parts)}</div>'


def leaderboard_block(board: Leaderboard, colors: dict[str, str]) -> str:
    """The leaderboard, first in the page's summary: what the rates are, the filters, and the table."""
    if not board.rows:
        return '<div id="leaderboard"><h2>Leaderboard</h2><p class="empty">No runs in this report.</p></div>'
    by_files = board.named_by_files
    shown = [key for key in ("agent", "emulator", "judge", "variant") if board.column_shown(key)]
    if "agent" in shown and (by_files or all(r.identity.agent == r.run for r in board.rows)):
        shown.remove("agent")  # the first column names the agent (or the run is named by its agent)
    heads = [
        '<th class="num" data-sort="num" title="rank in the default order">#</th>',
        f'<th data-sort="text">{"Agent" if by_files else "Run"}</th>',
        *(f'<th data-sort="text">{key.capitalize()}</th>' for key in shown),
        '<th class="num" data-sort="num">N</th>',
        '<th class="num" data-sort="num" title="episodes that ended in an error">errored</th>',
        *(
            f'<th class="num" data-sort="num" data-scorer="{e(s.name)}" title="{e(s.title)}">'
            f"{e(s.rate_name)} ({e(s.name)} ≥&nbsp;{s.threshold:g}) [95% CI]</th>"
            for s in board.scorers
        ),
    ]
    body = "".join(_row(row, board, shown, colors) for row in board.rows)
    return (
        f'<div id="leaderboard"><h2>Leaderboard</h2><p class="note">{e(NOTE)} Order: {e(board.order_note)}.</p>'
        f"{_filters(board)}"
        f'<div class="table-wrap"><table class="stats leaderboard" id="leaderboard-table">'
        f"<thead><tr>{''.join(heads)}</tr></thead><tbody>{body}</tbody></table></div></div>"
    )
