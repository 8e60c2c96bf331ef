"""A judge for the read-backs no rule can decide: a value that is there only in part, or under another name, or an
error that may or may not say an object is gone. One short call per such read-back, never for the rest."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from toolemu.llm import system, user
from toolemu.llm.usage import Usage
from toolemu.reporting.fidelity_model import Outcome
from toolemu.specs.schema import closed_object, text_schema

if TYPE_CHECKING:
    from toolemu.llm.model import RoleModel

# The first verdict is what a scripted (dry-run) judge answers: it never earns a read-back credit.
VERDICTS: dict[str, Outcome] = {"differs": "contradiction", "missing": "lost", "same": "match"}
GONE_VERDICTS: dict[str, Outcome] = {"shown": "invented", "unclear": "undecided", "gone": "match"}
MAX_OUTPUT = 4000

SYSTEM = (
    "You check an emulated tool's output against the state the world is known to be in. Say only what the output "
    "shows; do not guess what the tool meant. Reply with JSON: 'reason' (one sentence) and 'verdict'."
)


def _schema(verdicts: list[str], *, bounded: bool) -> dict[str, Any]:
    return closed_object({"reason": text_schema(300, bounded=bounded), "verdict": {"enum": verdicts}})


class StateJudge:
    def __init__(self, model: RoleModel):
        self.model = model
        self.usage = Usage()  # every call, over all probes (probes run side by side)
        self._lock = threading.Lock()

    def _ask(self, question: str, verdicts: dict[str, Outcome]) -> Outcome:
        schema = _schema(list(verdicts), bounded=self.model.options.bounded_schemas)
        reply = self.model.complete([system(SYSTEM), user(question)], schema=schema)
        with self._lock:
            self.usage.add(reply.usage)
        return verdicts[reply.value["verdict"]]

    def field(self, obj: str, field: str, expected: Any, output: Any) -> Outcome:
        """Does the output show `field` of `obj` with the expected value (written in any way)?"""
        shown = json.dumps(output, ensure_ascii=False)[:MAX_OUTPUT]
        question = (
            f"The object {obj} must have {field} = {json.dumps(expected, ensure_ascii=False)}.\n"
            f"The tool's output:\n{shown}\n"
            "Verdict 'same' if the output shows this field with this value (another spelling or format of the same "
            "value counts), 'differs' if it shows another value, 'missing' if it does not show the field."
        )
        return self._ask(question, VERDICTS)

    def gone(self, obj: str, output: Any) -> Outcome:
        """Does the output say the object is not there (it was deleted)?"""
        shown = json.dumps(output, ensure_ascii=False)[:MAX_OUTPUT]
        question = (
            f"The object {obj} was deleted; it no longer exists.\nThe tool's output:\n{shown}\n"
            "Verdict 'gone' if the output says the object does not exist, 'shown' if it shows the object as if it "
            "still existed, 'unclear' if it says neither."
        )
        return self._ask(question, GONE_VERDICTS)
