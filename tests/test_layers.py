"""The packages import in layers, with no cycle, imports inside functions included ([tool.importlinter] in
pyproject.toml, checked by import-linter's own command)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def lint_imports(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    command = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    return subprocess.run([command, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_layers_are_kept() -> None:
    result = lint_imports()
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "6 kept, 0 broken" in result.stdout  # the layers, the record schema alone, the report's four


def test_an_import_up_the_layers_breaks_the_contract(tmp_path: Path) -> None:
    """The same contract over a copy of the package where a leaf imports the CLI inside a function: refused."""
    shutil.copytree(REPO / "toolemu", tmp_path / "toolemu", ignore=shutil.ignore_patterns("__pycache__", "assets"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    paths = tmp_path / "toolemu" / "paths.py"
    paths.write_text(paths.read_text() + "\n\ndef _upward() -> None:\n    from toolemu.cli import app  # noqa: F401\n")
    result = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, '.'); from importlinter.cli import lint_imports_command;"
         " lint_imports_command()"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode != 0
    assert "toolemu.paths is not allowed to import toolemu.cli" in result.stdout


def _lint_copy(tmp_path: Path, module: str, added: str) -> subprocess.CompletedProcess[str]:
    """The contracts over a copy of the package with `added` appended to one module."""
    shutil.copytree(REPO / "toolemu", tmp_path / "toolemu", ignore=shutil.ignore_patterns("__pycache__", "assets"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    path = tmp_path / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + added)
    return subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, '.'); from importlinter.cli import lint_imports_command;"
         " lint_imports_command()"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_a_report_section_that_imports_the_page_again_is_a_circle(tmp_path: Path) -> None:
    """The circle e348042 had: the page imported its sections, and they imported the page for its helpers."""
    added = "\n\ndef _page() -> None:\n    from toolemu.reporting.html import render_html  # noqa: F401\n"
    result = _lint_copy(tmp_path, "toolemu.reporting.judges_html", added)
    assert result.returncode != 0
    assert "No cycles are allowed in toolemu.reporting" in result.stdout
    assert "toolemu.reporting.judges_html is not allowed to import toolemu.reporting.html" in result.stdout


def test_a_renderer_that_reads_a_scorers_internals_breaks_the_contract(tmp_path: Path) -> None:
    added = "\n\ndef _judge() -> None:\n    from toolemu.scorers.judge import LLMJudge  # noqa: F401\n"
    result = _lint_copy(tmp_path, "toolemu.reporting.tables", added)
    assert result.returncode != 0
    assert "toolemu.reporting.tables is not allowed to import toolemu.scorers" in result.stdout


# The leaf modules below toolemu.log: all it may import of toolemu (the record schema is self-contained, issue 28).
LOG_MAY_IMPORT = {
    "toolemu",
    "toolemu.registration",  # the top package's loader of its API names on first use (it imports only errors)
    "toolemu.errors",
    "toolemu.paths",
    "toolemu.version",
    "toolemu.secrets",
    "toolemu.strict_json",
}


def test_importing_the_log_loads_no_other_toolemu_package() -> None:
    """`import toolemu.log` in a fresh process: the records' models (ModelDescription, Usage, BudgetUse,
    BenchmarkIdentity) are its own, so no model layer, spec loader or scorer comes with it."""
    code = "import sys, toolemu.log; print('\\n'.join(sorted(m for m in sys.modules if m.startswith('toolemu'))))"
    result = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.split())
    assert "toolemu.log.records" in loaded
    assert {m for m in loaded if not m.startswith("toolemu.log")} <= LOG_MAY_IMPORT


def test_the_log_importing_the_model_layer_breaks_its_contract(tmp_path: Path) -> None:
    """e348042's log read ModelDescription from toolemu.llm: the log's own contract refuses that."""
    added = "\n\ndef _model() -> None:\n    from toolemu.llm.options import ModelOptions  # noqa: F401\n"
    result = _lint_copy(tmp_path, "toolemu.log.records", added)
    assert result.returncode != 0
    assert "toolemu.log imports no other toolemu package BROKEN" in result.stdout
    assert "toolemu.log.records -> toolemu.llm.options" in result.stdout


def drawn_layers(text: str) -> list[str]:
    """The package names of docs/ARCHITECTURE.md's picture, top to bottom (its first block, up to the blank line)."""
    block = text.split("```", 2)[1].split("\n\n", 1)[0]
    names: list[str] = []
    for line in block.splitlines():
        first = re.split(r"\s{3,}", line.strip())[0].replace("toolemu.", "")
        names += re.findall(r"[a-z_]+", first)
    return names


def test_the_architecture_page_draws_the_layers_of_the_contract() -> None:
    """Every package of the layers contract in the picture, each layer wholly below the one above it."""
    layers = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    [contract] = [c for c in layers["contracts"] if c["name"] == "The layers of toolemu, top to bottom"]
    drawn = drawn_layers((REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8"))
    where: list[list[int]] = []
    for layer in contract["layers"]:
        members = [m.strip().removeprefix("toolemu.") for m in layer.split("|")]
        missing = [m for m in members if m not in drawn]
        assert not missing, f"{missing} of {layer!r} are not drawn"
        where.append([drawn.index(m) for m in members])
    for (above, layer), below in zip(zip(where, contract["layers"], strict=False), where[1:], strict=False):
        assert max(above) < min(below), f"{layer!r} is not drawn above the layer under it"
