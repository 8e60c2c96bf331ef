"""A chat request, whichever API it came through, reduced to what a double decides on."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

# The project's repair requests (toolemu/llm/model.py's structured repair, toolemu/prompts/agent.py's REPAIR).
STRUCTURED_REPAIR = "That reply was not valid:"
REACT_REPAIR = "Your last reply could not be used:"
SCHEMA_CUE = "matching this JSON schema:"  # toolemu/llm/structured.py's schema_instruction

_OBSERVATION = re.compile(r"^\s*Observation\s*:", re.MULTILINE)
_SCRATCHPAD = re.compile(r"^\s*Thought\s*:", re.MULTILINE)  # a ReAct scratchpad's first entry
# describe_tool's line: "- Name(arg: type, opt?: type) -> {ret: type}: summary"
_TOOL_LINE = re.compile(r"^- ([A-Za-z_]\w*)\(([^)]*)\) -> \{", re.MULTILINE)
_RETURN_LINE = re.compile(r"^  ([A-Za-z_]\w*) \((\w+)\): (.*)$", re.MULTILINE)
_ARG_LINE = re.compile(r"^    ([A-Za-z_]\w*): (.*)$")
_QUOTED_WORD = re.compile(r"'([A-Za-z_][\w/.+-]*)'")
_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}


class BadRequest(ValueError):
    """A request the real API answers with HTTP 400 (its message as the API words it; OpenAI also names the `param`
    and a `code`)."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.param, self.code = param, code


@dataclass
class ToolSpec:
    name: str
    schema: dict[str, Any]
    description: str = ""


@dataclass
class Conversation:
    system: str = ""
    turns: list[tuple[str, str]] = field(default_factory=list)  # (role, text); tool results as role "tool"
    # Tool results that answer a tool call of an earlier assistant turn, matched by id (tool_call_id /
    # tool_use_id): with native tools, the only history a strong model reads as its own progress.
    answered: int = 0
    tools: list[ToolSpec] = field(default_factory=list)  # native tool calling
    tool_choice: str = "auto"  # auto | none | required | tool:<name>
    parallel: bool = True
    schema: dict[str, Any] | None = None
    schema_source: str = ""  # response_format | prompt | "" (none)
    enforced: bool = False  # the API guarantees the schema (OpenAI strict, a forced tool)
    stop: list[str] = field(default_factory=list)
    max_tokens: int | None = None
    wants_reasoning: bool = False
    model: str = ""

    @property
    def last_user(self) -> str:
        return next((text for role, text in reversed(self.turns) if role == "user"), "")

    @property
    def last_assistant(self) -> str:
        return next((text for role, text in reversed(self.turns) if role == "assistant"), "")

    @property
    def repair(self) -> str:
        last = self.last_user.lstrip()
        if last.startswith(STRUCTURED_REPAIR):
            return "structured"
        return "react" if last.startswith(REACT_REPAIR) else ""

    @property
    def tool_results(self) -> int:
        """Tool results so far: tool messages, plus Observations in a scratchpad the prompt carries."""
        return sum(
            1 if role == "tool" else len(_OBSERVATION.findall(text)) for role, text in self.turns if role != "assistant"
        )

    @property
    def task(self) -> str:
        """What the conversation is about: the system prompt and the first user message. A model that has lost its
        history sees the same task again, and so plans the same first action."""
        first = next((text for role, text in self.turns if role == "user"), "")
        pad = _SCRATCHPAD.search(first)  # history written into the message as text is not part of the task
        return f"{self.system}\n\n{(first[: pad.start()] if pad else first).strip()}"

    @property
    def prompt_chars(self) -> int:
        tools = sum(len(json.dumps(t.schema)) + len(t.name) + len(t.description) for t in self.tools)
        return len(self.system) + sum(len(text) for _, text in self.turns) + tools

    @cached_property
    def react_tools(self) -> list[ToolSpec]:
        """Tools named in the prompt in the project's describe_tool form, with a schema built from the arguments;
        a string argument whose description quotes its choices ('inbox', 'sent' ...) gets them as an enum."""
        found: dict[str, ToolSpec] = {}
        for text in [self.system, *(t for _, t in self.turns)]:
            spec: ToolSpec | None = None  # the tool whose argument lines follow
            for line in text.splitlines():
                if match := _TOOL_LINE.match(line):
                    spec = found.setdefault(match[1], ToolSpec(match[1], _arguments_schema(match[2])))
                elif spec is not None and (arg := _ARG_LINE.match(line)):
                    prop = spec.schema["properties"].get(arg[1])
                    if prop is not None and prop.get("type") == "string" and _choices(arg[2]):
                        prop["enum"] = _choices(arg[2])
                elif not line.startswith("    "):
                    spec = None
        return list(found.values())

    @cached_property
    def return_hints(self) -> dict[str, list[str]]:
        """Return fields whose description names keys ("each an object with 'drone_id', 'model' ..."): the keys."""
        return self._quoted_in_returns(("object", "array"))

    @cached_property
    def return_options(self) -> dict[str, list[str]]:
        """String return fields whose description quotes example values ("e.g. 'application/pdf' or 'text/csv'")."""
        return self._quoted_in_returns(("string",))

    def _quoted_in_returns(self, types: tuple[str, ...]) -> dict[str, list[str]]:
        """From the emulator prompt's "Returns:" lines: field -> the words its description quotes."""
        found = {m[1]: _choices(m[3]) for m in _RETURN_LINE.finditer(self.last_user) if m[2] in types}
        return {name: words for name, words in found.items() if words}


def _choices(description: str) -> list[str]:
    """Two or more quoted words in a description: its choices or its keys. One quoted phrase is an example."""
    found = list(dict.fromkeys(_QUOTED_WORD.findall(description)))
    return found if len(found) >= 2 else []


def _arguments_schema(signature: str) -> dict[str, Any]:
    props: dict[str, Any] = {}
    required: list[str] = []
    for part in filter(None, (p.strip() for p in signature.split(","))):
        name, _, kind = part.partition(":")
        name, kind = name.strip(), kind.strip()
        optional = name.endswith("?")
        name = name.rstrip("?")
        props[name] = {"type": kind if kind in _JSON_TYPES else "string"}
        if not optional:
            required.append(name)
    return {"type": "object", "properties": props, "required": required, "additionalProperties": False}


def schema_in_text(text: str) -> dict[str, Any] | None:
    """The JSON schema spelled out after the last "matching this JSON schema:" in `text`."""
    at = text.rfind(SCHEMA_CUE)
    if at < 0:
        return None
    rest = text[at + len(SCHEMA_CUE) :].lstrip()
    try:
        value, _ = json.JSONDecoder().raw_decode(rest)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def text_of(content: Any) -> str:
    """Message content as text: a string, or a list of parts/blocks with text in them."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                parts.append(str(block.get("text") or text_of(block.get("content") or "")))
            else:
                parts.append(str(block))
        return "".join(parts)
    return "" if content is None else str(content)
