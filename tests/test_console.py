"""A console that says what matters: notices only when they are true, a reason where something is left out, one
line (never a traceback) where the other side is not what was expected."""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
from pathlib import Path

import pytest

from toolemu.llm import LLMSettings, build_hub
from toolemu.llm import settings as llm_settings

REPO = Path(__file__).resolve().parents[1]
SMOKE = "smoke run, not a safety measurement"


@pytest.fixture
def fresh_notice(monkeypatch, tmp_path: Path) -> None:
    """No API key in the environment, no .env to read, and the once-per-process notice not yet said."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(llm_settings, "_noticed", threading.Event())


def notices(caplog, settings: LLMSettings, roles: tuple[str, ...]) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolemu"):
        build_hub(settings, roles)
    return [r.getMessage() for r in caplog.records if SMOKE in r.getMessage()]


@pytest.mark.parametrize(
    "settings",
    [
        LLMSettings(role_models={"agent": "openai:gpt-4o-mini", "emulator": "openai:gpt-4o"}, api_key_env="MY_KEY"),
        LLMSettings(role_models={"agent": "anthropic:claude-3-5-haiku-latest", "emulator": "openai:gpt-4o"}),
        LLMSettings(
            role_models={"agent": "openai:a", "emulator": "openai:b"},
            base_url="http://127.0.0.1:9/v1",
            api_key_env="MY_KEY",
        ),
    ],
    ids=["http-models-and-key-env", "two-providers", "base-url"],
)
def test_no_embedded_model_notice_when_every_role_names_a_model(fresh_notice, caplog, settings) -> None:
    assert notices(caplog, settings, ("agent", "emulator")) == []


def test_the_notice_names_only_the_roles_that_fall_back(fresh_notice, caplog, monkeypatch) -> None:
    settings = LLMSettings(role_models={"agent": "openai:gpt-4o-mini"})
    [line] = notices(caplog, settings, ("agent", "emulator"))
    assert "every role" not in line and "the emulator role" in line and "agent" not in line
    assert "no API key set" in line
    # Where every role does fall back, it still says so.
    monkeypatch.setattr(llm_settings, "_noticed", threading.Event())
    [line] = notices(caplog, LLMSettings(), ("agent", "emulator"))
    assert "every role uses the embedded SmolLM2-135M model" in line and "no API key set" in line


def test_the_notice_does_not_say_no_key_when_a_key_variable_was_named(fresh_notice, caplog) -> None:
    [line] = notices(caplog, LLMSettings(api_key_env="MY_KEY"), ("agent", "emulator"))
    assert "no API key set" not in line and "--api-key-env MY_KEY" in line and "no model" in line


def study(directory: Path, agents: int) -> Path:
    """ToolEmu dumps of `agents` agents (benchmarks/report_scale.py's study shape, two episodes each)."""
    spec = importlib.util.spec_from_file_location("report_scale", REPO / "benchmarks" / "report_scale.py")
    scale = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scale)
    scale.toolemu_study(directory, agents=agents, shards=1, per_shard=2)
    return directory


def test_a_report_of_many_runs_says_why_none_was_compared(tmp_path: Path, run_cli) -> None:
    dumps = study(tmp_path / "study", agents=4)
    result = run_cli("report", dumps, "--out", tmp_path / "out")
    assert result.code == 0
    [line] = [line for line in result.out.splitlines() if line.startswith("paired differences:")]
    assert "4 runs" in line and "--baseline NAME" in line and "--compare" in line
    # Asked for, the pairs are made and the line is gone.
    chosen = run_cli("report", dumps, "--baseline", "model-00_naive", "--out", tmp_path / "chosen")
    assert chosen.code == 0 and "paired differences:" not in chosen.out
    assert "paired safety: model-01_ss_only - model-00_naive" in chosen.out


def test_generate_has_a_dry_run_end_to_end(tmp_path: Path, run_cli, monkeypatch) -> None:
    """names -> toolkits -> cases -> complete with --dry-run alone: no model option, no key, no embedded model; what
    each step writes is read by the next and passes `toolemu validate`."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    names = run_cli("generate", "names", "--dry-run", "--per-domain", "2", "--out", tmp_path / "names.json")
    assert names.code == 0, names.err
    kits = run_cli("generate", "toolkits", "--dry-run", "--names", tmp_path / "names.json", "--out", tmp_path / "kits")
    assert kits.code == 0, kits.err
    written = sorted((tmp_path / "kits").glob("*.json"))
    assert len(written) == len(json.loads((tmp_path / "names.json").read_text())) > 1
    cases = run_cli("generate", "cases", "--dry-run", "--toolkits", tmp_path / "kits", "--count", "2",
                    "--out", tmp_path / "cases.json")  # fmt: skip
    assert cases.code == 0, cases.err
    kit = written[0].stem
    done = run_cli("generate", "complete", "Tidy my account", "--toolkit", kit, "--toolkits", tmp_path / "kits",
                   "--dry-run", "--out", tmp_path / "cases.json", "--append")  # fmt: skip
    assert done.code == 0, done.err
    made = json.loads((tmp_path / "cases.json").read_text())
    assert len(made) == 2 * len(written) + 1 and len({c["User Instruction"] for c in made}) == len(made)
    checked = run_cli("validate", tmp_path / "kits", tmp_path / "cases.json")
    assert checked.code == 0 and "ok:" in checked.out, checked.out + checked.err
    assert SMOKE not in names.err + kits.err + cases.err + done.err  # the mock, never the embedded model


def _docs_section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n#", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def test_the_models_page_says_what_openai_with_base_url_sends(tmp_path: Path, run_cli, monkeypatch) -> None:
    """What the docs say `openai:<model> --base-url` sends is what a server gets: checked against a loopback
    server for a schema with a strict form and one without."""
    from fake_openai import FakeOpenAIServer, chat_body

    page = (REPO / "docs" / "getting-started" / "models.md").read_text(encoding="utf-8")
    [row] = [line for line in page.splitlines() if line.startswith("| `openai:<model> --base-url` |")]
    sends = _docs_section(page, "### What `openai:<model> --base-url` sends")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-probe")
    monkeypatch.chdir(tmp_path)
    closed = {"type": "object", "properties": {"v": {"type": "string"}, "note": {"type": "string"}}, "required": ["v"]}
    closed["additionalProperties"] = False
    open_keys = {"type": "object", "properties": {"data": {"type": "object"}}, "required": ["data"]}
    for schema, reply, strict in ((closed, '{"v": "x", "note": null}', True), (open_keys, '{"data": {}}', False)):
        (tmp_path / "s.json").write_text(json.dumps(schema))
        with FakeOpenAIServer([(200, chat_body(reply))]) as server:
            result = run_cli("chat", "hi", "--model", "openai:served", "--base-url", server.base_url,
                             "--schema", tmp_path / "s.json", "--cache", "off")  # fmt: skip
        assert result.code == 0, result.err
        body, headers = server.requests[0], server.headers[0]
        sent = body["response_format"]["json_schema"]
        assert body["response_format"]["type"] == "json_schema" and sent["strict"] is strict
        assert ("`strict: true`" if strict else "`strict: false`") in row
        if not strict:  # not spelled out in the prompt: the server is trusted with it
            assert "data" not in json.dumps(body["messages"]) and "not** spelled out in the prompt" in row
    assert {"max_tokens", "max_completion_tokens", "temperature"} <= set(body)
    assert "`max_tokens` and `max_completion_tokens`" in sends and "`temperature` (always" in sends
    assert headers["authorization"] == "Bearer sk-docs-probe"
    assert "`OPENAI_API_KEY` in the environment goes to whatever server `--base-url` names" in sends
    assert any(name.startswith("x-stainless-") for name in headers) and "`X-Stainless-*`" in sends


def test_gymnasium_make_takes_paths_as_strings(tmp_path: Path) -> None:
    """dump_dir, cases and toolkits as plain strings (as gymnasium.make's keyword arguments often are): a folder,
    one file each (not a sequence of one-letter paths), and one case name."""
    gymnasium = pytest.importorskip("gymnasium", reason="toolemu[gym] is in the test extra")
    import toolemu.gym  # noqa: F401 - registers the env
    from toolemu.log import read_run

    fixtures = REPO / "tests" / "fixtures"
    env = gymnasium.make(
        "toolemu/ToolEmu-v0",
        settings=LLMSettings(model="mock"),
        cases=str(fixtures / "toolemu_cases.json"),
        toolkits=str(fixtures / "toolemu_toolkits.json"),
        case_names="fixture_0",
        dump_dir=str(tmp_path / "gym"),
    )
    assert env.reset(seed=0)[1]["case"] == "fixture_0"
    env.step(json.dumps({"final_answer": "done"}))
    assert [t.output for t in read_run(tmp_path / "gym").trajectories] == ["done"]
    with pytest.raises(TypeError, match="expected dump_dir as a path"):
        gymnasium.make("toolemu/ToolEmu-v0", settings=LLMSettings(model="mock"), dump_dir=7)
