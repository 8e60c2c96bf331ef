"""What a study's report leaves a reader: the page's size, the report folder's size against the input's, the console's
lines, and how soon the page shows its first screen in headless Chromium, for studies of 1x, 4x and 10x the
published shape (benchmarks/report_scale.py writes them: `--study --copies N --keep DIR`), before and after.

For each study folder and each source tree, `toolemu report STUDY --out OUT` runs as a subprocess (no report cache:
TOOLEMU_REPORT_CACHE=off, which the tree before ignores), its stdout and stderr counted as console lines; then the
page is opened from disk (file://) in headless Chromium, `--repeats` times, and the seconds from navigation to the
page's script saying it is ready (`data-ready`, set once the viewer is built: the leaderboard and the first rows are
on screen) are timed; the median is reported. Sizes and lines do not vary between repeats.

Run: python benchmarks/report_page.py STUDY [STUDY ...] [--before TREE --before-python PY] [--after TREE]
     [--repeats 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _shot():  # the screenshot benchmark's Chromium driver
    spec = importlib.util.spec_from_file_location("render_screenshot", REPO / "benchmarks" / "render_screenshot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def input_size(study: Path) -> int:
    return sum(p.stat().st_size for p in study.rglob("*.jsonl") if p.is_file())


def report(study: Path, out: Path, tree: Path, python: str) -> dict[str, object]:
    code = "import sys; from toolemu.cli.app import main; sys.argv = ['toolemu', *sys.argv[1:]]; main()"
    env = {**os.environ, "PYTHONPATH": str(tree), "TOOLEMU_REPORT_CACHE": "off", "COLUMNS": "80"}
    t0 = time.perf_counter()
    proc = subprocess.run(
        [python, "-P", "-c", code, "report", str(study), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    )
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"toolemu report failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return {
        "wall_s": round(wall, 2),
        "console_lines": len(proc.stdout.splitlines()) + len(proc.stderr.splitlines()),
        "stdout_lines": len(proc.stdout.splitlines()),
        "page_mb": round((out / "report.html").stat().st_size / 1e6, 2),
        "out_mb": round(size(out) / 1e6, 1),
    }


def first_screen(driver, page: Path, timeout: float = 120.0) -> float:
    """Seconds from navigating to the page until its script says it is ready (the viewer built)."""
    driver.get("about:blank")
    driver.set_page_load_timeout(timeout)
    t0 = time.perf_counter()
    driver.get(page.as_uri())
    while driver.execute_script("return document.body && document.body.getAttribute('data-ready')") != "1":
        if time.perf_counter() - t0 > timeout:
            return float("inf")
        time.sleep(0.01)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("studies", nargs="+", help="study folders (report_scale.py --study --copies N --keep DIR)")
    parser.add_argument("--after", default=str(REPO), help="the source tree after (default: this checkout)")
    parser.add_argument("--after-python", default=sys.executable)
    parser.add_argument("--before", help="the source tree before")
    parser.add_argument("--before-python", default=sys.executable, help="a python that imports toolemu's packages")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", help="keep the report folders here (default: a temporary folder)")
    args = parser.parse_args()
    sides = {"after": (Path(args.after), args.after_python)}
    if args.before:
        sides = {"before": (Path(args.before), args.before_python), **sides}
    shot = _shot()
    driver = None if shot.missing_binaries() else shot.chrome()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.out) if args.out else Path(tmp)
        for study in map(Path, args.studies):
            row: dict[str, object] = {"study": study.name, "input_mb": round(input_size(study) / 1e6, 1)}
            for name, (tree, python) in sides.items():
                out = root / f"{study.name}-{name}"
                measured = report(study, out, tree, python)
                measured["out_over_input"] = round(measured["out_mb"] / row["input_mb"], 3)  # type: ignore[operator]
                if driver is not None:
                    times = [first_screen(driver, out / "report.html") for _ in range(args.repeats)]
                    measured["first_screen_s"] = [round(t, 2) for t in times]
                    measured["first_screen_median_s"] = round(statistics.median(times), 2)
                row[name] = measured
                if not args.out:
                    subprocess.run(["rm", "-rf", str(out)], check=False)
            results.append(row)
            print(json.dumps(row), flush=True)
    if driver is not None:
        driver.quit()
    meta = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "load_1min": os.getloadavg()[0]}
    print(json.dumps({"results": results, **meta}, indent=1))


if __name__ == "__main__":
    main()
