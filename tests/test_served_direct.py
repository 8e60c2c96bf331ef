"""A served model on plain http is asked directly (toolemu.llm.served), without LangChain, the openai SDK and httpx:
the same request bodies, the same replies and the same failures as through them, which each test checks by
running the same script through both paths against the same loopback server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fake_openai import FakeOpenAIServer, chat_body
from test_run_scale import KeepAliveServer

from toolemu.llm import LLMSettings, ModelHub, build_hub, system, user
from toolemu.llm import providers as providers_mod
from toolemu.llm import retry as retry_mod
from toolemu.llm.served import DirectChat, direct_eligible
from toolemu.llm.stops import ModelAccessDenied

REPLY = {
    "type": "object",
    "properties": {"verdict": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["verdict", "score"],
    "additionalProperties": False,
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    }
    for name in ("Search", "Send")
]


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry_mod, "BASE_WAIT_S", 0.01)
    monkeypatch.setattr(retry_mod, "RETRY_AFTER_CAP_S", 0.05)


def _hub(url: str, direct: bool, monkeypatch: pytest.MonkeyPatch, **settings: Any) -> ModelHub:
    monkeypatch.setattr(providers_mod, "direct_eligible", lambda base_url: direct and direct_eligible(base_url))
    hub = build_hub(LLMSettings(model="openai:m", base_url=url, cache="off", **settings), ("agent", "evaluator"))
    chat = hub.model("agent").chat
    assert isinstance(chat, DirectChat) == direct, type(chat)
    return hub


def _both(script: list[tuple[Any, ...]], monkeypatch: pytest.MonkeyPatch, call: Any, **settings: Any) -> list[Any]:
    """`call(hub)` through the SDK, then directly, each against a fresh server with `script`: (outcome, the
    requests) of each, where an outcome is the result or the exception's type and text."""
    seen = []
    for direct in (False, True):
        with FakeOpenAIServer(script=list(script)) as server:
            hub = _hub(server.base_url, direct, monkeypatch, **settings)
            try:
                outcome: Any = call(hub)
            except Exception as exc:  # noqa: BLE001 - compared across the paths
                outcome = (_kind(exc), str(exc), retry_mod.foreign_reply(exc))
            seen.append((outcome, server.requests))
    return seen


def _kind(exc: BaseException) -> str:
    """An error's kind: its openai SDK class where it has one (langchain-openai raises subclasses of its own, such
    as OpenAIRateLimitError for the SDK's RateLimitError), else its own class."""
    return next((c.__name__ for c in type(exc).__mro__ if c.__module__.startswith("openai")), type(exc).__name__)


def _message(**message: Any) -> dict[str, Any]:
    body = chat_body("")
    body["choices"][0]["message"] = {"role": "assistant", **message}
    return body


def _completion_fields(completion: Any) -> dict[str, Any]:
    fields = ("text", "value", "tool_calls", "reasoning", "refusal", "finish", "attempts")
    out = {name: getattr(completion, name) for name in fields}
    out["usage"] = completion.usage.model_dump()
    return out


def test_a_schema_reply_sends_and_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    script = [(200, chat_body(json.dumps({"verdict": "safe", "score": 3}), prompt_tokens=40, completion_tokens=9))]

    def call(hub: ModelHub) -> Any:
        judged = hub.model("evaluator").complete([system("Judge."), user("the episode")], schema=REPLY, stop=["END"])
        return _completion_fields(judged)

    (sdk, sdk_requests), (direct, direct_requests) = _both(script, monkeypatch, call, seed=7, temperature=0.4)
    assert direct == sdk and direct["value"] == {"verdict": "safe", "score": 3}
    assert direct_requests == sdk_requests
    sent = direct_requests[0]
    assert sent["seed"] == 7 and sent["temperature"] == 0.0 and sent["stop"] == ["END"]  # a judge samples at 0
    assert sent["response_format"]["json_schema"]["strict"] is True


def test_native_tool_calls_and_a_conversation_of_them(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [
        {"id": "call_1", "type": "function", "function": {"name": "Search", "arguments": '{"query": "bank"}'}},
        {"id": "call_2", "type": "function", "function": {"name": "Send", "arguments": '{"query": '}},  # cut off
    ]
    script = [(200, _message(content=None, tool_calls=calls)), (200, chat_body("Final Answer: done"))]
    script[0][1]["choices"][0]["finish_reason"] = "tool_calls"
    history = [
        system("You are an assistant that uses tools."),
        user("Find the bank."),
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c0", "name": "Search", "args": {"query": "x"}}]},
        {"role": "tool", "content": '{"results": []}', "tool_call_id": "c0"},
    ]

    def call(hub: ModelHub) -> Any:
        agent = hub.model("agent")
        first = agent.complete(history, tools=TOOLS)
        second = agent.complete([*history, {"role": "assistant", "content": "thinking"}], tools=TOOLS)
        return _completion_fields(first), _completion_fields(second)

    (sdk, sdk_requests), (direct, direct_requests) = _both(script, monkeypatch, call)
    assert direct_requests == sdk_requests
    assert direct[1] == sdk[1] and direct[1]["text"] == "Final Answer: done"
    # The valid call is the same; LangChain's wording of why an argument string is unusable is its own.
    assert (
        direct[0]["tool_calls"][0]
        == sdk[0]["tool_calls"][0]
        == {
            "id": "call_1",
            "name": "Search",
            "args": {"query": "bank"},
        }
    )
    for ours, theirs in zip(direct[0]["tool_calls"][1:], sdk[0]["tool_calls"][1:], strict=True):
        assert (ours["id"], ours["name"], ours["args"]) == (theirs["id"], theirs["name"], theirs["args"])
        assert ours["error"] and theirs["error"]
    assert {k: v for k, v in direct[0].items() if k != "tool_calls"} == {
        k: v for k, v in sdk[0].items() if k != "tool_calls"
    }
    assert direct_requests[0]["messages"][2]["content"] is None  # null beside tool calls, as the API wants


def test_arguments_that_are_not_an_object_are_kept_as_an_invalid_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """Through LangChain, a call whose arguments are JSON but not an object failed the whole reply (its AIMessage
    refuses them); asked directly, the reply is kept and the call is recorded as invalid, with why."""
    calls = [
        {"id": "call_1", "type": "function", "function": {"name": "Send", "arguments": "[1, 2]"}},
        {"id": "call_2", "type": "function", "function": {"name": "Search", "arguments": '{"query": "a"}'}},
    ]
    script = [(200, _message(content=None, tool_calls=calls))]
    (sdk, _), (direct, _) = _both(
        script, monkeypatch, lambda hub: hub.model("agent").complete([user("x")], tools=TOOLS)
    )
    assert sdk[0] == "ValidationError"
    assert direct.tool_calls == [
        {"id": "call_1", "name": "Send", "args": "[1, 2]", "error": "not a JSON object"},
        {"id": "call_2", "name": "Search", "args": {"query": "a"}},
    ]


def test_reasoning_refusal_and_a_cut_off_reply_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    cut = chat_body('{"verdict": "sa', completion_tokens=4096)
    cut["choices"][0]["finish_reason"] = "length"
    whole = _message(content=json.dumps({"verdict": "safe", "score": 1}), reasoning_content="It asked first.")
    refused = _message(content=None, refusal="I can't help with that.")
    script = [(200, cut), (200, whole), (200, refused), (200, refused), (200, refused)]

    def call(hub: ModelHub) -> Any:
        model = hub.model("evaluator")
        first = _completion_fields(model.complete([user("judge")], schema=REPLY))
        try:
            model.complete([user("judge again")], schema=REPLY)
        except Exception as exc:  # noqa: BLE001 - compared across the paths
            return first, (type(exc).__name__, str(exc))
        return first, None

    (sdk, sdk_requests), (direct, direct_requests) = _both(script, monkeypatch, call)
    assert direct == sdk
    assert direct[0]["reasoning"] == "It asked first." and direct[0]["value"] == {"verdict": "safe", "score": 1}
    assert direct[1][0] == "ModelRefusal" and "I can't help with that." in direct[1][1]
    assert direct_requests == sdk_requests
    assert [r["max_completion_tokens"] for r in direct_requests[:2]] == [4096, 8192]  # room grown after the cut
    assert [r["max_tokens"] for r in direct_requests[:2]] == [4096, 8192]


@pytest.mark.parametrize(
    ("script", "kind"),
    [
        ([(429, {"error": {"message": "slow down"}}, {"retry-after": "0"}), (200, chat_body("ok"))], "retried"),
        ([(500, {"error": {"message": "boom"}}), (200, chat_body("ok"))], "retried"),
        ([(200, {"id": "x", "object": "chat.completion"}), (200, chat_body("ok"))], "retried"),  # no choices
        ([(200, chat_body("ok") | {"usage": {"prompt_tokens": "many"}}), (200, chat_body("ok"))], "retried"),
        ([(400, {"error": {"message": "bad field", "type": "invalid_request_error"}})], "BadRequestError"),
        ([(404, {"error": {"message": "no such model"}})], "NotFoundError"),
        ([(200, {"data": [1, 2], "object": "list"})], "not a completion"),
        ([(503, {"error": {"message": "down"}})] * 3, "InternalServerError"),
    ],
)
def test_failures_read_as_through_the_sdk(script: list[Any], kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def call(hub: ModelHub) -> Any:
        return _completion_fields(hub.model("agent").complete([user("hi")]))

    (sdk, sdk_requests), (direct, direct_requests) = _both(script, monkeypatch, call, max_attempts=3)
    assert len(direct_requests) == len(sdk_requests)
    if kind == "not a completion":  # found where each path reads the reply (LangChain's TypeError, ours): one line
        assert direct[2] == sdk[2] == "JSON that is not a chat completion (keys: data)"
        return
    assert direct == sdk
    if kind == "retried":
        assert direct["text"] == "ok" and len(direct_requests) == 2
    else:
        assert direct[0] == kind, direct


@pytest.mark.parametrize("where", ["refused", "silent"])
def test_a_server_not_there_or_silent_reads_as_through_the_sdk(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A port nothing listens on is a connection error and one that never answers a timeout, on both paths (urllib3
    files a refused connection under its timeouts)."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    if where == "refused":
        listener.close()
    seen = []
    try:
        for direct in (False, True):
            hub = _hub(f"http://127.0.0.1:{port}/v1", direct, monkeypatch, max_attempts=1, timeout=0.3)
            with pytest.raises(Exception) as failed:
                hub.model("agent").complete([user("hi")])
            seen.append((_kind(failed.value), str(failed.value), retry_mod.is_transient(failed.value)))
    finally:
        listener.close()
    kind = "APIConnectionError" if where == "refused" else "APITimeoutError"
    assert seen[0] == seen[1] and seen[1][0] == kind and seen[1][2] is True


def test_a_refused_key_stops_the_command_with_the_same_words(monkeypatch: pytest.MonkeyPatch) -> None:
    script = [(401, {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})]
    seen = []
    for direct in (False, True):
        with FakeOpenAIServer(script=script) as server:
            hub = _hub(server.base_url, direct, monkeypatch)
            with pytest.raises(ModelAccessDenied) as denied:
                hub.model("agent").complete([user("hi")])
            seen.append(str(denied.value))
    # langchain-openai names its own subclass of the SDK's error; the words are the same
    assert seen[1] == seen[0].replace("OpenAIAuthenticationError", "AuthenticationError")
    assert "HTTP 401, AuthenticationError: Error code: 401 - Incorrect API key provided" in seen[1]


class _Page(BaseHTTPRequestHandler):
    """A web server, not a chat API: every POST gets an HTML page with a 200."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        page = b"<html><head><title>Welcome to nginx!</title></head><body>hi</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_web_page_is_named_and_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        seen = []
        for direct in (False, True):
            with pytest.raises(Exception) as failed:
                _hub(url, direct, monkeypatch, max_attempts=3).model("agent").complete([user("hi")])
            seen.append(retry_mod.foreign_reply(failed.value))
    finally:
        server.shutdown()
        server.server_close()
    assert seen[0] == seen[1] == "an HTML page (Welcome to nginx!)"


def test_only_plain_http_without_credentials_or_proxies_is_asked_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert direct_eligible("http://127.0.0.1:8000/v1")
    assert not direct_eligible(None)  # OpenAI's own API keeps its SDK
    assert not direct_eligible("https://openrouter.ai/api/v1")
    assert not direct_eligible("http://user:secret@127.0.0.1:8000/v1")
    assert not direct_eligible("http://127.0.0.1:8000/v1?key=abc")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.internal:3128")
    assert not direct_eligible("http://127.0.0.1:8000/v1")


def test_threads_share_one_kept_connection_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every role at one server shares one pool: 8 threads asking agent and evaluator in turn open at most 8
    connections, and reuse them."""
    with KeepAliveServer(latency_s=0.05) as server:  # every thread in a call at once
        hub = _hub(server.base_url, True, monkeypatch)
        barrier = threading.Barrier(8)

        def work() -> None:
            barrier.wait()
            for i in range(10):
                hub.model("agent" if i % 2 else "evaluator").complete([user(f"call {i}")])

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert hub.tracker.total().calls == 80
    assert 1 <= server.connections <= 8, server.connections
