"""Model calls, tokens and cost as records keep them: a trajectory's and an evaluation's `Usage`, run.json's
`budget` (`BudgetUse`). Every count is a whole number from 0 to MAX_COUNT and every cost a finite number of dollars
from 0 to MAX_COST_USD: a record read back with a negative count, a count past 64 bits or a NaN cost is bad input.
Counting them as calls are made, prices and budgets are toolemu.llm's (`toolemu.llm.usage`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, computed_field

MAX_COUNT = 10**12  # calls or tokens, of one call, one episode or a whole command
MAX_COST_USD = 1e9
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Cost = Annotated[float, Field(ge=0, le=MAX_COST_USD, allow_inf_nan=False)]


class Usage(BaseModel):
    """Model calls, tokens and cost: of one call, one role, one episode or a whole command."""

    calls: Count = 0
    cache_hits: Count = 0
    prompt_tokens: Count = 0
    completion_tokens: Count = 0
    cost_usd: Cost = 0.0
    unpriced_calls: Count = 0
    # Of the calls: how many asked again because a reply was unusable (a structured repair, or the agent re-asking
    # for a turn it could not parse), how many replies were cut off at max_tokens (asked again with more room), and
    # how many were refusals. repairs / calls is the repair rate a run reports per role.
    repairs: Count = 0
    cut_offs: Count = 0
    refusals: Count = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        # Straight into the fields, as pydantic's own __setattr__ would put them (no validation on assignment here):
        # its per-field handler was the largest part of a model call's bookkeeping at a thousand calls a second.
        mine, theirs = self.__dict__, other.__dict__
        for name in _SUMMED:
            mine[name] += theirs[name]
        self.__pydantic_fields_set__.update(_SUMMED)

    @property
    def repair_rate(self) -> float:
        """Repairs per model call (cache hits are not calls)."""
        return self.repairs / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return self.model_dump()


_COUNTS = (
    "calls",
    "cache_hits",
    "prompt_tokens",
    "completion_tokens",
    "unpriced_calls",
    "repairs",
    "cut_offs",
    "refusals",
)
_SUMMED = (*_COUNTS, "cost_usd")


def unpriced_note(models: dict[str, int]) -> str:
    """(openai:foo: 3 calls, ...): the models the price table lacks, named."""
    if not models:
        return ""
    return " (" + ", ".join(f"{m}: {n} calls" for m, n in sorted(models.items())) + ")"


class BudgetUse(BaseModel):
    """What one command spent against its limits: run.json's `budget`, and the BUDGET line of console and report."""

    command: str = ""
    calls: Count = 0
    max_calls: Count | None = None
    total_tokens: Count = 0
    max_total_tokens: Count | None = None
    cost_usd: Cost = 0.0
    max_cost: Cost | None = None
    unpriced_calls: Count = 0
    cache_hits: Count = 0
    stopped: str | None = None  # the limit that stopped the command, as its message says it
    # Written since the price table became a file: its version, and the unpriced calls by model (absent before).
    price_table: str | None = None
    unpriced_models: dict[str, int] = Field(default_factory=dict)

    def line(self) -> str:
        """BUDGET: calls 5/5 (100%), tokens 1234/-, cost $0.0000/$0.0100 — stopped: --max-calls 5 reached"""

        def part(name: str, used: float, limit: float | None, fmt: str) -> str:
            text = f"{name} {fmt.format(used)}/{fmt.format(limit) if limit is not None else '-'}"
            return text + (f" ({100 * used / limit:.0f}%)" if limit else "")

        parts = [
            part("calls", self.calls, self.max_calls, "{:d}"),
            part("tokens", self.total_tokens, self.max_total_tokens, "{:d}"),
            part("cost", self.cost_usd, self.max_cost, "${:.4f}"),
        ]
        if self.unpriced_calls:
            parts.append(f"{self.unpriced_calls} calls unpriced" + unpriced_note(self.unpriced_models))
        end = f"stopped: {self.stopped}" if self.stopped else "not stopped"
        return f"BUDGET: {', '.join(parts)} — {end}"
