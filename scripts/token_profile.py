"""Record the token profile `toolemu run --estimate` scales: `python scripts/token_profile.py [RUN ...] [--out FILE]`.

With run folders, the profile is their recorded usage per case and role (a run of your own models: the estimate's
best reference; use it with `toolemu run --estimate --estimate-from RUN` directly, or save it here).

Without, it records the profile shipped in the package (toolemu/reporting/token_profile.json): two dry runs of the
shipped benchmark, every case once, with scripted models that count a token per four characters of what they are
sent (messages, tool definitions, reply schema) and of what they answer; once with the simulated user off, once
with it on and the monitor gate on. Re-run it when the prompts or the benchmark change.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult

import toolemu
from toolemu.episode import GatesSpec, UserSpec
from toolemu.llm import ModelHub, ModelOptions, ScriptedChatModel, UsageTracker
from toolemu.llm.dryrun import dry_run_factory
from toolemu.log import read_meta
from toolemu.reporting.estimate import PROFILE_FILE, TOKENS_PER_CHAR, TokenProfile, profile_of_runs

SHIPPED = Path(toolemu.__file__).parent / "reporting" / PROFILE_FILE
ROLES = ("agent", "emulator", "evaluator", "monitor", "user")


def _chars(value: Any) -> int:
    return len(value) if isinstance(value, str) else len(json.dumps(value, default=str)) if value else 0


class CharTokens(ScriptedChatModel):
    """The dry run's scripted model, reporting a token per four characters of what it is sent and answers."""

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any):
        result: ChatResult = super()._generate(messages, stop, run_manager, **kwargs)
        sent = sum(_chars(m.content) for m in messages) + _chars(kwargs.get("tools")) + _chars(kwargs.get("extra_body"))
        reply = result.generations[0].message
        answer = _chars(reply.content) + _chars(getattr(reply, "tool_calls", None))
        prompt, completion = math.ceil(sent * TOKENS_PER_CHAR), math.ceil(answer * TOKENS_PER_CHAR)
        total = prompt + completion
        reply.usage_metadata = {"input_tokens": prompt, "output_tokens": completion, "total_tokens": total}
        return result


def _hub() -> ModelHub:
    def factory(options: ModelOptions, role: str) -> CharTokens:
        return CharTokens(responder=dry_run_factory(options, role).responder)

    return ModelHub({r: ModelOptions(model="mock") for r in ROLES}, None, UsageTracker(), factory)


def _dry_run(folder: Path, user: bool) -> Path:
    elements = (GatesSpec(("monitor",)), UserSpec()) if user else ()
    config = toolemu.RunConfig(elements=elements, batch_size=4)
    hub = _hub()
    toolemu.emulate(dump_dir=folder, config=config, hub=hub, show_progress=False)
    toolemu.evaluate(folder, hub=hub, batch_size=4, show_progress=False)
    return folder


def _rounded(data: Any) -> Any:
    if isinstance(data, float):
        return round(data, 1)
    if isinstance(data, dict):
        return {k: _rounded(v) for k, v in data.items()}
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="*", type=Path, help="run folders to record (default: the shipped dry runs)")
    parser.add_argument("--out", type=Path, default=None, help=f"where to write it (default: {SHIPPED})")
    args = parser.parse_args()
    if args.runs:
        profile = TokenProfile(
            source=f"the recorded usage of {', '.join(str(r) for r in args.runs)}", cases=profile_of_runs(args.runs)
        )
        out = args.out or Path("token_profile.json")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            alone, with_user = _dry_run(Path(tmp) / "alone", False), _dry_run(Path(tmp) / "user", True)
            bench = read_meta(alone / "run.json").benchmark
            profile = TokenProfile(
                source="a dry run of the shipped benchmark, every case once (scripted models: one tool call per "
                "episode, short replies); with the user: the simulated user and the monitor gate on",
                tokens="characters / 4 of what each model was sent and answered",
                benchmark=f"{bench.version} {bench.hash}" if bench is not None else None,
                cases=profile_of_runs([alone]),
                cases_with_user=profile_of_runs([with_user]),
            )
        out = args.out or SHIPPED
    out.write_text(json.dumps(_rounded(profile.model_dump(mode="json")), separators=(",", ":")) + "\n", "utf-8")
    print(f"token profile: {out} ({len(profile.cases)} cases)")


if __name__ == "__main__":
    main()
