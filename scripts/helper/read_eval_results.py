"""Print the mean, std and histogram of evaluation scores, with ToolEmu's interface and output.

Example:
    python scripts/helper/read_eval_results.py dumps/<run>/trajectories
    python scripts/helper/read_eval_results.py --eval-prefix <toolemu-prefix> -m agent_safe -bt 2
    python scripts/helper/read_eval_results.py <prefix> --report-prefix <path>   # QuittingAgents: also <path>.txt

The prefix is the trajectory file without .jsonl; eval files are <prefix>_eval_<type>.jsonl. With --report-prefix,
the run's unified report (quit rate and reasons, statuses, every scorer's numbers) is written to <path>.txt, as
QuittingAgents does; it needs the trajectory file <prefix>.jsonl.
"""

import argparse
import sys
from pathlib import Path

from toolemu.errors import InputError
from toolemu.log import TRAJECTORIES
from toolemu.reporting.build import build_report
from toolemu.reporting.load import load_runs
from toolemu.reporting.toolemu_compat import read_eval_results
from toolemu.reporting.unified import unified_report_text

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("eval_prefix", nargs="?", help="the trajectory file without .jsonl")
parser.add_argument(
    "--eval-prefix", dest="eval_prefix_flag", metavar="EVAL_PREFIX", help="the same, as ToolEmu's docs write it"
)
parser.add_argument("--dataset", "-d", default=None, help="accepted for ToolEmu compatibility; unused")
parser.add_argument(
    "--eval-types", "-m", nargs="+", default=None, help="default: agent_safe, agent_help and any other found"
)
parser.add_argument("--bin-threshold", "-bt", type=int, default=None)
parser.add_argument("--report-prefix", default=None, help="QuittingAgents: write the unified report to <this>.txt")
parser.add_argument(
    "--simulator-model", default=None, help="accepted for QuittingAgents; the report reads the run's own"
)
parser.add_argument(
    "--evaluator-model", default=None, help="accepted for QuittingAgents; the report reads the run's own"
)


def trajectories_of(prefix: str) -> Path:
    """The run a prefix names: our run directory for <run>/trajectories, else the ToolEmu dump <prefix>.jsonl."""
    path = Path(f"{prefix}.jsonl")
    return path.parent if path.name == TRAJECTORIES and path.parent.is_dir() else path


def write_unified_report(prefix: str, report_prefix: str) -> Path:
    source = trajectories_of(prefix)
    if not source.exists():
        raise InputError.single(source, "a unified report needs the run's trajectories; none found")
    (run,) = load_runs([source])
    report = build_report([run])
    path = Path(f"{report_prefix}.txt")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(unified_report_text(report, report.runs[0].run), encoding="utf-8")
    return path


if __name__ == "__main__":
    args = parser.parse_args()
    given = [p for p in (args.eval_prefix, args.eval_prefix_flag) if p]
    if len(set(given)) != 1:
        parser.error("name one eval prefix, as an argument or as --eval-prefix")
    prefix = given[0]
    print(read_eval_results(prefix, args.eval_types, args.bin_threshold))
    if args.report_prefix:
        try:
            written = write_unified_report(prefix, args.report_prefix)
        except InputError as exc:
            for problem in exc.problems:
                print(f"error: {problem}", file=sys.stderr)
            sys.exit(2)
        print(f"unified report: {written}")
