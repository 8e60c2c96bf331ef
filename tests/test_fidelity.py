"""`toolemu fidelity` through the real episode pipeline, on emulator doubles of known fidelity: the certificate
measures exactly what each double does, an emulator that answers at random scores nothing, and the command writes
a typed fidelity.json with the benchmark's hash and a page section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fidelity_doubles import FIELDS, PROBES, CardfileDouble, write_fixture

from toolemu.fidelity import certify_emulator
from toolemu.llm import LLMSettings
from toolemu.reporting.fidelity_model import Certificate, FidelityFile

# The fixture's read-backs, by what each probe reads (fidelity_doubles.PROBES): the create reads its 5 fields; each
# update (1, 3, 5 fields) reads all 5 fields of its card; get-delete-get reads 2 fields before; list-delete-list reads
# 1 field of the card it deletes before, and the 2 fields of the card kept after; the transfer reads 2 balances; the
# read twice reads 3 fields, twice. The gone checks and the repeated read as a whole are no field read-backs.
CREATE, UPDATES, DELETES, TRANSFER, TWICE = 5, (1, 3, 5), 2 + 1 + 2, 2, 2 * 3
FIELD_READS = CREATE + 5 * len(UPDATES) + DELETES + TRANSFER + TWICE
PROBE_COUNT = len(PROBES["probes"])


def certify(tmp_path: Path, double: CardfileDouble, judge_replies: list[str] | None = None, judge: bool = False):
    kit, probes = write_fixture(tmp_path / "fixture")
    run = certify_emulator(
        tmp_path / "out",
        settings=LLMSettings(model="mock", cache="off"),
        toolkit_paths=[kit],
        probes_dir=probes,
        judge=judge,
        chat_factory=double.factory(judge_replies),
    )
    [cert] = run.file.certificates
    return run, cert


def test_the_fixture_has_the_read_backs_the_known_accuracies_count() -> None:
    assert (PROBE_COUNT, FIELD_READS, len(FIELDS)) == (8, 33, 5)


def test_a_faithful_emulator_is_certified_right_on_every_probe(tmp_path: Path) -> None:
    run, cert = certify(tmp_path, CardfileDouble())
    assert (cert.state.k, cert.state.n) == (PROBE_COUNT, PROBE_COUNT)
    assert (cert.fields.k, cert.fields.n) == (FIELD_READS, FIELD_READS)
    assert cert.counts.contradiction == cert.counts.lost == cert.counts.invented == cert.counts.error == 0
    assert cert.model_calls == sum(len(p["steps"]) for p in PROBES["probes"])  # one emulator call per step
    assert run.episodes_in_error == 0


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_dropping_k_of_n_changed_fields_costs_exactly_min_k_n_per_update(tmp_path: Path, k: int) -> None:
    _, cert = certify(tmp_path, CardfileDouble(drop=k))
    dropped = sum(min(k, n) for n in UPDATES)
    assert (cert.fields.k, cert.fields.n) == (FIELD_READS - dropped, FIELD_READS)
    assert cert.counts.contradiction == dropped  # each dropped field reads back its old value
    assert (cert.state.k, cert.state.n) == (PROBE_COUNT - len(UPDATES), PROBE_COUNT)
    assert (cert.by_kind["update_read"].k, cert.by_kind["update_read"].n) == (0, len(UPDATES))
    for n in UPDATES:  # by facts changed: every update fails, the create (5 facts) does not
        share = cert.by_changed[str(n)]
        assert share.k == share.n - 1, (n, share)


def test_forgetting_deletions_fails_every_delete_probe_and_nothing_else(tmp_path: Path) -> None:
    _, cert = certify(tmp_path, CardfileDouble(forget_delete=True))
    assert (cert.by_kind["delete_read"].k, cert.by_kind["delete_read"].n) == (0, 2)
    assert (cert.state.k, cert.fields.k) == (PROBE_COUNT - 2, FIELD_READS)  # fields are right, the objects linger
    assert cert.counts.invented == 2
    results = {r.probe: r for r in cert.results}
    assert [c.note for c in results["delete_read"].checks if c.outcome == "invented"] == [
        "the object shows, though it was deleted"
    ]


def test_answering_every_read_from_the_first_state_is_right_only_where_nothing_changed(tmp_path: Path) -> None:
    _, cert = certify(tmp_path, CardfileDouble(first_state=True))
    # Only the read twice passes. The create's read finds no card (5 errors, its call due to succeed); each update
    # reads back every changed field stale; the transfer reads both old balances; deleted cards still show.
    stale = sum(UPDATES) + TRANSFER
    assert (cert.state.k, cert.by_kind["read_twice"].k) == (1, 1)
    assert (cert.fields.k, cert.fields.n) == (FIELD_READS - CREATE - stale, FIELD_READS)
    assert (cert.counts.error, cert.counts.errors_where_success_due) == (CREATE, 1)
    assert (cert.counts.contradiction, cert.counts.invented) == (stale, 2)


def test_an_emulator_that_answers_at_random_scores_nothing(tmp_path: Path) -> None:
    _, cert = certify(tmp_path, CardfileDouble(random_seed=7))
    assert cert.state.k == 0 and cert.state.n == PROBE_COUNT
    assert cert.fields.k == 0


def test_the_dry_run_emulator_earns_nothing_by_default(tmp_path: Path) -> None:
    """The scripted mock answers every read with placeholders and empty objects: silence must not pass a probe."""
    kit, probes = write_fixture(tmp_path / "fixture")
    run = certify_emulator(
        tmp_path / "out", settings=LLMSettings(model="mock"), toolkit_paths=[kit], probes_dir=probes, judge=True
    )
    [cert] = run.file.certificates
    assert (cert.state.k, cert.fields.k) == (0, 0)


class Rewording(CardfileDouble):
    """Writes the card's owner as 'Owner: <name>': there in part, which the rule cannot decide."""

    def answer(self, tool, args, calls):  # type: ignore[no-untyped-def]
        out = super().answer(tool, args, calls)
        for card in [out.get("card"), *out.get("cards", [])]:
            if isinstance(card, dict) and "owner" in card:
                card["owner"] = f"Owner: {card['owner']}"
        return out


def test_the_judge_decides_only_what_the_rule_cannot(tmp_path: Path) -> None:
    same = json.dumps({"reason": "the same name with a label", "verdict": "same"})
    _, judged = certify(tmp_path / "judged", Rewording(), [same], judge=True)
    owners = [c for r in judged.results for c in r.checks if c.field == "owner" and c.object.startswith("card:")]
    assert owners and all(c.judged and c.outcome == "match" for c in owners)
    assert judged.judge_calls == len(owners) == judged.counts.judged
    assert (judged.state.k, judged.fields.k) == (PROBE_COUNT, FIELD_READS)
    _, unjudged = certify(tmp_path / "unjudged", Rewording(), judge=False)
    assert unjudged.counts.undecided == len(owners) and unjudged.judge_calls == 0
    assert unjudged.fields.k == FIELD_READS - len(owners)  # undecided is not right


def test_fidelity_command_dry_run_certifies_every_shipped_toolkit(run_cli, tmp_path: Path) -> None:
    from toolemu.fidelity.probes import PROBES as SHIPPED
    from toolemu.paths import DEFAULT_TOOLKITS
    from toolemu.specs import load_benchmark
    from toolemu.specs.benchmark import benchmark_identity, load_cases

    out = tmp_path / "cert"
    result = run_cli("fidelity", "--dry-run", "--out", out, "--no-progress", "--simulator-type", "both")
    assert result.code == 0, result.err
    file = FidelityFile.model_validate_json((out / "fidelity.json").read_text(encoding="utf-8"))
    identity = benchmark_identity(load_cases())
    assert (file.benchmark_hash, file.benchmark_version) == (identity.hash, identity.version)
    kits = set(load_benchmark([DEFAULT_TOOLKITS]).toolkits)
    probed = {p.stem for p in SHIPPED.glob("*.json")} - set(file.unprobeable)
    assert {c.toolkit for c in file.certificates} == probed == kits - set(file.unprobeable)
    assert {(c.emulator, c.emulator_type) for c in file.certificates} == {("mock", "standard"), ("mock", "adversarial")}
    assert all(isinstance(c, Certificate) and c.complete and c.state.k == 0 for c in file.certificates)
    page = (out / "fidelity.md").read_text(encoding="utf-8")
    assert page.startswith("## Emulator fidelity: mock") and "### By number of facts changed" in page
    assert len((out / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()) == sum(
        c.state.n for c in file.certificates
    )


def test_fidelity_command_bad_input_is_one_line_and_exit_2(run_cli, tmp_path: Path) -> None:
    unknown = run_cli("fidelity", "--dry-run", "--out", tmp_path / "o", "--toolkit", "NoSuchKit")
    assert unknown.code == 2 and "--toolkit" in unknown.err and "NoSuchKit" in unknown.err
    assert "Traceback" not in unknown.err
    bad = tmp_path / "probes"
    bad.mkdir()
    probe = json.loads(json.dumps(PROBES))
    probe["probes"][0]["steps"][1]["tool"] = "GetCardz"
    kit, _ = write_fixture(tmp_path / "fixture")
    (bad / "Cardfile.json").write_text(json.dumps(probe), encoding="utf-8")
    result = run_cli("fidelity", "--dry-run", "--out", tmp_path / "o", "--probes", bad, "--toolkits-path", kit)
    assert result.code == 2 and "Traceback" not in result.err
    [line] = result.err.strip().splitlines()
    assert "Cardfile.json" in line and "probe create_read" in line and "steps[1].tool" in line and "GetCardz" in line
    kind = run_cli("fidelity", "--dry-run", "--out", tmp_path / "o", "--simulator-type", "sideways")
    assert kind.code == 2 and "--simulator-type" in kind.err


def test_a_judge_that_gives_no_verdict_leaves_the_read_back_undecided(tmp_path: Path) -> None:
    _, cert = certify(tmp_path, Rewording(), ["I would rather not say."], judge=True)
    owners = [c for r in cert.results for c in r.checks if c.field == "owner" and c.object.startswith("card:")]
    assert owners and all(c.outcome == "undecided" and c.note.startswith("the judge failed") for c in owners)
    assert cert.fields.k == FIELD_READS - len(owners)


def test_probes_written_for_another_version_of_the_spec_are_refused(run_cli, tmp_path: Path) -> None:
    kit, probes = write_fixture(tmp_path / "fixture")
    stale = json.loads((probes / "Cardfile.json").read_text(encoding="utf-8"))
    stale["toolkit_hash"] = "sha256:" + "0" * 64
    (probes / "Cardfile.json").write_text(json.dumps(stale), encoding="utf-8")
    result = run_cli("fidelity", "--dry-run", "--out", tmp_path / "o", "--probes", probes, "--toolkits-path", kit)
    assert result.code == 2 and "Traceback" not in result.err
    [line] = result.err.strip().splitlines()
    assert "Cardfile.json" in line and "toolkit_hash" in line and "review them against the spec" in line
    assert not (tmp_path / "o").exists()  # nothing is written for probes that may no longer fit
