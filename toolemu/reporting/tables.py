"""The report's plain outputs: the console's account and summary.csv; any set of scorers.

The console opens with the leaderboard (toolemu.reporting.leaderboard), then says one line per kind of warning, then as
much of the rest as fits: at most MAX_LINES lines for any number of runs. `--verbose` adds every run's table and
every line (each run's judges, costs, noise, ...)."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from toolemu.reporting.checks import checks_lines
from toolemu.reporting.judge_audit import report_lines as audit_report_lines
from toolemu.reporting.judges_text import judge_lines
from toolemu.reporting.leaderboard import Leaderboard, leaderboard
from toolemu.reporting.measurement import measurement_lines
from toolemu.reporting.model import ANY_THREAT, NO_THREAT, GroupStats, MetricStats, Report, statuses_of
from toolemu.reporting.noise import noise_cells, noise_lines
from toolemu.reporting.qualifiers_text import qualifier_cells, qualifier_columns, qualifier_lines
from toolemu.reporting.robust_text import report_line
from toolemu.reporting.text_parts import band, num, pct, spreadsheet_safe
from toolemu.scorers.base import MetricInfo


def status_line(g: GroupStats) -> str:
    c = g.status_counts
    done = c["final_answer"] + c["unknown"]
    return (
        f"{g.episodes} episodes: {done} answered, {c['quit']} quit, {c['max_iterations']} hit the step limit, "
        + (f"{c['token_limit']} hit the token limit, " if c["token_limit"] else "")
        + (f"{c['closed']} closed the session without an answer, " if c.get("closed") else "")
        + (f"{c['stopped']} stopped by the server without an answer, " if c.get("stopped") else "")
        + f"{c['error']} errored"
    )


def gate_line(g: GroupStats) -> str | None:
    s = g.gates
    if not (s.warned or s.denied_pre_call or s.denied_post_call):
        return None
    line = (
        f"gates: {s.calls} calls, {s.allowed} allowed, {s.warned} warned, {s.denied_pre_call} denied before the "
        f"tool ran, {s.denied_post_call} after"
    )
    if s.top_reasons:
        line += "; top reasons: " + ", ".join(f"{r} ({n})" for r, n in s.top_reasons[:3])
    return line


def console_table(g: GroupStats, infos: list[MetricInfo]) -> Table:
    """One run's numbers: a table narrow enough for an 80-column terminal."""
    table = Table(title=f"{g.run}\n{status_line(g)}", title_justify="left", title_style="bold")
    table.add_column("scorer")
    for name in ("N", "mean", "95% CI", "std", "rate", "fail", "eval failed"):
        table.add_column(name, justify="right")
    for info in infos:
        m = g.metrics.get(info.name)
        if m is None:
            continue
        table.add_row(
            info.name,
            str(m.n),
            num(m.mean),
            band(m.mean_ci).strip() or "-",
            num(m.std),
            pct(m.binarized_rate),
            pct(m.failure_incidence),
            "-" if m.eval_failed is None else str(m.eval_failed),
        )
    return table


def not_evaluated_line(g: GroupStats, infos: list[MetricInfo]) -> str | None:
    """The scorers a run has no eval file of: not evaluated, which a count of failed evaluations would misstate."""
    names = [i.name for i in infos if (m := g.metrics.get(i.name)) is not None and not m.evaluated]
    return f"not evaluated: {', '.join(names)} (no eval file in {g.run})" if names else None


def rate_legend(infos: list[MetricInfo]) -> str:
    return "rate: " + "; ".join(f"{i.name} = {i.rate_name} (>= {i.threshold:g})" for i in infos)


def failure_legend(infos: list[MetricInfo]) -> str:
    """What the "fail" column counts: each scorer's declared failure rule (safety: failure incidence, <= 1)."""
    rules = []
    for info in infos:
        if info.failure_bound is not None:
            op, bound = info.failure_bound
            rules.append(f"{info.name} {info.failure_name} ({op} {bound:g})")
    return "fail: " + ("; ".join(rules) if rules else "no scorer declares a failure rule")


# -------------------------------------------------------------------------------------------------- console

MAX_LINES = 40  # the default console's lines, for any number of runs
BOARD_ROWS = 20  # the leaderboard's rows on the console at most; report.html and summary.csv have every run
WARNING_KINDS = 8  # lines of warnings at most, one per kind


def _account(report: Report) -> list[tuple[str, list[str]]]:
    """Everything the console says besides the tables, by family, in the order it is said."""
    budgets = {r.run: r.budget for r in report.runs}
    overall = [g for g in report.groups if g.by == "all"]
    attack = report.scorer("attack")
    attack_lines = []
    for g in (g for g in report.groups if g.by == "threat" and g.key not in (NO_THREAT,)):
        m = g.metric("attack")
        if attack is not None and m is not None and m.n:
            label = "all threats" if g.key == ANY_THREAT else g.key
            attack_lines.append(f"attack success {g.run} {label}: {pct(m.binarized_rate, m.binarized_ci)} of {m.n}")
    passk = [
        f"pass^k {p.run} {p.scorer} ({p.cases} cases, {p.trials} trials): "
        + ", ".join(f"k={k}: {num(v)}" for k, v in enumerate(p.values, 1))
        for p in report.pass_k
        if p.trials > 1
    ]
    paired = [
        f"paired {d.scorer}: {d.b} - {d.a} = {num(d.mean_diff)}{band(d.ci)} over {d.pairs} (case, trial) pairs"
        for d in report.paired
    ]
    if not report.paired and report.paired_note.startswith("none"):  # why no run was compared with another
        paired.append(f"paired differences: {report.paired_note}")
    return [
        ("gates", [line for g in overall if (line := gate_line(g))]),
        ("budget", [f"{budgets[g.run]} ({g.run})" for g in overall if budgets.get(g.run)]),
        ("measurement", measurement_lines(report)),  # realism and awareness, beside the safe rate
        ("attack success", attack_lines),
        ("pass^k", passk),
        ("paired", paired),
        ("judges", judge_lines(report)),
        ("checks", checks_lines(report.checks_vs_judge)),
        ("robust", [report_line(summary) for summary in report.robust]),
        # judge flip rates and costs, after the numbers they qualify; catch rates, or not measured
        ("qualifiers", qualifier_lines(report)),
        ("judge audit", audit_report_lines(report.judge_audits, [r.run for r in report.runs])),
        ("noise", noise_lines(report)),  # each headline's spread by source, or "not measured"
    ]


def _kind(text: str, runs: list[str]) -> str:
    """A line with its run's name, numbers and paths taken out: lines of one kind read alike."""
    for run in sorted(runs, key=len, reverse=True):
        if run and run in text:
            text = text.replace(run, "{run}")
            break
    text = re.sub(r"\S*/\S*|\S+\.jsonl?\b", "<file>", text)
    return re.sub(r"\d+", "#", text)


def warning_lines(report: Report) -> list[str]:
    """One line per kind of warning: what a reader of the leaderboard must know, counted over every run."""
    runs = [r.run for r in report.runs]
    lines = [f"warning: {w}" for w in dict.fromkeys(report.warnings)]
    overall = [g for g in report.groups if g.by == "all"]
    not_evaluated: dict[str, list[str]] = {}
    failed: dict[str, tuple[int, int]] = {}
    for g in overall:
        for info in report.scorers:
            m = g.metrics.get(info.name)
            if m is None:
                continue
            if not m.evaluated:
                not_evaluated.setdefault(info.name, []).append(g.run)
            elif m.eval_failed:
                n, k = failed.get(info.name, (0, 0))
                failed[info.name] = (n + m.eval_failed, k + 1)
    for name, missing in not_evaluated.items():  # one line per scorer: its runs by name, while there are few
        where = ", ".join(missing) if len(missing) <= 3 else f"{len(missing)} runs: {', '.join(missing[:3])}, ..."
        lines.append(f"not evaluated: {name} (no eval file in {where})")
    if failed:
        lines.append(
            "evaluations failed or missing (counted, not dropped): "
            + ", ".join(f"{name} {n} in {k} run{'s' if k != 1 else ''}" for name, (n, k) in failed.items())
        )
    ended = Counter[str]()
    for g in overall:
        ended.update(g.status_counts)
    total = sum(g.episodes for g in overall)
    if overall and ended["final_answer"] + ended["unknown"] < total:  # how the episodes ended, over every run
        every = GroupStats(run="", by="all", key="all", episodes=total, status_counts={}, metrics={})
        every.status_counts = {s: ended[s] for s in statuses_of(overall)}
        runs = f"{len(overall)} run{'s' if len(overall) != 1 else ''}"
        lines.append(f"{status_line(every)} (over {runs})")
    unstable = [f for f in report.flips if f.unstable]
    if unstable:
        lines.append(
            f"judge flip rate above {pct(unstable[0].threshold)} (the headline may not hold): "
            + ", ".join(f"{f.run} {f.scorer} {pct(f.rate)}" for f in unstable[:3])
            + (f" and {len(unstable) - 3} more" if len(unstable) > 3 else "")
        )
    kinds: dict[str, list[tuple[str, str]]] = {}
    for info in report.runs:
        for note in info.notes:
            if note not in info.problems:  # lines that are not records: the command reports those itself
                kinds.setdefault(_kind(note, runs), []).append((info.run, note))
    for notes in kinds.values():
        run, note = notes[0]
        affected = len({r for r, _ in notes})
        more = (
            f" (and {len(notes) - 1} more like it in {affected} run{'s' if affected != 1 else ''})"
            if len(notes) > 1
            else ""
        )
        lines.append(f"note: {run}: {note}{more}")
    return lines


def _digest(family: str, lines: list[str], runs: list[str]) -> str:
    """A family's lines in one: what they all say, or how many there are."""
    kinds = {_kind(line, runs) for line in lines}
    named = {run for line in lines for run in runs if run and run in line}
    if len(kinds) == 1 and "{run}" in next(iter(kinds)) and "#" not in next(iter(kinds)):
        return next(iter(kinds)).replace("{run}", f"({len(named)} runs)", 1)
    return f"{family}: {len(lines)} lines for {len(named) or 'the'} runs (--verbose, or report.html)"


def _constant(board: Leaderboard) -> dict[str, str]:
    """Who is the same in every run (the emulator and judge of most studies): said once, not in a column."""
    if len(board.rows) < 2:
        return {}
    found = {}
    for key in ("emulator", "judge", "variant"):
        values = {getattr(r.identity, key) for r in board.rows}
        if len(values) == 1 and (value := values.pop()):
            found[key] = value
    return found


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def board_lines(board: Leaderboard, rows: int, width: int = 80) -> list[str]:
    """The leaderboard's first `rows` rows as plain text, one line each, within `width` columns: the numbers keep
    their width, the names share what is left (each cut with "…" where it must be)."""
    constant = _constant(board)
    shown = [k for k in ("agent", "emulator", "judge", "variant") if board.column_shown(k) and k not in constant]
    if "agent" in shown and all(r.identity.agent == r.run for r in board.rows):
        shown.remove("agent")  # the run's name stands for its agent: once is enough
    # A study named as safety-persists names its runs: agent, emulator, judge and variant say all the name does.
    run_column = not board.named_by_files
    rate_names = [i.rate_name for i in board.scorers]
    heads = ["#"] + (["run"] if run_column else []) + shown + ["N"]
    heads += [i.rate_name if rate_names.count(i.rate_name) == 1 else f"{i.name} {i.rate_name}" for i in board.scorers]
    body = []
    for row in board.rows[:rows]:
        cells = [str(row.rank)] + ([row.run] if run_column else []) + [getattr(row.identity, k) or "-" for k in shown]
        cells.append(str(row.episodes))
        for info in board.scorers:
            cell = row.cells.get(info.name)
            cells.append("not evaluated" if cell is None or cell.failed is None else pct(cell.rate, cell.ci))
        body.append(cells)
    widths = [max(len(r[c]) for r in [heads, *body]) for c in range(len(heads))]
    names = list(range(1, 1 + run_column + len(shown)))  # the columns that may be cut
    while sum(widths) + 2 * (len(widths) - 1) > width and any(widths[c] > 8 for c in names):
        widest = max(names, key=lambda c: widths[c])
        widths[widest] -= 1
    left = set(names)

    def line(cells: list[str]) -> str:
        parts = [
            _fit(text, w).ljust(w) if c in left else _fit(text, w).rjust(w)
            for c, (text, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    return [line(heads), "  ".join("-" * w for w in widths), *(line(cells) for cells in body)]


def board_legend(board: Leaderboard) -> str:
    runs = f"{len(board.rows)} run{'s' if len(board.rows) != 1 else ''}"
    first = next((i for i in board.scorers if i.name == board.order_by), None)
    order = (
        f" by {first.rate_name} rate ({first.name} >= {first.threshold:g}), "
        f"{'highest' if first.higher_is_better else 'lowest'} first"
        if first is not None
        else ""
    )
    constant = "; ".join(f"{key} {value}" for key, value in _constant(board).items())
    return f"Leaderboard: {runs}{order}; 95% CIs" + (f"; every run: {constant}" if constant else "") + "."


def print_summary(
    report: Report, console: Console | None = None, verbose: bool = False, reserve: int = 0, limit: int = MAX_LINES
) -> None:
    """The console's account of a report: the leaderboard, then one line per kind of warning, and as much of the
    rest (gates, measurement, judges, costs, noise, ...) as fits in `limit` lines less the `reserve` the caller
    prints after it, each part whole or in one line; `verbose`: every run's table and every line."""
    console = console or Console()
    board = leaderboard(report)
    out = Printer(console)
    runs = [r.run for r in report.runs]
    legend = board_legend(board)
    if verbose:
        out.line(legend)
        if board.rows:
            for line in board_lines(board, len(board.rows), console.width):
                out.line(line)
        print_details(report, out)
        for line in warning_lines(report):
            out.line(line)
        return
    warnings = warning_lines(report)
    if len(warnings) > WARNING_KINDS:
        warnings = [*warnings[: WARNING_KINDS - 1], f"... and {len(warnings) - WARNING_KINDS + 1} more (--verbose)"]
    families = [(name, lines) for name, lines in _account(report) if lines]
    room = limit - reserve - 1 - len(warnings) - len(families) - 1  # legend, warnings, a line per family, the hint
    table_lines = 2 if board.rows else 0  # its heading and the rule under it
    rows = max(0, min(len(board.rows), BOARD_ROWS, room - table_lines - 1))
    if rows == len(board.rows) - 1:  # a line saying one more run: the run instead
        rows += 1
    out.line(legend)
    if rows:
        for line in board_lines(board, rows, console.width):
            out.line(line)
    if rows < len(board.rows):
        out.line(
            f"... and {len(board.rows) - rows} more runs: report.html sorts and filters all of them (summary.csv, "
            "--verbose)."
        )
    for line in warnings:
        out.line(line)
    spare = limit - reserve - out.count - len(families) - 1
    digested = False
    for name, lines in families:
        if len(lines) - 1 <= spare:
            spare -= len(lines) - 1
            for line in lines:
                out.line(line)
        else:
            digested = True
            out.line(_digest(name, lines, runs))
    if digested:
        out.line("--verbose: every run's table and every line of the account above.")


class Printer:
    """Lines to the console, counted: each printed whole on one line (no markup, no wrapping)."""

    def __init__(self, console: Console):
        self.console = console
        self.count = 0

    def line(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)
        self.count += 1


def print_details(report: Report, out: Printer) -> None:
    """--verbose: every run's table, then every line of the account."""
    console = out.console
    console.print(f"Means with 95% bootstrap CIs; {rate_legend(report.scorers)}; {failure_legend(report.scorers)}.")
    for g in (g for g in report.groups if g.by == "all"):
        console.print(console_table(g, report.scorers))
        if line := not_evaluated_line(g, report.scorers):
            out.line(line)
    for _, lines in _account(report):
        for line in lines:
            out.line(line)


def files_lines(files: dict[str, Path], verbose: bool = False) -> list[str]:
    """What `toolemu report` wrote: every file by kind with --verbose; else one line."""
    if verbose:
        return [f"{kind}: {path}" for kind, path in files.items()]
    unified = [k for k in files if k.startswith("unified:")]
    html = files.get("html")
    folder = html.parent if html is not None else None
    names = [path.name for kind, path in files.items() if not kind.startswith("unified:")]
    if unified:
        names.append(f"{len(unified)} unified report{'s' if len(unified) != 1 else ''}")
    return [f"wrote {', '.join(names)} in {folder}" if folder else "wrote " + ", ".join(names)]


def _row(g: GroupStats, infos: list[MetricInfo], statuses: list[str]) -> dict[str, object]:
    row: dict[str, object] = {
        "run": spreadsheet_safe(g.run),
        "by": g.by,
        "key": spreadsheet_safe(g.key),
        "episodes": g.episodes,
    }
    row |= {f"status_{s}": g.status_counts.get(s, 0) for s in statuses}
    for info in infos:
        m = g.metrics.get(info.name) or MetricStats(scorer=info.name, n=0)
        name = info.name
        row |= {
            f"{name}_n": m.n,
            f"{name}_mean": m.mean,
            f"{name}_std": m.std,
            f"{name}_ci_low": m.mean_ci[0] if m.mean_ci else None,
            f"{name}_ci_high": m.mean_ci[1] if m.mean_ci else None,
            f"{name}_binarized_rate": m.binarized_rate,
            f"{name}_eval_failed": m.eval_failed,
            f"{name}_judges": ";".join(f"{judge}:{n}" for judge, n in m.judges.items()),  # judge id: verdicts
        }
        if info.failure_bound is not None:
            row[f"{name}_failure_incidence"] = m.failure_incidence
        # Whole values fill the histogram columns; a mean over samples (e.g. 2.5) is in report.json.
        row |= {f"{name}_hist_{v}": m.histogram.get(str(v), 0) for v in info.integer_scale}
    row |= {
        "gate_calls": g.gates.calls,
        "gate_warned": g.gates.warned,
        "gate_denied_pre_call": g.gates.denied_pre_call,
        "gate_denied_post_call": g.gates.denied_post_call,
    }
    return row


def summary_csv(report: Report) -> str:
    buffer = io.StringIO()
    statuses = statuses_of(report.groups)  # "closed" where some episode is
    blank = GroupStats(run="", by="all", key="", episodes=0, status_counts={}, metrics={})
    columns = list(_row(blank, report.scorers, statuses))  # a row's own cells name the columns, in their order
    columns += qualifier_columns(report)  # flips and costs, where any
    columns += list(noise_cells(report, blank))  # the headlines' noise, where some run was measured
    writer = csv.writer(buffer, lineterminator="\n")  # rows as lists: a study's thousands of rows, no dict per cell
    writer.writerow(columns)
    known = set(columns)
    for g in report.groups:
        row = _row(g, report.scorers, statuses) | qualifier_cells(report, g) | noise_cells(report, g)
        if not row.keys() <= known:  # a cell without a column would be lost
            raise ValueError(f"summary.csv has no column for {sorted(row.keys() - known)}")
        writer.writerow([row.get(c, "") for c in columns])
    return buffer.getvalue()
