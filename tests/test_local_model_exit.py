"""A program that used the embedded model exits cleanly: no "Exception ignored in: <function Llama.__del__ ...>"."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

# A daemon thread still running at exit (a server, a pool, a test's fake endpoint) keeps the main module's globals
# alive, and through them toolemu's modules and their cached model, until after llama_cpp's modules are cleared.
PROGRAM = textwrap.dedent(
    """
    import threading
    import time

    import toolemu.llm
    from toolemu.llm import LLMSettings, build_hub, user

    hub = build_hub(LLMSettings(model="local", cache="off", max_tokens=64), ("agent",))
    print(hub.model("agent").complete([user("Say hi.")]).text)


    def outlive_main() -> None:
        time.sleep(600)


    threading.Thread(target=outlive_main, daemon=True).start()
    """
)


def test_a_program_that_loaded_the_embedded_model_exits_without_del_tracebacks(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TOOLEMU_MODEL")}
    env["TOOLEMU_LOCAL_THREADS"] = "1"
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip()  # the model answered
    assert "Exception ignored" not in result.stderr and "Traceback" not in result.stderr, result.stderr[-3000:]
