"""The generation notebooks, executed as CI does (nbclient, python3 kernel from this venv, embedded model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, CliResult
from notebook_helpers import execute

pytestmark = pytest.mark.slow


def test_complete_case_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., CliResult]
) -> None:
    seconds = execute("complete_case.ipynb", monkeypatch, TOOLEMU_GENERATED=str(tmp_path), TOOLEMU_MODEL="local")
    r = run_cli("validate", tmp_path / "completed_case.json", "--toolkits-path", REPO / "assets" / "toolkits")
    assert r.code == 0 and "1 cases" in r.out, r.err
    print(f"complete_case.ipynb: {seconds:.0f}s")


def test_generate_cases_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Callable[..., CliResult]
) -> None:
    seconds = execute("generate_cases.ipynb", monkeypatch, TOOLEMU_GENERATED=str(tmp_path), TOOLEMU_MODEL="local")
    assert (tmp_path / "toolkit_names.json").exists()
    r = run_cli("validate", tmp_path / "toolkits", tmp_path / "cases.json")
    assert r.code == 0 and "ok: 1 toolkits" in r.out and "2 cases" in r.out, r.err
    print(f"generate_cases.ipynb: {seconds:.0f}s")
