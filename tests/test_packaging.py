"""Packaging: the benchmark ships inside the package, defaults do not depend on the working directory, and
every dependency is pinned in constraints.txt."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from conftest import REPO

from toolemu.log import TRAJECTORIES, read_jsonl

# What a build reads; everything else in the checkout (tests, dumps, .git) stays out of the copy.
BUILD_INPUTS = ["pyproject.toml", "setup.py", "README.md", "toolemu", "assets"]


def _cli(args: list[str], cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run(
        [sys.executable, "-m", "toolemu.cli.app", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_a_built_package_carries_the_benchmark_and_finds_it(tmp_path: Path) -> None:
    # build_py lays out exactly the files a wheel gets (bdist_wheel runs it); calling it directly needs neither
    # the network (build isolation) nor the `wheel` package, and takes well under a second.
    src, lib = tmp_path / "src", tmp_path / "lib"
    src.mkdir()
    for name in BUILD_INPUTS:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / name, src / name)
    build = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)], cwd=src, capture_output=True, text=True
    )
    assert build.returncode == 0, build.stderr
    assert _files(lib / "toolemu" / "assets") == _files(REPO / "assets")
    assert (lib / "toolemu" / "reporting" / "static" / "report.js").is_file()
    assert (lib / "toolemu" / "docs" / "static" / "docs.js").is_file()

    # Installed layout, run from elsewhere: the defaults come from the package, not from a checkout.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = _cli(["validate"], cwd=elsewhere, pythonpath=lib)
    assert result.returncode == 0, result.stderr
    assert str(lib / "toolemu" / "assets" / "toolkits") in result.stdout
    assert re.search(r"^ok: [1-9]\d* toolkits, .* [1-9]\d* cases$", result.stdout, re.M)


def test_emulate_finds_the_default_benchmark_from_any_directory(tmp_path: Path) -> None:
    # --input-path and --toolkits-path still win over the default: test_runner runs ToolEmu's files through them.
    result = _cli(["emulate", "--dry-run", "--no-progress", "--trunc-num", "2", "--dump-dir", "run"], tmp_path, REPO)
    assert result.returncode == 0, result.stderr
    assert len(read_jsonl(tmp_path / "run" / TRAJECTORIES)) == 2


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised as pip compares them (PEP 503)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match[0]).lower()


def test_every_declared_dependency_is_pinned_in_constraints() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {_name(r) for r in [*project["dependencies"], *project["optional-dependencies"]["test"]]}
    lines = [line.strip() for line in (REPO / "constraints.txt").read_text().splitlines()]
    pins = [line for line in lines if line and not line.startswith("#")]
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==\S+", pin) for pin in pins), "name==version lines only"
    pinned = [_name(pin) for pin in pins]
    assert len(pinned) == len(set(pinned)), "a package is pinned twice"
    assert declared <= set(pinned), f"not pinned in constraints.txt: {sorted(declared - set(pinned))}"
    assert not {"toolemu", "torch", "vllm"} & set(pinned)  # ourselves, and the GPU stack the suite never needs


def test_ci_runs_the_readmes_test_command_verbatim() -> None:
    readme = (REPO / "README.md").read_text()
    command = next(
        line for line in readme.splitlines() if line.startswith("python3 -m venv .venv") and "pytest" in line
    )
    assert "-c constraints.txt" in command
    assert command in (REPO / ".ci" / "run").read_text().splitlines()
