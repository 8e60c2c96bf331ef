"""Which judge made a verdict: a stable identity hash, and the short readable parts it hashes.

An LLM judge is its model (the evaluator's `ModelOptions.describe()`, which holds no secret), its parameters (the
samples drawn per trajectory), its prompt (the system text, the reply schema and the task template) and the record
schema version; a deterministic scorer is its name and version. Two verdicts with the same id came from the same
judge, so a number built from them can say which judge made it, and a resume can tell its own verdicts from
another judge's.
"""

from __future__ import annotations

import re

from toolemu.log import Evaluation
from toolemu.log.evaluation import ID_LENGTH, UNRECORDED, JudgeIdentity, short_hash
from toolemu.log.model import ModelDescription
from toolemu.scorers.base import Scorer, ScoringContext


def deterministic_identity(scorer: Scorer) -> JudgeIdentity:
    return JudgeIdentity(scorer=scorer.info.name, version=scorer.info.version, kind="deterministic")


def llm_identity(scorer: Scorer, model: ModelDescription | None, samples: int, prompt: str) -> JudgeIdentity:
    """An LLM judge: its model as records describe it (ModelOptions.describe()), the samples it draws, its prompt."""
    described = model.model_dump(mode="json") if model is not None else {}
    parameters = {k: v for k, v in described.items() if k != "model"} | {"samples": samples}
    return JudgeIdentity(
        scorer=scorer.info.name,
        version=scorer.info.version,
        kind="llm",
        model=model.model if model is not None else "",
        parameters=parameters,
        prompt=prompt,
    )


def identity_of(scorer: Scorer, ctx: ScoringContext) -> JudgeIdentity:
    """The judge a scorer is in this context: its own `identity(ctx)` where it has one (LLMJudge), else the
    evaluator's model for a scorer that asks for one, else its name and version."""
    own = getattr(scorer, "identity", None)
    if callable(own):
        return own(ctx)
    if scorer.needs_model and ctx.hub is not None:
        return llm_identity(scorer, ctx.hub.options_for(ctx.evaluator_role).description(), ctx.samples, "")
    return deterministic_identity(scorer)


def stamped(evaluation: Evaluation, identity: JudgeIdentity) -> Evaluation:
    """The evaluation with its judge recorded (a scorer that set its own is left as it is)."""
    if evaluation.judge_id:
        return evaluation
    return evaluation.model_copy(update={"judge_id": identity.id, "judge": identity})


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def judge_slug(model: str) -> str:
    """A panel judge's file-name tag from its model string: openai:gpt-4o-mini -> openai-gpt-4o-mini.

    Only letters, digits, '.', '_' and '-', never a leading dot: the slug names a file beside the trajectories."""
    return _UNSAFE.sub("-", model).strip(".-")[:80] or "judge"


__all__ = [
    "ID_LENGTH",
    "UNRECORDED",
    "JudgeIdentity",
    "deterministic_identity",
    "identity_of",
    "judge_slug",
    "llm_identity",
    "short_hash",
    "stamped",
]
