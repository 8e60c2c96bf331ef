"""The documentation site: `mkdocs build --strict` succeeds offline, the CLI reference names every command the typer
app has, and the API reference documents the library's entry points from their docstrings."""

from __future__ import annotations

import html
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from conftest import REPO

import toolemu.api
import toolemu.log
from toolemu.cli.app import app

HEADING = re.compile(r"<h([1-6]) id=\"([^\"]*)\"[^>]*>(.*?)</h\1>", re.S)


def command_paths(cmd: Any, ctx: Any) -> list[str]:
    """Every visible command of the app, as `toolemu <group> <command>`, through the click API typer builds on."""
    paths = [ctx.command_path]
    if hasattr(cmd, "list_commands"):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                paths += command_paths(sub, sub.context_class(sub, info_name=name, parent=ctx))
    return paths


def headings(page: Path) -> set[str]:
    """The text of every heading of a built page, without tags or the permalink sign."""
    found = set()
    for _, _, inner in HEADING.findall(page.read_text(encoding="utf-8")):
        text = html.unescape(re.sub(r"<[^>]+>", "", inner)).replace("¶", "")
        found.add(" ".join(text.split()))
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    return out


def test_the_cli_reference_names_every_command_of_the_app(site: Path) -> None:
    root = typer.main.get_command(app)
    expected = command_paths(root, root.context_class(root, info_name="toolemu"))[1:]
    assert "toolemu run" in expected and any(path.count(" ") == 2 for path in expected)  # commands and subcommands
    missing = set(expected) - headings(site / "reference" / "cli" / "index.html")
    assert not missing, f"commands the CLI reference does not name: {sorted(missing)}"


def test_the_cli_reference_shows_each_commands_options_as_help_does(site: Path) -> None:
    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="toolemu")
    run = root.get_command(ctx, "run")
    run_ctx = run.context_class(run, info_name="run", parent=ctx)
    for param in run.get_params(run_ctx):
        record = param.get_help_record(run_ctx)
        if record and not param.hidden:
            assert html.escape(record[0], quote=False) in page, record[0]


def text_of(page: Path) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))).split())


def first_words(obj: Any, n: int = 6) -> str:
    doc = inspect.getdoc(obj)
    assert doc, f"{obj.__qualname__} has no docstring"
    return " ".join(doc.replace("`", "").split()[:n])


def test_the_api_reference_documents_the_library_from_its_docstrings(site: Path) -> None:
    api_page, log_page = (site / "reference" / "api" / name / "index.html" for name in ("api", "log"))
    for func in (toolemu.api.run, toolemu.api.emulate, toolemu.api.evaluate, toolemu.api.report):
        assert f'id="toolemu.api.{func.__name__}"' in api_page.read_text(encoding="utf-8"), func.__name__
        assert first_words(func) in " ".join(text_of(api_page).replace("`", "").split())
    assert 'id="toolemu.log.read_run"' in log_page.read_text(encoding="utf-8")
    assert first_words(toolemu.log.read_run) in text_of(log_page)


def test_the_moved_pages_and_the_format_are_in_the_site(site: Path) -> None:
    # assets/README.md is included, not copied: the page holds its current text
    fmt = headings(site / "formats" / "toolkits-and-cases" / "index.html")
    first = (REPO / "assets" / "README.md").read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
    assert first in fmt
    for page in ("guides/reliability", "guides/gym", "ARCHITECTURE", "PERFORMANCE", "getting-started/install"):
        assert (site / page / "index.html").is_file(), page
    assert (site / "submission.schema.json").is_file()


def test_the_readme_stays_short_and_links_into_the_docs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    for link in re.findall(r"\]\(((?:docs|assets)/[^)#]+)", readme):
        assert (REPO / link).is_file(), link


def test_the_readme_reliability_section_gives_the_exit_codes_the_commands_use() -> None:
    from toolemu.cli import outcome

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Reliability\n", 1)[1].split("\n## ", 1)[0]
    assert "docs/guides/reliability.md" in section
    listed = {int(code) for row in re.findall(r"^\| ([\d /]+) \|", section, re.M) for code in row.split("/")}
    code_names = ("OK", "FAILED", "BAD_INPUT", "BUDGET", "INTERRUPTED", "TERMINATED")
    assert listed == {getattr(outcome, name) for name in code_names}
    guide = (REPO / "docs" / "guides" / "reliability.md").read_text(encoding="utf-8")
    assert {int(c) for c in re.findall(r"^\| (\d+) \|", guide, re.M)} == listed
