"""One name per meaning: our own old spellings of options, each kept working with a one-line notice that names the
new one, and the peers' spellings (ToolEmu's and QuittingAgents' scripts) that stay as they are, even where a peer
gives one name two meanings. docs/guides/cli.md lists both.

A renamed option is not declared again: `Command.parse_args` rewrites its old spelling into the new one before
click parses the line, and says so once on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Renamed:
    """`old` (an option of ours, by one of its spellings) is now `new`; `new` ending in '=' takes the old option's
    value after it (--emulator-model M: --model emulator=M). `commands`: where the old spelling was ours (command
    paths without `toolemu`)."""

    old: str
    new: str
    commands: tuple[str, ...]

    def takes_value(self) -> bool:
        return self.new.endswith("=")

    def notice(self) -> str:
        if not self.new:
            return f"toolemu: {self.old} is the default now: leave it out (the old spelling still works)"
        new = f"{self.new}MODEL" if self.takes_value() else self.new
        return f"toolemu: {self.old} is now {new} (the old spelling still works)"


# Our own old spellings. Each option whose value is a role's model is now --model ROLE=MODEL; an element's own
# role flags (--user-model, --monitor-model, ...) are added by `renames_for` from the element specs.
RENAMED: tuple[Renamed, ...] = (
    Renamed("-q", "--quiet", ("replay",)),  # -q is QuittingAgents' --quit in run and emulate
    Renamed("--emulator-model", "--model emulator=", ("robust", "noise", "judge-audit")),
    Renamed("--judge-model", "--model evaluator=", ("fidelity",)),
    Renamed("--toolkits", "--toolkits-path", ("validate", "generate cases", "generate complete")),
    Renamed("--trials", "--num-trials", ("noise",)),
    Renamed("--samples", "--num-eval-samples", ("noise",)),
    Renamed("--metric", "--scorer", ("agree",)),
    Renamed("--output", "--out", ("submit prepare",)),
    # --dry-run is one of the model options, a plain flag; its negative form was typer's, and the default.
    Renamed(
        "--no-dry-run",
        "",
        ("run", "emulate", "evaluate", "play", "mcp serve", "robust", "noise", "judge-audit", "fidelity"),
    ),
)

# The peers' spellings we keep, by (name, commands): what each means there, and whose it is. A name listed with
# two meanings is one the peer itself gives two (ToolEmu's DataLoader flags in emulate.py and evaluate.py).
PEER_SPELLINGS: dict[tuple[str, tuple[str, ...]], str] = {
    ("--num-replicates", ("run", "emulate")): "trials per case (ToolEmu's scripts/run.py, emulate.py)",
    ("-nrep", ("run", "emulate")): "trials per case (ToolEmu's scripts/run.py, emulate.py)",
    ("--num-replicates", ("evaluate",)): "judgements per trajectory (ToolEmu's scripts/evaluate.py)",
    ("-nrep", ("evaluate",)): "judgements per trajectory (ToolEmu's scripts/evaluate.py)",
    ("--input-path", ("evaluate",)): "the trajectory file to judge (ToolEmu's scripts/evaluate.py)",
    ("-inp", ("evaluate",)): "the trajectory file to judge (ToolEmu's scripts/evaluate.py)",
    ("-q", ("run", "emulate")): "--quit: --agent-type quit (QuittingAgents' scripts/run.py)",
}

# ToolEmu's and QuittingAgents' per-role model flags: documented aliases of --model ROLE=MODEL.
ROLE_ALIASES = {
    "agent": ("--agent-model", "--agent-model-name", "-am"),
    "emulator": ("--simulator-model", "--simulator-model-name", "-sm"),
    "evaluator": ("--evaluator-model", "--evaluator-model-name", "-em"),
}


def renames_for(command: str, element_roles: Iterable[tuple[str, str]] = ()) -> dict[str, Renamed]:
    """The old spellings `command` accepts, by spelling; `element_roles`: (flag, role) of the element options whose
    value is a role's model, for a command that takes the elements' options."""
    found = {r.old: r for r in RENAMED if command in r.commands}
    for flag, role in element_roles:
        found[flag] = Renamed(flag, f"--model {role}=", (command,))
    return found


def rewrite(args: Sequence[str], renames: dict[str, Renamed]) -> list[str]:
    """`args` with each old spelling in its new form (up to a `--`), and one notice on stderr per old spelling."""
    out: list[str] = []
    told: set[str] = set()
    it = iter(range(len(args)))
    for i in it:
        arg = args[i]
        if arg == "--":
            out += args[i:]
            break
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        renamed = renames.get(name)
        if renamed is None:
            out.append(arg)
            continue
        if renamed.old not in told:
            told.add(renamed.old)
            print(renamed.notice(), file=sys.stderr)
        if not renamed.new:  # the default: nothing to say
            continue
        if not renamed.takes_value():
            out.append(renamed.new + eq + value)
            continue
        if not eq:  # the value is the next argument (a missing one is click's error on the new option)
            nxt = next(it, None)
            if nxt is None:
                out.append(renamed.new.split(" ")[0])
                continue
            value = args[nxt]
        flag, _, prefix = renamed.new.partition(" ")
        out += [flag, prefix + value]
    return out
