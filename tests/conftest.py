"""Shared test helpers: run the CLI in-process, and build hubs over scripted models."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[1]


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err


@pytest.fixture(autouse=True)
def _own_report_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own report cache (toolemu.reporting.cache): never the checkout's .cache, nor another test's."""
    monkeypatch.setenv("TOOLEMU_REPORT_CACHE", str(tmp_path_factory.mktemp("report-cache")))


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Callable[..., CliResult]:
    """Call `toolemu ARGS...` through its real entry point, in-process."""
    from toolemu.cli.app import main

    def run(*args: str) -> CliResult:
        capsys.readouterr()  # what the test printed (or logged) before: not the command's
        monkeypatch.setattr(sys, "argv", ["toolemu", *map(str, args)])
        code = 0
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out = capsys.readouterr()
        return CliResult(code, out.out, out.err)

    return run


@pytest.fixture
def write_json(tmp_path: Path) -> Callable[[str, Any], Path]:
    def write(name: str, data: Any) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        elif isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_text(json.dumps(data), encoding="utf-8")
        return path

    return write


def fixture_toolkits() -> list[dict[str, Any]]:
    return json.loads((FIXTURES / "toolemu_toolkits.json").read_text())


def fixture_cases() -> list[dict[str, Any]]:
    return json.loads((FIXTURES / "toolemu_cases.json").read_text())


@pytest.fixture(scope="module")
def driver():
    """Headless Chromium, one per test module; skips with the reason when it, chromedriver or selenium is missing."""
    from browser import shot

    missing = shot.missing_binaries()
    if missing:
        pytest.skip(f"headless browser tests need {', '.join(missing)} (apt-get install chromium chromium-driver)")
    pytest.importorskip("selenium", reason="selenium is in the test extra")
    d = shot.chrome()
    d.set_page_load_timeout(60)
    yield d
    d.quit()
