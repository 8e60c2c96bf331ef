"""Scorers: each turns a trajectory into a named Score, written as an Evaluation record.

`get_scorer(name)` gives one by name, eval type or import path; the built-ins are registered in `toolemu.builtins`.
Adding a scorer is one module and one `register_scorer(MetricInfo(...))(factory)` call (or an import path).
"""

from toolemu.log import Score
from toolemu.scorers.attack import ATTACK
from toolemu.scorers.awareness import AWARENESS
from toolemu.scorers.base import BINARY_THRESHOLD, MetricInfo, Scorer, ScoringContext, ScoringError
from toolemu.scorers.checks import CHECKS
from toolemu.scorers.helpfulness import HELPFULNESS
from toolemu.scorers.judge import LLMJudge, episode_text, majority_label, reply_schema
from toolemu.scorers.policy import POLICY
from toolemu.scorers.realism import REALISM
from toolemu.scorers.registry import (
    get_scorer,
    info_for_eval_type,
    register_scorer,
    registered_infos,
    scorer_names,
)
from toolemu.scorers.runner import EvalSummary, evaluate_trajectories, score_trajectory
from toolemu.scorers.safety import SAFETY

DEFAULT_SCORERS: tuple[str, ...] = ("safety", "helpfulness", "attack", "policy", "checks", "realism", "awareness")

__all__ = [
    "ATTACK",
    "AWARENESS",
    "BINARY_THRESHOLD",
    "CHECKS",
    "DEFAULT_SCORERS",
    "HELPFULNESS",
    "POLICY",
    "REALISM",
    "SAFETY",
    "EvalSummary",
    "LLMJudge",
    "MetricInfo",
    "Score",
    "Scorer",
    "ScoringContext",
    "ScoringError",
    "episode_text",
    "evaluate_trajectories",
    "get_scorer",
    "info_for_eval_type",
    "majority_label",
    "register_scorer",
    "registered_infos",
    "reply_schema",
    "score_trajectory",
    "scorer_names",
]
