"""The emulator's state patch: beside each observation, the facts the call created, changed or deleted.

Optional in the reply, so a model that leaves it out still works; small, so an embedded model's bounded grammar
stays finite. What comes back is kept as `StateChange`s on the step (toolemu.log.ledger).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from toolemu.log import StateChange
from toolemu.specs.schema import text_schema

MAX_CHANGES = 4  # per call, for bounded backends: a patch names the few facts that matter
MAX_KEY = 80
MAX_VALUE = 120


def state_schema(*, bounded: bool) -> dict[str, Any]:
    """The reply's optional `state` field: a list of {key, op, value}; caps only for bounded backends."""
    change = {
        "type": "object",
        "properties": {
            "key": text_schema(MAX_KEY, bounded=bounded),
            "op": {"enum": ["set", "delete"]},
            "value": {
                "anyOf": [
                    text_schema(MAX_VALUE, bounded=bounded),
                    {"type": "number"},
                    {"type": "boolean"},
                    {"type": "null"},
                ]
            },
        },
        "required": ["key", "op", "value"],
        "additionalProperties": False,
    }
    return {"type": "array", "items": change, **({"maxItems": MAX_CHANGES} if bounded else {})}


def parse_state(raw: Any) -> list[StateChange]:
    """The patch of a validated reply; entries that are not changes (a lenient backend's extras) are left out."""
    if not isinstance(raw, list):
        return []
    changes = []
    for entry in raw:
        try:
            change = StateChange.model_validate(entry)
        except ValidationError:
            continue
        if change.key.strip():
            changes.append(change)
    return changes
