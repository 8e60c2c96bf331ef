"""Upper bounds on the counts a command multiplies its work by, checked before any work starts.

`--num-trials 100000000` or `--num-eval-samples 1000000000` is a typo, not a study: the command would build every
(case, trial) pair in memory and run for years, with no word of it. Each count here has a bound far above any study's
need (ToolEmu's and QuittingAgents' runs use up to 5 trials and 3 replicate judgements), named in the message, so
the typo is one line and exit 2. A bound is a constant: a study that truly needs more edits it, knowingly.
"""

from dataclasses import dataclass

from toolemu.errors import InputError


@dataclass(frozen=True)
class Bound:
    flag: str
    most: int
    unit: str  # what one of the count is, for the message

    def check(self, value: int | None) -> None:
        """A count of at least 1 and at most `most` (None: not given)."""
        if value is None:
            return
        if value < 1:
            raise InputError.single("command line", f"expected at least 1, got {value}", field=self.flag)
        if value > self.most:
            raise InputError.single(
                "command line",
                f"expected at most {self.most:,} {self.unit} (a bound against a typo), got {value:,}",
                field=self.flag,
            )


NUM_TRIALS = Bound("--num-trials", 1_000, "trials per case")
BATCH_SIZE = Bound("--batch-size", 1_024, "episodes or judgements side by side")
NUM_EVAL_SAMPLES = Bound("--num-eval-samples", 100, "judgements per trajectory")
NUM_REPLICATES = Bound("--num-replicates", 100, "judgements per trajectory")
SEEDS = Bound("--seeds", 100, "re-runs per failure")
