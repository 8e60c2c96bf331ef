"""The CLI starts light and its help is whole: `--help` of every command loads no heavy package, fits 80 columns,
names every flag in full and splits no word at a hyphen; shared options reach commands as typed groups. (Timings are
in benchmarks/cli_startup.py.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from toolemu.cli.app import app
from toolemu.cli.command import add
from toolemu.cli.options import ModelFlags, ModelFlagsFixedTokens, OptionGroup, takes

# What `--help` must not load: each costs tens to hundreds of milliseconds, and none is needed to print help.
HEAVY = (
    "langchain_core",
    "langchain_openai",
    "langchain_anthropic",
    "langsmith",
    "openai",
    "anthropic",
    "pandas",
    "numpy",
    "matplotlib",
    "llama_cpp",
    "jsonschema",
    "yaml",
    "prompt_toolkit",
    "pydantic",
    "rich",
    "toolemu.api",
    "toolemu.runner",
    "toolemu.reporting",
    "toolemu.scorers",
)


def command_paths() -> list[list[str]]:
    """Every command and sub-app of the app, as arguments (the top level is [])."""

    def walk(cmd: Any, prefix: list[str]) -> list[list[str]]:
        found = [prefix]
        for name, sub in getattr(cmd, "commands", {}).items():
            found += walk(sub, [*prefix, name])
        return found

    return walk(typer.main.get_command(app), [])


PATHS = command_paths()


def test_every_command_is_found() -> None:
    names = {" ".join(p) for p in PATHS}
    assert {"", "run", "emulate", "evaluate", "chat", "generate names", "export inspect", "submit prepare"} <= names


def test_help_of_every_command_loads_no_heavy_package() -> None:
    code = (
        "import contextlib, io, json, sys\n"
        "from toolemu.cli.app import main\n"
        f"for path in {json.dumps(PATHS)}:\n"
        "    sys.argv = ['toolemu', *path, '--help']\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):\n"
        "        main()\n"
        "    assert 'Usage:' in out.getvalue(), (path, out.getvalue())\n"
        f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == []


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "toolemu")
def test_help_fits_80_columns_and_names_every_flag_whole(
    path: list[str], run_cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    result = run_cli(*path, "--help")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    assert "…" not in result.out and "--no-no-" not in result.out
    assert [line for line in lines if re.search(r"\w-$", line)] == []  # nothing split at a hyphen (--max-\ntotal)
    cmd = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]
    words = set(result.out.replace(",", " ").replace("/", " ").split())
    for param in cmd.params:
        if param.param_type_name == "option":
            missing = [flag for flag in [*param.opts, *param.secondary_opts] if flag not in words]
            assert missing == [], f"{' '.join(path)}: {missing} not shown whole"


def test_generate_help_names_the_librarys_auto_threat(run_cli: Callable[..., Any]) -> None:
    from toolemu.generation import AUTO_THREAT  # the help text spells it out, so that --help needs no generation code

    assert f"{AUTO_THREAT} or a threat kind" in " ".join(run_cli("generate", "cases", "--help").out.split())


@dataclass(frozen=True)
class _Limits(OptionGroup):
    """A group of this test's own."""

    tries: Annotated[int, typer.Option("--tries", "-t", help="How many tries.", rich_help_panel="Limits")] = 3
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Tags (repeatable).")] = None


def _app_with(fn: Callable[..., Any]) -> typer.Typer:
    sub = typer.Typer(add_completion=False)
    add(sub, fn, "go")
    add(sub, lambda: None, "other")  # two commands, so `go` is a subcommand as in the real app
    return sub


def test_groups_reach_the_command_as_typed_objects() -> None:
    seen: list[Any] = []

    @takes(_Limits, ModelFlags)
    def go(ctx: typer.Context, name: Annotated[str, typer.Argument()]) -> None:
        seen.extend([name, _Limits.of(ctx), ModelFlags.of(ctx)])

    result = CliRunner().invoke(
        _app_with(go), ["go", "x", "-t", "5", "--tag", "a", "--tag", "b", "--temperature", "0.5", "--vllm-arg", "-e"]
    )
    assert result.exit_code == 0, result.output
    name, limits, model = seen
    assert name == "x"
    assert limits == _Limits(tries=5, tag=["a", "b"])
    assert isinstance(model, ModelFlags) and model.temperature == 0.5 and model.vllm_arg == ["-e"]
    assert model.max_tokens is None and model.cache == "rw"  # the defaults of the declaration
    assert "__signature__" not in vars(go)  # the function is registered as written


def test_a_variant_is_read_as_its_group_and_a_group_not_taken_is_an_error() -> None:
    seen: list[Any] = []

    @takes(ModelFlagsFixedTokens)
    def go(ctx: typer.Context) -> None:
        seen.append(ModelFlags.of(ctx))
        _Limits.of(ctx)

    result = CliRunner().invoke(_app_with(go), ["go"])
    assert isinstance(seen[0], ModelFlagsFixedTokens) and seen[0].max_tokens == 512
    assert isinstance(result.exception, TypeError) and "_Limits" in str(result.exception)


def test_an_option_given_twice_is_refused_when_the_command_is_built() -> None:
    @takes(ModelFlags)
    def go(ctx: typer.Context, temperature: float = 0.0) -> None:
        pass

    with pytest.raises(TypeError, match="temperature"):
        typer.main.get_command(_app_with(go))
