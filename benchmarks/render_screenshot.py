"""Render a report to HTML and take a full-page screenshot of it in headless Chromium.

Run: python benchmarks/render_screenshot.py REPORT OUT.png [--width 1400] [--open-first N] [--html OUT.html]

REPORT is a report.json (rendered with toolemu.reporting.html.render_html) or an already rendered report.html.
Needs Debian's chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver) and selenium.
Prints one JSON object: the paths written, the page size and any browser console errors.
"""

from __future__ import annotations

import argparse
import base64
import json
import shutil
import sys
import tempfile
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def missing_binaries() -> list[str]:
    return [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).exists() and not shutil.which(Path(p).name)]


def chrome(width: int = 1400, height: int = 1000):
    """Headless Chromium through chromedriver, with the browser console log readable."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={width},{height}")
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


def full_page_screenshot(driver, path: Path) -> tuple[int, int]:
    """The whole page (not just the viewport) as a PNG at `path`; returns its CSS size."""
    driver.execute_script("window.scrollTo(0, 0)")  # the sticky header then sits at the top of the shot
    metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = metrics.get("cssContentSize") or metrics["contentSize"]
    width, height = int(size["width"]), int(size["height"])
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        },
    )
    path.write_bytes(base64.b64decode(shot["data"]))
    return width, height


def render(report_path: Path, html_out: Path | None) -> Path:
    if report_path.suffix.lower() in (".html", ".htm"):
        return report_path
    from toolemu.reporting.html import render_html
    from toolemu.reporting.model import Report

    report = Report.model_validate_json(report_path.read_text(encoding="utf-8"))
    out = html_out or Path(tempfile.mkdtemp(prefix="toolemu-report-")) / "report.html"
    out.write_text(render_html(report), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path, help="report.json or report.html")
    parser.add_argument("png", type=Path, help="where to write the screenshot")
    parser.add_argument("--html", type=Path, default=None, help="where to write the rendered HTML (default: tmp)")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--open-first", type=int, default=1, help="open this many traces before the shot")
    args = parser.parse_args(argv)

    missing = missing_binaries()
    if missing:
        print(f"missing: {', '.join(missing)} (apt-get install chromium chromium-driver)", file=sys.stderr)
        return 2
    html_path = render(args.report, args.html)
    driver = chrome(args.width)
    try:
        driver.get(html_path.resolve().as_uri())
        rows = driver.find_elements("css selector", "#ep-table tr.ep-row")
        for row in rows[: args.open_first]:
            row.find_element("css selector", ".case-btn").click()
        for summary in driver.find_elements("css selector", "details.emu > summary")[:1]:
            summary.click()  # show one emulator toggle open
        args.png.parent.mkdir(parents=True, exist_ok=True)
        width, height = full_page_screenshot(driver, args.png)
        errors = [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
    finally:
        driver.quit()
    print(json.dumps({"html": str(html_path), "png": str(args.png), "size": [width, height], "errors": errors}))
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
