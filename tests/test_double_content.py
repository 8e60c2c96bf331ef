"""The doubles' content: schema instances (the project's own schemas included) and recognisable long strings."""

from __future__ import annotations

import json
import random

import jsonschema
import pytest
from doubles import markers
from doubles.config import DoubleConfig
from doubles.conversation import Conversation, schema_in_text
from doubles.instance import Draw, generate

from toolemu.agents.agent import turn_schema
from toolemu.emulator.emulator import reply_schema as emulator_schema
from toolemu.llm.structured import drop_added_nulls, schema_instruction, strict_schema
from toolemu.paths import DEFAULT_TOOLKITS
from toolemu.prompts.tools import describe_toolkits
from toolemu.scorers import ATTACK, HELPFULNESS, SAFETY
from toolemu.scorers.judge import reply_schema as judge_schema
from toolemu.specs import load_benchmark

KEYWORDS = {
    "type": "object",
    "properties": {
        "kind": {"enum": ["a", "b"]},
        "fixed": {"const": 7},
        "count": {"type": "integer", "minimum": 3, "maximum": 9},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        "maybe": {"type": ["string", "null"], "maxLength": 40},
        "flag": {"type": "boolean"},
        "nothing": {"type": "null"},
        "pick": {"oneOf": [{"type": "integer"}, {"type": "string", "minLength": 5, "maxLength": 12}]},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}, "minItems": 2, "maxItems": 4},
        "ref": {"$ref": "#/$defs/point"},
        "open": {"type": "object", "additionalProperties": {"type": "integer"}},
        "body": {"type": "string", "minLength": 10, "maxLength": 300},
    },
    "required": ["kind", "fixed", "count", "ratio", "maybe", "flag", "nothing", "pick", "tags", "ref", "body"],
    "additionalProperties": False,
    "$defs": {
        "point": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat", "lon"],
        }
    },
}


@pytest.fixture(scope="module")
def mail_kit():
    return load_benchmark([DEFAULT_TOOLKITS / "PostboxMail.json"]).toolkits["PostboxMail"]


def draw(seed: int, limits: bool, tool_results: int = 0, **knobs) -> Draw:
    return Draw(random.Random(seed), DoubleConfig(**knobs), limits, tool_results)


def project_schemas(kit) -> list[dict]:
    return (
        [turn_schema([kit], bounded=True)]
        + [judge_schema(info, bounded=True) for info in (SAFETY, HELPFULNESS, ATTACK)]
        + [emulator_schema(tool, bounded=True) for tool in kit.tools]
    )


def test_instances_validate_when_limits_are_kept(mail_kit) -> None:
    for schema in [KEYWORDS, *project_schemas(mail_kit)]:
        for seed in range(15):
            jsonschema.validate(generate(schema, draw(seed, limits=True)), schema)


def test_ignoring_limits_exposes_the_caps_a_strict_schema_no_longer_states(mail_kit) -> None:
    """A strong model fills the fields to their natural length: valid against what strict mode sends, not
    against the project's own bounds."""
    read = next(t for t in mail_kit.tools if t.name == "ReadEmail")
    schema = emulator_schema(read, bounded=True)  # the caps a small grammar-constrained model gets
    sizes, valid_full = [], 0
    for seed in range(10):
        d = draw(seed, limits=False, exception_rate=0.0)
        value = generate(strict_schema(schema), d)  # what a strong model answers to what strict mode sends
        jsonschema.validate(value, strict_schema(schema))
        value = drop_added_nulls(value, schema)  # as the model layer reads it (the optional state left out)
        valid_full += jsonschema.Draft202012Validator(schema).is_valid(value)
        sizes.append(len(value["result"]["body"]))
        assert 18 <= len(value["result"]["to"]) <= 22
    assert all(1000 <= s <= 3000 for s in sizes) and valid_full == 0


def test_agent_turns_call_tools_then_answer(mail_kit) -> None:
    schema = turn_schema([mail_kit], bounded=True)
    names = {mail_kit.tool_full_name(t) for t in mail_kit.tools}
    early = [generate(schema, draw(s, True, tool_results=2))["action"] for s in range(10)]
    late = [generate(schema, draw(s, True, tool_results=3))["action"] for s in range(10)]
    assert all(a["tool"] in names for a in early) and len({a["tool"] for a in early}) > 1
    assert all(set(a) == {"final_answer"} for a in late)


def test_judges_get_every_label_with_its_own_score() -> None:
    schema = judge_schema(SAFETY, bounded=True)
    verdicts = {json.dumps(generate(schema, draw(s, True))["verdict"], sort_keys=True) for s in range(60)}
    assert len(verdicts) == len(SAFETY.labels)
    for verdict in map(json.loads, verdicts):
        assert SAFETY.score_of(verdict["label"]) == verdict["score"]


def test_emulator_raises_at_the_configured_rate(mail_kit) -> None:
    schema = emulator_schema(mail_kit.tools[0], bounded=False)
    raised = sum("exception" in generate(schema, draw(s, True, exception_rate=0.3))["result"] for s in range(200))
    assert 35 <= raised <= 85


def test_prompt_descriptions_shape_the_values(mail_kit) -> None:
    """Keys and choices a tool's description quotes are what a model reading the prompt would use."""
    conv = Conversation(
        turns=[
            (
                "user",
                "Returns:\n  emails (array): each an object with 'email_id', 'from' and 'is_read'.\n"
                "  mime (string): MIME type, e.g. 'application/pdf' or 'text/csv'.\n",
            )
        ]
    )
    schema = {"type": "object", "properties": {"emails": {"type": "array"}, "mime": {"type": "string"}}}
    d = Draw(random.Random(1), DoubleConfig(optional_rate=1.0), False, 0, conv.return_hints, conv.return_options)
    value = generate(schema, d)
    assert all(set(item) <= {"email_id", "from", "is_read"} and "email_id" in item for item in value["emails"])
    assert value["mime"] in ("application/pdf", "text/csv")
    tools = {t.name: t.schema for t in Conversation(system=describe_toolkits([mail_kit])).react_tools}
    assert set(tools) == {mail_kit.tool_full_name(t) for t in mail_kit.tools}
    search = tools["PostboxMailSearchEmails"]["properties"]
    assert search["folder"]["enum"] == ["inbox", "sent", "archive", "spam", "trash", "all"]
    assert "enum" not in search["query"] and search["limit"] == {"type": "integer"}


def test_schema_is_read_back_from_the_projects_instruction() -> None:
    text = "Emulate the call.\n\n" + schema_instruction(KEYWORDS)
    assert schema_in_text(text) == KEYWORDS
    assert schema_in_text("no schema here") is None


def test_markers_tell_intact_from_cut_or_altered_strings() -> None:
    d = draw(3, limits=False)
    whole = d.long("body", None)
    ((marker_id, registered),) = d.long_strings
    assert registered == whole and 1000 <= len(whole) <= 3000
    nested = {"observation": json.dumps({"body": whole}, ensure_ascii=False)}  # JSON inside JSON, as in records
    assert markers.scan([nested]).intact == {marker_id}
    cut = markers.scan([whole[:-40]])
    altered = markers.scan([whole.replace("e", "é", 1)])
    assert cut.damaged == {marker_id} and altered.damaged == {marker_id}
    assert markers.scan([{"log": json.dumps(whole)}, whole]).damaged == set()  # escaped once, whole elsewhere
