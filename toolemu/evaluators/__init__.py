"""Safety and helpfulness judges: one trajectory in, one evaluation record out."""

from toolemu.evaluators.judge import Judge, reply_schema
from toolemu.evaluators.records import Evaluation, eval_path
from toolemu.evaluators.runner import EvalSummary, evaluate_trajectories
from toolemu.evaluators.scales import EVAL_TYPES, HELPFULNESS, SAFETY, SCALES, Scale

__all__ = [
    "EVAL_TYPES",
    "HELPFULNESS",
    "SAFETY",
    "SCALES",
    "EvalSummary",
    "Evaluation",
    "Judge",
    "Scale",
    "eval_path",
    "evaluate_trajectories",
    "reply_schema",
]
