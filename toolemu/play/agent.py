"""A person as the agent: an `AgentLike` whose turns are typed at the terminal. The episode pipeline runs it as it
runs a model agent (gates, the emulator, AskUser to the simulated user), so the record is the same."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from toolemu.agents import AgentTurn, ProposedCall
from toolemu.log import Step
from toolemu.play.calls import BadLine, ToolIndex, arguments_of, ask_arguments, find_tool, react_log, tool_index
from toolemu.play.screen import AGENT_HELP, Screen, safe
from toolemu.play.terminal import PlayerLeft, Terminal, WordCompleter
from toolemu.specs.models import Toolkit

PLAYER_FORMAT = "terminal"  # the trajectory's agent_format for a person's episode
FINAL_WORDS = ("final", "answer")
SHOW_WORDS = ("help", "spec", "tools", "instruction")
LEAVE_WORDS = ("quit", "exit")
PROMPT = "agent> "


@dataclass
class Call:
    tool: str
    tool_input: dict[str, Any] | None  # None: ask for each parameter


@dataclass
class Answer:
    text: str  # "" : ask for it


@dataclass
class Show:
    what: str  # one of SHOW_WORDS
    tool: str | None = None


def read_agent_line(line: str, tools: ToolIndex) -> Call | Answer | Show | None:
    """What one typed line asks for; None for an empty line. Raises BadLine, PlayerLeft."""
    if not line:
        return None
    if line.lower().startswith("final answer:"):  # ReAct's spelling works too
        return Answer(line.split(":", 1)[1].strip())
    word, _, rest = line.partition(" ")
    rest = rest.strip()
    if word.lower() in LEAVE_WORDS and not rest:
        raise PlayerLeft()
    if word.lower() in FINAL_WORDS:
        return Answer(rest)
    if word.lower() in SHOW_WORDS:
        what = "spec" if word.lower() == "help" and rest else word.lower()
        if what == "spec" and not rest:
            raise BadLine("expected a tool: spec <tool>")
        return Show(what, find_tool(rest, tools) if what == "spec" else None)
    tool = find_tool(word, tools)
    return Call(tool, arguments_of(rest) if rest else None)


class TerminalAgent:
    """Shows the instruction and the tools once, then at each turn what the last calls returned, and reads the
    person's next call or final answer."""

    format = PLAYER_FORMAT

    def __init__(self, terminal: Terminal, policy: str = ""):
        self.terminal, self.screen = terminal, Screen(terminal.console)
        self.policy = policy  # the domain policy a model agent finds in its system prompt
        self._shown = 0  # steps whose observation the person has seen
        self._introduced = False

    def introduce(self, instruction: str, kits: list[Toolkit]) -> None:
        self.screen.panel(safe(instruction), "The user's instruction", style="cyan")
        if self.policy:
            self.screen.panel(safe(self.policy), "The policy you must follow", style="yellow")
        self.screen.tools(kits)
        self.screen.note(AGENT_HELP)
        self._introduced = True

    def catch_up(self, steps: list[Step]) -> None:
        """Show the calls made since the last turn and what each got back."""
        for step in steps[self._shown :]:
            self.screen.call(step)
        self._shown = len(steps)

    def next_turn(self, instruction: str, kits: list[Toolkit], steps: list[Step], cache_salt: str = "") -> AgentTurn:
        if not self._introduced:
            self.introduce(instruction, kits)
        self.catch_up(steps)
        tools = tool_index(kits)
        completer = WordCompleter([*tools, "final", *SHOW_WORDS, "quit"], {"spec": list(tools), "help": list(tools)})
        started = time.perf_counter()
        while True:
            try:
                wanted = read_agent_line(self.terminal.ask(PROMPT, completer), tools)
            except BadLine as exc:
                self.screen.problem(str(exc))
                continue
            if wanted is None:
                continue
            if isinstance(wanted, Show):
                self._show(wanted, instruction, kits, tools)
                continue
            took = time.perf_counter() - started
            if isinstance(wanted, Answer):
                text = wanted.text or self.terminal.ask("  your final answer> ")
                if not text:
                    continue
                return AgentTurn("", final_answer=text, kept=f"Final Answer: {text}", latency_s=took)
            _, tool = tools[wanted.tool]
            args = wanted.tool_input
            if args is None:
                self.screen.note(f"{wanted.tool}: {tool.summary}")
                args = ask_arguments(tool, self.terminal.ask, self.screen.problem)
            call = ProposedCall(wanted.tool, args)
            return AgentTurn("", [call], kept=react_log(wanted.tool, args), latency_s=time.perf_counter() - started)

    def _show(self, wanted: Show, instruction: str, kits: list[Toolkit], tools: ToolIndex) -> None:
        if wanted.what == "spec" and wanted.tool is not None:
            self.screen.spec(*tools[wanted.tool])
        elif wanted.what == "tools":
            self.screen.tools(kits)
        elif wanted.what == "instruction":
            self.screen.panel(safe(instruction), "The user's instruction", style="cyan")
        else:
            self.screen.note(AGENT_HELP, style="")
