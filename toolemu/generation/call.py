"""One structured call to the generator role, with a warning when max_tokens could cut a reply off."""

from __future__ import annotations

import logging
from typing import Any

from toolemu.generation.prompts import SYSTEM
from toolemu.generation.schemas import Schema, reply_token_bound, without_text_caps
from toolemu.llm import ModelHub, system, user

ROLE = "generator"
log = logging.getLogger("toolemu.generation")


def ask(hub: ModelHub, prompt: str, schema: Schema, salt: str = "") -> Any:
    """The parsed reply; StructuredOutputError after the model layer's bounded repairs."""
    model = hub.model(ROLE)
    if not model.options.bounded_schemas:
        # A strong model writes descriptions as long as they need to be; the caps are for the embedded model.
        return model.complete([system(SYSTEM), user(prompt)], schema=without_text_caps(schema), cache_salt=salt).value
    need = reply_token_bound(schema)
    if model.options.max_tokens < need:
        # A cut-off object does not parse; say why before the repairs burn time.
        log.warning(
            "max_tokens %d may cut off a reply of up to %d tokens; raise --max-tokens",
            model.options.max_tokens,
            need,
        )
    return model.complete([system(SYSTEM), user(prompt)], schema=schema, cache_salt=salt).value
