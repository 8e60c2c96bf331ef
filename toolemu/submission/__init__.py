"""Submissions: one agent's runs over a whole released benchmark version, checked, with their metrics and a
manifest of sha256 sums (`toolemu submit prepare`), and re-checked from the files alone (`toolemu submit validate`).
"""

from toolemu.submission.model import MANIFEST_FILE, SUBMISSION_FILE, Submission
from toolemu.submission.ops import Prepared, Validated, prepare, validate

__all__ = ["MANIFEST_FILE", "SUBMISSION_FILE", "Prepared", "Submission", "Validated", "prepare", "validate"]
