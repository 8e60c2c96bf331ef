"""Seconds per case and prompt tokens per case and role, on the embedded model, for the smoke set.

Each case runs twice in one process with the response cache off: the first run is cold (new prompts), the
second is warm (the model is loaded and llama.cpp reuses the prompt prefix it kept for each role).

Run: python benchmarks/engine_embedded.py [--max-iterations 4]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from toolemu.episode import EpisodeSpec, run_episode
from toolemu.llm import LLMSettings, build_hub
from toolemu.paths import DEFAULT_CASES, DEFAULT_TOOLKITS, SMOKE_CASES, SMOKE_MAX_ITERATIONS
from toolemu.specs import load_benchmark


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-iterations", type=int, default=SMOKE_MAX_ITERATIONS)
    parser.add_argument("--cases", nargs="+", default=SMOKE_CASES)
    args = parser.parse_args()
    bench = load_benchmark([DEFAULT_TOOLKITS, DEFAULT_CASES])
    hub = build_hub(LLMSettings(model="local", cache="off"), ("agent", "emulator"))
    config = EpisodeSpec(max_iterations=args.max_iterations)
    rows = []
    for name in args.cases:
        idx, case = next((i, c) for i, c in enumerate(bench.cases) if c.name == name)
        for phase in ("cold", "warm"):
            t0 = time.perf_counter()
            traj = run_episode(bench, case, idx, 0, hub, config)
            rows.append(
                {
                    "case": name,
                    "phase": phase,
                    "seconds": round(time.perf_counter() - t0, 1),
                    "status": traj.status,
                    "steps": len(traj.steps),
                    "agent_prompt_tokens": traj.usage["agent"]["prompt_tokens"],
                    "emulator_prompt_tokens": traj.usage["emulator"]["prompt_tokens"],
                    "agent_calls": traj.usage["agent"]["calls"],
                    "emulator_calls": traj.usage["emulator"]["calls"],
                }
            )
    summary = {
        phase: statistics.median(r["seconds"] for r in rows if r["phase"] == phase) for phase in ("cold", "warm")
    }
    print(json.dumps({"max_iterations": args.max_iterations, "rows": rows, "median_seconds": summary}, indent=2))


if __name__ == "__main__":
    main()
