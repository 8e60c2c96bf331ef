"""The toolkit docs page: one self-contained HTML file, searchable, with an anchor per toolkit, tool and case.

Every string on the page comes from a spec file, which anyone may have written: each goes through `e()` (or the
safe Markdown subset for policy documents) on the server side, so the page is readable without JavaScript. The
search script (static/docs.js) only reads `textContent` and toggles `hidden`. As in the report, a
Content-Security-Policy lets only the scripts that carry this render's nonce run, and nothing is fetched.
"""

from __future__ import annotations

import secrets

from toolemu.docs.catalog import CaseEntry, Catalog, ToolkitEntry
from toolemu.docs.markdown import render_markdown
from toolemu.docs.policies import POLICY_DIR, PolicyText
from toolemu.reporting.html_parts import e, page, static_text
from toolemu.specs.models import Threat, Tool, ToolArgument, ToolReturn

__all__ = ["render_docs"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _field(label: str, body: str, cls: str = "") -> str:
    return f'<div class="field{" " + cls if cls else ""}"><div class="label">{e(label)}</div>{body}</div>'


def _items(values: list[str], cls: str = "") -> str:
    if not values:
        return '<p class="empty">none</p>'
    attr = f' class="{cls}"' if cls else ""
    return f"<ul{attr}>{''.join(f'<li>{e(v)}</li>' for v in values)}</ul>"


def _text(value: str, cls: str = "text") -> str:
    return f'<p class="{cls}">{e(value)}</p>' if value else '<p class="empty">none</p>'


# ------------------------------------------------------------------------------------------------------ tools


def _arguments_table(rows: list[ToolArgument] | list[ToolReturn], with_required: bool) -> str:
    if not rows:
        return '<p class="empty">none</p>'
    head = "<th>name</th><th>type</th>" + ("<th>required</th>" if with_required else "") + "<th>description</th>"
    body = []
    for row in rows:
        required = ""
        if with_required:
            is_required = isinstance(row, ToolArgument) and row.required
            required = f'<td class="req">{"required" if is_required else "optional"}</td>'
        body.append(
            f'<tr><td><code class="arg">{e(row.name)}</code></td><td><span class="type">{e(row.type)}</span></td>'
            f"{required}<td>{e(row.description)}</td></tr>"
        )
    return f'<table class="args"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _tool(full_name: str, tool: Tool, anchor: str) -> str:
    exceptions = "".join(f"<dt><code>{e(x.name)}</code></dt><dd>{e(x.description)}</dd>" for x in tool.exceptions)
    return (
        f'<article class="tool item" id="{e(anchor)}">'
        f'<h4><a class="anchor" href="#{e(anchor)}" aria-label="link to this tool">#</a>'
        f'<code class="tool-name">{e(full_name)}</code></h4>'
        f"{_text(tool.summary, 'summary')}"
        + _field("Parameters", _arguments_table(tool.parameters, with_required=True))
        + _field("Returns", _arguments_table(tool.returns, with_required=False))
        + _field(
            "Exceptions", f'<dl class="exceptions">{exceptions}</dl>' if exceptions else '<p class="empty">none</p>'
        )
        + "</article>"
    )


# ------------------------------------------------------------------------------------------------------ cases


def _policy(policy: PolicyText, cls: str) -> str:
    if policy.text is not None:
        body = f'<div class="md">{render_markdown(policy.text)}</div>'
    else:
        body = f'<p class="empty">{e(policy.problem or "no text")}</p>'
    return (
        f'<details class="policy {cls}"><summary>Policy <code>{e(policy.name)}</code> '
        f'<span class="sub">{e(POLICY_DIR)}/{e(policy.name)}.md</span></summary>{body}</details>'
    )


def _threat(threat: Threat, tool_anchors: dict[str, str]) -> str:
    vector = f"<code>{e(threat.vector)}</code>"
    if threat.vector in tool_anchors:
        vector = f'<a href="#{e(tool_anchors[threat.vector])}">{vector}</a>'
    targets = ", ".join(f"<code>{e(t)}</code>" for t in threat.targets) or '<span class="empty">none</span>'
    rows = [
        ("kind", f'<span class="tag threat-kind">{e(threat.kind)}</span>'),
        ("vector", vector),
        ("description", e(threat.description)),
        ("targets", targets),
    ]
    dl = "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in rows)
    return _field("Threat", f'<dl class="threat">{dl}</dl>', "threat-field")


def _case(entry: CaseEntry, kit: str, tool_anchors: dict[str, str]) -> str:
    case = entry.case
    others = [t for t in case.toolkits if t != kit]
    tags = "".join(
        [
            f'<span class="tag threat-kind">{e(case.threat.kind)}</span>' if case.threat else "",
            *(f'<span class="tag">+ {e(t)}</span>' for t in others),
        ]
    )
    body = [
        _field("Potential risky outcomes", _items(case.potential_risky_outcomes)),
        _field("Potential risky actions", _items(case.potential_risky_actions)),
    ]
    if case.threat is not None:
        body.append(_threat(case.threat, tool_anchors))
    if entry.policy is not None:
        body.append(_policy(entry.policy, "case-policy"))
    return (
        f'<details class="case item" id="{e(entry.anchor)}"><summary>'
        f'<span class="case-line"><span class="case-name">{e(case.name)}</span>{tags}'
        f'<a class="anchor" href="#{e(entry.anchor)}" aria-label="link to this case">#</a></span>'
        f'<span class="instr">{e(case.user_instruction)}</span></summary>'
        f'<div class="case-body">{"".join(body)}</div></details>'
    )


# ---------------------------------------------------------------------------------------------------- toolkits


def _toolkit(entry: ToolkitEntry, tool_anchors: dict[str, str]) -> str:
    kit = entry.toolkit
    anchor = e(entry.anchor)
    human = f' <span class="human">{e(kit.name_for_human)}</span>' if kit.name_for_human else ""
    tags = (
        f'<span class="tag">{e(entry.category)}</span>'
        f'<span class="tag">tools are called <code>{e(kit.name_for_model)}</code>&lt;Tool&gt;</span>'
        f'<span class="tag">{_plural(len(kit.tools), "tool")}</span>'
        f'<span class="tag">{_plural(len(entry.cases), "case")}</span>'
    )
    head = (
        f'<div class="kit-head"><h2><a class="anchor" href="#{anchor}" aria-label="link to this toolkit">#</a>'
        f'<span class="kit-name">{e(kit.toolkit)}</span>{human}</h2><div class="tags">{tags}</div>'
        + (f'<p class="lead">{e(kit.description_for_human)}</p>' if kit.description_for_human else "")
        + _field("Description for the agent", _text(kit.description_for_model))
        + _field("Risks", _items(kit.risks, "risks"))
        + "</div>"
    )
    tools = "".join(
        _tool(kit.tool_full_name(tool), tool, a) for tool, a in zip(kit.tools, entry.tool_anchors, strict=True)
    )
    cases = "".join(_case(c, kit.toolkit, tool_anchors) for c in entry.cases)
    return (
        f'<section class="kit" id="{anchor}">{head}'
        + (_policy(entry.policy, "kit-policy item") if entry.policy is not None else "")
        + f'<div class="group"><h3>Tools <span class="sub">({len(kit.tools)})</span></h3>'
        + f'<div class="tools">{tools}</div></div>'
        + f'<div class="group"><h3>Cases that use it <span class="sub">({len(entry.cases)})</span></h3>'
        + (f'<div class="cases">{cases}</div>' if cases else '<p class="empty">No case uses this toolkit.</p>')
        + "</div></section>"
    )


def _sidebar(catalog: Catalog) -> str:
    groups: dict[str, list[ToolkitEntry]] = {}
    for entry in catalog.entries:
        groups.setdefault(entry.category, []).append(entry)
    parts = []
    for category, entries in groups.items():
        links = "".join(
            f'<li><a href="#{e(x.anchor)}">{e(x.toolkit.toolkit)}</a>'
            f'<span class="sub" title="tools">{len(x.toolkit.tools)}</span></li>'
            for x in entries
        )
        parts.append(f'<div class="side-group"><div class="side-cat">{e(category)}</div><ul>{links}</ul></div>')
    return f'<nav class="side" aria-label="Toolkits">{"".join(parts)}</nav>'


# ------------------------------------------------------------------------------------------------------ page


def render_docs(catalog: Catalog, title: str = "ToolEmu toolkits") -> str:
    """The catalog as one self-contained HTML page (no network; CSS and JS inline)."""
    totals = (
        f"{_plural(len(catalog.entries), 'toolkit')} · {_plural(catalog.num_tools, 'tool')} · "
        f"{_plural(catalog.num_cases, 'case')}"
    )
    intro = (
        '<p class="note intro">Every toolkit the emulator can run, with its tools and the test cases that use it. '
        "The agent calls a tool by its full name: the toolkit's name for the model followed by the tool's name. "
        "The emulator answers with exactly the listed returns, or one of the listed exceptions. Type in the box "
        "above to filter; every heading's <b>#</b> is a link to it.</p>"
    )
    kits = "".join(_toolkit(entry, catalog.tool_anchors) for entry in catalog.entries)
    body = (
        f'<header class="top"><div class="bar"><h1>{e(title)}</h1>'
        '<input id="q" type="search" placeholder="Search toolkits, tools, cases…" aria-label="Search" '
        'autocomplete="off" spellcheck="false">'
        f'<span id="count" class="meta" aria-live="polite">{e(totals)}</span></div></header>'
        f'<div class="layout">{_sidebar(catalog)}<main>{intro}'
        '<p id="no-match" class="empty" hidden>No toolkit, tool or case matches the search.</p>'
        f"{kits or '<p class=empty>No toolkits.</p>'}</main></div>"
    )
    nonce = secrets.token_urlsafe(18)
    return page(title, static_text("docs.css", "docs"), body, static_text("docs.js", "docs"), nonce)
