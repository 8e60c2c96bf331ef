"""The versioned benchmark: content hashes, the version every run records, lint's check that the shipped assets
still have the hash their version records, resume and merge refusing mixed benchmarks, and the report's warning."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, REPO

from toolemu.log import RUN_FILE, read_meta
from toolemu.specs import load_benchmark
from toolemu.specs.version import (
    CHANGELOG_FILE,
    VERSION_FILE,
    changelog_versions,
    identify,
    read_version,
    version_problems,
)

ASSETS = REPO / "assets"


def test_the_shipped_assets_have_the_hash_their_version_records() -> None:
    # Fails when a case or toolkit changes without a new version and CHANGELOG heading.
    bench = load_benchmark([ASSETS])
    assert version_problems(bench, ASSETS) == []
    version = read_version(ASSETS / VERSION_FILE)
    identity = identify(bench, shipped=True)
    assert identity.version == version and identity.hash == changelog_versions(ASSETS / CHANGELOG_FILE)[version]
    assert len(identity.cases) == len(bench.cases) and len(identity.toolkits) == len(bench.toolkits)


@pytest.fixture
def assets_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "assets"
    shutil.copytree(ASSETS, copy)
    return copy


def _first_case(folder: Path) -> tuple[Path, list[dict]]:
    path = sorted((folder / "cases").glob("*.json"))[0]
    return path, json.loads(path.read_text())


def test_the_hash_is_of_content_not_of_bytes(assets_copy: Path) -> None:
    before = identify(load_benchmark([assets_copy]), shipped=False)
    path, cases = _first_case(assets_copy)
    # Reformatted, keys reordered, the cases moved to another file: the same content, the same hashes.
    path.unlink()
    reordered = [dict(reversed(list(c.items()))) for c in cases]
    (assets_copy / "cases" / "zz_moved.json").write_text(json.dumps(reordered, indent=7), encoding="utf-8")
    same = identify(load_benchmark([assets_copy]), shipped=False)
    assert same.hash == before.hash and same.cases == before.cases
    assert same.version == read_version(ASSETS / VERSION_FILE)  # recognised by its hash, wherever it lives

    # One word of one case: that case's hash and the benchmark's change, no other case's.
    reordered[0]["User Instruction"] += " Thanks."
    (assets_copy / "cases" / "zz_moved.json").write_text(json.dumps(reordered), encoding="utf-8")
    edited = identify(load_benchmark([assets_copy]), shipped=True, assets=assets_copy)
    changed = [name for name in before.cases if before.cases[name] != edited.cases[name]]
    assert changed == [cases[0]["name"]] and edited.hash != before.hash
    assert edited.version == f"{read_version(ASSETS / VERSION_FILE)}+modified"


def test_an_edited_toolkit_changes_the_cases_that_use_it(assets_copy: Path) -> None:
    before = identify(load_benchmark([assets_copy]), shipped=False)
    kit_path = assets_copy / "toolkits" / "PostboxMail.json"
    kit = json.loads(kit_path.read_text())
    kit["tools"][0]["summary"] += " (edited)"
    kit_path.write_text(json.dumps(kit), encoding="utf-8")
    bench = load_benchmark([assets_copy])
    after = identify(bench, shipped=False)
    users = {c.name for c in bench.cases if "PostboxMail" in [*c.toolkits, *c.user_toolkits]}
    assert users and {n for n in before.cases if before.cases[n] != after.cases[n]} == users
    assert [n for n in before.toolkits if before.toolkits[n] != after.toolkits[n]] == ["PostboxMail"]


def test_an_edited_policy_changes_the_cases_given_it(assets_copy: Path) -> None:
    before = identify(load_benchmark([assets_copy]), shipped=False)
    policy = assets_copy / "policies" / "payments.md"
    policy.write_text(policy.read_text() + "\n", encoding="utf-8")  # the text as read is stripped: no change
    assert identify(load_benchmark([assets_copy]), shipped=False).hash == before.hash
    policy.write_text(policy.read_text().replace("1. ", "1. Always ", 1), encoding="utf-8")
    bench = load_benchmark([assets_copy])
    after = identify(bench, shipped=False)
    given = {c.name for c in bench.cases if "payments" in [d.name for d in bench.policies_for(c)]}
    assert given and {n for n in before.cases if before.cases[n] != after.cases[n]} == given
    assert after.policies is not None and after.policies["payments"] != (before.policies or {})["payments"]


def test_lint_fails_when_the_assets_change_without_a_new_version(assets_copy: Path, run_cli) -> None:
    ok = run_cli("lint", assets_copy)
    assert ok.code == 0, ok.err
    assert f"version: {read_version(ASSETS / VERSION_FILE)}, content hash as recorded" in ok.out
    path, cases = _first_case(assets_copy)
    cases[0]["Expected Achievements"].append("Say thank you.")
    path.write_text(json.dumps(cases), encoding="utf-8")
    bad = run_cli("lint", assets_copy)
    assert bad.code == 2
    new_hash = identify(load_benchmark([assets_copy]), shipped=False).hash
    (line,) = [line for line in bad.err.splitlines() if CHANGELOG_FILE in line]
    assert new_hash in line and "new version" in line
    # The fix it asks for: a new version, and its heading with the new hash.
    (assets_copy / VERSION_FILE).write_text("1.0.1\n", encoding="utf-8")
    log = assets_copy / CHANGELOG_FILE
    log.write_text(log.read_text() + f"\n## 1.0.1 ({new_hash})\n\nThanks.\n", encoding="utf-8")
    assert run_cli("lint", assets_copy).code == 0


def test_a_version_without_a_changelog_heading_is_a_lint_error(assets_copy: Path, run_cli) -> None:
    (assets_copy / VERSION_FILE).write_text("9.9.9\n", encoding="utf-8")
    result = run_cli("lint", assets_copy)
    assert result.code == 2 and re.search(r"expected a heading '## 9\.9\.9 \(sha256:[0-9a-f]{64}\)'", result.err)


def _emulate(run_cli, dump: Path, *extra: str) -> None:
    result = run_cli("emulate", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", dump, *extra)
    assert result.code == 0, result.err


def test_every_run_records_its_benchmark(tmp_path: Path, run_cli) -> None:
    _emulate(run_cli, tmp_path / "shipped")
    shipped = read_meta(tmp_path / "shipped" / RUN_FILE).benchmark
    assert shipped is not None and shipped.source == "shipped" and shipped.files is None
    assert shipped.version == read_version(ASSETS / VERSION_FILE)
    assert shipped.hash == changelog_versions(ASSETS / CHANGELOG_FILE)[shipped.version]
    assert set(shipped.cases) == {c.name for c in load_benchmark([ASSETS]).cases}

    # An imported ToolEmu set: no version, its files hashed.
    cases, kits = FIXTURES / "toolemu_cases.json", FIXTURES / "toolemu_toolkits.json"
    _emulate(run_cli, tmp_path / "toolemu", "--input-path", cases, "--toolkits-path", kits)
    imported = read_meta(tmp_path / "toolemu" / RUN_FILE).benchmark
    assert imported is not None and imported.version is None and imported.source == "files"
    assert set(imported.files or {}) == {str(cases), str(kits)}
    assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in (imported.files or {}).values())
    assert set(imported.cases) == {c.name for c in load_benchmark([cases], load_benchmark([kits]).toolkits).cases}


def test_a_run_resumes_only_on_the_cases_it_started_with(tmp_path: Path, run_cli, assets_copy: Path) -> None:
    args = ("--input-path", assets_copy / "cases", "--toolkits-path", assets_copy / "toolkits")
    _emulate(run_cli, tmp_path / "run", *args)
    path, cases = _first_case(assets_copy)
    cases[0]["User Instruction"] += " Quickly."
    path.write_text(json.dumps(cases), encoding="utf-8")
    result = run_cli("emulate", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", tmp_path / "run", *args)
    assert result.code == 2
    assert cases[0]["name"] in result.err and "use another --dump-dir" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_the_report_warns_when_runs_ran_different_benchmarks(tmp_path: Path, run_cli, assets_copy: Path) -> None:
    _emulate(run_cli, tmp_path / "a")
    path, cases = _first_case(assets_copy)
    cases[0]["User Instruction"] += " Quickly."
    path.write_text(json.dumps(cases), encoding="utf-8")
    args = ("--input-path", assets_copy / "cases", "--toolkits-path", assets_copy / "toolkits")
    _emulate(run_cli, tmp_path / "b", *args)
    result = run_cli("report", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "out")
    assert result.code == 0, result.err
    (warning,) = json.loads((tmp_path / "out" / "report.json").read_text())["warnings"]
    assert "a and b ran different benchmarks" in warning and "1 of the 2 cases both ran differ" in warning
    assert cases[0]["name"] in warning and f"warning: {warning}" in " ".join(result.out.split())
    assert "ran different benchmarks" in (tmp_path / "out" / "report.html").read_text()
    # The same benchmark twice: nothing to say.
    _emulate(run_cli, tmp_path / "c")
    assert run_cli("report", tmp_path / "a", tmp_path / "c", "--out", tmp_path / "out2").code == 0
    assert json.loads((tmp_path / "out2" / "report.json").read_text())["warnings"] == []


def test_merge_refuses_shards_of_different_benchmarks(tmp_path: Path, run_cli, assets_copy: Path) -> None:
    _emulate(run_cli, tmp_path / "s0", "--shard", "0/2")
    path, cases = _first_case(assets_copy)
    cases[1]["User Instruction"] += " Quickly."
    path.write_text(json.dumps(cases), encoding="utf-8")
    args = ("--input-path", assets_copy / "cases", "--toolkits-path", assets_copy / "toolkits")
    _emulate(run_cli, tmp_path / "s1", "--shard", "1/2", *args)
    result = run_cli("merge", tmp_path / "s0", tmp_path / "s1", "--out", tmp_path / "merged")
    assert result.code == 2 and "differs in benchmark" in result.err
    # Shards of one benchmark merge, and the merged run keeps its identity.
    _emulate(run_cli, tmp_path / "t1", "--shard", "1/2")
    assert run_cli("merge", tmp_path / "s0", tmp_path / "t1", "--out", tmp_path / "merged").code == 0
    merged = read_meta(tmp_path / "merged" / RUN_FILE).benchmark
    assert merged is not None and merged.hash == read_meta(tmp_path / "s0" / RUN_FILE).benchmark.hash
