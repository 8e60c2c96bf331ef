"""The shipped probes: one file per shipped toolkit, written for its spec as it is (hash), every call valid, derived
probes as the derivation gives them, and each measuring what it says: a perfect emulator passes every probe, and a
fault of known size costs exactly that much."""

from __future__ import annotations

import pytest
from fidelity_oracle import oracle_trajectory

from toolemu.fidelity.compare import compare_values, locate, same_observation
from toolemu.fidelity.derive import derive_probes, families, readable
from toolemu.fidelity.probes import PROBE_KINDS, PROBES, find_tool, load_probes
from toolemu.fidelity.score import score_probe
from toolemu.paths import DEFAULT_TOOLKITS
from toolemu.specs import load_benchmark
from toolemu.specs.version import toolkit_hashes


@pytest.fixture(scope="module")
def shipped():
    bench = load_benchmark([DEFAULT_TOOLKITS])
    return bench.toolkits, toolkit_hashes(bench), load_probes(PROBES, bench.toolkits)


def test_every_shipped_toolkit_has_a_probe_file_for_its_spec_as_it_is(shipped) -> None:
    kits, hashes, files = shipped
    assert set(files) == set(kits)
    assert {name: f.toolkit_hash for name, f in files.items()} == hashes
    for name, f in files.items():
        assert f.probes or f.unprobeable, name


def test_derived_probes_are_what_the_derivation_gives(shipped) -> None:
    kits, _, files = shipped
    for name, f in files.items():
        committed = [p for p in f.probes if p.source == "derived"]
        assert committed == derive_probes(kits[name]), name
    assert sum(p.source == "derived" for f in files.values() for p in f.probes) >= 30


def test_every_kind_of_probe_is_shipped_and_updates_change_1_3_and_5_fields(shipped) -> None:
    _, _, files = shipped
    probes = [p for f in files.values() for p in f.probes]
    assert {p.kind for p in probes} == set(PROBE_KINDS)
    assert {p.changed for p in probes if p.kind == "update_read"} >= {1, 3, 5}
    assert all(p.changed == 2 for p in probes if p.kind == "transfer")
    for p in (p for p in probes if p.kind == "read_twice"):  # a read repeated, neither read changing anything
        [again] = [s for s in p.steps if s.same_as is not None]
        assert not again.effects and not p.steps[again.same_as].effects, p.id


def test_a_perfect_emulator_passes_every_shipped_probe(shipped) -> None:
    kits, _, files = shipped
    for name, f in files.items():
        for probe in f.probes:
            result = score_probe(probe, oracle_trajectory(probe, kits[name]))
            assert result.passed, (name, probe.id, [c for c in result.checks if c.outcome != "match"])


def test_a_lost_change_costs_exactly_the_changes_lost_on_every_shipped_write(shipped) -> None:
    kits, _, files = shipped
    for name, f in files.items():
        for probe in f.probes:
            if probe.kind not in ("update_read", "create_read", "transfer") or probe.changed < 1:
                continue
            for drop in range(1, probe.changed + 1):
                result = score_probe(probe, oracle_trajectory(probe, kits[name], drop=drop))
                wrong = [c for c in result.checks if c.outcome != "match"]
                assert len(wrong) == drop and not result.passed, (name, probe.id, drop, wrong)


def test_checked_fields_are_fields_the_reading_tool_returns(shipped) -> None:
    """A read-back names a field the tool's returns name (or quote), or a key of a free-form object it returns
    (a secret's data, a record's fields), or the whole output of a read of the one object there is."""
    kits, _, files = shipped
    for name, f in files.items():
        kit = kits[name]
        for probe in f.probes:
            for step in probe.steps:
                tool = find_tool(kit, step.tool)
                assert tool is not None
                shown = readable(tool)
                free = any(r.type == "object" for r in tool.returns)
                for check in step.checks:
                    for field in check.fields or []:
                        named = field.replace("_", "") in {s.replace("_", "") for s in shown}
                        assert named or free or check.whole, (name, probe.id, step.tool, field)


def test_families_need_an_identifier_the_read_takes_and_a_name_about_the_object(shipped) -> None:
    kits, _, _ = shipped
    fams = {f.kind: f for f in families(kits["RolodexContacts"])}
    contact = fams["contact"]
    assert (contact.create.name, contact.get.name, contact.update.name, contact.delete.name) == (
        "CreateContact",
        "GetContact",
        "UpdateContact",
        "DeleteContacts",
    )
    # DeleteMessage takes a channel_id, yet deletes no channel; RevokeDigitalKey takes a vehicle_id.
    assert all(f.delete is None for f in families(kits["HuddleChat"]))
    assert all(f.delete is None for f in families(kits["VoltDriveConnect"]))


@pytest.mark.parametrize(
    ("expected", "actual", "verdict"),
    [
        (1050.0, "$1,050.00", "match"),
        (1050.0, 1049.0, "contradiction"),
        ("+1 617 392 4418", "+16173924418", "match"),
        ("2026-06-12T10:00:00Z", "2026-06-12T10:00:00+00:00", "match"),
        ("2026-06-12", "2026-06-12T00:00:00Z", "match"),
        ("2026-06-12T10:00:00Z", "2026-06-12T11:00:00Z", "contradiction"),
        (["a@x.io", "b@x.io"], ["b@x.io", "a@x.io"], "match"),
        (["a@x.io", "b@x.io"], ["a@x.io"], "contradiction"),
        (["finance-reader"], [{"role_name": "finance-reader", "expires_at": None}], "match"),
        ("Halcyon Labs", "Halcyon Labs Inc.", "undecided"),
        ("Halcyon Labs", "Brightwater", "contradiction"),
        ("Halcyon Labs", None, "lost"),
        ("Halcyon Labs", "", "lost"),
        (True, "true", "match"),
        (True, False, "contradiction"),
        ([["shipped"]], [["shipped"]], "match"),
    ],
)
def test_values_compare_as_a_person_reads_them(expected, actual, verdict) -> None:
    assert compare_values(expected, actual) == verdict


def test_an_object_is_found_in_a_listing_by_its_id_and_a_read_by_id_is_about_it() -> None:
    listing = {"accounts": [{"account_id": "chk_1", "balance": 5}, {"account_id": "sav_1", "balance": 9}]}
    assert locate(listing, "account", "sav_1", asked_by_id=False) == {"account_id": "sav_1", "balance": 9}
    assert locate(listing, "account", "gone_1", asked_by_id=False) is None
    secret = {"data": {"password": "x"}, "metadata": {"path": "kv/app/db"}}
    assert locate(secret, "secret", "kv/app/db", asked_by_id=True) == secret  # data sits beside metadata


def test_a_repeated_read_differs_where_a_field_changed_is_lost_or_is_new() -> None:
    first = {"card": {"title": "A", "size": 3, "seen_at": "10:00"}}
    assert same_observation(first, {"card": {"title": "A", "size": 3, "seen_at": "10:01"}}, ["seen_at"])[0] == "match"
    assert same_observation(first, {"card": {"title": "B", "size": 3, "seen_at": "10:00"}}, [])[0] == "contradiction"
    assert same_observation(first, {"card": {"title": "A", "seen_at": "10:00"}}, []) == ("lost", ["card.size"])
    assert same_observation(first, {"card": {**first["card"], "x": 1}}, []) == ("invented", ["card.x"])


def test_validate_and_lint_pass_over_the_probe_files_beside_the_benchmark(run_cli) -> None:
    assert sorted(PROBES.glob("*.json"))  # they live in the benchmark's folder
    for command in ("validate", "lint"):
        result = run_cli(command)
        assert result.code == 0, result.err
        assert "probes" not in result.out
