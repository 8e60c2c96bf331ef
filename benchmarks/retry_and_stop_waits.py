"""Seconds on the clock for the waits the tests check by behaviour only (tests/test_faults.py, tests/test_vllm.py).

1. Retry-After: one call through the fault proxy (tests/fault_proxy.py) whose first answer is a 429. Three forms:
   `Retry-After: 1`, `retry-after-ms: 400` (wins over the 1 s header), and `Retry-After: 3600` under a 0.2 s cap.
   Reported: the gap between the 429 and the retry as the proxy saw them, the overshoot past what was asked,
   and the whole call.
2. Stopping a `vllm serve` that ignores SIGTERM (tests/fake_vllm.py), STOP_TIMEOUT_S 0.5: seconds from
   `shutdown_all()` until the process is gone, and the overshoot past the 0.5 s grace.

The first backoff is shortened to 0.01 s, as the tests do, so the server's Retry-After decides each wait.
Medians over --repeats runs.

Run: python benchmarks/retry_and_stop_waits.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fake_openai import FakeOpenAIServer, chat_body  # noqa: E402
from fault_proxy import FaultProxy  # noqa: E402

from toolemu.llm import ModelHub, ModelOptions, build_chat_model, user, vllm_server  # noqa: E402
from toolemu.llm import retry as retry_mod  # noqa: E402

KEY_ENV = "WAITS_BENCH_KEY"
CAP_S = 0.2
STOP_TIMEOUT_S = 0.5
# name: (Retry-After seconds, retry-after-ms or None, the cap, the wait the client should choose)
RETRY_AFTER_FORMS = {
    "Retry-After: 1": (1, None, retry_mod.RETRY_AFTER_CAP_S, 1.0),
    "retry-after-ms: 400": (1, 400, retry_mod.RETRY_AFTER_CAP_S, 0.4),
    f"Retry-After: 3600, cap {CAP_S}": (3600, None, CAP_S, CAP_S),
}


def retry_after_once(backend_url: str, seconds: int, ms: int | None) -> tuple[float, float]:
    """(gap between the 429 and the retry at the proxy, the whole call), in seconds."""
    with FaultProxy(backend_url, schedule=["rate_limit"], retry_after_s=seconds, retry_after_ms=ms) as proxy:
        options = ModelOptions(
            model="openai:x", base_url=proxy.base_url, api_key_env=KEY_ENV, max_attempts=3, timeout=5
        )
        model = ModelHub({"default": options}).model("agent")
        started = time.perf_counter()
        reply = model.complete([user("hi")])
        call = time.perf_counter() - started
    assert reply.text == "hello" and [a.kind for a in proxy.log] == ["rate_limit", "ok"], proxy.log
    return proxy.log[1].at - proxy.log[0].at, call


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def stop_stubborn_server_once(tmp: Path) -> float:
    """Seconds from shutdown_all() until a server that ignores SIGTERM is gone."""
    fake_bin = tmp / "bin" / "vllm"
    fake_bin.parent.mkdir(exist_ok=True)
    fake_bin.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{REPO / "tests" / "fake_vllm.py"}" "$@"\n')
    fake_bin.chmod(0o755)
    os.environ.update(
        TOOLEMU_VLLM_BIN=str(fake_bin),
        TOOLEMU_VLLM_REQUIRE_GPU="0",
        TOOLEMU_VLLM_LOG_DIR=str(tmp / "vllm-logs"),
        FAKE_VLLM_IGNORE_TERM="1",
    )
    build_chat_model(ModelOptions(model="vllm:stubborn"), "agent")
    [server] = vllm_server.running_servers()
    assert server.proc is not None
    pid = server.proc.pid
    started = time.perf_counter()
    vllm_server.shutdown_all()
    seconds = time.perf_counter() - started
    assert _gone(pid)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault(KEY_ENV, "sk-waits-bench-0123456789")
    logging.getLogger("toolemu.llm").setLevel(logging.ERROR)  # the retry and kill warnings are expected here
    retry_mod.BASE_WAIT_S = 0.01
    vllm_server.STOP_TIMEOUT_S = STOP_TIMEOUT_S
    rows = []
    with FakeOpenAIServer([(200, chat_body("hello"))]) as backend:
        for name, (seconds, ms, cap, asked) in RETRY_AFTER_FORMS.items():
            retry_mod.RETRY_AFTER_CAP_S = cap
            runs = [retry_after_once(backend.base_url, seconds, ms) for _ in range(args.repeats)]
            gap = statistics.median(g for g, _ in runs)
            rows.append(
                {
                    "what": name,
                    "asked_s": asked,
                    "median_gap_s": round(gap, 4),
                    "median_overshoot_s": round(gap - asked, 4),
                    "max_gap_s": round(max(g for g, _ in runs), 4),
                    "median_call_s": round(statistics.median(c for _, c in runs), 4),
                    "runs": args.repeats,
                }
            )
    with tempfile.TemporaryDirectory() as tmp:
        stops = [stop_stubborn_server_once(Path(tmp)) for _ in range(args.repeats)]
    median = statistics.median(stops)
    rows.append(
        {
            "what": f"stop a vllm serve that ignores SIGTERM, grace {STOP_TIMEOUT_S}",
            "asked_s": STOP_TIMEOUT_S,
            "median_gap_s": round(median, 4),
            "median_overshoot_s": round(median - STOP_TIMEOUT_S, 4),
            "max_gap_s": round(max(stops), 4),
            "runs": args.repeats,
        }
    )
    for row in rows:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
