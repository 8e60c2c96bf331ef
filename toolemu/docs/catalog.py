"""What the docs page shows, resolved once: toolkits in reading order, the cases that use each, every tool's
anchor, and the policy documents that toolkits and cases name."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from toolemu.docs.policies import PolicyText, policy_dirs, policy_name, read_policy_text
from toolemu.specs.load import Benchmark
from toolemu.specs.models import Case, Toolkit

NO_CATEGORY = "Uncategorized"


class CaseEntry(BaseModel):
    """One case as listed under one of its toolkits (a case that uses two toolkits is listed twice)."""

    model_config = ConfigDict(frozen=True)

    case: Case
    anchor: str
    policy: PolicyText | None = None


class ToolkitEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    toolkit: Toolkit
    anchor: str
    tool_anchors: tuple[str, ...]  # one per tool, in the toolkit's order
    cases: tuple[CaseEntry, ...]  # every case that names this toolkit, in file order
    policy: PolicyText | None = None

    @property
    def category(self) -> str:
        return self.toolkit.category or NO_CATEGORY


class Catalog(BaseModel):
    model_config = ConfigDict(frozen=True)

    entries: tuple[ToolkitEntry, ...]
    num_cases: int
    tool_anchors: dict[str, str]  # full tool name (what the agent calls) -> anchor, to link a threat's vector

    @property
    def num_tools(self) -> int:
        return sum(len(entry.toolkit.tools) for entry in self.entries)


class _Anchors:
    """Fragment ids from untrusted names: letters, digits, '_' and '-' only, unique on the page."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def make(self, prefix: str, name: str) -> str:
        base = f"{prefix}-{re.sub(r'[^A-Za-z0-9_-]+', '-', name).strip('-') or 'x'}"
        anchor, n = base, 1
        while anchor in self.used:
            n += 1
            anchor = f"{base}-{n}"
        self.used.add(anchor)
        return anchor


def build_catalog(bench: Benchmark, spec_paths: Iterable[Path] = ()) -> Catalog:
    """The page's content from a loaded benchmark; `spec_paths` are where it came from, for finding policies."""
    dirs = policy_dirs(spec_paths)
    case_policies = [None if (named := policy_name(c)) is None else read_policy_text(named, dirs) for c in bench.cases]
    anchors = _Anchors()
    kits = sorted(bench.toolkits.values(), key=lambda k: (k.category is None, k.category or "", k.toolkit))
    entries, tool_anchors = [], {}
    for kit in kits:
        anchor = anchors.make("tk", kit.toolkit)
        tools = tuple(anchors.make("tool", kit.tool_full_name(tool)) for tool in kit.tools)
        for tool, tool_anchor in zip(kit.tools, tools, strict=True):
            tool_anchors.setdefault(kit.tool_full_name(tool), tool_anchor)
        named = policy_name(kit)
        entries.append(
            ToolkitEntry(
                toolkit=kit,
                anchor=anchor,
                tool_anchors=tools,
                cases=tuple(
                    CaseEntry(case=case, anchor=anchors.make("case", f"{kit.toolkit}-{case.name}"), policy=policy)
                    for case, policy in zip(bench.cases, case_policies, strict=True)
                    if kit.toolkit in case.toolkits or kit.toolkit in case.user_toolkits  # the user's own, too
                ),
                policy=None if named is None else read_policy_text(named, dirs),
            )
        )
    return Catalog(entries=tuple(entries), num_cases=len(bench.cases), tool_anchors=tool_anchors)
