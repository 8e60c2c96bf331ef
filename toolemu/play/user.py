"""A person as the user: a `UserLike` that shows the agent's AskUser question and reads the reply at the terminal.
The person may first act on their own devices (the case's User Toolkits), as the simulated user may."""

from __future__ import annotations

import time

from toolemu.log import UserReply
from toolemu.play.calls import BadLine, ToolIndex, arguments_of, ask_arguments, find_tool, tool_index
from toolemu.play.screen import USER_HELP, Screen, json_or_text, safe
from toolemu.play.terminal import Terminal, WordCompleter
from toolemu.user import MAX_ACTIONS_PER_QUESTION, UserView

PROMPT = "you> "
COMMANDS = ("/decline", "/end", "/do", "/spec", "/help")


class TerminalUser:
    def __init__(self, terminal: Terminal, max_actions: int = MAX_ACTIONS_PER_QUESTION):
        self.terminal, self.screen = terminal, Screen(terminal.console)
        self.max_actions = max_actions  # per question, as for the simulated user: each answer is bounded

    def answer(self, question: str, view: UserView) -> UserReply:
        started = time.perf_counter()
        calls = sum(1 for s in view.steps if not s.by_user)
        self.screen.note(f"(the agent has made {calls} call{'s' if calls != 1 else ''} so far)")
        self.screen.panel(safe(question), "The agent asks you", style="green")
        tools = tool_index(view.user_kits)
        completer = WordCompleter(list(COMMANDS), {"/do": list(tools), "/spec": list(tools)})
        actions = 0
        while True:
            line = self.terminal.ask(PROMPT, completer)
            if not line:
                continue
            command, _, rest = line.partition(" ") if line.startswith("/") else ("", "", line)
            rest = rest.strip()
            if command in ("", "/decline", "/end"):
                return UserReply(
                    reply=rest,
                    declined=command == "/decline",
                    ends_conversation=command == "/end",
                    actions=actions,
                    latency_s=round(time.perf_counter() - started, 3),
                )
            try:
                if command == "/do":
                    if actions >= self.max_actions:
                        raise BadLine(f"at most {self.max_actions} actions per question: reply to the agent now")
                    actions += self._act(rest, tools, view)
                elif command == "/spec":
                    self.screen.spec(*tools[find_tool(rest, tools)])
                elif command == "/help":
                    self.screen.note(USER_HELP, style="")
                else:
                    raise BadLine(f"unknown command {command!r}; /help lists them (a reply is plain text)")
            except BadLine as exc:
                self.screen.problem(str(exc))

    def _act(self, rest: str, tools: ToolIndex, view: UserView) -> int:
        """One action on the person's own devices, emulated and recorded as a step by the user. Returns 1."""
        if not tools:
            raise BadLine("you have no devices of your own in this case: reply in words")
        name, _, args_text = rest.partition(" ")
        full = find_tool(name, tools)
        args_text = args_text.strip()
        args = (
            arguments_of(args_text)
            if args_text
            else ask_arguments(tools[full][1], self.terminal.ask, self.screen.problem)
        )
        observation = view.act(full, args, "")
        self.screen.panel(json_or_text(observation), f"{full} (on your device)", style="blue")
        return 1
