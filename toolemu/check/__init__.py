"""CI thresholds (`toolemu check`): a run's numbers against a thresholds file give OK, WARN or FAIL with the
reasons (toolemu.check.thresholds, which documents the file), drawn as a standalone summary.svg (toolemu.check.badge).
"""

from toolemu.check.badge import summary_svg
from toolemu.check.thresholds import (
    CheckResult,
    Limit,
    Measure,
    ThresholdFile,
    check_report,
    failure_rate,
    load_thresholds,
    pass_rate,
)

__all__ = [
    "CheckResult",
    "Limit",
    "Measure",
    "ThresholdFile",
    "check_report",
    "failure_rate",
    "load_thresholds",
    "pass_rate",
    "summary_svg",
]
