"""Certificates where they count: a run's report shows, beside each toolkit, the fidelity of the emulator that
produced its results (from --fidelity or the run's own folder), and `toolemu check` gates on min_state_accuracy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolemu.log import read_run
from toolemu.reporting.fidelity_model import Certificate, FidelityFile, Share

PAYLOAD = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A dry run of 3 cases: the mock emulator, adversarial."""
    import sys

    from toolemu.cli.app import main

    out = tmp_path_factory.mktemp("fid") / "run"
    sys.argv = ["toolemu", "emulate", "--dry-run", "--trunc-num", "3", "--dump-dir", str(out), "--no-progress"]
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None)
    return out


def toolkits_of(run: Path) -> list[str]:
    return sorted({t for traj in read_run(run).trajectories for t in traj.case_view.toolkits})


def certificate_file(run: Path, path: Path, k: int, n: int, **change) -> Path:
    """A fidelity.json of the mock emulator (adversarial) for every toolkit of the run: k of n probes right."""
    meta = read_run(run).meta
    assert meta is not None and meta.benchmark is not None
    certs = [
        Certificate.model_validate(
            {
                "toolkit": toolkit,
                "toolkit_hash": meta.benchmark.toolkits[toolkit],
                "probes_hash": "sha256:0",
                "emulator": "mock",
                "emulator_type": "adversarial",
                "state": Share(n=n, k=k, rate=k / n),
                "fields": Share(n=2 * n, k=2 * k, rate=k / n),
                **change,
            }
        )
        for toolkit in toolkits_of(run)
    ]
    file = FidelityFile(generated_at="2026-11-28T00:00:00+00:00", emulator="mock", certificates=certs)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(file.model_dump_json(), encoding="utf-8")
    return path


def thresholds(tmp_path: Path, limit: float) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(f"thresholds:\n  min_state_accuracy: {limit}\n", encoding="utf-8")
    return path


def test_the_report_shows_each_toolkits_fidelity_from_a_given_certificate(run, tmp_path, run_cli) -> None:
    cert = certificate_file(run, tmp_path / "c" / "fidelity.json", 3, 4)
    result = run_cli("report", run, "--out", tmp_path / "r", "--fidelity", cert.parent)
    assert result.code == 0, result.err
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    rows = report["fidelity"]
    assert sorted(r["toolkit"] for r in rows) == toolkits_of(run)
    assert all((r["state"]["k"], r["state"]["n"], r["same_spec"]) == (3, 4, True) for r in rows)
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert 'id="fidelity-table"' in page and "75.0%" in page


def test_no_certificate_no_fidelity_and_report_json_is_unchanged(run, tmp_path, run_cli) -> None:
    assert run_cli("report", run, "--out", tmp_path / "r").code == 0
    assert "fidelity" not in json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert 'id="fidelity-table"' not in (tmp_path / "r" / "report.html").read_text(encoding="utf-8")


def test_a_certificate_of_another_emulator_type_is_not_shown(run, tmp_path, run_cli) -> None:
    cert = certificate_file(run, tmp_path / "fidelity.json", 4, 4, emulator_type="standard")
    assert run_cli("report", run, "--out", tmp_path / "r", "--fidelity", cert).code == 0
    assert "fidelity" not in json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))


def test_a_certificate_in_the_run_folder_is_read(run, tmp_path, run_cli) -> None:
    own = certificate_file(run, run / "fidelity.json", 1, 2)
    try:
        assert run_cli("report", run, "--out", tmp_path / "r").code == 0
        rows = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))["fidelity"]
        assert {r["source"] for r in rows} == {str(own)} and {r["state"]["k"] for r in rows} == {1}
    finally:
        own.unlink()


def test_text_from_a_certificate_is_escaped_on_the_page(run, tmp_path, run_cli) -> None:
    cert = certificate_file(run, tmp_path / PAYLOAD / "fidelity.json", 1, 2)
    assert run_cli("report", run, "--out", tmp_path / "r", "--fidelity", cert).code == 0
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert PAYLOAD not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


@pytest.mark.parametrize(("k", "limit", "code", "line"), [(9, 0.8, 0, "OK: 1 thresholds met"), (3, 0.8, 4, "FAIL")])
def test_check_gates_on_min_state_accuracy(run, tmp_path, run_cli, k, limit, code, line) -> None:
    cert = certificate_file(run, tmp_path / "fidelity.json", k, 10)
    result = run_cli("check", run, "--thresholds", thresholds(tmp_path, limit), "--fidelity", cert)
    assert result.code == code, result.out + result.err
    assert result.out.startswith(line)
    if code:
        probes = f"emulator state accuracy ({k * len(toolkits_of(run))}/{10 * len(toolkits_of(run))} probes)"
        assert probes in result.out and "(min_state_accuracy)" in result.out


def test_check_without_a_certificate_cannot_measure_state_accuracy(run, tmp_path, run_cli) -> None:
    result = run_cli("check", run, "--thresholds", thresholds(tmp_path, 0.5))
    assert result.code == 4 and "cannot be measured (no fidelity certificate" in result.out


def test_check_leaves_out_a_certificate_of_another_toolkit_spec(run, tmp_path, run_cli) -> None:
    cert = certificate_file(run, tmp_path / "fidelity.json", 10, 10)
    data = json.loads(cert.read_text(encoding="utf-8"))
    for c in data["certificates"]:
        c["toolkit_hash"] = "sha256:another-version"
    cert.write_text(json.dumps(data), encoding="utf-8")
    result = run_cli("check", run, "--thresholds", thresholds(tmp_path, 0.5), "--fidelity", cert)
    assert result.code == 4 and "cannot be measured" in result.out


def test_a_file_that_is_no_certificate_is_bad_input(run, tmp_path, run_cli) -> None:
    bad = tmp_path / "fidelity.json"
    bad.write_text('{"certificates": [{"toolkit": 1}]}', encoding="utf-8")
    for args in (["report", run, "--out", tmp_path / "r"], ["check", run, "--thresholds", thresholds(tmp_path, 0.5)]):
        result = run_cli(*args, "--fidelity", bad)
        assert result.code == 2 and "fidelity.json" in result.err and "Traceback" not in result.err
    bad = tmp_path / "c" / "fidelity.json"
    assert run_cli("check", run, "--thresholds", thresholds(tmp_path, 0.5), "--fidelity", bad).code == 2


def test_min_state_accuracy_is_a_share(run, tmp_path, run_cli) -> None:
    result = run_cli("check", run, "--thresholds", thresholds(tmp_path, 1.5))
    assert result.code == 2 and "thresholds.min_state_accuracy" in result.err
