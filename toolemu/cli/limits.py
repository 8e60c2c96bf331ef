"""Upper bounds on the counts and limits of every command, checked before any work starts.

`--num-trials 100000000` or `--realism-filter 1000000000000` is a typo, not a study: the command would build every
(case, trial) pair in memory, or redraft one observation forever, with no word of it. Each count and limit here has
a bound far above any study's need (ToolEmu's and QuittingAgents' runs use up to 5 trials, 3 replicate judgements
and 15 steps; the realism filter's gains stop after 2 redrafts), named in the message, so the typo is one line and
exit 2. Seconds and dollars are finite numbers (never NaN or infinity) under their own bounds. A bound is a
constant: a study that truly needs more edits it, knowingly. docs/guides/reliability.md lists them all.

This module is read when a command's options are built (for --help too), so it imports nothing heavy; where the
library keeps the same bound (RunConfig, EpisodeSpec, the re-judgements, Usage), tests/test_bounds_hostile.py checks
they agree.
"""

import math
from dataclasses import dataclass

from toolemu.errors import InputError


def _refuse(flag: str, message: str) -> InputError:
    return InputError.single("command line", message, field=flag)


@dataclass(frozen=True)
class Bound:
    """A whole count from `least` (0 or 1) to `most`."""

    flag: str
    most: int
    unit: str  # what one of the count is, for the message
    least: int = 1

    def check(self, value: int | None) -> None:
        """None: not given."""
        if value is None:
            return
        if value < self.least:
            at_least = "0 or more" if self.least == 0 else f"at least {self.least:,}"
            raise _refuse(self.flag, f"expected {at_least}, got {value}")
        if value > self.most:
            raise _refuse(
                self.flag, f"expected at most {self.most:,} {self.unit} (a bound against a typo), got {value:,}"
            )

    @property
    def help(self) -> str:
        """For an option's help: the range."""
        return f"{self.least:,} to {self.most:,}"


@dataclass(frozen=True)
class Amount:
    """A finite number above 0 (or at least 0, `zero_ok`) and at most `most`: seconds, dollars."""

    flag: str
    most: float
    what: str  # "a number of seconds", "a cost in USD"
    zero_ok: bool = False

    def check(self, value: float | None) -> None:
        if value is None:
            return
        if not math.isfinite(value):
            raise _refuse(self.flag, f"expected {self.what}, a finite number, got {value}")
        if value < 0 or (value == 0 and not self.zero_ok):
            low = "0 or more" if self.zero_ok else "more than 0"
            raise _refuse(self.flag, f"expected {self.what}, {low}, got {value:g}")
        if value > self.most:
            raise _refuse(
                self.flag, f"expected {self.what}, at most {self.most:,g} (a bound against a typo), got {value:g}"
            )


DAY_S = 86_400.0

# What multiplies a command's work.
NUM_TRIALS = Bound("--num-trials", 1_000, "trials per case")
BATCH_SIZE = Bound("--batch-size", 1_024, "episodes or judgements side by side")
NUM_EVAL_SAMPLES = Bound("--num-eval-samples", 100, "judgements per trajectory")
NUM_REPLICATES = Bound("--num-replicates", 100, "judgements per trajectory")
SEEDS = Bound("--seeds", 100, "re-runs per failure")
AUDIT_EPISODES = Bound("--episodes", 1_000_000, "episodes")  # judge-audit: episodes audited
AUDIT_MUTANTS = Bound("--mutants", 6, "mutants per episode (one per kind)")  # judge-audit
REJUDGE = Bound("--rejudge", 100, "re-judgements per episode", least=0)
REJUDGE_SAMPLE = Bound("--rejudge-sample", 1_000_000, "episodes")
MAX_ITERATIONS = Bound("--max-iterations", 1_000, "agent steps per episode")
# The episode elements' counts (--max-user-turns, --user-reasks, --realism-filter) are declared on their element
# specs, with their options (toolemu.episode.features).
# noise (toolemu.noise.setup keeps the same bounds for the library)
NOISE_CASES = Bound("--cases", 1_000_000, "cases")
NOISE_TRIALS = Bound("--num-trials", 100, "new agent trials per case", least=0)
NOISE_SEEDS = Bound("--seeds", 100, "new worlds per trial", least=0)
NOISE_SAMPLES = Bound("--num-eval-samples", 100, "judgements per trajectory")
NOISE_RESAMPLES = Bound("--resamples", 10_000, "bootstrap resamples", least=0)
# Which cases: past these the selection is a typo (the largest benchmarks hold a few thousand cases).
TRUNC_NUM = Bound("--trunc-num", 1_000_000, "cases")
START_INDEX = Bound("--start-index", 1_000_000, "cases", least=0)
SHARDS = Bound("--shard", 100_000, "shards")
# generate
PER_DOMAIN = Bound("--per-domain", 100, "names per domain")
CASES_PER_TOOLKIT = Bound("--count", 100, "cases per toolkit")
MIN_TOOLS = Bound("--min-tools", 50, "tools per toolkit")
MAX_TOOLS = Bound("--max-tools", 50, "tools per toolkit")

# The model options (every model-using command).
MAX_TOKENS = Bound("--max-tokens", 1_000_000, "tokens per reply")
MAX_CALLS = Bound("--max-calls", 1_000_000_000, "model calls")
MAX_TOTAL_TOKENS = Bound("--max-total-tokens", 1_000_000_000_000, "tokens")
MAX_COST = Amount("--max-cost", 1_000_000.0, "a cost in USD")
CONFIRM_ABOVE = Amount("--confirm-above", 1_000_000.0, "a cost in USD", zero_ok=True)
TIMEOUT = Amount("--timeout", DAY_S, "a number of seconds")
AGENT_TIMEOUT = Amount("--agent-timeout", DAY_S, "a number of seconds")
VLLM_STARTUP_TIMEOUT = Amount("--vllm-startup-timeout", DAY_S, "a number of seconds")
VLLM_TENSOR_PARALLEL_SIZE = Bound("--vllm-tensor-parallel-size", 1_024, "GPUs")
VLLM_MAX_MODEL_LEN = Bound("--vllm-max-model-len", 100_000_000, "tokens")
VLLM_GPU_MEMORY = Amount("--vllm-gpu-memory-utilization", 1.0, "a fraction of the GPU's memory")
EMULATOR_TEMPERATURE = Amount("--emulator-temperature", 2.0, "a temperature", zero_ok=True)  # the providers' range
# A seed every backend takes as given: 32 bits unsigned (llama.cpp reads -1 as "a random seed").
SEED = Bound("--seed", 2**32 - 1, "(a 32-bit seed)", least=0)

# The model options by LLMSettings field (toolemu.cli.options.llm_settings checks them before LLMSettings does).
MODEL_FIELDS: dict[str, Bound | Amount] = {
    "max_tokens": MAX_TOKENS,
    "max_calls": MAX_CALLS,
    "max_total_tokens": MAX_TOTAL_TOKENS,
    "max_cost": MAX_COST,
    "timeout": TIMEOUT,
    "seed": SEED,
}
VLLM_FIELDS: dict[str, Bound | Amount] = {
    "startup_timeout": VLLM_STARTUP_TIMEOUT,
    "tensor_parallel_size": VLLM_TENSOR_PARALLEL_SIZE,
    "max_model_len": VLLM_MAX_MODEL_LEN,
    "gpu_memory_utilization": VLLM_GPU_MEMORY,
}
