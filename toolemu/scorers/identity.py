"""Which judge made a verdict: a stable identity hash, and the short readable parts it hashes.

An LLM judge is its model (the evaluator's `ModelOptions.describe()`, which holds no secret), its parameters (the
samples drawn per trajectory), its prompt (the system text, the reply schema and the task template) and the record
schema version; a deterministic scorer is its name and version. Two verdicts with the same id came from the same
judge, so a number built from them can say which judge made it, and a resume can tell its own verdicts from
another judge's.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from toolemu import SCHEMA_VERSION
from toolemu.log import Evaluation
from toolemu.scorers.base import Scorer, ScoringContext

ID_LENGTH = 12  # hex digits: short enough to read in a table, long enough never to collide in practice
UNRECORDED = "unrecorded"  # a record that names no judge (ToolEmu's own, or ours from before judge ids)


def short_hash(data: Any, length: int = ID_LENGTH) -> str:
    """sha256 of canonical JSON (sorted keys, no spaces): the same data gives the same hash in any process."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


class JudgeIdentity(BaseModel):
    """The parts that decide a judge's verdicts; `id` is their hash."""

    model_config = ConfigDict(frozen=True)

    scorer: str
    version: str
    kind: Literal["llm", "deterministic"]
    model: str = ""  # e.g. openai:gpt-4o-mini ("" for a deterministic scorer)
    parameters: dict[str, Any] = {}  # the rest of ModelOptions.describe(), plus samples
    prompt: str = ""  # hash of the system text, the reply schema and the task template
    schema_version: str = SCHEMA_VERSION

    @property
    def id(self) -> str:
        return short_hash(self.model_dump(mode="json"))

    @property
    def label(self) -> str:
        """For people: the model (or the scorer) and the id."""
        return f"{self.model or self.scorer} [{self.id}]"


def deterministic_identity(scorer: Scorer) -> JudgeIdentity:
    return JudgeIdentity(scorer=scorer.info.name, version=scorer.info.version, kind="deterministic")


def llm_identity(scorer: Scorer, described: dict[str, Any], samples: int, prompt: str) -> JudgeIdentity:
    model = str(described.get("model", ""))
    parameters = {k: v for k, v in described.items() if k != "model"} | {"samples": samples}
    return JudgeIdentity(
        scorer=scorer.info.name,
        version=scorer.info.version,
        kind="llm",
        model=model,
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
        return llm_identity(scorer, ctx.hub.options_for(ctx.evaluator_role).describe(), ctx.samples, "")
    return deterministic_identity(scorer)


def stamped(evaluation: Evaluation, identity: JudgeIdentity) -> Evaluation:
    """The evaluation with its judge recorded (a scorer that set its own is left as it is)."""
    if evaluation.judge_id:
        return evaluation
    return evaluation.model_copy(update={"judge_id": identity.id, "judge": identity.model_dump(mode="json")})


def judge_key(evaluation: Evaluation) -> str:
    """What tells judges apart in a file: the id, else (older records) the evaluator's model, else unrecorded."""
    if evaluation.judge_id:
        return evaluation.judge_id
    return f"{UNRECORDED}:{evaluation.evaluator_model}" if evaluation.evaluator_model else UNRECORDED


def judge_model(evaluation: Evaluation) -> str:
    model = evaluation.judge.get("model") if isinstance(evaluation.judge, dict) else None
    if isinstance(model, str) and model:
        return model
    if evaluation.judge.get("kind") == "deterministic":
        return f"{evaluation.judge.get('scorer', '')} (deterministic)"
    return evaluation.evaluator_model


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def judge_slug(model: str) -> str:
    """A panel judge's file-name tag from its model string: openai:gpt-4o-mini -> openai-gpt-4o-mini.

    Only letters, digits, '.', '_' and '-', never a leading dot: the slug names a file beside the trajectories."""
    return _UNSAFE.sub("-", model).strip(".-")[:80] or "judge"
