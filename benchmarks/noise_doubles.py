"""`toolemu noise` against doubles of known character (tests/noise_doubles.py): the shares each part must have by
construction against the recovered ones with their CIs, how often the CIs hold the truth over many seeds, and what
the command costs in model calls per case and in seconds.

1. For each seed: a run of CASES cases of the doubles' game (one trial each, judged once by safety), then `toolemu
   noise` with 2 new trials, 2 new worlds and 2 judgements (720 verdicts at 40 cases), RESAMPLES bootstrap fits.
2. A dry run of --dry-cases shipped cases (the scripted mock: its verdicts never vary), measured the same way.
3. With --strong N: a run of N shipped cases whose every role is the loopback strong-model double (tests/doubles,
   OpenAI's API, native tool calls), judged by safety and helpfulness, then measured with 1 new trial, 1 new world
   and 2 judgements.

Run: python benchmarks/noise_doubles.py [--seeds 10] [--cases 40] [--resamples 100] [--strong 10] [--json]
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

from doubles import OpenAIDouble  # noqa: E402
from noise_doubles import Doubles, known_shares, known_variances, write_bench  # noqa: E402

import toolemu  # noqa: E402
from toolemu import api  # noqa: E402
from toolemu.llm import LLMSettings  # noqa: E402
from toolemu.noise.run import measure_noise  # noqa: E402
from toolemu.runner import RunConfig  # noqa: E402


def one_seed(folder: Path, seed: int, cases: int, resamples: int) -> dict[str, Any]:
    doubles = Doubles(seed)
    kits, case_file = write_bench(folder / "bench", cases)
    run = folder / "run"
    toolemu.emulate(dump_dir=run, config=RunConfig(agent_format="react"), cases=[case_file], toolkits=[kits],
                    hub=doubles.hub(), show_progress=False)  # fmt: skip
    toolemu.evaluate(run, scorers=["safety"], toolkits=[kits], hub=doubles.hub(), show_progress=False)
    start = time.perf_counter()
    summary = measure_noise(run, settings=LLMSettings(cache="off"), trials=2, seeds=2, samples=2,
                            resamples=resamples, toolkits=[kits], chat_factory=doubles.factory())  # fmt: skip
    seconds = time.perf_counter() - start
    metric = summary.metric("safety")
    assert metric is not None
    truth, sds = known_shares(), known_variances()
    parts = {}
    for c in metric.components:
        [part] = c.parts
        low, high = c.share_ci or (float("nan"), float("nan"))
        parts[part] = {
            "known": round(truth[part], 3),
            "share": round(c.share or 0.0, 3),
            "ci": [round(low, 3), round(high, 3)],
            "held": low <= truth[part] <= high,
            "known_sd": round(sds[part] ** 0.5, 3),
            "sd": round(c.sd, 3),
            "sd_ci": [round(x, 3) for x in c.sd_ci] if c.sd_ci else None,
        }
    return {
        "seed": seed,
        "seconds": round(seconds, 1),
        "calls_per_case": summary.cost.calls_per_case,
        "roles": {r.role: r.calls for r in summary.cost.roles},
        "observations": metric.observations,
        "parts": parts,
    }


def dry_run(folder: Path, cases: int, resamples: int) -> dict[str, Any]:
    mock = LLMSettings(model="mock")
    run = folder / "dry"
    api.run(dump_dir=run, settings=mock, config=RunConfig(trunc_num=cases), show_progress=False)
    start = time.perf_counter()
    summary = measure_noise(run, settings=mock, trials=2, seeds=2, samples=2, resamples=resamples)
    return {
        "cases": cases,
        "seconds": round(time.perf_counter() - start, 1),
        "calls_per_case": summary.cost.calls_per_case,
        "roles": {r.role: r.calls for r in summary.cost.roles},
        "metrics": {m.scorer: m.degenerate or "split" for m in summary.metrics},
    }


def strong(folder: Path, cases: int, resamples: int) -> dict[str, Any]:
    with OpenAIDouble() as double:
        os.environ["OPENAI_API_KEY"] = "dummy-key-for-the-double"
        settings = LLMSettings(model="openai:double", base_url=double.base_url, api_key_env="OPENAI_API_KEY",
                               cache="off")  # fmt: skip
        run = folder / "strong"
        config = RunConfig(agent_format="tools", trunc_num=cases, shuffle=True, seed=3)
        api.run(dump_dir=run, settings=settings, config=config, scorers=["safety", "helpfulness"], show_progress=False)
        before = len(double.log)
        start = time.perf_counter()
        summary = measure_noise(run, settings=settings, trials=1, seeds=1, samples=2, resamples=resamples)
        asked = len(double.log) - before
    return {
        "cases": cases,
        "seconds": round(time.perf_counter() - start, 1),
        "exchanges": asked,
        "calls": summary.cost.calls,
        "calls_per_case": summary.cost.calls_per_case,
        "roles": {r.role: r.calls for r in summary.cost.roles},
        "metrics": {
            m.scorer: (m.degenerate or "split", [(c.name, round(c.share or 0, 3)) for c in m.components])
            for m in summary.metrics
        },  # fmt: skip
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--resamples", type=int, default=100)
    parser.add_argument("--dry-cases", type=int, default=10)
    parser.add_argument("--strong", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [one_seed(Path(tmp) / f"s{s}", s, args.cases, args.resamples) for s in range(args.seeds)]
        dry = dry_run(Path(tmp), args.dry_cases, args.resamples)
        loopback = strong(Path(tmp), args.strong, args.resamples) if args.strong else None
    if args.json:
        print(json.dumps({"seeds": rows, "dry": dry, "strong": loopback}, indent=1))
        return
    for row in rows:
        cells = ", ".join(
            f"{p} {v['share']:.3f} [{v['ci'][0]:.3f}, {v['ci'][1]:.3f}]{'' if v['held'] else ' MISSED'}"
            for p, v in row["parts"].items()
        )
        print(f"seed {row['seed']}: {cells}; {row['calls_per_case']} calls per case; {row['seconds']} s")
    for part in ("agent", "emulator", "judge"):
        held = sum(r["parts"][part]["held"] for r in rows)
        print(f"{part}: the CI held the known share {known_shares()[part]:.3f} in {held} of {len(rows)} seeds")
    print(f"dry run: {dry}")
    if loopback:
        print(f"strong double: {loopback}")


if __name__ == "__main__":
    main()
