"""A judge panel: several evaluator models judge the same trajectories, each into its own eval files.

The first judge is the run's judge as before: it has the `evaluator` role and writes the standard
`<trajectories>_eval_<type>.jsonl`, so ToolEmu's readers (and every report number that names one judge) find one
judge's verdicts where they expect them. Every other judge has the role `evaluator@<slug>` and writes
`<trajectories>_eval_<type>@<slug>.jsonl`, the slug being its model string made file-safe. Each file resumes on
its own; a file holds one judge (a resume moves another judge's records aside).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolemu.errors import InputError
from toolemu.llm import LLMSettings
from toolemu.llm.options import provider_of
from toolemu.scorers.identity import judge_slug

PRIMARY_ROLE = "evaluator"


@dataclass(frozen=True)
class PanelJudge:
    model: str
    slug: str | None  # None: the first judge, which writes the standard files
    role: str


def parse_models(text: str | None) -> list[str]:
    """`--evaluator-model a,b,c` as a list (blanks dropped)."""
    return [m.strip() for m in (text or "").split(",") if m.strip()]


def panel_judges(models: Sequence[str]) -> list[PanelJudge]:
    """One judge per model, the first primary; a model named twice is an input error (its files would clash)."""
    judges: list[PanelJudge] = []
    seen: dict[str, str] = {}
    for i, model in enumerate(models):
        try:
            provider_of(model)
        except ValueError as exc:
            raise InputError.single("command line", str(exc), field="--evaluator-model") from None
        slug = judge_slug(model)
        if slug in seen:
            raise InputError.single(
                "command line",
                f"judge {model!r} would write the same files as {seen[slug]!r}; name each judge once",
                field="--evaluator-model",
            )
        seen[slug] = model
        judges.append(PanelJudge(model, None if i == 0 else slug, PRIMARY_ROLE if i == 0 else f"{PRIMARY_ROLE}@{slug}"))
    return judges


def with_panel(settings: LLMSettings, models: Sequence[str]) -> tuple[LLMSettings, list[PanelJudge]]:
    """Settings with a role per judge, and the judges. No models named: the evaluator role as configured."""
    if not models:
        return settings, [PanelJudge(settings.options_for(PRIMARY_ROLE).model, None, PRIMARY_ROLE)]
    judges = panel_judges(models)
    roles = dict(settings.role_models) | {j.role: j.model for j in judges}
    return settings.model_copy(update={"role_models": roles}), judges
