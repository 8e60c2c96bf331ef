"""An API key planted in the environment never reaches a file the project writes."""

from __future__ import annotations

import json
import logging

import pytest
from fake_openai import FakeOpenAIServer, chat_body

from toolemu.cli.app import setup_logging
from toolemu.llm import LLMSettings, build_hub, user
from toolemu.secrets import RedactingFilter, load_dotenv_file, redact

PLANTED = "sk-planted-SECRET-0123456789abcdef"


def test_planted_key_reaches_no_written_file(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    log_file = tmp_path / "run.log"
    handler = logging.FileHandler(log_file)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("toolemu")
    logger.addHandler(handler)
    try:
        with FakeOpenAIServer([(200, chat_body(f"the key is {PLANTED}"))]) as server:
            settings = LLMSettings(
                model="openai:gpt-4o-mini",
                base_url=server.base_url,
                api_key_env="OPENAI_API_KEY",  # the provider's key goes to another server only when named
                cache_path=tmp_path / "cache.sqlite",
            )
            hub = build_hub(settings, ("agent",))
            reply = hub.model("agent").complete([user("hello")])
            logger.warning("request failed for key %s", PLANTED)
        # The key did go to the server (it has to), and the reply echoes it back...
        assert server.headers[0]["authorization"] == f"Bearer {PLANTED}"
        assert PLANTED in reply.text
    finally:
        logger.removeHandler(handler)
        handler.close()
    hub.cache.close()
    # ...but the cache key, the log and every other file here stay clean of it.
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert log_file in written and (tmp_path / "cache.sqlite") in written
    for path in written:
        assert PLANTED.encode() not in path.read_bytes(), path
    assert "***" in log_file.read_text()


def test_redact_and_dotenv(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    (tmp_path / ".env").write_text(f"ANTHROPIC_API_KEY={PLANTED}\n")
    load_dotenv_file()
    import os

    assert os.environ["ANTHROPIC_API_KEY"] == PLANTED
    assert redact(f"x {PLANTED} y") == "x *** y"
    monkeypatch.delenv("ANTHROPIC_API_KEY")


def test_cli_logging_is_redacted(capsys, monkeypatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", PLANTED)
    setup_logging()
    logging.getLogger("toolemu.x").warning("token=%s", PLANTED)
    err = capsys.readouterr().err
    assert PLANTED not in err and "token=***" in err


def _fill(schema: dict, text: str) -> object:
    """A minimal instance of `schema` whose free strings all say `text` (a hostile model echoing what it saw)."""
    if "const" in schema or "enum" in schema:
        return schema.get("const", (schema.get("enum") or [None])[0])
    if "anyOf" in schema:
        return _fill(schema["anyOf"][0], text)
    kind = schema.get("type")
    if isinstance(kind, list):  # strict mode's form of an optional property: its type or null
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _fill(props.get(k, {}), text) for k in schema.get("required", [])}
    if kind == "array":
        return [_fill(schema.get("items", {}), text)] * max(1, schema.get("minItems", 0))
    if kind == "string":
        return text[: schema.get("maxLength", len(text))]
    return {"integer": 1, "number": 1.0, "boolean": False}.get(kind)


def echoing_endpoint(seen: list[str]):
    """An OpenAI-compatible server that puts the caller's key into every reply: in an error body first (so it
    reaches the retry log), then in the agent's text and tool input, the emulator's observation and the judges'
    verdicts."""

    def respond(request: dict, headers: dict[str, str]) -> tuple[int, dict, dict[str, str]]:
        key = headers.get("authorization", "").removeprefix("Bearer ")
        seen.append(key)
        if len(seen) == 1:
            return 500, {"error": {"message": f"upstream refused token {key}", "type": "server_error"}}, {}
        fmt = request.get("response_format") or {}
        if fmt.get("type") == "json_schema":
            content = json.dumps(_fill(fmt["json_schema"]["schema"], f"echo {key}"))
        elif any("\nObservation:" in str(m.get("content")) for m in request["messages"][1:]):
            content = f"Thought: done, {key}\nFinal Answer: your key is {key}"
        else:
            content = f'Thought: look up {key}\nAction: NoteVaultReadNote\nAction Input: {{"note_id": "{key}"}}'
        return 200, chat_body(content), {}

    return respond


def test_a_key_under_any_variable_name_reaches_nothing_written(tmp_path, run_cli, monkeypatch) -> None:
    from conftest import FIXTURES

    from toolemu.llm import retry
    from toolemu.scorers import DEFAULT_SCORERS

    monkeypatch.setattr(retry, "BASE_WAIT_S", 0.01)
    monkeypatch.chdir(tmp_path)
    key = "hostile-0123456789-ABCDEFGHIJ-custom"
    monkeypatch.setenv("ZQ_PLAIN_NAME", key)  # a name no pattern would take for a secret
    seen: list[str] = []
    with FakeOpenAIServer(responder=echoing_endpoint(seen)) as server:
        result = run_cli(
            "run", "--model", "openai:hostile", "--base-url", server.base_url, "--api-key-env", "ZQ_PLAIN_NAME",
            "--toolkits-path", FIXTURES / "toolemu_toolkits.json", "--input-path", FIXTURES / "toolemu_cases.json",
            "--dump-dir", tmp_path / "run", "--cache-path", tmp_path / "cache" / "responses.sqlite", "--no-progress",
            "--auto",
        )  # fmt: skip
    assert result.code == 0, result.err
    assert set(seen) == {key} and len(seen) > 5  # the key went out (it must) and came back in every reply
    run = tmp_path / "run"
    written = {p.name: p for p in [*run.iterdir(), *(tmp_path / "cache").iterdir()]}
    for name in ("trajectories.jsonl", "report.html", "report.json", "responses.sqlite"):
        assert name in written, name
    assert len([n for n in written if "_eval_" in n]) == len(DEFAULT_SCORERS)  # one file per scorer
    for path in written.values():
        assert key.encode() not in path.read_bytes(), path.name
    assert key not in result.out and key not in result.err  # the console and the log
    assert "retry 1" in result.err and "upstream refused token ***" in result.err
    traj = (run / "trajectories.jsonl").read_text()
    assert "your key is ***" in traj and '"note_id": "***"' in traj and "echo ***" in traj
    assert "echo ***" in (run / "trajectories_eval_agent_safe.jsonl").read_text()


def test_the_providers_key_goes_to_its_own_api_only(tmp_path, monkeypatch) -> None:
    """OPENAI_API_KEY is set for OpenAI: a --base-url elsewhere (a local server, a proxy, OpenRouter) must not get it
    unless --api-key-env names it."""
    from toolemu.llm import ModelOptions
    from toolemu.llm.providers import ModelConfigError, build_chat_model

    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    assert ModelOptions(model="openai:gpt-4o-mini").key_env == "OPENAI_API_KEY"
    assert ModelOptions(model="openai:gpt-4o-mini", base_url="https://api.openai.com/v1").key_env == "OPENAI_API_KEY"
    elsewhere = "https://openrouter.example/api/v1"
    assert ModelOptions(model="openai:gpt-4o-mini", base_url=elsewhere).key_env is None
    assert ModelOptions(model="openai:x", base_url=elsewhere, api_key_env="OPENAI_API_KEY").key_env == "OPENAI_API_KEY"
    for named in (None, "OPENAI_API_KEY"):
        with FakeOpenAIServer([(200, chat_body("hi"))]) as server:
            settings = LLMSettings(model="openai:m", base_url=server.base_url, api_key_env=named, cache="off")
            build_hub(settings, ("agent",)).model("agent").complete([user("hello")])
        sent = server.headers[0]["authorization"]
        assert (PLANTED in sent) == (named is not None), sent
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLANTED)
    with pytest.raises(ModelConfigError, match="--api-key-env"):
        build_chat_model(ModelOptions(model="anthropic:claude-x", base_url=elsewhere), "agent")
