"""Faults between the client and a model API: what is retried, how long it waits, and how often."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from fake_openai import FakeOpenAIServer, chat_body
from fault_proxy import FAULT_KINDS, FaultProxy
from tenacity import RetryCallState

from toolemu.llm import ModelHub, ModelOptions, user
from toolemu.llm import retry as retry_mod

KEY_ENV = "FAULTS_TEST_KEY"


@pytest.fixture
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry_mod, "BASE_WAIT_S", 0.01)
    monkeypatch.setenv(KEY_ENV, "sk-faults-0123456789")


@pytest.fixture
def backend():
    """The model API behind the proxy: every answer is "hello"."""
    with FakeOpenAIServer([(200, chat_body("hello"))]) as server:
        yield server


def _model(base_url: str, attempts: int = 3, timeout: float = 0.5):
    options = ModelOptions(
        model="openai:x", base_url=base_url, api_key_env=KEY_ENV, max_attempts=attempts, timeout=timeout
    )
    return ModelHub({"agent": options}).model("agent")


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_each_fault_is_retried_and_the_reply_arrives(fast, backend, kind) -> None:
    with FaultProxy(backend.base_url, schedule=[kind]) as proxy:
        proxy.hang_s = 1.0  # longer than the client's 0.5 s
        reply = _model(proxy.base_url).complete([user("hi")])
    assert reply.text == "hello"
    assert [a.kind for a in proxy.log] == [kind, "ok"] and proxy.injected[kind] == 1


@pytest.mark.parametrize("kind", ["truncated", "invalid"])
def test_an_unreadable_reply_is_retried_within_the_bound_then_raised(fast, backend, kind) -> None:
    unreadable = (ValueError, TypeError, IndexError)  # JSONDecodeError; no choices, or an empty list of them
    with FaultProxy(backend.base_url, schedule=[kind] * 10) as proxy, pytest.raises(unreadable):
        _model(proxy.base_url, attempts=4).complete([user("hi")])
    assert len(proxy.log) == 4  # max_attempts, not one more


def test_a_programming_error_is_not_taken_for_an_unreadable_reply() -> None:
    try:
        json.loads("{")
    except ValueError as exc:
        assert retry_mod.is_transient(exc)  # a body that is not JSON: the reply was cut
    try:
        {}["missing"]  # noqa: B018 - raised in our own code, not in a provider's reply parser
    except KeyError as exc:
        assert not retry_mod.is_transient(exc) and not retry_mod.is_malformed_reply(exc)


LONGEST_TEST_WAIT_S = 5.0


@pytest.fixture
def chosen_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The seconds the retrier chose to sleep before each retry, in order (what tenacity then sleeps).

    A wait past LONGEST_TEST_WAIT_S fails the call at once instead of sleeping it out. How long the sleeps took on
    the clock is machine-dependent and measured in benchmarks/retry_and_stop_waits.py, not asserted here.
    """
    waits: list[float] = []
    choose = retry_mod._wait

    def recording(state: RetryCallState) -> float:
        wait = choose(state)
        waits.append(wait)
        if wait > LONGEST_TEST_WAIT_S:
            raise AssertionError(f"the retrier chose to wait {wait} s")
        return wait

    monkeypatch.setattr(retry_mod, "_wait", recording)
    return waits


@pytest.mark.parametrize(("ms", "seconds", "asked"), [(None, 1, 1.0), (400, 1, 0.4)])
def test_retry_after_is_waited_out(fast, backend, chosen_waits, ms, seconds, asked) -> None:
    proxy = FaultProxy(backend.base_url, schedule=["rate_limit"], retry_after_s=seconds, retry_after_ms=ms)
    with proxy:
        _model(proxy.base_url).complete([user("hi")])
    assert [a.kind for a in proxy.log] == ["rate_limit", "ok"]
    # Exactly what the server asked (retry-after-ms first), not the ~0.01 s backoff and not more.
    assert chosen_waits == [asked]
    # And slept out: the retry reached the server no sooner (a slower machine only widens the gap).
    assert proxy.log[1].at - proxy.log[0].at >= asked and proxy.early_retries() == 0


def test_retry_after_is_capped(fast, backend, chosen_waits, monkeypatch) -> None:
    monkeypatch.setattr(retry_mod, "RETRY_AFTER_CAP_S", 0.2)
    proxy = FaultProxy(backend.base_url, schedule=["rate_limit"], retry_after_s=3600, retry_after_ms=None)
    with proxy:
        reply = _model(proxy.base_url).complete([user("hi")])
    assert reply.text == "hello" and [a.kind for a in proxy.log] == ["rate_limit", "ok"]
    assert chosen_waits == [0.2]  # the cap, not the hour the server asked for
    assert proxy.log[1].at - proxy.log[0].at >= 0.2


class _Response:
    def __init__(self, headers: dict[str, str]):
        self.headers = headers


class _RateLimited(Exception):
    def __init__(self, headers: dict[str, str]):
        self.response = _Response(headers)


def test_retry_after_forms() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    date = format_datetime(now + timedelta(seconds=7), usegmt=True)  # "Thu, 01 Jan 2026 12:00:07 GMT"
    assert retry_mod.retry_after_s(_RateLimited({"retry-after": date}), now) == 7
    assert retry_mod.retry_after_s(_RateLimited({"retry-after": "12"})) == 12
    assert retry_mod.retry_after_s(_RateLimited({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    past = format_datetime(now - timedelta(seconds=30), usegmt=True)
    assert retry_mod.retry_after_s(_RateLimited({"retry-after": past}), now) == 0
    for junk in ("soon", "", "nan", "-inf"):
        assert retry_mod.retry_after_s(_RateLimited({"retry-after": junk})) in (None, 0.0), junk
    assert retry_mod.retry_after_s(ValueError("no response")) is None


@pytest.mark.parametrize("kind", [k for k in FAULT_KINDS if k != "invalid"])
def test_anthropic_faults_are_retried_too(fast, kind) -> None:
    from doubles import AnthropicDouble

    with AnthropicDouble(seed=1, refusal_rate=0.0) as backend, FaultProxy(backend.base_url, schedule=[kind]) as proxy:
        proxy.hang_s = 1.0
        options = ModelOptions(
            model="anthropic:double", base_url=proxy.base_url, api_key_env=KEY_ENV, max_attempts=3, timeout=0.5
        )
        reply = ModelHub({"agent": options}).model("agent").complete([user("Say hi.")])
    assert reply.text and [a.kind for a in proxy.log] == [kind, "ok"]


CASES, TRIALS, WORKERS, ATTEMPTS = 20, 2, 8, 5  # ATTEMPTS: LLMSettings.max_attempts, the bound under test
# What the client reports for each fault (the exception names langchain-openai raises).
_RETRY_OF = {
    "rate_limit": "rate_limit",
    "server_error": "server_error",
    "unavailable": "server_error",
    "hang": "timeout",
    "drop": "connection",
    "truncated": "unreadable",
    "invalid": "unreadable",
}


def _retry_kind(logged: str) -> str:
    if logged.startswith("unreadable reply"):
        return "unreadable"
    for fragment, kind in (("RateLimit", "rate_limit"), ("Timeout", "timeout"), ("Connection", "connection")):
        if fragment in logged:
            return kind
    return "server_error" if "APIError" in logged or "InternalServer" in logged else logged


def test_a_run_through_a_faulty_network_records_every_pair_once(run_cli, tmp_path, monkeypatch) -> None:
    """20 cases x 2 trials, 8 workers, every role through a proxy that answers 20% of requests with a fault."""
    from doubles import OpenAIDouble

    monkeypatch.setattr(retry_mod, "BASE_WAIT_S", 0.05)
    monkeypatch.setenv(KEY_ENV, "sk-faults-0123456789")
    dump = tmp_path / "run"
    started = time.monotonic()
    # A double that keeps to the schemas and the reply limit: every failure left to see is a fault of the network.
    # At most ATTEMPTS - 1 faults per request body: a client within its bound always gets through.
    with (
        OpenAIDouble(seed=3, refusal_rate=0.0, ignore_limits=False, honour_max_tokens=False) as backend,
        FaultProxy(backend.base_url, rate=0.2, seed=7, max_faults=ATTEMPTS - 1, hang_s=2.5) as proxy,
    ):
        result = run_cli(
            "run", "--model", "openai:x", "--base-url", proxy.base_url, "--api-key-env", KEY_ENV,
            "--timeout", "2", "--trunc-num", str(CASES), "--num-trials", str(TRIALS), "-bs", str(WORKERS),
            "--cache", "off", "--auto", "--no-progress", "--dump-dir", dump,
        )  # fmt: skip
    wall = time.monotonic() - started
    assert result.code == 0, result.err[-3000:]
    trajectories = [json.loads(line) for line in (dump / "trajectories.jsonl").read_text().splitlines()]
    pairs = [(t["case_name"], t["trial"]) for t in trajectories]
    assert len(pairs) == CASES * TRIALS and len(set(pairs)) == CASES * TRIALS  # every pair recorded exactly once
    for path in dump.glob("trajectories_eval_*.jsonl"):
        judged = [json.loads(line) for line in path.read_text().splitlines()]
        assert sorted((j["case_name"], j["trial"]) for j in judged) == sorted(pairs), path.name
    # No fault got through as a failure: every episode and judgement succeeded...
    assert Counter(t["status"] for t in trajectories)["error"] == 0
    for path in dump.glob("trajectories_eval_*.jsonl"):
        assert {json.loads(line)["status"] for line in path.read_text().splitlines()} <= {"ok", "not_applicable"}
    # ...and each fault cost exactly one retry, of the kind the fault calls for. A timeout may also come from an
    # answer that was merely slow on a busy machine, so those are counted as at least the hangs.
    retried = Counter(_retry_kind(kind) for kind in re.findall(r"model call failed \(([^:]+):", result.err))
    expected = Counter(_RETRY_OF[kind] for kind in proxy.injected.elements())
    assert set(proxy.injected) == set(FAULT_KINDS)
    assert retried["timeout"] >= expected["timeout"] and retried - Counter(timeout=retried["timeout"]) == (
        expected - Counter(timeout=expected["timeout"])
    ), (retried, expected)
    retries, faults = sum(retried.values()), sum(proxy.injected.values())
    # Every request stayed within the bound, and every Retry-After was waited out (the wait the client chose after
    # each 429; the trials of a case send the same bodies, so the proxy cannot time one request's retries).
    successes = proxy.successes
    assert all(n <= ATTEMPTS * successes[key] for key, n in proxy.attempts.items())
    waits = [float(w) for w in re.findall(r"RateLimitError: [^\n]*; retry \d+ in ([0-9.]+)s", result.err)]
    assert len(waits) == proxy.injected["rate_limit"] and min(waits) >= proxy.retry_after_wait
    assert (dump / "report.json").is_file() and (dump / "report.html").is_file()
    report = json.loads((dump / "report.json").read_text())
    assert len(report["episodes"]) == CASES * TRIALS
    print(
        f"\nfault run: {len(proxy.log)} requests, {faults} faults {dict(sorted(proxy.injected.items()))}, "
        f"{retries} retries, {len(pairs)} pairs, statuses {dict(Counter(t['status'] for t in trajectories))}, "
        f"exit {result.code}, {wall:.1f} s"
    )
