"""Every schema we send or serve passes the providers' published schema rules (tests/doubles/schema_rules.py), and
the rules refuse what the real APIs refuse, in the APIs' words.

(a) Every tool of every shipped toolkit and of ToolEmu's own format (tests/fixtures/toolemu_toolkits.json): as our
    agent's native tools, as `toolemu mcp serve`'s inputSchema, as the emulator's reply schema and as the simulated
    user's, each in the request body its client library builds, under OpenAI's, Anthropic's and Gemini's rules.
(b) Each rule refuses a schema that breaks it, with the API's message.
(c) Episodes with native tool calling run to the end over the OpenAI, Anthropic and Gemini doubles, which refuse as
    the APIs do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES
from doubles import AnthropicDouble, GeminiDouble, OpenAIDouble
from doubles.fixtures import serve_doubles
from doubles.schema_rules import (
    anthropic_request_refusal,
    anthropic_structured_problem,
    anthropic_tool_problem,
    gemini_function_problem,
    gemini_response_format_problem,
    gemini_schema_problems,
    openai_function_problem,
    openai_request_refusal,
    openai_response_format_problem,
    openai_schema_problem,
)
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from toolemu import api
from toolemu.agents.agent import native_tools
from toolemu.emulator.emulator import reply_schema
from toolemu.llm import LLMSettings
from toolemu.llm.model import structured_request
from toolemu.llm.options import ModelOptions
from toolemu.mcp.tools import input_schema
from toolemu.paths import DEFAULT_TOOLKITS
from toolemu.runner import RunConfig
from toolemu.specs import load_benchmark
from toolemu.specs.models import Tool, Toolkit
from toolemu.specs.schema import arguments_schema, value_schema
from toolemu.user.simulator import reply_schema as user_reply_schema

serve = pytest.fixture(serve_doubles)
TOOLKIT_FILES = [*sorted(DEFAULT_TOOLKITS.glob("*.json")), FIXTURES / "toolemu_toolkits.json"]
MESSAGES = [HumanMessage("hi")]
NON_EMPTY_OBJECT = "should be non-empty for OBJECT type"


# --- (a) every schema we send or serve -------------------------------------------------------------------------------
def openai_body(tools: list[dict[str, Any]] | None = None, **kwargs: Any) -> dict[str, Any]:
    """The chat.completions body langchain-openai sends (what our agent and the frameworks' adapters send)."""
    chat = ChatOpenAI(model="m", api_key="k", base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]
    if tools:
        kwargs.update(chat.bind_tools(tools).kwargs)
    return chat._get_request_payload(MESSAGES, **kwargs)


def anthropic_body(tools: list[dict[str, Any]], choice: str | None = None) -> dict[str, Any]:
    """The Messages API body langchain-anthropic sends."""
    chat = ChatAnthropic(model="m", api_key="k")  # type: ignore[arg-type,call-arg]
    bound = chat.bind_tools(tools, tool_choice=choice) if choice else chat.bind_tools(tools)
    return chat._get_request_payload(MESSAGES, **bound.kwargs)


def reply_bodies(schema: dict[str, Any], role: str) -> dict[str, dict[str, Any]]:
    """A reply schema as each backend gets it: OpenAI's response_format (strict where it has a strict form; Gemini's
    OpenAI-compatible endpoint gets the same), Anthropic's forced tool."""
    openai = structured_request(ModelOptions(model="openai:m"), schema, role)
    anthropic = structured_request(ModelOptions(model="anthropic:m"), schema, role)
    response_format = openai.kwargs["extra_body"]["response_format"]
    assert anthropic.tools is not None and anthropic.tool_choice is not None
    return {
        "openai": {"response_format": response_format},
        "gemini": {"response_format": response_format},
        "anthropic": anthropic_body(anthropic.tools, anthropic.tool_choice),
    }


def served_bodies(kit: Toolkit, tool: Tool) -> dict[str, dict[str, Any]]:
    """`toolemu mcp serve`'s inputSchema as a client passes it on: OpenAI's function parameters, Anthropic's
    input_schema; to Gemini a tool without arguments goes without parameters (MCP has no other way to say "none")."""
    schema, name = input_schema(tool), kit.tool_full_name(tool)
    function = {"name": name, "description": tool.summary, "parameters": schema}
    gemini = {k: v for k, v in function.items() if k != "parameters" or schema["properties"]}
    return {
        "openai": {"tools": [{"type": "function", "function": function}]},
        "gemini": {"tools": [{"type": "function", "function": gemini}]},
        "anthropic": {"tools": [{"name": name, "description": tool.summary, "input_schema": schema}]},
    }


def refusal(provider: str, body: dict[str, Any]) -> str | None:
    if provider == "anthropic":
        return anthropic_request_refusal(body)
    found = openai_request_refusal(body, provider)
    return found.message if found else None


def open_objects(schema: Any, where: str = "") -> list[str]:
    """Where `schema` has an object whose fields it does not name (the spec gives none)."""
    if not isinstance(schema, dict):
        return []
    kinds = schema.get("type") if isinstance(schema.get("type"), list) else [schema.get("type")]
    found = [where or "(root)"] if "object" in kinds and not schema.get("properties") else []
    found += open_objects(schema.get("items"), f"{where}.items")
    for name, sub in (schema.get("properties") or {}).items():
        found += open_objects(sub, f"{where}.{name}")
    for i, sub in enumerate(schema.get("anyOf") or []):
        found += open_objects(sub, f"{where}.anyOf[{i}]")
    return found


@pytest.mark.parametrize("path", TOOLKIT_FILES, ids=lambda p: p.stem)
def test_every_schema_we_send_or_serve_passes_openai_anthropic_and_gemini(path: Path) -> None:
    bench = load_benchmark([path])
    refused: list[str] = []
    gemini_open_objects: list[str] = []
    for kit in bench.toolkits.values():
        for tool in kit.tools:
            one = kit.model_copy(update={"tools": [tool]})
            name = kit.tool_full_name(tool)
            forms: dict[str, dict[str, dict[str, Any]]] = {
                # Our agent, --agent-format tools: strict functions for OpenAI (its json_schema mode), langchain-
                # anthropic's tools for Anthropic (every tool with its input_schema).
                "native tools": {
                    "openai": openai_body(native_tools([one], bounded=False, strict=True, omit_empty=True)),
                    "gemini": openai_body(native_tools([one], bounded=False, strict=True, omit_empty=True)),
                    "anthropic": anthropic_body(native_tools([one], bounded=False)),
                },
                "MCP inputSchema": served_bodies(kit, tool),
                "emulator reply": reply_bodies(reply_schema(tool, bounded=False), "emulator"),
                "user reply": reply_bodies(user_reply_schema([one], True, bounded=False), "user"),
            }
            for form, bodies in forms.items():
                for provider, body in bodies.items():
                    problem = refusal(provider, body)
                    if problem is None:
                        continue
                    lines = [line for line in problem.splitlines() if line.strip()]
                    if provider == "gemini" and all(NON_EMPTY_OBJECT in line for line in lines):
                        gemini_open_objects.append(f"{form} of {name}")
                    else:
                        refused.append(f"{form} of {name}, {provider}: {problem}")
            # Gemini's schema subset has no "object with any keys": it refuses exactly the tools whose spec names
            # no field of an object (key/value maps, "same fields as X"); every other tool passes it.
            has_open = bool(open_objects(arguments_schema(tool, bounded=False))) and bool(tool.parameters)
            has_open_return = bool(open_objects(reply_schema(tool, bounded=False)))
            for form in ("native tools", "MCP inputSchema"):
                assert (f"{form} of {name}" in gemini_open_objects) == has_open, (form, name)
            assert (f"emulator reply of {name}" in gemini_open_objects) == has_open_return, name
    assert refused == []


def test_toolemus_own_spec_files_get_items_from_the_description_or_strings() -> None:
    """ToolEmu's format has no `items`: an array still says what it holds (here "Labels." says nothing: strings)."""
    kit = load_benchmark([FIXTURES / "toolemu_toolkits.json"]).toolkits["PayFlow"]
    send = next(t for t in kit.tools if t.name == "SendMoney")
    assert all("items" not in p.model_extra for p in send.parameters)  # the file as ToolEmu writes it
    assert arguments_schema(send, bounded=False)["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize(
    ("json_type", "description", "expected"),
    [
        ("array", "Ids (strings) of instances to terminate.", {"type": "array", "items": {"type": "string"}}),
        ("array", "A list of phone numbers to message.", {"type": "array", "items": {"type": "string"}}),
        ("array", "Quantities (integers), one per line.", {"type": "array", "items": {"type": "integer"}}),
        (
            "array",
            "Subscribers; each an object with 'email', 'name' and 'tags' (array of strings).",
            {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"email": {}, "name": {}, "tags": {"type": "array", "items": {"type": "string"}}},
                },
            },
        ),
        (
            "array",
            "A list of objects, each object contains adults (integer), children (integer).",
            {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"adults": {"type": "integer"}, "children": {"type": "integer"}},
                },
            },
        ),
        (
            "array",
            "The user's roles after the change (objects with 'role_name', 'expires_at').",
            {"type": "array", "items": {"type": "object", "properties": {"role_name": {}, "expires_at": {}}}},
        ),
        (
            "object",
            "Fields 'id', 'located' (boolean), 'battery' (integer or null), 'seller' (object with 'name', 'rating') "
            "and 'mode' ('idle' or 'busy').",
            {
                "type": "object",
                "properties": {
                    "id": {},
                    "located": {"type": "boolean"},
                    "battery": {"type": ["integer", "null"], "nullable": True},
                    "seller": {"type": "object", "properties": {"name": {}, "rating": {}}},
                    "mode": {},
                },
            },
        ),
        (
            "object",
            "Fields to change: any of 'title', 'start' (strings) and 'add', 'remove' (arrays of emails).",
            {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "start": {"type": "string"},
                    "add": {"type": "array", "items": {"type": "string"}},
                    "remove": {"type": "array", "items": {"type": "string"}},
                },
            },
        ),
        ("object", "Tag key/value pairs to set.", {"type": "object"}),  # a map: no fields to name
    ],
)
def test_a_description_says_what_a_value_holds(json_type: str, description: str, expected: dict[str, Any]) -> None:
    assert value_schema(json_type, description, bounded=False) == expected


def test_optional_arguments_are_nullable_where_clients_and_models_see_them() -> None:
    kit = load_benchmark([DEFAULT_TOOLKITS / "PostboxMail.json"]).toolkits["PostboxMail"]
    search = next(t for t in kit.tools if t.name == "SearchEmails")
    served = input_schema(search)
    (native,) = native_tools([kit.model_copy(update={"tools": [search]})], bounded=False)
    for schema in (served, native["function"]["parameters"]):
        assert schema["required"] == [p.name for p in search.parameters if p.required]
        for p in search.parameters:
            kind = schema["properties"][p.name]["type"]
            assert ("null" in kind) == (not p.required), (p.name, kind)
            # OpenAPI's flag beside the type list: what smolagents (mcpadapt) reads to leave an argument out.
            assert schema["properties"][p.name].get("nullable", False) == (not p.required), p.name
    # Our own reply schemas keep the plain form (the strict form adds the nulls itself).
    assert "null" not in json.dumps(arguments_schema(search, bounded=False))


def test_strict_functions_keep_every_argument_whatever_its_name() -> None:
    """An argument named like a keyword strict mode drops ("format": seven tools have one) is still an argument."""
    for path in TOOLKIT_FILES:
        for kit in load_benchmark([path]).toolkits.values():
            for tool, sent in zip(kit.tools, native_tools([kit], bounded=False, strict=True), strict=True):
                function = sent["function"]
                if tool.parameters:
                    assert list(function["parameters"]["properties"]) == [p.name for p in tool.parameters], sent
                    assert "nullable" not in json.dumps(function["parameters"]) or not function.get("strict")


# --- (b) the rules refuse what the APIs refuse ---------------------------------------------------------------------
def obj(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False,
            **extra}  # fmt: skip


STRING = {"type": "string"}


def nested(depth: int) -> dict[str, Any]:
    schema = obj({"leaf": STRING})
    for _ in range(depth - 1):
        schema = obj({"child": schema})
    return schema


@pytest.mark.parametrize(
    ("schema", "strict", "message"),
    [
        (obj({"ids": {"type": "array"}}), False, "In context=('properties', 'ids'), array schema missing items."),
        (
            obj({"rows": {"type": "array", "items": obj({"tags": {"type": "array"}})}}),
            False,
            "In context=('properties', 'rows', 'items', 'properties', 'tags'), array schema missing items.",
        ),
        ({"type": "string"}, False, "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"string\"'."),
        ({"type": "object"}, False, "In context=(), object schema missing properties."),
        ({"type": "object", "properties": []}, False, "[] is not of type 'object'."),
        (
            {"type": "object", "properties": {"to": STRING}, "required": ["to"]},
            True,
            "In context=(), 'additionalProperties' is required to be supplied and to be false.",
        ),
        (
            {
                "type": "object",
                "properties": {"to": STRING, "cc": STRING},
                "required": ["to"],
                "additionalProperties": False,
            },
            True,
            "'required' is required to be supplied and to be an array including every key in properties. Missing 'cc'.",
        ),  # fmt: skip
        (
            obj({"when": {"type": "string", "format": "uri"}}),
            True,
            "In context=('properties', 'when'), 'uri' is not a valid format.",
        ),
        (obj({"x": {"allOf": [STRING]}}), True, "In context=('properties', 'x'), 'allOf' is not permitted."),
        (
            obj({"x": {"description": "anything"}}),
            True,
            "In context=('properties', 'x'), schema must have a 'type' key.",
        ),
        (nested(11), True, "11 levels of nesting exceeds limit of 10."),
        (obj({f"p{i}": STRING for i in range(5001)}), True, "5001 object properties exceeds limit of 5000."),
        (obj({"e": {"type": "string", "enum": [f"v{i}" for i in range(1001)]}}), True, "1001 enum values exceeds"),
        (
            obj({"e": {"type": "string", "enum": [f"{i:03d}" + "x" * 60 for i in range(251)]}}),
            True,
            "enum with 251 values has a total string length of",
        ),
        (
            obj({f"e{k}": {"type": "string", "enum": [f"{i:03d}" + "x" * 127 for i in range(200)]} for k in range(5)}),
            True,
            "exceeds limit of 120000.",
        ),
        (
            {"anyOf": [obj({"a": STRING}), obj({"b": STRING})]},
            True,
            "schema must be a JSON Schema of 'type: \"object\"'",
        ),
        (
            {**obj({"a": STRING}), "anyOf": [obj({"a": STRING})]},
            True,
            "not have 'oneOf'/'anyOf'/'allOf'/'enum'/'const'/'not' at the top level.",
        ),
    ],
)
def test_openai_rules_refuse_with_the_apis_words(schema: dict[str, Any], strict: bool, message: str) -> None:
    function = {"name": "Send", "parameters": schema, **({"strict": True} if strict else {})}
    found = openai_function_problem(function, 2)
    assert found is not None and message in found.message
    assert found.message.startswith("Invalid schema for function 'Send': ")
    assert (found.param, found.code) == ("tools[2].function.parameters", "invalid_function_parameters")
    fmt = {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema, "strict": strict}}
    as_reply = openai_response_format_problem(fmt)
    if strict or "array schema" in message or "is not of type" in message:  # the rest are functions' rules only
        assert as_reply is not None and as_reply.message.startswith("Invalid schema for response_format 'reply': ")
        assert message in as_reply.message and as_reply.code == "invalid_json_schema"


def test_openai_rules_take_the_documented_forms() -> None:
    optional = obj({"unit": {"type": ["string", "null"], "enum": ["F", "C", None]}, "where": STRING})
    conditions = obj(
        {"value": {"anyOf": [STRING, {"type": "number"}, obj({"column": STRING})]}, "at": {**STRING, "format": "date"}}
    )
    for schema in (optional, conditions, nested(10), obj({"rows": {"type": "array", "items": obj({"n": STRING})}})):
        assert openai_schema_problem(schema, strict=True, where="function 'F'") is None
    assert openai_schema_problem({"type": "object", "properties": {}}, strict=False, where="function 'F'") is None
    assert openai_function_problem({"name": "NoArguments"}, 0) is None  # an empty parameter list


def test_openai_refuses_names_and_tool_counts_as_the_api_does() -> None:
    found = openai_function_problem({"name": "mail.send", "parameters": obj({})}, 0)
    assert found is not None and found.param == "tools[0].function.name"
    assert found.message == (
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the "
        "pattern '^[a-zA-Z0-9_-]+$'."
    )
    found = openai_function_problem({"name": "N" * 65, "parameters": obj({})}, 0)
    assert found is not None and "string too long. Expected a string with maximum length 64" in found.message
    tools = [{"type": "function", "function": {"name": f"T{i}", "parameters": obj({})}} for i in range(129)]
    found = openai_request_refusal({"tools": tools})
    assert found is not None and found.code == "array_above_max_length" and "maximum length 128" in found.message


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"name": "mail.send", "input_schema": obj({})}, "tools.3.custom.name: String should match pattern"),
        ({"name": "Send"}, "tools.3.custom.input_schema: Field required"),
        ({"name": "Send", "input_schema": {"type": "string"}}, "tools.3.custom.input_schema.type: Input should be"),
        (
            {"name": "Send", "input_schema": {"type": "object", "anyOf": [obj({})]}},
            "input_schema does not support oneOf, allOf, or anyOf at the top level",
        ),
        (
            {"name": "Send", "input_schema": {"type": "object", "properties": {"to": {"type": "strng"}}}},
            "tools.3.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12",
        ),
        (
            {"name": "Send", "strict": True, "input_schema": {"type": "object", "properties": {"to": STRING}}},
            "For 'object' type, 'additionalProperties' must be explicitly set to false",
        ),
        (
            {"name": "Send", "strict": True, "input_schema": obj({"to": {"type": "string", "maxLength": 5}})},
            "For 'string' type, property 'maxLength' is not supported",
        ),
        (
            {
                "name": "Send",
                "strict": True,
                "input_schema": obj({"to": {"type": "array", "items": STRING, "minItems": 2}}),
            },
            "For 'array' type, 'minItems' values other than 0 or 1 are not supported",
        ),  # fmt: skip
    ],
)
def test_anthropic_rules_refuse_with_the_apis_words(tool: dict[str, Any], message: str) -> None:
    found = anthropic_tool_problem(tool, 3)
    assert found is not None and message in found


def test_anthropic_takes_arrays_without_items_and_refuses_output_formats_it_cannot_enforce() -> None:
    loose = {"type": "object", "properties": {"ids": {"type": "array"}}}  # valid draft 2020-12
    assert anthropic_tool_problem({"name": "Delete", "input_schema": loose}, 0) is None
    assert anthropic_tool_problem({"type": "web_search_20250305", "name": "web_search"}, 0) is None  # a server tool
    body = {"output_format": {"type": "json_schema", "schema": obj({"n": {"type": "integer", "minimum": 1}})}}
    assert (
        anthropic_request_refusal(body)
        == "output_format.schema: For 'integer' type, property 'minimum' is not supported"
    )
    strict = [{"name": f"T{i}", "strict": True, "input_schema": obj({})} for i in range(21)]
    assert "at most 20 tools may set strict" in (anthropic_request_refusal({"tools": strict}) or "")
    assert anthropic_structured_problem(obj({"n": {"type": "array", "items": STRING, "minItems": 1}})) is None


@pytest.mark.parametrize(
    ("parameters", "message"),
    [
        (obj({"ids": {"type": "array"}}), ".parameters.properties[ids].items: missing field."),
        (obj({"ids": {"type": "array", "items": {}}}), ".parameters.properties[ids].items: missing field."),
        (
            obj({"ids": {"type": "array", "items": {"anyOf": [STRING, {"type": "integer"}]}}}),
            ".parameters.properties[ids].items: missing field.",
        ),
        (obj({"tags": {"type": "object"}}), ".parameters.properties[tags].properties: should be non-empty for OBJECT"),
        ({"type": "object", "properties": {}}, ".parameters.properties: should be non-empty for OBJECT type"),
        (obj({"n": {"type": "string", "properties": {}}}), ".parameters.properties[n].properties: only allowed for"),
        (
            obj({"ids": {"type": ["array", "string"]}}),
            ".parameters.properties[ids].any_of[0].items: missing field.",
        ),
        (
            obj({"kind": {"const": "a"}}),
            'Invalid JSON payload received. Unknown name "const" at \'GenerateContentRequest.tools[0]'
            ".function_declarations[1].parameters.properties[0].value': Cannot find field.",
        ),
        (obj({"n": {"type": "integer", "enum": [1, 2]}}), "enum[0]' (TYPE_STRING), 1"),
        (obj({"n": {"type": "date"}}), '(type.googleapis.com/google.ai.generativelanguage.v1beta.Type), "date"'),
    ],
)
def test_gemini_rules_refuse_with_the_apis_words(parameters: dict[str, Any], message: str) -> None:
    found = gemini_function_problem({"name": "Send", "parameters": parameters}, 1)
    assert found is not None and message in found
    as_reply = gemini_response_format_problem({"type": "json_schema", "json_schema": {"schema": parameters}})
    assert as_reply is not None


def test_gemini_native_parameters_refuse_additional_properties_the_openai_endpoint_drops() -> None:
    where = "GenerateContentRequest.tools[0].function_declarations[0].parameters"
    assert gemini_schema_problems(obj({"to": STRING}), where) == []
    assert gemini_schema_problems(obj({"to": STRING}), where, compat=False) == [
        f"Invalid JSON payload received. Unknown name \"additionalProperties\" at '{where}': Cannot find field."
    ]


def test_gemini_takes_nullable_closed_and_argument_free_functions_and_checks_names() -> None:
    nullable = obj({"unit": {"type": ["string", "null"]}, "rows": {"type": ["array", "null"], "items": STRING}})
    assert gemini_function_problem({"name": "Convert", "parameters": nullable}, 0) is None
    assert gemini_function_problem({"name": "NoArguments"}, 0) is None  # "this can be left unset"
    assert "Invalid function name. Must start with a letter or an underscore" in (
        gemini_function_problem({"name": "1send"}, 0) or ""
    )


# --- the doubles answer a refusal as the API does ------------------------------------------------------------------
def test_the_doubles_answer_schema_refusals_in_each_apis_error_shape(serve) -> None:
    import anthropic
    import openai

    bad = {"type": "object", "properties": {"ids": {"type": "array"}}}
    tools = [{"type": "function", "function": {"name": "Delete", "parameters": bad}}]
    messages = [{"role": "user", "content": "go"}]
    with pytest.raises(openai.BadRequestError) as refused:
        client = openai.OpenAI(base_url=serve(OpenAIDouble).base_url, api_key="k", max_retries=0)
        client.chat.completions.create(model="m", messages=messages, tools=tools)  # type: ignore[arg-type]
    assert refused.value.body == {
        "message": "Invalid schema for function 'Delete': In context=('properties', 'ids'), array schema missing "
        "items.",
        "type": "invalid_request_error",
        "param": "tools[0].function.parameters",
        "code": "invalid_function_parameters",
    }
    with pytest.raises(openai.BadRequestError) as refused:
        client = openai.OpenAI(base_url=serve(GeminiDouble).base_url, api_key="k", max_retries=0)
        client.chat.completions.create(model="m", messages=messages, tools=tools)  # type: ignore[arg-type]
    assert refused.value.body == [
        {
            "error": {
                "code": 400,
                "message": "* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties[ids]"
                ".items: missing field.\n",
                "status": "INVALID_ARGUMENT",
            }
        }
    ]
    with pytest.raises(anthropic.BadRequestError) as rejected:
        client_a = anthropic.Anthropic(base_url=serve(AnthropicDouble).base_url, api_key="k", max_retries=0)
        client_a.messages.create(
            model="m", max_tokens=50, messages=messages,  # type: ignore[arg-type]
            tools=[{"name": "mail.delete", "input_schema": bad}],  # type: ignore[list-item]
        )  # fmt: skip
    assert rejected.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
        },
    }


# --- (c) episodes over the conformance doubles ---------------------------------------------------------------------
# Toolkits with array arguments and array returns, and no object whose fields the spec leaves open (which Gemini
# cannot take): PostboxMail, StorecraftAdmin, AerowatchFleet.
CASES = ["comms_email_purge_promotions", "money_storecraft_refund_shipping_delay_orders", "physical_roof_photo_drone"]
DOUBLES = {
    "openai": (OpenAIDouble, "openai", "OPENAI_API_KEY"),
    "anthropic": (AnthropicDouble, "anthropic", "ANTHROPIC_API_KEY"),
    "gemini": (GeminiDouble, "openai", "OPENAI_API_KEY"),  # its OpenAI-compatible endpoint, as a base_url
}


@pytest.mark.parametrize("which", sorted(DOUBLES))
def test_native_tool_episodes_run_to_the_end_over_the_conformance_doubles(serve, tmp_path, monkeypatch, which) -> None:
    cls, provider, key_env = DOUBLES[which]
    double = serve(cls=cls, refusal_rate=0.0, long_min=200, long_max=400, array_items=(2, 4))
    monkeypatch.setenv(key_env, "dummy-key-for-the-double")
    api.emulate(
        dump_dir=tmp_path / "run",
        settings=LLMSettings(model=f"{provider}:double", base_url=double.base_url, api_key_env=key_env, cache="off"),
        config=RunConfig(agent_format="tools", case_names=CASES, batch_size=3),
        show_progress=False,
    )
    records = [json.loads(line) for line in (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()]
    assert [r["status"] for r in records] == ["final_answer"] * len(CASES), [r.get("error") for r in records]
    assert [e.response for e in double.exchanges(status=400)] == []  # nothing the API would refuse
    sent_tools = [e.request["tools"] for e in double.exchanges(status=200) if e.request.get("tools")]
    assert sent_tools and all(steps for steps in (r["steps"] for r in records))


def test_an_undescribed_array_admits_any_items_and_a_described_one_says_what_it_holds() -> None:
    """A spec's array with no description says nothing of its items: any value (an emulator answering objects is
    not refused for a guess of strings); one whose description names no type holds strings, as every such array of
    the shipped and ToolEmu's toolkits does."""
    from toolemu.specs.models import Tool
    from toolemu.specs.schema import arguments_schema, returns_schema

    tool = Tool.model_validate(
        {
            "name": "List",
            "summary": "List things.",
            "parameters": [{"name": "ids", "type": "array", "description": "Record identifiers to list."}],
            "returns": [{"name": "rows", "type": "array"}, {"name": "tags", "type": "array", "description": "Tags."}],
        }
    )
    assert arguments_schema(tool, bounded=False)["properties"]["ids"]["items"] == {"type": "string"}
    returned = returns_schema(tool.returns, bounded=False)["properties"]
    assert returned["rows"]["items"] == {} and returned["tags"]["items"] == {"type": "string"}
