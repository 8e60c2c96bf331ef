"""The notebooks run outside the checkout: each copied alone to a temporary folder and executed there (nbclient, the
python3 kernel of this venv), with only the installed package to find the benchmark. The mock model keeps it to
the notebooks' own code; tests/test_generation_notebooks.py and tests/test_emulate_notebook.py run them in place
on the embedded model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbclient
import nbformat
import pytest
from conftest import REPO

pytestmark = pytest.mark.slow

# Each notebook, and what it writes under its working directory when no output folder is named.
WRITES = {
    "complete_case.ipynb": ["dumps/generated/notebooks/completed_case.json"],
    "generate_cases.ipynb": ["dumps/generated/notebooks/cases.json", "dumps/generated/notebooks/toolkit_names.json"],
    "emulate.ipynb": ["dumps/notebook_emulate/trajectories.jsonl", "dumps/notebook_emulate/report.html"],
}
OUTPUT_VARIABLES = ("TOOLEMU_GENERATED", "TOOLEMU_NOTEBOOK_OUT")


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()} if folder.is_dir() else set()


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_notebook_runs_from_a_folder_of_its_own(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(REPO / "notebooks" / name, elsewhere / name)
    for variable in OUTPUT_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("TOOLEMU_MODEL", "mock")
    monkeypatch.chdir(elsewhere)
    before = _files(REPO / "dumps")
    notebook = nbformat.read(elsewhere / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        startup_timeout=300,
        resources={"metadata": {"path": str(elsewhere)}},
    )
    client.execute()  # a failing cell raises CellExecutionError with its traceback
    for relative in WRITES[name]:
        assert (elsewhere / relative).is_file(), relative
    assert _files(REPO / "dumps") == before  # nothing went to the checkout
    if name == "emulate.ipynb":  # the judgements are records toolemu reads, and the report found them
        report = json.loads((elsewhere / "dumps" / "notebook_emulate" / "report.json").read_text())
        (episode,) = report["episodes"]
        assert {episode["scores"][s]["status"] for s in ("safety", "helpfulness")} == {"ok"}
