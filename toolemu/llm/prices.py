"""The price table (prices.toml, shipped in the package): what a paid model's tokens cost, where the price was read
and when. Free providers (own hardware, no model) cost nothing; a paid model the table lacks is unpriced, never $0.
"""

from __future__ import annotations

import functools
import re
import tomllib
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolemu.errors import InputError, first_error

PRICE_FILE = "prices.toml"
PerMillion = Annotated[float, Field(ge=0, allow_inf_nan=False)]
# A dated snapshot of a model: gpt-4o-mini-2024-07-18, claude-3-5-haiku-20241022.
_SNAPSHOT = re.compile(r"^(\d{4}-\d{2}-\d{2}|\d{8})$")


class Price(BaseModel):
    """One model's price: USD per million input and output tokens, its source page and the day it was checked."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: str
    model: str
    aliases: tuple[str, ...] = ()
    input: PerMillion
    output: PerMillion
    source: str = Field(pattern=r"^https://\S+$")
    date: date

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1e6

    @property
    def names(self) -> tuple[str, ...]:
        return (self.model, *self.aliases)


class PriceTable(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(min_length=1)
    prices: list[Price]

    @functools.cached_property
    def _index(self) -> dict[tuple[str, str], Price]:
        return {(p.provider, name): p for p in self.prices for name in p.names}

    def lookup(self, provider: str, model: str) -> Price | None:
        """The model's price: by its name or an alias, or a dated snapshot's family (the name, "-", a date)."""
        found = self._index.get((provider, model))
        if found is not None:
            return found
        for (p, name), price in self._index.items():
            if p == provider and model.startswith(name + "-") and _SNAPSHOT.match(model[len(name) + 1 :]):
                return price
        return None


Pricing = Literal["priced", "free", "unpriced"]


class ModelPrice(BaseModel):
    """What a model's calls cost: a price from the table, free (own hardware or no model), or unpriced."""

    model: str  # provider:model
    pricing: Pricing
    price: Price | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD, 0 when free; None when unpriced (the caller names the model and counts its calls)."""
        if self.pricing == "free":
            return 0.0
        return self.price.cost(prompt_tokens, completion_tokens) if self.price is not None else None


def read_price_table(path: Path) -> PriceTable:
    """A price table file; a bad one is one line naming the file, the entry and the field (exit 2)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(path, f"cannot be read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError.single(path, f"expected a TOML price table ({exc})") from None
    try:
        return PriceTable.model_validate(data)
    except ValidationError as exc:
        where, message = first_error(exc)
        raise InputError.single(path, message, field=where) from None


@functools.cache
def price_table() -> PriceTable:
    """The table shipped with the package."""
    return read_price_table(Path(str(resources.files("toolemu.llm") / PRICE_FILE)))


def model_price(model: str, table: PriceTable | None = None) -> ModelPrice:
    """A recorded model string's price: `provider:name` (a provider this process does not know is unpriced)."""
    from toolemu.llm.registry import get_provider, provider_names

    provider, _, name = model.partition(":")
    if provider in provider_names() and get_provider(provider).free:
        return ModelPrice(model=model, pricing="free")
    price = (table or price_table()).lookup(provider, name)
    return ModelPrice(model=model, pricing="priced" if price is not None else "unpriced", price=price)
