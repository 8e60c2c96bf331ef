"""Play mode: a person takes one side of an episode at the terminal (`toolemu play CASE --as agent|user`), through
the same pipeline and into the same kind of run folder as any model."""

from toolemu.play.agent import TerminalAgent, read_agent_line
from toolemu.play.session import SIDES, PlayResult, Side, play, played
from toolemu.play.terminal import PlayerLeft, Terminal, WordCompleter
from toolemu.play.user import TerminalUser

__all__ = [
    "SIDES",
    "PlayResult",
    "PlayerLeft",
    "Side",
    "Terminal",
    "TerminalAgent",
    "TerminalUser",
    "WordCompleter",
    "play",
    "played",
    "read_agent_line",
]
