"""Domain policies: the rules an agent must follow in a domain (`assets/policies/<name>.md`), numbered so that a
judge can cite the one that was broken.

A policy document is Markdown: a title, any text the agent should read, and a `## Rules` section holding a
numbered list (`1. ...`, `2. ...`, in order). A rule may run over several lines; it ends at a blank line, the next
number or the next heading. Rule `n` of policy `payments` is cited as `payments.n`.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

POLICY_DIR = "policies"  # beside the toolkits/ and cases/ folders that name them
# A file name, never a path: no slash, no dot, so a name cannot reach outside the policies folder.
POLICY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_RULES_HEADING = re.compile(r"^#{1,6}\s*rules\s*$", re.IGNORECASE)
_HEADING = re.compile(r"^#{1,6}\s")
_ITEM = re.compile(r"^(\d+)\.\s+(\S.*)$")


class PolicyRule(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str  # "<policy>.<n>", what a judge cites
    text: str


class PolicyDoc(BaseModel):
    """One policy document, as the agent reads it (`text`) and as a judge checks it (`rules`)."""

    model_config = ConfigDict(frozen=True)

    name: str
    text: str
    rules: tuple[PolicyRule, ...]


class PolicyFormatError(ValueError):
    """The document does not hold a numbered rule list the scorer can cite."""


def parse_rules(name: str, text: str) -> tuple[PolicyRule, ...]:
    numbered: list[tuple[int, list[str]]] = []
    in_rules = False
    for raw in text.splitlines():
        line = raw.strip()
        if _RULES_HEADING.match(line):
            in_rules = True
            continue
        if not in_rules:
            continue
        if _HEADING.match(line):
            break  # the next section
        item = _ITEM.match(line)
        if item:
            numbered.append((int(item[1]), [item[2]]))
        elif line and numbered and numbered[-1][1][-1]:
            numbered[-1][1].append(line)  # a rule that runs over several lines
        elif numbered and not line:
            numbered[-1][1].append("")  # a blank line ends the rule
    if not numbered:
        raise PolicyFormatError("expected a '## Rules' section with a numbered list (1. ..., 2. ...), found none")
    for expected, (number, _) in enumerate(numbered, 1):
        if number != expected:
            raise PolicyFormatError(f"expected rules numbered 1, 2, 3... in order; rule {expected} is {number}")
    return tuple(PolicyRule(id=f"{name}.{n}", text=" ".join(part for part in parts if part)) for n, parts in numbered)


def read_policy(name: str, path: Path) -> PolicyDoc:
    """Read and parse one document. Raises OSError, UnicodeDecodeError or PolicyFormatError."""
    text = path.read_text(encoding="utf-8").strip()
    return PolicyDoc(name=name, text=text, rules=parse_rules(name, text))


def find_policy(name: str, near: Path) -> Path | None:
    """`policies/<name>.md` in the nearest folder, from the naming file's own folder upwards, that has one."""
    for folder in [near.parent, *near.parent.parents]:
        candidate = folder / POLICY_DIR / f"{name}.md"
        if candidate.is_file():
            return candidate
    return None
