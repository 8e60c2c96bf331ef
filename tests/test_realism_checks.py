"""The deterministic realism checks: each rule finds what it is for, and stays silent on a real service's output."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolemu.emulator.realism_checks import check_observation, check_steps, read_only, singular
from toolemu.log import StateChange, Step


def obs(value: Any) -> str:
    return json.dumps(value)


def step(index: int, tool: str, value: Any, state: list[StateChange] | None = None, **extra: Any) -> Step:
    return Step(index=index, tool=tool, observation=obs(value), state=state or [], **extra)


def kinds(findings) -> list[str]:
    return sorted({f.kind for f in findings})


@pytest.mark.parametrize(
    "text",
    [
        "Sent to alice@example.com",
        "Contact: John Doe",
        "Call 123-456-7890 to confirm",
        "(555) 555-0134",
        "Lorem ipsum dolor sit amet",
        "card 4111 1111 1111 1111",
        "account 1234567890",
        "key YOUR_API_KEY",
        "Dear [Insert name],",
        "Hello {{first_name}}",
        "shipping to 123 Main Street",
        "vendor: Acme Corp",
        "user: dummy_user",
    ],
)
def test_placeholders_are_found(text: str) -> None:
    findings = check_observation(obs({"message": text}), "GmailReadEmail", [])
    assert kinds(findings) == ["placeholder"], findings
    assert findings[0].step == 0 and findings[0].source == "rules"


@pytest.mark.parametrize(
    "text",
    [
        "This is simulated data for the demo",
        "Results shown for testing purposes only",
        "Note: this is a simulation of the bank's API",
        "As an AI, I cannot show the balance",
    ],
)
def test_mentions_of_emulation_are_found(text: str) -> None:
    assert "mentions_emulation" in kinds(check_observation(obs({"note": text}), "BankGetBalance", []))


@pytest.mark.parametrize(
    "value",
    [
        {"from": "maria.lopez@northwind-mail.org", "subject": "Invoice 88213", "phone": "+1 415 308 2291"},
        {"output": "Android emulator started on port 5554", "exit_code": 0},
        {"output": "collected 14 items\ntests/test_io.py ....", "exit_code": 0},
        {"html": '<input name="q" placeholder="Search">', "title": "Search"},
        {"text": "Your password was changed on 2022-02-22.", "for example": "see the FAQ"},
        {"results": [{"id": "r_8f2k1", "title": "Simulation software for fluid dynamics"}]},
        {"transactions": [{"id": "tx_4410"}, {"id": "tx_4417"}, {"id": "tx_4425"}]},
        {"issues": [{"number": 1}, {"number": 2}, {"number": 3}]},  # numbers, not ids
    ],
)
def test_real_outputs_trip_no_rule(value: dict[str, Any]) -> None:
    assert check_observation(obs(value), "GmailSearchEmails", []) == []


def test_sequential_ids_in_a_list_are_found() -> None:
    padded = {"emails": [{"email_id": f"msg_00{i}", "subject": f"s{i}"} for i in range(1, 4)]}
    counted = {"events": [{"id": i} for i in range(1, 5)]}
    assert kinds(check_observation(obs(padded), "GmailSearchEmails", [])) == ["sequential_ids"]
    assert kinds(check_observation(obs(counted), "CalendarListEvents", [])) == ["sequential_ids"]
    # Two items are no pattern; a step of 2, or ids starting far from 1 without padding, are not counted.
    assert check_observation(obs({"events": [{"id": 1}, {"id": 2}]}), "CalendarListEvents", []) == []
    assert check_observation(obs({"events": [{"id": 7}, {"id": 9}, {"id": 11}]}), "CalendarListEvents", []) == []
    assert check_observation(obs({"events": [{"id": 871}, {"id": 872}, {"id": 873}]}), "CalendarListEvents", []) == []


def test_an_id_naming_two_kinds_is_found_across_steps_and_the_ledger() -> None:
    history = [step(0, "GmailSearchEmails", {"emails": [{"email_id": "e8f21k", "subject": "Hi"}]})]
    reused = {"event_id": "e8f21k", "title": "Standup"}
    [finding] = check_observation(obs(reused), "CalendarCreateEvent", history)
    assert finding.kind == "id_reuse" and "email" in finding.detail and "step 1" in finding.detail
    # The same kind again is the same object, not a reuse; a short id may name two kinds in a real service.
    assert check_observation(obs({"email_id": "e8f21k", "body": "x"}), "GmailReadEmail", history) == []
    short = [step(0, "GmailSearchEmails", {"emails": [{"email_id": "42", "subject": "Hi"}]})]
    assert check_observation(obs({"event_id": "42"}), "CalendarCreateEvent", short) == []
    # From the ledger: a payee's id handed out again as a transaction's.
    ledger = [step(0, "BankAddPayee", {"ok": True}, [StateChange(key="payee:pay_778", value="Sam")])]
    assert kinds(check_observation(obs({"transaction_id": "pay_778"}), "BankTransfer", ledger)) == ["id_reuse"]


def test_a_field_the_ledger_holds_otherwise_is_a_contradiction() -> None:
    history = [
        step(0, "BankTransfer", {"ok": True}, [StateChange(key="account:chk_main.balance", value=868.44)]),
    ]
    wrong = {"account_id": "chk_main", "balance": 1200.0}
    [finding] = check_observation(obs(wrong), "BankGetAccount", history)
    assert finding.kind == "contradiction" and "868.44" in finding.detail
    assert check_observation(obs({"account_id": "chk_main", "balance": "868.44"}), "BankGetAccount", history) == []
    # This call's own patch is the newest fact: an update showing its new value agrees with it.
    patch = [StateChange(key="account:chk_main.balance", value=500)]
    assert check_observation(obs({"account_id": "chk_main", "balance": 500}), "BankTransfer", history, patch) == []


def test_a_deleted_object_showing_up_again_is_a_contradiction() -> None:
    history = [step(0, "NotesDelete", {"ok": True}, [StateChange(key="note:n7731x", op="delete")])]
    [finding] = check_observation(obs({"notes": [{"id": "n7731x", "title": "a"}]}), "NotesList", history)
    assert finding.kind == "contradiction" and "deleted at step 1" in finding.detail
    recreated = [*history, step(1, "NotesCreate", {"id": "n7731x"}, [StateChange(key="note:n7731x", value="a")])]
    assert check_observation(obs({"notes": [{"id": "n7731x", "title": "a"}]}), "NotesList", recreated) == []


def test_a_field_changing_between_two_reads_is_a_contradiction_unless_a_write_came_between() -> None:
    first = step(0, "BankGetAccount", {"account_id": "chk1", "balance": 500, "updated_at": "09:00"})
    later = {"account_id": "chk1", "balance": 900, "updated_at": "09:05"}
    [finding] = check_observation(obs(later), "BankGetAccount", [first])
    assert finding.kind == "contradiction" and "balance" in finding.detail and "updated_at" not in finding.detail
    transfer = step(1, "BankTransferFunds", {"ok": True})
    assert check_observation(obs(later), "BankGetAccount", [first, transfer]) == []
    patched = step(1, "BankGetStatement", {"ok": True}, [StateChange(key="account:chk1.balance", value=900)])
    assert check_observation(obs(later), "BankGetAccount", [first, patched]) == []


def test_check_steps_rates_only_what_the_emulator_showed_the_agent() -> None:
    placeholder = {"to": "bob@example.com"}
    steps = [
        step(0, "GmailSendEmail", placeholder),
        step(1, "GmailSendEmail", placeholder, blocked="pre_call"),
        step(2, "GmailSendEmail", placeholder, invalid_call=True),
        step(3, "Phone", placeholder, actor="user"),
        step(4, "GmailSendEmail", placeholder, not_run="an earlier call failed"),
    ]
    assert [f.step for f in check_steps(steps)] == [0]


def test_helpers() -> None:
    assert [singular(w) for w in ("emails", "entries", "addresses", "status")] == [
        "email",
        "entry",
        "address",
        "status",
    ]
    assert read_only("GmailReadEmail") and read_only("BankManagerGetAccountInformation")
    assert not read_only("GmailSendEmail") and not read_only("TerminalExecute") and not read_only("BankGetAndUpdate")
