"""Headless Chromium for the page tests (report, docs, ledger): the screenshot benchmark's driver, loaded as a module.

The `driver` fixture in conftest.py gives one browser per test module, or skips with the reason when Chromium,
chromedriver or selenium is missing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _screenshot_module():  # benchmarks/ is not a package
    spec = importlib.util.spec_from_file_location("render_screenshot", REPO / "benchmarks" / "render_screenshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shot = _screenshot_module()
