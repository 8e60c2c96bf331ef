"""An oracle for any probe: the outputs a perfect emulator would give, drawn from the probe's own known answers,
with a fault of known size where asked (the last write applies all but `drop` of its changes).

It shows what the probe files promise: each shipped probe can be scored, and what it measures is what happened.
Outputs take a generic shape (a read by id gives the object, a listing gives items, a gone object by id raises
NotFoundException), not each tool's; the pipeline's doubles (fidelity_doubles.py) cover the real path end to end.
"""

from __future__ import annotations

import json
from typing import Any

from toolemu.fidelity.compare import alnum, leaves
from toolemu.fidelity.expected import changes_of, object_state
from toolemu.fidelity.probes import Probe, find_tool, substitute
from toolemu.log import Step, Trajectory, apply_changes
from toolemu.specs.models import Toolkit


def _named(call_input: Any, ident: str) -> bool:
    return any(alnum(v) == alnum(ident) for v in leaves(call_input).values())


def oracle_trajectory(probe: Probe, kit: Toolkit, drop: int = 0) -> Trajectory:
    """The probe's episode as a perfect emulator plays it; `drop`: its last writing step loses that many of its
    changes (the last ones)."""
    saved: dict[str, Any] = {}
    state = apply_changes({}, changes_of(probe.seed, {}, {}))
    writes = [i for i, s in enumerate(probe.steps) if s.effects]
    last = writes[-1] if writes else -1
    steps: list[Step] = []
    for index, planned in enumerate(probe.steps):
        call = substitute(planned.input, saved)
        output: dict[str, Any] = {}
        for name, path in planned.save.items():
            saved[name] = f"gen-{probe.id}-{index}-{name}"
            output[path.split("[")[0].split(".")[0]] = [saved[name]] if path.endswith("]") else saved[name]
        effects = planned.effects[: len(planned.effects) - drop] if index == last and drop else planned.effects
        state = apply_changes(state, changes_of(effects, saved, state))
        for check in planned.checks:
            obj = substitute(check.object, saved)
            ident = obj.partition(":")[2]
            fields = object_state(state, obj)
            if fields is None:
                if _named(call, ident):
                    output = {"error": f"NotFoundException: {ident} does not exist"}
                continue
            if check.whole:
                output |= fields
            elif _named(call, ident):
                output |= {"id": ident, **fields}
            else:
                output.setdefault("items", []).append({"id": ident, **fields})
        tool = find_tool(kit, planned.tool)
        assert tool is not None
        steps.append(
            Step(
                index=index,
                tool=kit.tool_full_name(tool),
                tool_input=call,
                observation=json.dumps(output or {"ok": True}),
            )
        )
    return Trajectory.model_validate(
        {
            "input": probe.instruction,
            "output": "done",
            "case": {},
            "case_name": probe.id,
            "status": "final_answer",
            "steps": steps,
        }
    )
