"""An inspect-ai task of one sample whose solver is inspect's ReAct agent with the served tools (mcp_server_stdio /
mcp_server_http). The agent holds one MCP connection for the whole sample (a bare `use_tools(...), generate()` opens
one per tool call, and so, against `toolemu mcp serve`, one episode per call); it ends when its model stops calling
tools (`submit=False`: final_answer is the episode's end, not inspect's submit tool). Its model
is inspect's OpenAI provider at OPENAI_BASE_URL (the tests' loopback double of OpenAI's chat completions, so with
`responses_api=False`; inspect's generic `openai-api` provider would mark every tool `strict`, which the OpenAI
provider does not)."""

from __future__ import annotations

import os
from typing import Any

from client_common import done, target
from inspect_ai import Task, eval
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.tool import mcp_server_http, mcp_server_stdio, mcp_tools


def main() -> None:
    where = target()
    server: Any
    if where.transport == "stdio":
        server = mcp_server_stdio(name="toolemu", command=where.command, args=where.args)
    else:
        server = mcp_server_http(name="toolemu", url=where.url, authorization=where.token, timeout=300)
    task = Task(
        dataset=[Sample(input="Find the Northwind emails and read one.")],
        solver=react(tools=[mcp_tools(server)], submit=False),
    )
    model = get_model("openai/fake-model", responses_api=False)
    log = eval(task, model=model, log_dir=os.environ["INSPECT_LOG_DIR"], display="none")[0]
    assert log.status == "success", log.error
    sample = log.samples[0]  # type: ignore[index]
    offered = next(e for e in sample.events if e.event == "model")  # the tools its model was given
    done([t.name for t in offered.tools], sample.output.completion)  # type: ignore[union-attr]


main()
