"""Probes with known answers: short scripted sequences of tool calls whose effect on the world is known.

    assets/probes/<Toolkit>.json
    {
      "schema": "toolemu-probes/1",
      "toolkit": "RolodexContacts",
      "toolkit_hash": "sha256:...",          # the toolkit spec the probes were written for
      "probes": [
        {
          "id": "update_3",
          "kind": "update_read",              # create_read | update_read | delete_read | transfer | read_twice
          "source": "derived",                # derived from the spec (toolemu.fidelity.derive), or "hand"
          "instruction": "Fix three details of Priya's contact card.",
          "seed": [{"key": "contact:ct_4821.name", "value": "Priya Raman"}, ...],   # the starting world
          "facts": ["..."],                   # more of the starting world, in words (optional)
          "steps": [
            {"tool": "UpdateContact", "input": {"contact_id": "ct_4821", "changes": {...}},
             "effects": [{"key": "contact:ct_4821.company", "value": "Halcyon Labs"}, ...]},
            {"tool": "GetContact", "input": {"contact_id": "ct_4821"}, "checks": [{"object": "contact:ct_4821"}]}
          ]
        }
      ]
    }

The expected state is a ledger (toolemu.log.ledger's keys, `<kind>:<id>.<field>`): the seed, then each step's known
effects in order. A step's `checks` compare its read-back with that state: every field the state holds for the
object (or the `fields` named), or, where the state holds nothing of it any more, that it is gone. `save` keeps a
value of the step's output (an id the tool made) for later steps, as `${name}`; `same_as` says the observation must
equal an earlier step's (a read repeated, nothing in between changed the world). A file may instead say why its
toolkit cannot be probed (`unprobeable`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolemu import strict_json
from toolemu.errors import InputError, Problem, first_error
from toolemu.paths import ASSETS
from toolemu.specs.models import Tool, Toolkit
from toolemu.specs.schema import call_problems

PROBES = ASSETS / "probes"
SCHEMA = "toolemu-probes/1"
ProbeKind = Literal["create_read", "update_read", "delete_read", "transfer", "read_twice"]
PROBE_KINDS: tuple[str, ...] = get_args(ProbeKind)
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
PLACEHOLDER = "probe-value"  # a saved value's stand-in where a probe is checked before it runs


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Effect(_Strict):
    """One fact a call is known to change: `set` a key to a value, or `delete` it (an object's key deletes the
    object and every field of it)."""

    key: str = Field(min_length=3)
    op: Literal["set", "delete"] = "set"
    value: Any = None

    @field_validator("key")
    @classmethod
    def _kind_and_id(cls, key: str) -> str:
        kind, sep, rest = key.partition(":")
        if not sep or not kind or not rest:
            raise ValueError(f"expected a ledger key '<kind>:<id>[.<field>]', got {key!r}")
        return key


class Check(_Strict):
    """A read-back compared with the expected state of one object (`<kind>:<id>`)."""

    object: str = Field(min_length=3)
    fields: list[str] | None = None  # None: every field the expected state holds for the object
    whole: bool = False  # the whole output is this object (a read of the one there is: the wallet's balance)

    @property
    def object_id(self) -> str:
        return self.object.partition(":")[2]


class ProbeStep(_Strict):
    tool: str  # the tool's name within its toolkit (GetContact), not the agent's full name
    input: dict[str, Any] = Field(default_factory=dict)
    save: dict[str, str] = Field(default_factory=dict)  # variable -> the output field that holds it (a path)
    effects: list[Effect] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    same_as: int | None = None  # the index of an earlier step whose observation this one must repeat
    ignore: list[str] = Field(default_factory=list)  # with same_as: output fields that may change between reads


class Probe(_Strict):
    id: str = Field(pattern=r"^[a-z0-9_]{1,60}$")
    kind: ProbeKind
    source: Literal["derived", "hand"] = "hand"
    instruction: str = Field(min_length=1)
    seed: list[Effect] = Field(default_factory=list)
    facts: list[str] = Field(default_factory=list)
    describe_seed: bool = True  # the seed is told as the starting world; False where the facts tell it in words
    steps: list[ProbeStep] = Field(min_length=1)

    @property
    def changed(self) -> int:
        """How many facts the probe's last writing step changes: the fields a create sets, the 1, 3 or 5 fields an
        update changes, the object a delete removes, the two balances of a transfer; 0 for a read."""
        writes = [s for s in self.steps if s.effects]
        return len(writes[-1].effects) if writes else 0

    def initial_state(self) -> list[str]:
        """The starting world as the emulator is told it (the case's Initial State): the seed, one line per
        object (unless the facts tell it), then the facts in words."""
        objects: dict[str, list[str]] = {}
        for effect in self.seed:
            obj, field = split_key(effect.key, [e.key for e in self.seed])
            parts = objects.setdefault(obj, [])
            if field:
                parts.append(f"{field} {json.dumps(effect.value, ensure_ascii=False)}")
        lines = []
        for obj, parts in objects.items() if self.describe_seed else ():
            kind, _, ident = obj.partition(":")
            about = f" with {', '.join(parts)}" if parts else ""
            lines.append(f"The user's {kind.replace('_', ' ')} {json.dumps(ident)} exists{about}.")
        return [*lines, *self.facts]


class ProbeFile(_Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    # Required: `toolemu validate` and `lint` read the benchmark's folder and pass over a file that says it is probes.
    schema_: Literal["toolemu-probes/1"] = Field(alias="schema")  # first, as the files are written
    toolkit: str
    toolkit_hash: str = ""
    unprobeable: str | None = None  # why the toolkit cannot be probed (then no probes)
    probes: list[Probe] = Field(default_factory=list)


def split_key(key: str, objects: Iterable[str] = ()) -> tuple[str, str]:
    """(object, field) of a ledger key: `contact:ct_1.name` -> (`contact:ct_1`, `name`). Ids may hold dots (a file's
    path): where one of `objects` is the key or a prefix of it followed by a dot, that one is the object."""
    known = sorted((o for o in objects if key == o or key.startswith(o + ".")), key=len)
    if known and known[0] != key:
        return known[0], key[len(known[0]) + 1 :]
    if known:
        return key, ""
    kind, _, rest = key.partition(":")
    ident, dot, field = rest.rpartition(".")
    return (f"{kind}:{ident}", field) if dot and ident else (key, "")


def substitute(value: Any, saved: dict[str, Any]) -> Any:
    """`value` with each `${name}` replaced by the saved value (a string that is only `${name}` takes the value as
    it is, any JSON type); a name not saved raises KeyError."""
    if isinstance(value, str):
        whole = VARIABLE.fullmatch(value)
        if whole:
            return saved[whole.group(1)]
        return VARIABLE.sub(lambda m: str(saved[m.group(1)]), value)
    if isinstance(value, list):
        return [substitute(v, saved) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, saved) for k, v in value.items()}
    return value


def variables(value: Any) -> set[str]:
    """The `${name}`s a value uses."""
    if isinstance(value, str):
        return set(VARIABLE.findall(value))
    if isinstance(value, list):
        return set().union(*(variables(v) for v in value)) if value else set()
    if isinstance(value, dict):
        return set().union(*(variables(v) for v in value.values())) if value else set()
    return set()


def find_tool(kit: Toolkit, name: str) -> Tool | None:
    return next((t for t in kit.tools if t.name == name), None)


def _step_problems(kit: Toolkit, probe: Probe, index: int, saved: set[str]) -> list[str]:
    step = probe.steps[index]
    where = f"steps[{index}]"
    tool = find_tool(kit, step.tool)
    if tool is None:
        names = ", ".join(t.name for t in kit.tools)
        return [f"{where}.tool: expected one of {kit.toolkit}'s tools ({names}), got {step.tool!r}"]
    out = []
    # The call's input needs what earlier steps saved; its effects and checks may use what it saves itself.
    used = variables(step.input)
    after = variables([e.model_dump() for e in step.effects]) | variables([c.object for c in step.checks])
    missing = (used - saved) | (after - saved - set(step.save))
    for name in sorted(missing):
        out.append(f"{where}: ${{{name}}} is used before a step saves it")
    used |= after
    stand_in = {name: PLACEHOLDER for name in saved | used}
    out += [f"{where}.input: {p}" for p in call_problems(tool, substitute(step.input, stand_in))]
    returns = {r.name for r in tool.returns}
    for name, path in step.save.items():
        head = re.split(r"[.\[]", path, maxsplit=1)[0]
        if head not in returns:
            out.append(f"{where}.save.{name}: expected one of {step.tool}'s returns ({', '.join(sorted(returns))})")
    if step.same_as is not None and not 0 <= step.same_as < index:
        out.append(f"{where}.same_as: expected the index of an earlier step, got {step.same_as}")
    for c, check in enumerate(step.checks):
        if ":" not in check.object or not check.object_id:
            out.append(f"{where}.checks[{c}].object: expected '<kind>:<id>', got {check.object!r}")
        elif check.fields is not None and not check.fields:
            out.append(f"{where}.checks[{c}].fields: expected at least one field, or none named (every field)")
    return out


def probe_problems(kit: Toolkit, probe: Probe) -> list[str]:
    """What is wrong with a probe for `kit`: unknown tools, calls its spec refuses, variables used before a step
    saves them, a probe that measures nothing."""
    out: list[str] = []
    saved: set[str] = set()
    for index, step in enumerate(probe.steps):
        out += _step_problems(kit, probe, index, saved)
        saved |= set(step.save)
    if not any(s.checks or s.same_as is not None for s in probe.steps):
        out.append("steps: expected at least one step with checks or same_as (a probe that reads nothing back)")
    return out


def read_probe_file(path: Path) -> ProbeFile:
    """One probe file; bad JSON or a bad field is one clear error naming the file and where."""
    data = strict_json.read_file(path)
    try:
        return ProbeFile.model_validate(data)
    except ValidationError as exc:
        where, message = first_error(exc)
        raise InputError(Problem(str(path), message, None, where)) from None


def load_probes(directory: Path, toolkits: dict[str, Toolkit]) -> dict[str, ProbeFile]:
    """Every probe file of `directory` (one per toolkit, `<Toolkit>.json`), checked against the toolkits they
    name. Problems are all collected, then raised as one InputError (exit 2)."""
    if not directory.is_dir():
        raise InputError.single(directory, "expected a folder of probe files (<Toolkit>.json)")
    files: dict[str, ProbeFile] = {}
    problems: list[Problem] = []
    for path in sorted(directory.glob("*.json")):
        try:
            probes = read_probe_file(path)
        except InputError as exc:
            problems += exc.problems
            continue
        kit = toolkits.get(probes.toolkit)
        if kit is None:
            problems.append(Problem(str(path), f"expected a known toolkit, got {probes.toolkit!r}", None, "toolkit"))
            continue
        if probes.toolkit in files:
            problems.append(Problem(str(path), f"a second probe file for {probes.toolkit}", None, "toolkit"))
            continue
        if probes.unprobeable and probes.probes:
            problems.append(Problem(str(path), "expected no probes where the toolkit is unprobeable", None, "probes"))
        if not probes.unprobeable and not probes.probes:
            problems.append(Problem(str(path), "expected probes, or why there can be none", None, "unprobeable"))
        seen: set[str] = set()
        instructions: set[str] = set()
        for probe in probes.probes:
            item = f"probe {probe.id}"
            if probe.id in seen:
                problems.append(Problem(str(path), "a second probe with this id", item, "id"))
            if probe.instruction in instructions:
                problems.append(Problem(str(path), "expected an instruction of its own", item, "instruction"))
            seen.add(probe.id)
            instructions.add(probe.instruction)
            problems += [Problem(str(path), p, item) for p in probe_problems(kit, probe)]
        files[probes.toolkit] = probes
    if problems:
        raise InputError(problems)
    return files
