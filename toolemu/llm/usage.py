"""Token usage and cost per call, per role and per run, and the budgets that stop new work.

Every count is a whole number from 0 to MAX_COUNT (a trillion) and every cost a finite number of dollars from 0 to
MAX_COST_USD: a record read back with a negative count, a count past 64 bits or a NaN cost is bad input (named by
file, line and field), never summed into a report or scaled into an estimate. A provider's own count for one call
is taken from 0 to MAX_CALL_TOKENS (a hundred million: no model reads or writes that much in one call); a count
outside that is held to it, with a warning, so a server that misreports cannot make the budget, the records or the
cost go negative or past every bound.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from toolemu.llm.prices import model_price, price_table
from toolemu.llm.stops import BudgetExceeded
from toolemu.log.usage import BudgetUse, Usage, unpriced_note

log = logging.getLogger("toolemu")

MAX_CALL_TOKENS = 10**8  # a provider's count for one call


def __getattr__(name: str) -> object:
    """PRICES_PER_MTOK: USD per million tokens (input, output) by model name, from the price table (prices.toml),
    for readers that want the bare numbers; read when first asked for. Costs are computed by `price_for`, which
    also knows free providers and dated snapshots."""
    if name == "PRICES_PER_MTOK":
        return {model: (p.input, p.output) for p in price_table().prices for model in p.names}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def usage_line(u: Usage, unpriced: dict[str, int] | None = None) -> str:
    """The use of a command in one line; the dollars say when some calls had no price (and whose)."""
    cost = f"${u.cost_usd:.4f}"
    if u.unpriced_calls:
        cost += f" + {u.unpriced_calls} unpriced calls" + unpriced_note(unpriced or {})
    return (
        f"usage: {u.calls} model calls, {u.cache_hits} cache hits, {u.prompt_tokens} prompt + "
        f"{u.completion_tokens} completion tokens, {cost}"
    )


def role_lines(by_role: dict[str, Usage]) -> list[str]:
    """Per role: calls, the repair rate, replies cut off at max_tokens, refusals (for a command's summary)."""
    return [
        f"  {role}: {u.calls} calls, {u.repairs} repairs ({u.repair_rate:.1%}), "
        f"{u.cut_offs} cut off at max_tokens and asked again, {u.refusals} refusals"
        for role, u in sorted(by_role.items())
        if u.calls or u.cache_hits
    ]


def _reported(count: int, what: str, provider: str, model: str) -> int:
    """A provider's count for one call, held to 0..MAX_CALL_TOKENS (a warning says when it was not)."""
    if 0 <= count <= MAX_CALL_TOKENS:
        return count
    held = min(max(count, 0), MAX_CALL_TOKENS)
    log.warning(
        "%s:%s reported %s %s tokens for one call: not a real count; counted as %s", provider, model, count, what, held
    )
    return held


def call_usage(provider: str, model: str, prompt_tokens: int, completion_tokens: int) -> Usage:
    prompt_tokens = _reported(prompt_tokens, "prompt", provider, model)
    completion_tokens = _reported(completion_tokens, "completion", provider, model)
    # 0 for a free provider (own hardware, or no model at all); None means unpriced: the call is counted and named,
    # its cost is not.
    cost = model_price(f"{provider}:{model}").cost(prompt_tokens, completion_tokens)
    return Usage(
        calls=1,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cost_usd=cost or 0.0,
        unpriced_calls=int(cost is None),
    )


@dataclass(frozen=True)
class Budget:
    max_total_tokens: int | None = None
    max_cost: float | None = None
    max_calls: int | None = None

    @property
    def bounded(self) -> bool:
        return (self.max_total_tokens, self.max_cost, self.max_calls) != (None, None, None)

    def check(self, spent: Usage) -> None:
        if self.max_calls is not None and spent.calls >= self.max_calls:
            raise BudgetExceeded(f"--max-calls {self.max_calls} reached ({spent.calls} calls made)")
        if self.max_total_tokens is not None and spent.total_tokens >= self.max_total_tokens:
            raise BudgetExceeded(
                f"--max-total-tokens {self.max_total_tokens} reached ({spent.total_tokens} tokens used)"
            )
        if self.max_cost is not None and spent.cost_usd >= self.max_cost:
            raise BudgetExceeded(f"--max-cost {self.max_cost} reached (${spent.cost_usd:.4f} spent)")


@dataclass
class UsageTracker:
    """Thread-safe running totals for a run, by role."""

    budget: Budget = field(default_factory=Budget)
    by_role: dict[str, Usage] = field(default_factory=dict)
    unpriced: dict[str, int] = field(default_factory=dict)  # model -> calls the price table has no price for
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _in_flight: int = field(default=0, repr=False)  # reserved calls not yet recorded

    def _sum(self) -> Usage:
        out = Usage()
        for u in self.by_role.values():
            out.add(u)
        return out

    def total(self) -> Usage:
        with self._lock:
            return self._sum()

    def reserve(self) -> None:
        """Check the budget before a model call (cache hits are free and skip this).

        Calls in flight count against --max-calls, so concurrent workers cannot overshoot it.
        """
        with self._lock:
            if self.budget.bounded:  # the sum is the one cost here, at a thousand calls a second
                spent = self._sum()
                spent.calls += self._in_flight
                self.budget.check(spent)
            self._in_flight += 1

    def release(self) -> None:
        """A reserved call that failed before it could be recorded."""
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)

    def record(self, role: str, usage: Usage, model: str = "") -> None:
        """A call's (or a cache hit's) use; `model` names an unpriced call's model for the summary."""
        with self._lock:
            self._in_flight = max(0, self._in_flight - usage.calls)
            self.by_role.setdefault(role, Usage()).add(usage)
            if usage.unpriced_calls:
                name = model or f"(a model of role {role})"
                self.unpriced[name] = self.unpriced.get(name, 0) + usage.unpriced_calls

    def unpriced_models(self) -> dict[str, int]:
        """Calls whose model the price table lacks, by model: never counted as $0 silently."""
        with self._lock:
            return dict(sorted(self.unpriced.items()))

    def roles(self) -> dict[str, Usage]:
        """A copy of the totals by role, as they are now."""
        with self._lock:
            return {role: u.model_copy() for role, u in sorted(self.by_role.items())}

    def to_dict(self) -> dict[str, object]:
        return {
            "total": self.total().to_dict(),
            "by_role": {r: u.to_dict() for r, u in sorted(self.by_role.items())},
        }


def budget_use(tracker: UsageTracker, command: str = "", stopped: str | None = None) -> BudgetUse:
    """What one command spent against its limits, as run.json's `budget` records it."""
    spent, budget = tracker.total(), tracker.budget
    return BudgetUse(
        command=command,
        calls=spent.calls,
        max_calls=budget.max_calls,
        total_tokens=spent.total_tokens,
        max_total_tokens=budget.max_total_tokens,
        cost_usd=round(spent.cost_usd, 6),
        max_cost=budget.max_cost,
        unpriced_calls=spent.unpriced_calls,
        cache_hits=spent.cache_hits,
        stopped=stopped or None,
        price_table=price_table().version,
        unpriced_models=tracker.unpriced_models(),
    )
