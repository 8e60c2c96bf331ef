"""The person's terminal: a line prompt with tab completion (prompt_toolkit) and rich output.

A prompt ends the episode two ways: Ctrl-D (end of input) raises PlayerLeft, Ctrl-C raises KeyboardInterrupt as
anywhere else. When stdin is not a terminal (a pipe, a script), lines are read plainly, without completion.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from rich.console import Console


class PlayerLeft(Exception):
    """The person ended the episode at a prompt (Ctrl-D, or `quit`)."""


class WordCompleter(Completer):
    """Completes the first word from `first`, and the second from `after[first word]` (e.g. `spec <tool>`).

    Matching ignores case, so `gmailse<Tab>` finds `GmailSendEmail`."""

    def __init__(self, first: Sequence[str], after: Mapping[str, Sequence[str]] | None = None):
        self.first, self.after = list(first), dict(after or {})

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        words = document.text_before_cursor.split(" ")
        if len(words) == 1:
            candidates = self.first
        elif len(words) == 2 and words[0] in self.after:
            candidates = list(self.after[words[0]])
        else:
            return
        typed = words[-1]
        for word in candidates:
            if word.lower().startswith(typed.lower()):
                yield Completion(word, start_position=-len(typed))


class Terminal:
    """Reads the person's lines and shows them what happens."""

    def __init__(self, console: Console | None = None, interactive: bool | None = None):
        self.console = console or Console(highlight=False)
        if interactive is None:
            interactive = sys.stdin.isatty() and sys.stdout.isatty()
        self._session: PromptSession[str] | None = PromptSession(history=InMemoryHistory()) if interactive else None

    def ask(self, message: str, completer: Completer | None = None, default: str = "") -> str:
        """One line from the person, stripped. Ctrl-D: PlayerLeft; Ctrl-C: KeyboardInterrupt."""
        try:
            if self._session is None:
                self.console.print(message, end="", markup=False)
                line = input()
            else:  # Tab completes; the menu does not pop up on every keystroke
                line = self._session.prompt(message, completer=completer, complete_while_typing=False, default=default)
        except EOFError:
            raise PlayerLeft() from None
        return line.strip()
