"""`toolemu judge-audit` against judges of known character, on the whole benchmark: the rates each must have by
construction, and what the audit costs in model calls per audited episode.

1. A dry run of every shipped case (agent, emulator and judges the scripted `mock`), judged by safety and attack.
2. Audited by each double of tests/audit_doubles.py (lazy, keyword, alarmist, coin) and by the run's own mock judge,
   with mutants written from the tools' specs; then by the mock with --emulate (the mock emulator answers each
   planted call).
3. With --strong N: a run of N cases whose every role is the loopback strong-model double (tests/doubles), audited by
   its own judge through the double's emulator.

Run: python benchmarks/judge_audit_doubles.py [--strong 40] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

import audit_doubles  # noqa: E402, F401 - registers auditjudge:<name>
from doubles import OpenAIDouble  # noqa: E402

from toolemu import api  # noqa: E402
from toolemu.audit.run import judge_audit  # noqa: E402
from toolemu.llm import LLMSettings  # noqa: E402
from toolemu.log.judge_audit import JudgeAuditFile  # noqa: E402
from toolemu.runner import RunConfig  # noqa: E402

MOCK = LLMSettings(model="mock")


def rates(name: str, audit: JudgeAuditFile, seconds: float) -> list[dict[str, Any]]:
    rows = []
    for j in audit.judges:
        rows.append(
            {
                "judge": name,
                "scorer": j.scorer,
                "catch": [j.catch.count, j.catch.of, j.catch.rate],
                "false_alarm": [j.false_alarm.count, j.false_alarm.of, j.false_alarm.rate],
                "kinds": {k.kind: [k.caught.count, k.caught.of] for k in j.kinds if k.caught.of},
                "blind": j.blind,
                "episodes": audit.selection.audited,
                "mutants": len(audit.mutants),
                "calls": audit.calls,
                "calls_per_episode": audit.calls_per_episode,
                "seconds": round(seconds, 2),
            }
        )
    return rows


def timed(run: Path, **kwargs: Any) -> tuple[JudgeAuditFile, float]:
    start = time.perf_counter()
    audit = judge_audit(run, **kwargs)
    return audit, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strong", type=int, default=0, help="cases for the strong-double run (0: none)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "dry"
        api.run(dump_dir=run, settings=MOCK, scorers=["safety", "attack"], show_progress=False)
        for name in ("lazy", "keyword", "alarmist", "coin"):
            rows += rates(name, *timed(run, settings=MOCK, judges=[f"auditjudge:{name}"]))
        rows += rates("mock (the run's)", *timed(run, settings=MOCK))
        rows += rates("mock, --emulate", *timed(run, settings=MOCK, emulate=True))
        if args.strong:
            double = OpenAIDouble(refusal_rate=0.0).start()
            os.environ.setdefault("OPENAI_API_KEY", "dummy-key-for-the-double")
            try:
                strong = LLMSettings(model="openai:double", base_url=double.base_url, cache="off")
                config = RunConfig(trunc_num=args.strong, shuffle=True, seed=3, batch_size=4)
                srun = Path(tmp) / "strong"
                scorers = ["safety", "attack"]
                api.run(dump_dir=srun, settings=strong, config=config, scorers=scorers, show_progress=False)
                rows += rates("strong double, --emulate", *timed(srun, settings=strong, emulate=True, batch_size=4))
            finally:
                double.stop()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        c, f = r["catch"], r["false_alarm"]
        kinds = ", ".join(f"{k} {n}/{of}" for k, (n, of) in r["kinds"].items())
        print(
            f"{r['judge']:<26} {r['scorer']:<7} catch {c[0]}/{c[1]}  false alarm {f[0]}/{f[1]}  blind {r['blind']}  "
            f"[{kinds}]  episodes {r['episodes']} mutants {r['mutants']} calls {r['calls']} "
            f"per episode {r['calls_per_episode']:.2f}  {r['seconds']} s"
        )


if __name__ == "__main__":
    main()
