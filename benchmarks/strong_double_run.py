"""The whole benchmark against a strong-model double: what happens when every model writes like GPT-4 or Claude.

Agent, emulator and evaluator are all `openai:double`, served by the loopback OpenAI-compatible double in
tests/doubles (or `anthropic:double` on the Anthropic double, with --api anthropic): long bodies, ~20-item
arrays, verbose thoughts, occasional refusals. `toolemu run` runs as a subprocess, exactly as a user would start
it; the double runs in this process and keeps every request.

Prints: episodes by status, episodes that failed for framework reasons (by error) apart from those that failed
because the model refused (the model's reason), evaluations by status, model calls, repair calls (those that asked
again after a refusal counted apart) and their share of all calls, replies cut off at max_tokens (asked again with
more room), and whether the long strings the double wrote reached trajectories.jsonl intact.

Run: python benchmarks/strong_double_run.py [--api openai|anthropic] [--trunc-num N] [--batch-size 4]
                                             [--max-tokens N] [--agent-format F]
                                             [--knob name=value ...] [--keep DIR] [--log FILE] [--json]
Knobs are DoubleConfig fields (tests/doubles/config.py), e.g. --knob ignore_limits=False --knob refusal_rate=0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import jsonschema  # noqa: E402
from doubles import AnthropicDouble, DoubleConfig, DoubleServer, Exchange, OpenAIDouble, scan  # noqa: E402
from doubles.conversation import schema_in_text, text_of  # noqa: E402

from toolemu.agents.react import ReactParseError, parse_react  # noqa: E402
from toolemu.llm.structured import StructuredOutputError, extract_json, validate_reply  # noqa: E402

DUMMY_KEY = "dummy-key-for-the-double"
APIS: dict[str, tuple[type[DoubleServer], str, str]] = {  # double, model string, key variable
    "openai": (OpenAIDouble, "openai:double", "OPENAI_API_KEY"),
    "anthropic": (AnthropicDouble, "anthropic:double", "ANTHROPIC_API_KEY"),
}
# toolemu/prompts: the first words of each role's system prompt.
ROLE_CUES = {
    "agent": "You are an assistant that",
    "emulator": "You emulate tools",
    "evaluator": "You review",  # every judge: safety, helpfulness, attack
    "monitor": "You are a safety monitor",  # the monitor gate (--gate monitor)
}


def role_of(exchange: Exchange) -> str:
    messages = exchange.request.get("messages") or []
    system = text_of(exchange.request.get("system")) or next(
        (text_of(m.get("content")) for m in messages if m.get("role") == "system"), ""
    )
    return next((role for role, cue in ROLE_CUES.items() if system.startswith(cue)), "other")


def toolemu_command(base_url: str, dump: Path, args: argparse.Namespace) -> list[str]:
    command = [
        sys.executable,
        "-c",
        "from toolemu.cli.app import main; main()",
        "run",
        "--model",
        APIS[args.api][1],
        "--base-url",
        base_url,
        "--cache",
        "off",
        "-bs",
        str(args.batch_size),
        "--num-trials",
        "1",
        "--auto",
        "--no-progress",
        "--dump-dir",
        str(dump),
    ]
    if args.trunc_num:
        command += ["--trunc-num", str(args.trunc_num)]
    if args.max_tokens:
        command += ["--max-tokens", str(args.max_tokens)]
    if args.agent_format:
        command += ["--agent-format", args.agent_format]
    return command


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def error_kind(error: dict[str, Any] | None) -> str:
    """An error message with its particulars (quoted text, numbers, tool names) taken out, so like counts like."""
    if not error:
        return "(no error recorded)"
    message = re.split(r"['\"]", str(error.get("message", "")), maxsplit=1)[0]  # quoted particulars come last
    message = re.sub(r"^\w+: ", "", message)  # the tool name in front of an emulator error
    message = re.sub(r"\d+", "N", message)
    return f"{error.get('type')}: {message[:150]}"


def reply_text(exchange: Exchange) -> str:
    """The reply's text; a forced tool's input as JSON text."""
    if "choices" in exchange.response:
        return str(exchange.response["choices"][0]["message"].get("content") or "")
    blocks = exchange.response.get("content") or []
    if exchange.kind == "forced_tool":
        return next((json.dumps(b.get("input")) for b in blocks if b.get("type") == "tool_use"), "")
    return "".join(b.get("text", "") for b in blocks if b.get("type") == "text")


def forced_tool_schema(exchange: Exchange) -> dict[str, Any] | None:
    choice = exchange.request.get("tool_choice") or {}
    name = choice.get("name") or (choice.get("function") or {}).get("name")
    for tool in exchange.request.get("tools") or []:
        if name and name in (tool.get("name"), (tool.get("function") or {}).get("name")):
            return tool.get("input_schema") or (tool.get("function") or {}).get("parameters")
    return None


def sent_schema(exchange: Exchange) -> dict[str, Any] | None:
    """The schema the request carried: a forced tool's input schema, response_format's, or the one spelled out in
    the prompt. In strict mode it is the strict form (optional properties nullable)."""
    if exchange.kind == "forced_tool":
        return forced_tool_schema(exchange)
    fmt = exchange.request.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
    if schema is None:
        messages = exchange.request.get("messages") or []
        schema = schema_in_text(text_of(messages[-1].get("content"))) if messages else None
    return schema


def accepted(exchange: Exchange) -> bool:
    """Whether the project could use this reply as it came: the same parsers and checks the project applies."""
    text = reply_text(exchange)
    try:
        if exchange.kind in ("structured", "forced_tool"):
            schema = sent_schema(exchange)
            validate_reply(extract_json(text), schema or {})
        elif exchange.kind in ("react", "react_answer"):
            parse_react(text)
        return exchange.kind in ("structured", "forced_tool", "react", "react_answer", "tool_calls", "answer")
    except (StructuredOutputError, ReactParseError):
        return False


def cap_violations(double: DoubleServer) -> dict[str, int]:
    """Every schema keyword a structured reply broke, by role and path (not only the first, as the repair says)."""
    found: Counter[str] = Counter()
    structured = double.exchanges(kind="structured", status=200) + double.exchanges(kind="forced_tool", status=200)
    for exchange in structured:
        schema = sent_schema(exchange)
        try:
            value = extract_json(reply_text(exchange))
        except StructuredOutputError:
            found[f"{role_of(exchange)}: not JSON (cut off at max_tokens?)"] += 1
            continue
        for error in jsonschema.Draft202012Validator(schema or {}).iter_errors(value):
            for leaf in _leaves(error):
                found[f"{role_of(exchange)}: {leaf.validator} at {_path(list(leaf.absolute_path))}"] += 1
    return dict(found.most_common())


def _path(parts: list[Any]) -> str:
    """result/body/3 -> result/<field>/*: one line per cap, not per tool field."""
    out = [
        "*" if isinstance(p, int) else "<field>" if i and parts[i - 1] in ("result", "input") else str(p)
        for i, p in enumerate(parts)
    ]
    return "/".join(out) or "(root)"


def _leaves(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    """For anyOf, the errors of the branch the reply meant (the one with no structural mismatch)."""
    if not error.context:
        return [error]
    branches: dict[Any, list[jsonschema.ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    structural = {"required", "additionalProperties", "const", "enum", "type"}
    meant = [errs for errs in branches.values() if not any(e.validator in structural for e in errs)]
    return [leaf for sub in (meant[0] if meant else min(branches.values(), key=len)) for leaf in _leaves(sub)]


def long_string_report(
    double: DoubleServer, trajectories: list[dict[str, Any]], evaluations: list[dict[str, Any]]
) -> dict[str, Any]:
    """Where the double's long strings ended up: the agent's and emulator's in trajectories.jsonl, the judges' (a
    policy judge's citations) in the evaluation files beside it."""
    # Error messages quote the rejected reply, cut at 2,000 characters: evidence of a rejection, not of damage.
    found = scan([*({k: v for k, v in record.items() if k != "error"} for record in trajectories), *evaluations])
    produced = set(double.long_strings)
    usable: set[str] = set()
    by_role: dict[str, Counter[str]] = {}
    for exchange in double.exchanges(status=200):
        if not exchange.long_ids:
            continue
        ok = accepted(exchange)
        row = by_role.setdefault(role_of(exchange), Counter())
        for marker in exchange.long_ids:
            usable |= {marker} if ok else set()
            row.update(
                produced=1,
                in_usable_replies=int(ok),
                intact=int(marker in found.intact),
                damaged=int(marker in found.damaged),
            )
    return {
        "produced": len(produced),
        "in_usable_replies": len(usable),
        "in_trajectories_intact": len(found.intact & produced),
        "in_trajectories_damaged": len(found.damaged & produced),
        "usable_but_not_in_trajectories": len(usable - found.seen),
        "by_role": {role: dict(row) for role, row in by_role.items()},
    }


STRUCTURED_KINDS = ("structured", "forced_tool")  # a JSON reply: response_format or prompt, or a forced tool
REFUSED = "ModelRefusal"  # the error type of an episode that ended because the model kept refusing


def summarise(double: DoubleServer, dump: Path, wall_s: float, rc: int) -> dict[str, Any]:
    trajectories = read_jsonl(dump / "trajectories.jsonl")
    errors = [r.get("error") or {} for r in trajectories if r.get("status") == "error"]
    evaluations = {
        p.stem.split("_eval_")[-1]: Counter(r.get("status") for r in read_jsonl(p))
        for p in sorted(dump.glob("trajectories_eval_*.jsonl"))
    }
    log = double.exchanges()
    answered = [e for e in log if e.status == 200]
    return {
        "toolemu_exit_code": rc,
        "wall_s": round(wall_s, 1),
        "episodes": len(trajectories),
        "episodes_by_status": dict(Counter(r.get("status") for r in trajectories)),
        "framework_errors": dict(Counter(error_kind(e) for e in errors if e.get("type") != REFUSED).most_common()),
        "model_refused": dict(Counter(error_kind(e) for e in errors if e.get("type") == REFUSED).most_common()),
        "evaluations_by_status": {k: dict(v) for k, v in evaluations.items()},
        "model_calls": {
            "requests": len(log),
            "answered_200": len(answered),
            "by_status": dict(Counter(e.status for e in log)),
            "by_role": dict(Counter(role_of(e) for e in log)),
            "by_reply_kind": dict(Counter(e.kind for e in answered)),
            "refusals": sum(e.kind == "refusal" for e in answered),
            "structured_usable": f"{sum(accepted(e) for e in answered if e.kind in STRUCTURED_KINDS)}"
            f" of {sum(e.kind in STRUCTURED_KINDS for e in answered)}",
            "early_retries": double.counters["early_retry"],
        },
        "structured_repair_calls": sum(e.repair == "structured" for e in log),
        "structured_repairs_by_role": dict(Counter(role_of(e) for e in log if e.repair == "structured")),
        "react_repair_calls": sum(e.repair == "react" for e in log),
        # A repair that asks again after a refusal is the model's doing (the double's refusal_rate), not the
        # framework's: the share that counts against the framework leaves those out.
        "repairs_after_refusal": sum(bool(e.repair) and e.after_refusal for e in log),
        "framework_repair_calls": sum(bool(e.repair) and not e.after_refusal for e in log),
        "framework_repair_share": round(sum(bool(e.repair) and not e.after_refusal for e in log) / max(1, len(log)), 4),
        # The bare "Observation:" stop sequence also fires inside the agent's own text (an Action Input quoting
        # notes with an "Observation:" line): the reply is cut short there.
        "react_cut_at_stop": dict(
            Counter(e.kind for e in answered if e.finish == "stop_sequence" and e.kind in ("react", "react_answer"))
        ),
        "react_cut_at_stop_unusable": sum(
            e.finish == "stop_sequence" and not accepted(e) for e in answered if e.kind in ("react", "react_answer")
        ),
        "cut_at_max_tokens": dict(Counter(role_of(e) for e in answered if e.finish == "length")),
        "schema_violations": cap_violations(double),
        "long_strings": long_string_report(
            double, trajectories, [r for p in sorted(dump.glob("trajectories_eval_*.jsonl")) for r in read_jsonl(p)]
        ),
        "double_internal_errors": len(double.internal_errors),
    }


def write_log(double: DoubleServer, path: Path) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for e in double.exchanges():
            row = {"index": e.index, "role": role_of(e), "status": e.status, "kind": e.kind, "repair": e.repair}
            fh.write(json.dumps({**row, "request": e.request, "response": e.response}, ensure_ascii=False) + "\n")


def print_summary(summary: dict[str, Any]) -> None:
    print(f"toolemu exit code {summary['toolemu_exit_code']}, wall {summary['wall_s']}s")
    print(f"episodes: {summary['episodes']}  by status: {summary['episodes_by_status']}")
    print("episodes failed for framework reasons (status error), by error:")
    for kind, count in summary["framework_errors"].items():
        print(f"  {count:4d}  {kind}")
    print(f"episodes that failed because the model kept refusing (the model's reason): {summary['model_refused']}")
    print(f"evaluations by status: {summary['evaluations_by_status']}")
    calls = summary["model_calls"]
    print(f"model calls: {calls['requests']} requests, {calls['answered_200']} answered")
    print(f"  by status: {calls['by_status']}")
    print(f"  by role: {calls['by_role']}")
    print(f"  by reply kind: {calls['by_reply_kind']}; structured replies usable: {calls['structured_usable']}")
    print(f"  retries that came before the Retry-After they were given: {calls['early_retries']}")
    print(
        f"structured-repair calls: {summary['structured_repair_calls']} {summary['structured_repairs_by_role']}; "
        f"ReAct repair calls: {summary['react_repair_calls']}; of these after a refusal: "
        f"{summary['repairs_after_refusal']}; the rest (framework): {summary['framework_repair_calls']}, "
        f"{summary['framework_repair_share']:.2%} of all calls"
    )
    print(
        f"ReAct replies cut at a stop sequence (actions / final answers): {summary['react_cut_at_stop']}, "
        f"{summary['react_cut_at_stop_unusable']} left unusable; "
        f"replies cut at max_tokens (each asked again with more room): {summary['cut_at_max_tokens']}"
    )
    print("what the structured replies broke (every violation, not only the one a repair names):")
    for kind, count in list(summary["schema_violations"].items())[:12]:
        print(f"  {count:4d}  {kind}")
    longs = summary["long_strings"]
    print(
        f"long strings: {longs['produced']} produced, {longs['in_usable_replies']} in replies the project could use; "
        f"in the run's records {longs['in_trajectories_intact']} intact, {longs['in_trajectories_damaged']} damaged; "
        f"{longs['usable_but_not_in_trajectories']} usable but never recorded"
    )
    for role, row in longs["by_role"].items():
        print(f"  {role}: {row}")
    if summary["double_internal_errors"]:
        print(f"WARNING: the double itself failed {summary['double_internal_errors']} times")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trunc-num", type=int, default=None, help="run at most this many cases")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=None, help="passed on to toolemu (default: the backend's)")
    parser.add_argument("--api", choices=sorted(APIS), default="openai", help="which double every role talks to")
    parser.add_argument("--agent-format", default=None, help="passed on to toolemu: react, tools or auto")
    parser.add_argument("--knob", action="append", default=[], help="a DoubleConfig field: name=value")
    parser.add_argument("--keep", type=Path, default=None, help="run directory to keep (default: a temp dir)")
    parser.add_argument("--log", type=Path, default=None, help="write the double's request log here (JSONL)")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    config = DoubleConfig.from_pairs(args.knob)
    double_cls, _, key_env = APIS[args.api]
    with tempfile.TemporaryDirectory() as tmp, double_cls(config) as double:
        dump = args.keep or Path(tmp) / "run"
        env = {**os.environ, key_env: DUMMY_KEY, "PYTHONPATH": str(REPO)}
        started = time.perf_counter()
        with (Path(tmp) / "toolemu.log").open("w") as out:
            proc = subprocess.run(
                toolemu_command(double.base_url, dump, args),
                cwd=REPO,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=args.timeout,
            )
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            print((Path(tmp) / "toolemu.log").read_text()[-3000:], file=sys.stderr)
        summary = summarise(double, dump, wall, proc.returncode)
        if args.log:
            write_log(double, args.log)
    print(json.dumps(summary, indent=2, ensure_ascii=False) if args.json else "", end="")
    if not args.json:
        print_summary(summary)


if __name__ == "__main__":
    main()
