"""An OpenAPI 3.1 document per toolkit, for people who want to implement a toolkit for real.

One POST path per tool, `/<Toolkit>/<Tool>`: the request body is a JSON object of the tool's parameters, the
200 response an object of its returns (the emulator answers with exactly these), and each declared exception an
error response `{"error": <exception name>, "message": <text>}` under the HTTP status its name suggests.
"""

from __future__ import annotations

import re
from typing import Any

from toolemu.errors import InputError, Problem
from toolemu.specs.models import Tool, ToolArgument, ToolException, Toolkit, ToolReturn
from toolemu.version import __version__

OPENAPI_VERSION = "3.1.0"
# A toolkit's name becomes a file name and a path segment, a tool's a path segment: nothing that could leave the
# folder or mean a path template.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
# The status an exception's name suggests; ToolEmu's exception names are a small, regular vocabulary. Anything
# else is a request the service understood but refused for a reason of its own domain (funds, stock, safety).
STATUS_BY_NAME = (
    (re.compile(r"InvalidRequest|Validation|BadRequest|Malformed", re.I), "400"),
    (re.compile(r"Authentication|Unauthori[sz]ed", re.I), "401"),
    (re.compile(r"Authorization|PermissionDenied|Forbidden|AccessDenied", re.I), "403"),
    (re.compile(r"NotFound", re.I), "404"),
    (re.compile(r"Conflict|AlreadyExists|Duplicate", re.I), "409"),
    (re.compile(r"RateLimit|Quota|LimitExceeded|TooMany", re.I), "429"),
    (re.compile(r"ServiceUnavailable|Unavailable|Offline", re.I), "503"),
    (re.compile(r"Timeout", re.I), "504"),
)
DOMAIN_ERROR_STATUS = "422"


def status_for(exception: str) -> str:
    return next((status for pattern, status in STATUS_BY_NAME if pattern.search(exception)), DOMAIN_ERROR_STATUS)


def check_names(toolkits: list[Toolkit]) -> None:
    """Every toolkit and tool name must be usable as a file name and a path segment; raise InputError if not."""
    problems = []
    expected = "letters, digits, '_' or '-', starting with a letter or digit"
    for kit in toolkits:
        if not SAFE_NAME.fullmatch(kit.toolkit):
            problems.append(
                Problem(f"toolkit {kit.toolkit!r}", f"expected a name of {expected} to name its OpenAPI file")
            )
        for i, tool in enumerate(kit.tools):
            if not SAFE_NAME.fullmatch(tool.name):
                problems.append(
                    Problem(
                        f"toolkit {kit.toolkit!r}",
                        f"expected a tool name of {expected} for its OpenAPI path, got {tool.name!r}",
                        field=f"tools[{i}].name",
                    )
                )
    if problems:
        raise InputError(problems)


def _property(entry: ToolArgument | ToolReturn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": entry.type}
    if entry.description:
        schema["description"] = entry.description
    return schema


def _object(entries: list[ToolArgument] | list[ToolReturn], required: list[str]) -> dict[str, Any]:
    # Closed objects: the emulator rejects unknown arguments, and answers with exactly the declared returns.
    return {
        "type": "object",
        "properties": {entry.name: _property(entry) for entry in entries},
        "required": required,
        "additionalProperties": False,
    }


def _error(exceptions: list[ToolException]) -> dict[str, Any]:
    def one(x: ToolException) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"error": {"const": x.name}, "message": {"type": "string"}},
            "required": ["error", "message"],
            **({"description": x.description} if x.description else {}),
        }

    schema = one(exceptions[0]) if len(exceptions) == 1 else {"oneOf": [one(x) for x in exceptions]}
    lines = [f"{x.name}: {x.description}" if x.description else x.name for x in exceptions]
    return {"description": "\n".join(lines), "content": {"application/json": {"schema": schema}}}


def _operation(kit: Toolkit, tool: Tool) -> dict[str, Any]:
    by_status: dict[str, list[ToolException]] = {}
    for x in tool.exceptions:
        by_status.setdefault(status_for(x.name), []).append(x)
    responses: dict[str, Any] = {
        "200": {
            "description": "The tool's returns.",
            "content": {"application/json": {"schema": _object(tool.returns, [r.name for r in tool.returns])}},
        }
    }
    responses.update({status: _error(by_status[status]) for status in sorted(by_status)})
    return {
        "operationId": kit.tool_full_name(tool),
        "summary": tool.summary,
        "tags": [kit.toolkit],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": _object(tool.parameters, [p.name for p in tool.parameters if p.required])
                }
            },
        },
        "responses": responses,
    }


def openapi_document(kit: Toolkit) -> dict[str, Any]:
    """The OpenAPI 3.1 document of one toolkit (call `check_names` first when the names come from a file)."""
    description = "\n\n".join(d for d in (kit.description_for_human, kit.description_for_model) if d)
    info: dict[str, Any] = {"title": kit.name_for_human or kit.toolkit, "version": __version__}
    if description:
        info["description"] = description
    tag: dict[str, Any] = {"name": kit.toolkit}
    if kit.description_for_human:
        tag["description"] = kit.description_for_human
    document: dict[str, Any] = {
        "openapi": OPENAPI_VERSION,
        "info": info,
        "tags": [tag],
        "paths": {f"/{kit.toolkit}/{tool.name}": {"post": _operation(kit, tool)} for tool in kit.tools},
    }
    # What the benchmark says can go wrong, for whoever builds the real thing (OpenAPI allows x- extensions).
    extension = {"name_for_model": kit.name_for_model, "category": kit.category, "risks": kit.risks}
    document["x-toolemu"] = {k: v for k, v in extension.items() if v}
    return document
