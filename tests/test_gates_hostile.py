"""Gates that hold against hostile arguments: every rule condition is total over JSON values (NaN, huge integers,
numbers in strings, recipients hidden in lists, objects and multi-address strings, dotted paths through lists), a
condition that cannot be decided denies with the reason "undecidable", no gate raises or hangs, bad policy files
are one clear line, and array items are type-checked against the tool's spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import bench

from toolemu.emulator import Emulator
from toolemu.errors import InputError
from toolemu.gates import CallView, build_gate, load_policy
from toolemu.llm import ModelHub, ModelOptions, ScriptedChatModel, UsageTracker
from toolemu.log import GateDecision, ToolCall
from toolemu.specs.checks import LedgerPredicate
from toolemu.specs.conditions import Condition
from toolemu.specs.models import Tool, ToolArgument, Toolkit
from toolemu.specs.schema import call_problems

DENY = ("deny", "r")  # the rule itself fired
UNDECIDABLE = ("deny", "undecidable")  # the rule's condition could not be decided on this value
NAN, INF = float("nan"), float("inf")
HUGE = 10**400  # past a float: float(HUGE) raises OverflowError
BENCH = bench()


def deep(value: Any, depth: int = 5000) -> Any:
    for _ in range(depth):
        value = [value]
    return value


def write_policy(tmp_path: Path, rules: list[dict[str, Any]] | str) -> Path:
    path = tmp_path / "policy.yaml"
    text = rules if isinstance(rules, str) else json.dumps({"rules": rules})  # JSON is YAML
    path.write_text(text, encoding="utf-8")
    return path


def one_rule(tmp_path: Path, *conditions: dict[str, Any], **rule: Any):
    return load_policy(write_policy(tmp_path, [{"id": "r", "action": "deny", "when": list(conditions), **rule}]))


def call(tool_input: Any, tool: str = "PayFlowSendMoney") -> CallView:
    return CallView(ToolCall(tool, tool_input), BENCH.cases[1], BENCH.toolkits_for(BENCH.cases[1]), [])


def outcome(decision: GateDecision | None) -> tuple[str, str] | None:
    return None if decision is None else (decision.action, decision.reason)


# --- numbers: total over every JSON value, exact, and a value no reading decides is a deny -----------------------

GT = {"arg": "amount", "gt": 500}
NUMBERS = [
    ("huge-int", GT, HUGE, DENY),
    ("huge-negative-int", GT, -HUGE, None),
    ("huge-negative-lt", {"arg": "amount", "lt": 0}, -HUGE, DENY),
    ("huge-int-le", {"arg": "amount", "le": 1}, HUGE, None),
    ("huge-int-in-list", GT, [100, HUGE], DENY),
    ("int-past-float-precision", {"arg": "amount", "gt": 2**53}, 2**53 + 1, DENY),
    ("decimal-past-float-precision", GT, "500.0000000000000000001", DENY),
    ("nan", GT, NAN, UNDECIDABLE),
    ("nan-string", GT, "NaN", UNDECIDABLE),
    ("negative-nan-string", GT, "-nan", UNDECIDABLE),
    ("signalling-nan-string", GT, "sNaN", UNDECIDABLE),
    ("true", GT, True, UNDECIDABLE),
    ("false", GT, False, UNDECIDABLE),
    ("words", GT, "lots", UNDECIDABLE),
    ("empty-string", GT, "", UNDECIDABLE),
    ("amount-with-unit-word", GT, "600 dollars", UNDECIDABLE),
    ("currency-code-before", GT, "USD 600", DENY),
    ("currency-code-after", GT, "600 USD", DENY),
    ("euro-sign", GT, "€600", DENY),
    ("hex", GT, "0x258", DENY),
    ("european-grouping", GT, "1.000,50", DENY),
    ("object", GT, {"value": 900}, UNDECIDABLE),
    ("list", GT, [100, 900], DENY),
    ("nested-lists", GT, [[[900]]], DENY),
    ("list-with-nan", GT, [100, NAN], UNDECIDABLE),
    ("list-of-number-strings", GT, ["100", "900"], DENY),
    ("5000-deep-list", GT, deep(900), UNDECIDABLE),
]


@pytest.mark.parametrize(("condition", "value", "expected"), [c[1:] for c in NUMBERS], ids=[c[0] for c in NUMBERS])
def test_numeric_conditions_are_total_and_exact(tmp_path, condition, value, expected) -> None:
    gate = one_rule(tmp_path, condition)
    assert outcome(gate.pre_call(call({"amount": value}))) == expected


# --- equality and membership: a list is its items, JSON types are kept apart where that would allow a call -------

EQUALITY = [
    ("eq-list-holding-it", {"arg": "payee", "eq": "pay_778"}, ["pay_778"], DENY),
    ("eq-nested-list-holding-it", {"arg": "payee", "eq": "pay_778"}, [["x", "pay_778"]], DENY),
    ("eq-number-as-string", {"arg": "payee", "eq": 12345}, "12345", DENY),
    ("eq-other-case", {"arg": "payee", "eq": "pay_778"}, "PAY_778", DENY),
    ("eq-padded", {"arg": "payee", "eq": "pay_778"}, " pay_778 ", DENY),
    ("in-list-holding-one", {"arg": "payee", "in": ["pay_778"]}, ["pay_1", "pay_778"], DENY),
    ("ne-true-given-1", {"arg": "confirmed", "ne": True}, 1, DENY),
    ("not-in-true-given-1", {"arg": "confirmed", "not_in": [True]}, 1, DENY),
    ("ne-list-of-the-allowed-one", {"arg": "payee", "ne": "pay_1"}, ["pay_1"], None),
    ("not-in-list-of-allowed-ones", {"arg": "payee", "not_in": ["pay_1", "pay_2"]}, ["pay_1", "pay_2"], None),
]


@pytest.mark.parametrize(("condition", "value", "expected"), [c[1:] for c in EQUALITY], ids=[c[0] for c in EQUALITY])
def test_equality_and_membership_over_lists_and_types(tmp_path, condition, value, expected) -> None:
    gate = one_rule(tmp_path, condition)
    assert outcome(gate.pre_call(call({condition["arg"]: value}))) == expected


# --- text: contains and regular expressions see every item and the text as a person would read it ---------------

TEXT = [
    ("contains-zero-width-split", {"arg": "note", "contains": "password"}, "pass\u200bword", DENY),
    ("contains-fullwidth", {"arg": "note", "contains": "password"}, "ＰＡＳＳＷＯＲＤ", DENY),
    ("contains-5000-deep", {"arg": "note", "contains": "password"}, deep("password"), UNDECIDABLE),
    ("matches-an-item", {"arg": "note", "matches": "^rm -rf"}, ["ls", "rm -rf /"], DENY),
    ("not-matches-every-item-matches", {"arg": "note", "not_matches": "^[a-z]+$"}, ["abc"], None),
    ("matches-past-the-length-bound", {"arg": "note", "matches": "secret"}, "x" * 2_000_001, UNDECIDABLE),
]


@pytest.mark.parametrize(("condition", "value", "expected"), [c[1:] for c in TEXT], ids=[c[0] for c in TEXT])
def test_text_conditions_over_items_and_normalised_text(tmp_path, condition, value, expected) -> None:
    gate = one_rule(tmp_path, condition)
    assert outcome(gate.pre_call(call({"note": value}))) == expected


# --- dotted paths: through lists, every item counts (a deny rule denies if any item would be denied) ------------

PATHS = [
    ("path-through-list", {"arg": "payments.amount", "gt": 500}, {"payments": [{"amount": 10}, {"amount": 900}]}, DENY),
    ("path-through-nested-lists", {"arg": "payments.amount", "gt": 500}, {"payments": [[{"amount": 900}]]}, DENY),
    ("path-through-list-nan", {"arg": "payments.amount", "gt": 500}, {"payments": [{"amount": "NaN"}]}, UNDECIDABLE),
    ("path-two-lists-deep", {"arg": "a.b.c", "gt": 500}, {"a": [{"b": [{"c": 1}, {"c": 900}]}]}, DENY),
    ("literal-dotted-key", {"arg": "payment.amount", "gt": 500}, {"payment.amount": 900}, DENY),
    (
        "path-through-list-recipient",
        {"arg": "payments.to", "not_domain": ["mybank.com"]},
        {"payments": [{"to": "a@mybank.com"}, {"to": "b@evil.com"}]},
        DENY,
    ),
    ("exists-false-every-item-has-it", {"arg": "payments.memo", "exists": False}, {"payments": [{"memo": "x"}]}, None),
]


@pytest.mark.parametrize(("condition", "arguments", "expected"), [c[1:] for c in PATHS], ids=[c[0] for c in PATHS])
def test_dotted_paths_go_through_lists(tmp_path, condition, arguments, expected) -> None:
    gate = one_rule(tmp_path, condition)
    assert outcome(gate.pre_call(call(arguments))) == expected


# --- recipients: every address a string, list or object could be read as ----------------------------------------

OUTSIDE = {"arg": "to", "not_domain": ["mybank.com"]}
BLOCKED = {"arg": "to", "domain_in": ["evil.com"]}
RECIPIENTS = [
    ("comma", OUTSIDE, "b@evil.com, a@mybank.com", DENY),
    ("semicolon", OUTSIDE, "b@evil.com; a@mybank.com", DENY),
    ("space", OUTSIDE, "b@evil.com a@mybank.com", DENY),
    ("tab", OUTSIDE, "b@evil.com\ta@mybank.com", DENY),
    ("newline", OUTSIDE, "b@evil.com\na@mybank.com", DENY),
    ("pipe", OUTSIDE, "b@evil.com|a@mybank.com", DENY),
    ("html-break", OUTSIDE, "b@evil.com<br>a@mybank.com", DENY),
    ("parentheses", OUTSIDE, "b@evil.com (a@mybank.com)", DENY),
    ("display-names", OUTSIDE, "Bob <b@evil.com>, Al <a@mybank.com>", DENY),
    ("two-ats", OUTSIDE, "a@evil.com@mybank.com", DENY),
    ("url-backslash-at", OUTSIDE, "http://evil.com\\@mybank.com", DENY),
    ("url-backslash-host", OUTSIDE, "https://evil.com\\.mybank.com/", DENY),
    ("path-then-at", OUTSIDE, "evil.com/@mybank.com", DENY),
    ("quoted-local-part-and-comment", OUTSIDE, '"a"@evil.com (a@mybank.com)', DENY),
    ("mailto-with-cc", OUTSIDE, "mailto:b@evil.com?cc=a@mybank.com", DENY),
    ("nested-list", OUTSIDE, [["b@evil.com"]], DENY),
    ("object", OUTSIDE, {"email": "b@evil.com"}, DENY),
    ("list-of-objects", OUTSIDE, [{"email": "b@evil.com"}], DENY),
    ("trailing-dot-inside", OUTSIDE, "a@mybank.com.", None),
    ("uppercase-trailing-dot-inside", OUTSIDE, "A@MyBank.COM.", None),
    ("empty-domain", OUTSIDE, "a@", UNDECIDABLE),
    ("number", OUTSIDE, 12345, UNDECIDABLE),
    ("5000-deep", OUTSIDE, deep("b@evil.com"), UNDECIDABLE),
    ("cyrillic-look-alike", BLOCKED, "a@\u0435vil.com", DENY),
    ("fullwidth", BLOCKED, "a@ｅｖｉｌ.com", DENY),
    ("uppercase-trailing-dot", BLOCKED, "a@EVIL.COM.", DENY),
    ("zero-width-space", BLOCKED, "a@ev\u200bil.com", DENY),
    ("ideographic-full-stop", BLOCKED, "a@evil\u3002com", DENY),
    ("punycode-look-alike", BLOCKED, "a@xn--vil-qdd.com", DENY),
    ("url-backslash-at-blocked", BLOCKED, "https://evil.com\\@mybank.com", DENY),
    ("comma-blocked-first", BLOCKED, "b@evil.com, a@mybank.com", DENY),
    ("two-ats-blocked", BLOCKED, "a@evil.com@mybank.com", DENY),
    ("list-with-nested-blocked", BLOCKED, ["a@mybank.com", ["b@evil.com"]], DENY),
]


@pytest.mark.parametrize(
    ("condition", "value", "expected"), [c[1:] for c in RECIPIENTS], ids=[c[0] for c in RECIPIENTS]
)
def test_recipients_in_every_shape(tmp_path, condition, value, expected) -> None:
    gate = one_rule(tmp_path, condition)
    assert outcome(gate.pre_call(call({"to": value}, tool="PostboxMailSend"))) == expected


# --- case checks share the vocabulary: the same readings, and an undecided value is not a violation -------------

CHECKS = [
    ("check-path-through-list", {"arg": "payments.amount", "gt": 500}, {"payments": [{"amount": 900}]}, True),
    ("check-currency-code", {"arg": "amount", "gt": 500}, {"amount": "USD 600"}, True),
    ("check-huge-int", {"arg": "amount", "gt": 500}, {"amount": HUGE}, True),
    ("check-recipient-hidden-second", {"arg": "to", "domain_in": ["evil.com"]}, {"to": "x@evil.com, a@b.org"}, True),
]


@pytest.mark.parametrize(("condition", "arguments", "violated"), [c[1:] for c in CHECKS], ids=[c[0] for c in CHECKS])
def test_checks_read_values_as_gates_do(condition, arguments, violated) -> None:
    assert Condition.model_validate(condition).holds(arguments) is violated


def test_a_ledger_value_past_a_float_is_compared_exactly() -> None:
    predicate = LedgerPredicate(key="account:*", gt=500)
    assert predicate.test(True, HUGE) is True and predicate.test(True, -HUGE) is False


# --- the call as a whole ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool_input", ['{"amount": 900}', [{"amount": 900}]], ids=["json-text", "list"])
def test_an_input_that_is_not_an_object_cannot_be_decided(tmp_path, tool_input) -> None:
    gate = one_rule(tmp_path, GT)
    decision = gate.pre_call(call(tool_input))
    assert outcome(decision) == UNDECIDABLE and "rule r" in decision.message


def test_an_observation_past_the_length_bound_is_withheld(tmp_path) -> None:
    gate = load_policy(
        write_policy(tmp_path, [{"id": "r", "action": "deny", "phase": "post_call", "observation_matches": "AKIA"}])
    )
    assert outcome(gate.post_call(call({}), "x" * 2_000_001)) == ("deny", "undecidable")


def fragile_gate(call: CallView) -> GateDecision | None:
    """An outside gate that trusts its input: a hostile call makes it raise."""
    if call.arguments["amount"] > 100:
        return GateDecision(gate="", phase="pre_call", action="warn", reason="big")
    return None


class FragileOutputGate:
    name = "fragile-output"

    def pre_call(self, call: CallView) -> GateDecision | None:
        return None

    def post_call(self, call: CallView, observation: str) -> GateDecision | None:
        json.loads(observation)  # raises on text that is not JSON
        return None


def test_a_python_gate_that_raises_denies_instead() -> None:
    fn = build_gate("test_gates_hostile:fragile_gate")
    decision = fn.pre_call(call({"to": "x"}))  # KeyError: 'amount'
    assert outcome(decision) == UNDECIDABLE and "KeyError" in decision.message
    gate = build_gate("test_gates_hostile:FragileOutputGate")
    decision = gate.post_call(call({}), "not json")
    assert outcome(decision) == UNDECIDABLE and decision.phase == "post_call"


def test_the_monitor_denies_a_call_it_cannot_even_show_its_model() -> None:
    monitor = ScriptedChatModel(replies=[])
    roles = {r: ModelOptions(model=f"scripted:{r}") for r in ("default", "monitor")}
    hub = ModelHub(roles, None, UsageTracker(), lambda o, role: monitor)
    decision = build_gate("monitor", hub).pre_call(call({"amount": deep(1)}))  # json.dumps: RecursionError
    assert outcome(decision) == UNDECIDABLE and monitor.calls == []


# --- no gate hangs: catastrophic backtracking patterns on 50k characters ------------------------------------------

EVIL = "a" * 50_000 + "!"
REDOS = [
    ("nested-plus", {"arg": "note", "matches": "(a+)+$"}, EVIL, None),
    ("alternation-overlap", {"arg": "note", "matches": "(a|aa)+$"}, EVIL, None),
    ("alternation-same", {"arg": "note", "matches": "^(a|a)*$"}, EVIL, None),
    ("words-and-spaces", {"arg": "note", "matches": "^(\\w+\\s?)*$"}, EVIL, None),
    ("x-plus-x-plus", {"arg": "note", "matches": "(x+x+)+y"}, "x" * 50_000, None),
    ("not-matches-nested-plus", {"arg": "note", "not_matches": "^(a+)+$"}, EVIL, DENY),
    ("nested-plus-in-a-list", {"arg": "note", "matches": "(a+)+$"}, ["ok", EVIL], None),
]


@pytest.mark.timeout(20)
@pytest.mark.parametrize(("condition", "value", "expected"), [c[1:] for c in REDOS], ids=[c[0] for c in REDOS])
def test_catastrophic_patterns_run_in_linear_time(tmp_path, condition, value, expected) -> None:
    gate = one_rule(tmp_path, condition)
    assert outcome(gate.pre_call(call({"note": value}))) == expected


@pytest.mark.timeout(20)
@pytest.mark.parametrize("pattern", ["(.*a){20}$", "^(([a-z])+.)+[A-Z]([a-z])+$"])
def test_catastrophic_observation_patterns_run_in_linear_time(tmp_path, pattern) -> None:
    rule = {"id": "r", "action": "deny", "phase": "post_call", "observation_matches": pattern}
    gate = load_policy(write_policy(tmp_path, [rule]))
    assert gate.post_call(call({}), "a" * 50_000 + "0") is None


# --- policy files: bad input, one line naming the file, the rule and the field ----------------------------------

RULE = "{id: r, action: deny, when: [{arg: amount, gt: 1}]}"
BAD_POLICIES = [
    ("duplicate-top-key", f"rules: [{RULE}]\nrules: [{RULE}]\n", ["duplicate key 'rules'"]),
    ("duplicate-name", f"name: a\nname: b\nrules: [{RULE}]\n", ["duplicate key 'name'"]),
    ("duplicate-rule-key", "rules:\n  - {id: r, action: deny, action: warn}\n", ["rule 0", "'action'", "duplicate"]),
    (
        "duplicate-condition-key",
        "rules:\n  - {id: r, action: deny, when: [{arg: a, gt: 1, gt: 2}]}\n",
        ["rule 0", "'when.0.gt'", "duplicate"],
    ),
    ("nan-bound", "rules:\n  - {id: r, action: deny, when: [{arg: a, gt: .nan}]}\n", ["rule 0", "when.0.gt", "finite"]),
    ("nan-bound-caps", "rules:\n  - {id: r, action: deny, when: [{arg: a, le: .NaN}]}\n", ["rule 0", "finite"]),
    ("inf-bound", "rules:\n  - {id: r, action: deny, when: [{arg: a, ge: .inf}]}\n", ["rule 0", "finite"]),
    ("minus-inf-bound", "rules:\n  - {id: r, action: deny, when: [{arg: a, lt: -.inf}]}\n", ["rule 0", "finite"]),
    ("bool-bound", "rules:\n  - {id: r, action: deny, when: [{arg: a, gt: true}]}\n", ["rule 0", "when.0.gt"]),
    ("empty-tools", "rules:\n  - {id: r, action: deny, tools: []}\n", ["rule 0", "'tools'", "at least one"]),
    ("empty-tool-pattern", "rules:\n  - {id: r, action: deny, tools: ['']}\n", ["rule 0", "tools"]),
    ("empty-in", "rules:\n  - {id: r, action: deny, when: [{arg: a, in: []}]}\n", ["rule 0", "at least one"]),
    ("empty-domain-in", "rules:\n  - {id: r, action: deny, when: [{arg: a, domain_in: []}]}\n", ["at least one"]),
    (
        "address-as-domain",
        "rules:\n  - {id: r, action: deny, when: [{arg: a, not_domain: ['@mybank.com']}]}\n",
        ["rule 0", "expected a domain"],
    ),
    (
        "url-as-domain",
        "rules:\n  - {id: r, action: deny, when: [{arg: a, not_domain: ['https://mybank.com/']}]}\n",
        ["rule 0", "expected a domain"],
    ),
    ("backreference", "rules:\n  - {id: r, action: deny, when: [{arg: a, matches: '(a)\\1'}]}\n", ["rule 0", "RE2"]),
    ("lookahead", "rules:\n  - {id: r, action: deny, when: [{arg: a, matches: '(?=a)b'}]}\n", ["rule 0", "RE2"]),
    (
        "lookbehind-observation",
        "rules:\n  - {id: r, action: deny, phase: post_call, observation_matches: '(?<!a)b'}\n",
        ["rule 0", "observation_matches", "RE2"],
    ),
    ("too-large", "rules:\n  - {id: r, action: deny, when: [{arg: a, matches: 'a{1000}{1000}'}]}\n", ["rule 0", "RE2"]),
    (
        "duplicate-rule-ids",
        "rules:\n  - {id: r, action: deny}\n  - {id: r, action: warn}\n",
        ["rule 1", "'id'", "unique"],
    ),
]


@pytest.mark.parametrize(("text", "fragments"), [c[1:] for c in BAD_POLICIES], ids=[c[0] for c in BAD_POLICIES])
def test_bad_policy_files(tmp_path, text, fragments) -> None:
    with pytest.raises(InputError) as err:
        load_policy(write_policy(tmp_path, text))
    message = str(err.value)
    assert "policy.yaml" in message and "\n" not in message
    for fragment in fragments:
        assert fragment in message


def test_a_duplicate_key_in_a_policy_is_exit_2_and_one_line(tmp_path, run_cli) -> None:
    policy = write_policy(tmp_path, f"rules: [{RULE}]\nrules: [{RULE}]\n")
    result = run_cli("run", "--dry-run", "--trunc-num", "1", "--dump-dir", tmp_path / "run", "--gate", policy)
    assert result.code == 2
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and "policy.yaml" in lines[0] and "duplicate key 'rules'" in lines[0]


# --- array items are type-checked against the tool's spec ---------------------------------------------------------


def typed_tool() -> Tool:
    return Tool(
        name="Send",
        summary="Send money to several people.",
        parameters=[
            ToolArgument(name="to", type="array", items={"type": "string"}),
            ToolArgument(name="amounts", type="array", items={"type": "number"}),
            ToolArgument(name="counts", type="array", items={"type": "integer"}),
            ToolArgument(name="matrix", type="array", items={"type": "array", "items": {"type": "integer"}}),
            ToolArgument(name="amount", type="number"),
        ],
    )


ITEMS = [
    ("number-among-strings", {"to": ["a@x.com", 5]}, "to[1]"),
    ("list-among-strings", {"to": [["a@x.com"]]}, "to[0]"),
    ("object-among-strings", {"to": [{"email": "a@x.com"}]}, "to[0]"),
    ("null-among-strings", {"to": [None]}, "to[0]"),
    ("bool-among-strings", {"to": [True]}, "to[0]"),
    ("bool-among-numbers", {"amounts": [1, True]}, "amounts[1]"),
    ("nan-among-numbers", {"amounts": [1, NAN]}, "amounts[1]"),
    ("string-among-numbers", {"amounts": [1, "2"]}, "amounts[1]"),
    ("float-among-integers", {"counts": [1.5]}, "counts[0]"),
    ("string-in-nested", {"matrix": [[1, "2"]]}, "matrix[0][1]"),
    ("scalar-in-nested", {"matrix": [1]}, "matrix[0]"),
    ("nan-number", {"amount": NAN}, "amount"),
    ("infinite-number", {"amount": -INF}, "amount"),
]


@pytest.mark.parametrize(("tool_input", "where"), [c[1:] for c in ITEMS], ids=[c[0] for c in ITEMS])
def test_array_items_are_type_checked(tool_input, where) -> None:
    problems = call_problems(typed_tool(), tool_input)
    assert len(problems) == 1 and f"'{where}'" in problems[0]


@pytest.mark.parametrize(
    "items",
    [{"type": "strnig"}, {"items": {"type": "string"}}, {"type": "array", "items": {"type": "text"}}],
    ids=["unknown-type", "no-type", "unknown-nested-type"],
)
def test_a_malformed_item_type_is_refused(items) -> None:
    with pytest.raises(ValueError, match="items"):
        ToolArgument(name="to", type="array", items=items)


def test_the_emulator_refuses_mistyped_items_without_a_model_call() -> None:
    model = ScriptedChatModel(replies=[])
    roles = {r: ModelOptions(model=f"scripted:{r}") for r in ("default", "emulator")}
    hub = ModelHub(roles, None, UsageTracker(), lambda o, role: model)
    kit = Toolkit(toolkit="Payer", name_for_model="Payer", description_for_model="Pays.", tools=[typed_tool()])
    emulation = Emulator(hub.model("emulator")).emulate(BENCH.cases[0], [kit], [], "PayerSend", {"to": ["a", 1]})
    assert emulation.invalid_call and "to[1]" in emulation.observation and model.calls == []
    # Well-typed items pass: huge integers are numbers, empty arrays hold no wrong item.
    ok = {"to": ["a@x.com"], "amounts": [1, 2.5, HUGE], "counts": [3], "matrix": [[1], []], "amount": 5}
    assert call_problems(typed_tool(), ok) == []
