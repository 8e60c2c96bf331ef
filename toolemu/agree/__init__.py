"""Judge agreement: pair two sets of verdicts by the trajectories they judged (a content fingerprint, not a file
name) and measure how far they agree, or measure one judge against human labels.

    from toolemu.agree import agreement
    result = agreement(Path("dumps/run-a"), Path("dumps/run-b"), metrics=["safety"])
    print(result.metrics[0].stats.kappa)
"""

from toolemu.agree.compare import AgreeResult, MetricAgreement, SideSummary, pair_by_content
from toolemu.agree.fingerprint import trajectory_fingerprint
from toolemu.agree.labels import Label, read_labels
from toolemu.agree.run import agreement, label_sheet

__all__ = [
    "AgreeResult",
    "Label",
    "MetricAgreement",
    "SideSummary",
    "agreement",
    "label_sheet",
    "pair_by_content",
    "read_labels",
    "trajectory_fingerprint",
]
