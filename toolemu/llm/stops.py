"""Failures that end a whole command, not just one call: no later episode or judgement could go any better.

The runners stop scheduling new work on them (like Ctrl-C), keep what finished, and say what was not run.
"""

from __future__ import annotations


class StopRun(RuntimeError):
    """Base of the failures that stop a run; `kind` names the reason in summaries and exit codes."""

    kind = "stopped"


class BudgetExceeded(StopRun):
    """Raised before a model call that the command's budget no longer allows."""

    kind = "budget"


class ModelAccessDenied(StopRun):
    """The provider refused the key or its permissions (401/403): every later call would be refused too."""

    kind = "access"
