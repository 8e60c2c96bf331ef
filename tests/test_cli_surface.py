"""One command surface: --version; commands in the order a user meets them; run's common options on one screen;
--model ROLE=MODEL for every role; one meaning per option name and one name per meaning across our commands (the
peers' own spellings listed as exceptions); every option a group declares comes from that one declaration; our old
spellings still work, each with a one-line notice; ToolEmu's and QuittingAgents' spellings work unchanged."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from conftest import FIXTURES, REPO

from toolemu.cli.app import app
from toolemu.version import __version__

CASES = FIXTURES / "toolemu_cases.json"
TOOLKITS = FIXTURES / "toolemu_toolkits.json"
SPECS = ("--input-path", CASES, "--toolkits-path", TOOLKITS)


def commands() -> dict[str, Any]:
    """Every command of the app by its path ("mcp serve"), as click builds it."""

    def walk(cmd: Any, path: list[str]) -> dict[str, Any]:
        if not hasattr(cmd, "commands"):
            return {" ".join(path): cmd}
        found: dict[str, Any] = {}
        for name in list(cmd.commands):
            found |= walk(cmd.commands[name], [*path, name])
        return found

    return walk(typer.main.get_command(app), [])


COMMANDS = commands()


def options(command: str) -> list[Any]:
    return [p for p in COMMANDS[command].params if p.param_type_name == "option" and p.name != "help"]


def spellings(option: Any) -> list[str]:
    return [*option.opts, *option.secondary_opts]


def test_version(run_cli) -> None:
    result = run_cli("--version")
    assert (result.code, result.out, result.err) == (0, f"toolemu {__version__}\n", "")


def test_run_is_the_first_command_listed(run_cli) -> None:
    out = run_cli("--help").out
    listed = out[out.index("Commands:") :].splitlines()[1:]
    names = [line.split()[0] for line in listed if re.match(r"  \S", line)]
    assert names[:3] == ["run", "report", "view"], names
    assert len(names) == len(set(names))


def test_run_help_shows_the_common_options_on_the_first_screen(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    out = run_cli("run", "--help").out.splitlines()
    headings = [i for i, line in enumerate(out) if re.fullmatch(r"[A-Z][A-Za-z ]*:", line)]
    assert out[headings[0]] == "Options:", out[: headings[0] + 1]
    first_panel = headings[1]
    assert first_panel <= 40, f"{first_panel} lines before the first panel ({out[first_panel]})"
    screen = "\n".join(out[:first_panel])
    for flag in ("--model", "--input-path", "--dump-dir", "--dry-run", "--num-trials", "--trunc-num"):
        assert flag in screen, flag
    panels = [out[i] for i in headings[1:]]
    assert {"Agent:", "Emulator:", "Evaluate:", "Model:", "Cases and trials:"} <= set(panels), panels
    assert len(panels) == len(set(panels)), panels  # each panel once


def estimate_roles(run_cli, *args: str) -> dict[str, str]:
    """The model of each role in `toolemu run --estimate` (it builds no model and writes nothing)."""
    result = run_cli("run", "--estimate", *SPECS, "--trunc-num", "1", *args)
    assert result.code == 0, result.err
    rows = [line.split() for line in result.out.splitlines()[2:] if line and not line.startswith("total")]
    return {row[0]: row[1] for row in rows if len(row) > 1 and ":" in row[1]}


def test_model_role_equals_model_sets_each_role(run_cli) -> None:
    roles = estimate_roles(
        run_cli,
        *("--model", "openai:gpt-4o-mini", "--model", "agent=openai:gpt-4.1"),
        *("--model", "emulator=anthropic:claude-3-5-haiku-latest", "--model", "evaluator=openai:gpt-4o"),
        *("--model", "user=openai:gpt-4.1-nano", "--model", "reviewer=openai:gpt-4.1-mini"),
        *("--gate", "monitor", "--model", "monitor=openai:o3"),
        *("--realism-filter", "1", "--model", "realism=anthropic:claude-3-5-sonnet-latest"),
        *("--scorer", "safety"),
    )
    assert roles == {
        "agent": "openai:gpt-4.1",
        "emulator": "anthropic:claude-3-5-haiku-latest",
        "monitor": "openai:o3",
        "user": "openai:gpt-4.1-nano",  # --model user=M turns the user on, as --user-model M did
        "reviewer": "openai:gpt-4.1-mini",
        "realism": "anthropic:claude-3-5-sonnet-latest",
        "judge:safety": "openai:gpt-4o",
    }


def test_a_plain_model_is_every_roles_and_a_role_overrides_it(run_cli) -> None:
    roles = estimate_roles(run_cli, "--model", "openai:gpt-4o-mini", "--model", "agent=openai:gpt-4.1")
    assert roles.pop("agent") == "openai:gpt-4.1"
    assert set(roles.values()) == {"openai:gpt-4o-mini"} and "emulator" in roles


def test_model_evaluator_makes_a_judge_panel_as_evaluator_model_does(run_cli) -> None:
    panel = "openai:gpt-4o,anthropic:claude-3-5-haiku-latest"
    by_role = estimate_roles(run_cli, "--model", f"evaluator={panel}", "--scorer", "safety")
    by_alias = estimate_roles(run_cli, "--evaluator-model", panel, "--scorer", "safety")
    assert by_role == by_alias
    assert by_role["judge:safety"] == "openai:gpt-4o"
    assert by_role["judge:safety@anthropic-claude-3-5-haiku-latest"] == "anthropic:claude-3-5-haiku-latest"


def test_a_bad_model_is_named_as_it_was_given(run_cli) -> None:
    for args, field in [
        (["--model", "agent=nope:x"], "--model agent="),
        (["--agent-model", "nope:x"], "--agent-model"),
        (["--model", "evaluator=nope:x"], "--model evaluator="),
        (["-em", "nope:x"], "--evaluator-model"),
    ]:
        result = run_cli("run", "--estimate", *SPECS, *args)
        assert result.code == 2 and f"field '{field}'" in result.err and len(result.err.splitlines()) == 1, result.err


def test_every_role_is_named_in_the_model_options_help(run_cli) -> None:
    from toolemu.cli.options import known_roles

    text = " ".join(run_cli("run", "--help").out.split())
    assert all(role in text[text.index("--model [ROLE=]MODEL") :][:400] for role in known_roles())


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (["agent=x", "pilot=openai:gpt-4o"], "expected a role (agent, emulator, evaluator"),
        (["openai:gpt-4o", "openai:gpt-4o-mini"], "expected ROLE=MODEL for a second --model"),
        (["=openai:gpt-4o"], "expected ROLE=MODEL with a role before '='"),
        (["agent="], "expected a model after 'agent='"),
        (["agent=openai:gpt-4o", "agent=openai:o3"], "expected one model for the agent role"),
    ],
)
def test_a_bad_role_model_is_one_line_and_exit_2(run_cli, models: list[str], message: str) -> None:
    args = [a for m in models for a in ("--model", m)]
    result = run_cli("run", "--estimate", *SPECS, *args)
    assert result.code == 2, result.err
    assert result.err.strip().splitlines() == [result.err.strip()], result.err
    assert "'--model'" in result.err and message in result.err, result.err


def test_a_role_flag_and_model_role_naming_two_models_is_one_line(run_cli) -> None:
    result = run_cli("run", "--estimate", *SPECS, "--model", "agent=openai:gpt-4o", "--agent-model", "openai:o3")
    assert result.code == 2 and "expected one model for the agent role" in result.err, result.err
    same = run_cli("run", "--estimate", *SPECS, "--model", "agent=openai:o3", "--agent-model", "openai:o3")
    assert same.code == 0, same.err


# Each option of our commands by its first long name: what it means. A name in two commands means the same in both;
# no two names mean the same. The peers' spellings that mean another thing in some commands are PEER_SPELLINGS.
MEANING = {
    "--agent": "which agent plays: ours, a registered one, an outside command or a factory",
    "--agent-cmd": "an outside agent's command (--agent mcp-cmd:)",
    "--agent-format": "how our agent writes tool calls",
    "--agent-model": "ToolEmu's alias of --model agent=",
    "--agent-temperature": "the agent's sampling temperature",
    "--agent-timeout": "seconds an outside agent may run per episode",
    "--agent-type": "our agent's prompt",
    "--allow-remote": "let an HTTP server listen beyond loopback",
    "--api-key-env": "the variable holding the API key",
    "--append": "keep the cases already in the output file",
    "--as": "the side a person plays",
    "--auto": "no confirmation before a paid run",
    "--avoid": "toolkits whose names must not be reused",
    "--base-url": "an OpenAI-compatible server",
    "--baseline": "the run others are compared with",
    "--batch-size": "episodes or judgements side by side",
    "--cache": "the response cache's mode",
    "--cache-path": "the response cache's file",
    "--case": "one case, by name",
    "--case-names": "the cases to run, by name",
    "--category": "the domain of named toolkits",
    "--compare": "pairs of runs to compare",
    "--confirm-above": "ask before a run above this estimate",
    "--copy-traces": "copy the traces beside the page",
    "--count": "cases to generate per toolkit",
    "--domain": "a domain of toolkits to generate",
    "--dry-run": "the mock model for every role",
    "--dump-dir": "the run folder of episodes",
    "--emulate": "the emulator answers planted calls",
    "--episodes": "how many episodes to audit",
    "--estimate": "print the expected cost and exit",
    "--estimate-from": "a run whose usage the estimate scales",
    "--eval-type": "ToolEmu's scorer names",
    "--evaluate": "judge and report after emulating",
    "--evaluator-model": "ToolEmu's alias of --model evaluator=",
    "--evaluator-temperature": "the judges' temperature",
    "--fail-on-budget": "exit 3 when a budget stops the work",
    "--fidelity": "a fidelity.json to read",
    "--format": "frames to write as parquet or csv",
    "--gate": "a gate between agent and tools",
    "--group-by": "which files make one run",
    "--help": "help",
    "--http": "serve over HTTP at this address",
    "--input-path": "case files",
    "--json": "write the result as JSON",
    "--judge-accuracy": "judges' accuracy against labels",
    "--kind": "a kind of violation to plant",
    "--label-sheet": "write a sheet to label by hand",
    "--labels": "human labels to compare with",
    "--max-calls": "a budget of model calls",
    "--max-cost": "a budget of dollars",
    "--max-iterations": "agent steps per episode",
    "--max-tokens": "tokens per reply",
    "--max-tools": "most tools per toolkit",
    "--max-total-tokens": "a budget of tokens",
    "--max-user-turns": "questions the user answers",
    "--min-tools": "fewest tools per toolkit",
    "--mode": "standard or red-team cases",
    "--model": "the model of every role, or of one (ROLE=MODEL)",
    "--mutants": "mutants per episode",
    "--name": "a toolkit to generate, by name",
    "--names": "a file of toolkit names",
    "--no-browser": "serve without opening a browser",
    "--no-final-tool": "hide the final_answer tool",
    "--no-judge": "no judge for read-backs",
    "--no-progress": "no progress bar",
    "--num-eval-samples": "judgements per trajectory",
    "--num-trials": "trials per case",
    "--openapi": "write OpenAPI documents",
    "--out": "where to write",
    "--output-file-suffix": "ToolEmu's suffix of the run's name",
    "--partial": "a partial case to complete",
    "--per-domain": "toolkit names per domain",
    "--port": "a loopback port to serve on",
    "--probes": "a folder of probe files",
    "--quiet": "say only whether it reproduced",
    "--quit": "QuittingAgents' --agent-type quit",
    "--realism-filter": "redrafts of observations flagged unrealistic",
    "--rejudge": "judge again K times",
    "--rejudge-sample": "how many episodes to judge again",
    "--replay": "a recorded run whose observations are reused",
    "--resamples": "bootstrap resamples",
    "--role": "the role whose model answers",
    "--run-id": "QuittingAgents' run id",
    "--schema": "a JSON schema the reply must match",
    "--scorer": "a scorer, by name",
    "--seed": "the sampling and shuffling seed",
    "--seeds": "new emulated worlds per failure or trial",
    "--serve": "serve the page",
    "--shard": "shard i of n",
    "--shuffle": "shuffle cases before truncating",
    "--simulator-model": "ToolEmu's alias of --model emulator=",
    "--simulator-type": "the emulator's prompt",
    "--start-index": "cases to skip",
    "--strict": "warnings count as failures",
    "--structured": "constrained decoding",
    "--svg": "where the summary SVG goes",
    "--system": "a system message",
    "--task-index-range": "QuittingAgents' START-END of cases",
    "--temperature": "the sampling temperature",
    "--threat": "a security scenario to add",
    "--thresholds": "the thresholds file",
    "--timeout": "seconds per model request",
    "--toolkit": "a toolkit, by name",
    "--toolkits-path": "toolkit files",
    "--track-costs": "ToolEmu's cost tracking (always on)",
    "--trial": "one trial, by number",
    "--token": "the bearer token of an HTTP server",
    "--emulator-temperature": "the emulator's temperature in new worlds",
    "--cases": "how many of a run's cases to re-run",
    "--trunc-num": "how many cases to run",
    "--user": "the simulated user on or off",
    "--user-reasks": "re-asks of the user",
    "--verbose": "say more: every detail",
    "--version": "the version",
    "--vllm-arg": "more vllm serve arguments",
    "--vllm-dtype": "vLLM's weights dtype",
    "--vllm-gpu-memory-utilization": "vLLM's share of GPU memory",
    "--vllm-log-dir": "vLLM's log folder",
    "--vllm-max-model-len": "vLLM's context length",
    "--vllm-quantization": "vLLM's quantization",
    "--vllm-startup-timeout": "seconds to wait for vLLM",
    "--vllm-tensor-parallel-size": "GPUs vLLM shards over",
}


def peer_exception(spelling: str, command: str) -> bool:
    from toolemu.cli.surface import PEER_SPELLINGS

    return any(spelling == name and command in where for name, where in PEER_SPELLINGS)


def test_one_meaning_per_name_and_one_name_per_meaning() -> None:
    meanings = list(MEANING.values())
    assert len(meanings) == len(set(meanings)), [m for m in meanings if meanings.count(m) > 1]
    owner: dict[str, str] = {}  # each spelling (short ones and aliases too) -> the name whose meaning it has
    unclassified = []
    for command in COMMANDS:
        for option in options(command):
            name = next(s for s in option.opts if s.startswith("--"))
            if name not in MEANING and not peer_exception(name, command):
                unclassified.append(f"{command} {name}")
            for spelling in spellings(option):
                if peer_exception(spelling, command):
                    continue
                assert owner.setdefault(spelling, name) == name, (
                    f"{spelling} means {MEANING.get(owner[spelling])!r} and, in {command}, {MEANING.get(name)!r}"
                )
    assert not unclassified, f"options with no meaning in MEANING: {unclassified}"


def test_the_peer_exceptions_are_the_peers_own_spellings() -> None:
    from toolemu.cli.surface import PEER_SPELLINGS

    for (spelling, where), meaning in PEER_SPELLINGS.items():
        for command in where:
            assert any(spelling in spellings(o) for o in options(command)), (spelling, command)
        assert "ToolEmu" in meaning or "QuittingAgents" in meaning


def test_every_shared_option_comes_from_its_one_declaration() -> None:
    """An option that a group declares is, in every command that has it, that group's very object: no command
    declares it again (play and mcp serve re-declared 15 and 10 of run's options)."""
    from toolemu.cli.command import group_command

    declared: dict[str, Any] = {}  # spelling -> the group's option object
    for command in COMMANDS.values():
        for group in getattr(command, "groups", ()):
            for option in group_command(group).params:
                for spelling in spellings(option):
                    assert declared.setdefault(spelling, option) is option or group.family() is not group, spelling
    # The same meaning declared by a command itself, where its values differ from the group's: the peers' own
    # spellings, and options whose default or range is the command's (each the group's meaning, in MEANING).
    own = {
        "--input-path": {"evaluate"},  # ToolEmu's trajectory file (PEER_SPELLINGS)
        "-inp": {"evaluate"},
        "--num-replicates": {"evaluate"},
        "-nrep": {"evaluate"},
        "--simulator-type": {"fidelity"},  # takes "both"
        "-stp": {"fidelity"},
        "--toolkits-path": {"validate"},  # toolkits besides those it checks
        "--verbose": {"report"},  # the report's console: every run's table
        "-v": {"report"},
        "--scorer": {"agree"},  # default: the scorers both sides share
        "--agent": {"robust", "noise"},  # default: the run's recorded agent
        "--num-trials": {"noise"},  # 0 to 100, default 2
        "--num-eval-samples": {"noise"},  # default 2
    }
    again = []
    for path, command in COMMANDS.items():
        shared = {id(p) for g in getattr(command, "groups", ()) for p in group_command(g).params}
        for option in options(path):
            if id(option) in shared:
                continue
            for spelling in spellings(option):
                if spelling in declared and path not in own.get(spelling, ()):
                    again.append(f"{path} {spelling}")
    assert not again, f"declared again outside their group: {again}"
    run, play, serve = (COMMANDS[c] for c in ("run", "play", "mcp serve"))
    by_name = {c: {p.name: p for p in cmd.params} for c, cmd in (("run", run), ("play", play), ("serve", serve))}
    for name in ("input_path", "dump_dir", "simulator_type", "max_iterations", "toolkits_path", "model", "dry_run"):
        assert by_name["run"][name] is by_name["play"][name] is by_name["serve"][name], name
    assert by_name["run"]["agent_type"] is by_name["play"]["agent_type"]


# One value for each old spelling, and the arguments its command needs to parse.
OLD_VALUES = {"--toolkits": "t.json", "--trials": "1", "--samples": "1", "--metric": "safety", "--output": "out"}
NEEDS = {
    "replay": ["run", "--case", "c"],
    "robust": ["run"],
    "noise": ["run"],
    "judge-audit": ["run"],
    "agree": ["a"],
    "submit prepare": ["run"],
    "play": ["case", "--as", "agent"],
}


def click_exceptions() -> Any:
    from toolemu.cli.app import _click_exceptions

    return _click_exceptions()


# Our old spellings: (command, old, new). Each role flag of an element is --model ROLE= on every command with them.
ELEMENT_ROLES = {"--user-model": "user", "--user-reviewer-model": "reviewer", "--monitor-model": "monitor"}
ELEMENT_ROLES |= {"--realism-model": "realism"}
OLD = [
    ("replay", "-q", "--quiet"),
    *((c, "--emulator-model", "--model emulator=") for c in ("robust", "noise", "judge-audit")),
    ("fidelity", "--judge-model", "--model evaluator="),
    *((c, "--toolkits", "--toolkits-path") for c in ("validate", "generate cases", "generate complete")),
    ("noise", "--trials", "--num-trials"),
    ("noise", "--samples", "--num-eval-samples"),
    ("agree", "--metric", "--scorer"),
    ("submit prepare", "--output", "--out"),
    *((c, "--no-dry-run", "") for c in ("run", "emulate", "evaluate", "play", "mcp serve", "robust", "noise")),
    *((c, "--no-dry-run", "") for c in ("judge-audit", "fidelity")),
    *(
        (c, old, f"--model {role}=")
        for old, role in ELEMENT_ROLES.items()
        for c in ("run", "emulate", "play", "mcp serve")
    ),
]


def test_the_old_spellings_are_the_surfaces() -> None:
    from toolemu.cli.surface import RENAMED
    from toolemu.episode.element_spec import element_options

    found = {(command, r.old, r.new) for r in RENAMED for command in r.commands}
    roles = {flag: o.role for o in element_options() if o.role is not None for flag in o.flags}
    assert roles == ELEMENT_ROLES
    assert found | {o for o in OLD if o[1] in roles} == set(OLD)


def parsed(command: str, args: list[str]) -> dict[str, Any]:
    """The values `toolemu COMMAND ARGS` parses to (nothing runs)."""
    group = typer.main.get_command(app)
    parent = group.make_context("toolemu", [command.split()[0]], resilient_parsing=True)
    *above, name = command.split()
    for sub in above:
        group = group.commands[sub]
        parent = group.make_context(sub, [name], parent=parent, resilient_parsing=True)
    cmd = group.commands[name]
    with cmd.make_context(name, [*NEEDS.get(command, []), *args], parent=parent) as ctx:
        return dict(ctx.params)


@pytest.mark.parametrize(("command", "old", "new"), OLD)
def test_an_old_spelling_still_works_with_a_notice(command: str, old: str, new: str, capsys) -> None:
    value = OLD_VALUES.get(old, "openai:gpt-4o" if new.endswith("=") else None)
    old_args = [old] if value is None else [old, value]
    new_args = (
        [new] if value is None else ([*new.split(" ")[:1], new.split(" ")[1] + value] if " " in new else [new, value])
    )
    new_args = [a for a in new_args if a]  # an old spelling of the default: nothing in its place
    capsys.readouterr()
    as_old = parsed(command, old_args)
    err = capsys.readouterr().err
    assert as_old == parsed(command, new_args)
    if new:
        with contextlib.suppress(click_exceptions().MissingParameter):  # where the old spelling gave a required one
            assert as_old != parsed(command, [])  # the old spelling set something
    notice = err.strip().splitlines()
    assert len(notice) == 1 and old in notice[0] and new in notice[0], err
    if "=" in old_args[0] or value is None:
        return
    assert parsed(command, [f"{old}={value}"]) == as_old  # --old=VALUE too


def test_old_spellings_run_end_to_end(run_cli, tmp_path: Path) -> None:
    result = run_cli("validate", CASES, "--toolkits", TOOLKITS)
    assert result.code == 0 and "ok: 2 toolkits" in result.out, result.err
    assert result.err.splitlines() == ["toolemu: --toolkits is now --toolkits-path (the old spelling still works)"]
    run = tmp_path / "run"
    result = run_cli("run", "--dry-run", *SPECS, "--trunc-num", "1", "--dump-dir", run, "--user-model", "mock")
    assert result.code == 0, result.err
    assert "--user-model is now --model user=MODEL" in result.err
    config = json.loads((run / "run.json").read_text())["config"]
    assert config.get("user"), config  # the old spelling still turns the user on


def script(name: str, *args: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / name), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


def test_the_peers_spellings_run_in_their_scripts_with_no_notice(tmp_path: Path) -> None:
    """ToolEmu's and QuittingAgents' flags as their scripts spell them, the peer exceptions among them: -nrep is
    trials in scripts/run.py and judgements in scripts/evaluate.py, -q is --quit; the per-role aliases. Each is
    listed as the peers' (PEER_SPELLINGS, ROLE_ALIASES), which docs/guides/cli.md lists."""
    from toolemu.cli.surface import PEER_SPELLINGS, ROLE_ALIASES

    listed = {(spelling, command) for spelling, where in PEER_SPELLINGS for command in where}
    assert {("-nrep", "run"), ("-nrep", "evaluate"), ("-q", "run"), ("-inp", "evaluate")} <= listed
    assert {flags[2] for flags in ROLE_ALIASES.values()} == {"-am", "-sm", "-em"}
    run = tmp_path / "run"
    aliases = ["-am", "gpt-4o-mini", "-sm", "gpt-4o-mini", "-em", "gpt-4o-mini"]
    done = script("run.py", "--dry-run", "-inp", CASES, "--toolkits-path", TOOLKITS, "-tn", "1", "-nrep", "2",
                  "-q", "-du", run, "-stp", "std_thought", "--no-evaluate", *aliases)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "is now" not in done.stderr, done.stderr
    meta = json.loads((run / "run.json").read_text())
    config = meta["config"]
    assert (meta["selection"]["num_trials"], config["agent_type"], config["simulator_type"]) == (
        2,
        "quit",
        "std_thought",
    )
    trajectories = sorted(run.glob("*.jsonl"))
    done = script("evaluate.py", "-inp", trajectories[0], "-nrep", "2", "--dry-run", "-ev", "agent_safe",
                  "--toolkits-path", TOOLKITS, "-em", "gpt-4o-mini")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "is now" not in done.stderr, done.stderr
    evals = [json.loads(line) for f in run.glob("*_eval_agent_safe*.jsonl") for line in f.read_text().splitlines()]
    assert len(evals) == 2 and all(len(e["samples"]) == 2 for e in evals)  # -nrep 2 here: two judgements each


def test_the_docs_list_the_peer_spellings_and_the_old_ones() -> None:
    from toolemu.cli.surface import PEER_SPELLINGS, RENAMED, ROLE_ALIASES

    text = (REPO / "docs" / "guides" / "cli.md").read_text()
    for spelling, _ in PEER_SPELLINGS:
        assert f"`{spelling}`" in text, spelling
    for renamed in RENAMED:
        assert re.search(f"`{re.escape(renamed.old)}[` ]", text) and f"`{renamed.new}" in text, renamed.old
    for flags in ROLE_ALIASES.values():
        assert all(f"`{flag}`" in text for flag in flags), flags
