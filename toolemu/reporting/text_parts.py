"""The console's small parts, shared by every plain-text renderer of the report (the console's lines, the commands
that print a summary): a share as a percentage and a number, each with its CI, or "-" where there is none."""

from __future__ import annotations

from collections.abc import Sequence


def band(ci: Sequence[float] | None, percent: bool = False) -> str:
    """' [low, high]': whole percents, or two decimals; nothing without a CI."""
    if ci is None:
        return ""
    return f" [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]" if percent else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def pct(value: float | None, ci: Sequence[float] | None = None, digits: int = 0) -> str:
    """'12% [5, 20]' (a CI in whole percents), or '-'."""
    return "-" if value is None else f"{100 * value:.{digits}f}%{band(ci, percent=True)}"


def spreadsheet_safe(text: str) -> str:
    """A CSV cell a spreadsheet will not run: one that starts like a formula gets a leading quote (names and model
    text come from files we did not write)."""
    return "'" + text if text.startswith(("=", "+", "-", "@")) else text


def num(value: float | None, ci: Sequence[float] | None = None, missing: str = "-") -> str:
    """'0.12 [0.05, 0.20]', or `missing`."""
    return missing if value is None else f"{value:.2f}{band(ci)}"
