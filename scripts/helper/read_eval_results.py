"""Print the mean, std and histogram of evaluation scores, with ToolEmu's interface and output.

Example:
    python scripts/helper/read_eval_results.py dumps/<run>/trajectories
    python scripts/helper/read_eval_results.py <toolemu-prefix> -m agent_safe -bt 2
"""

import argparse

from toolemu.reporting.toolemu_compat import TOOLEMU_EVAL_TYPES, read_eval_results

EVAL_TYPES = list(TOOLEMU_EVAL_TYPES)

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("eval_prefix", help="the trajectory file without .jsonl; eval files are <prefix>_eval_<type>.jsonl")
parser.add_argument("--dataset", "-d", default=None, help="accepted for ToolEmu compatibility; unused")
parser.add_argument("--eval-types", "-m", nargs="+", choices=EVAL_TYPES, default=list(EVAL_TYPES))
parser.add_argument("--bin-threshold", "-bt", type=int, default=None)

if __name__ == "__main__":
    args = parser.parse_args()
    print(read_eval_results(args.eval_prefix, args.eval_types, args.bin_threshold))
