"""Probes derived from a toolkit's spec, where its tools make a family: a tool that creates an object and returns
its identifier (`CreateContact -> contact_id`), a tool that reads it back by that identifier (`GetContact`), and
perhaps tools that update and delete it by the same identifier. The fields a probe writes and checks are those the
reading tool's returns name (its return names and the fields their descriptions quote), so a read-back can show
them. From one family:

- `create_read`: create with every field the read shows, then read it back;
- `update_1`, `update_3`, `update_5`: a seeded object, 1, 3 and 5 of its fields changed (as many as there are);
- `delete_read`: a seeded object read, deleted, then read again (it must be gone; the first read keeps an
  emulator that shows nothing from passing);
- `read_twice`: a seeded object read twice.

Values come from toolemu.fidelity.values: realistic, and the same at every derivation, so `derive_probes(kit)` of an
unchanged spec gives the committed file's derived probes exactly (tests/test_fidelity_probes.py checks it). Tools
that make no such family get probes by hand, or the file says why there can be none.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from toolemu.fidelity.compare import key_name
from toolemu.fidelity.probes import SCHEMA, Effect, Probe, ProbeFile, ProbeStep
from toolemu.fidelity.values import quoted_options, value_for
from toolemu.specs.models import Tool, ToolArgument, Toolkit
from toolemu.specs.schema import returns_schema, value_schema

VERBS = {
    "create": ("Create", "Add", "Write", "Upload", "Post", "Book", "Submit", "Import", "Launch"),
    "get": ("Get", "Read", "Describe", "View", "Show"),
    "update": ("Update", "Set", "Modify", "Edit", "Change"),
    # Only these: a cancelled booking, a terminated instance or a revoked share is still there to read, as such.
    "delete": ("Delete", "Remove"),
}
FIELD_OBJECTS = ("fields", "changes", "data", "values", "attributes", "properties", "updates")
UPDATE_SIZES = (1, 3, 5)
MAX_READ_FIELDS = 3  # fields read back twice
MAX_DELETE_SEED = 2  # fields of an object that is deleted


def verb(tool: Tool) -> str | None:
    head = re.match(r"[A-Z][a-z]*", tool.name)
    word = head.group(0) if head else ""
    return next((kind for kind, words in VERBS.items() if word in words), None)


def about(tool: Tool, kind: str) -> bool:
    """Whether the tool's name, after its verb, is about objects of `kind` (DeleteContacts: contact; DeleteMessage
    is not about a channel, though it takes a channel_id)."""
    noun = re.sub(r"^[A-Z][a-z]*", "", tool.name)
    return key_name(kind) in key_name(noun)


def readable(tool: Tool) -> set[str]:
    """The fields a read shows: its return names, and the fields their descriptions quote (one level into an object,
    or into an array's objects)."""
    schema = returns_schema(tool.returns, bounded=False)
    names = set(schema["properties"])
    for prop in schema["properties"].values():
        inner = prop.get("items", prop) if prop.get("type") == "array" else prop
        names |= set(inner.get("properties", {}))
    return {key_name(n) for n in names}


@dataclass
class Field:
    name: str
    type: str
    description: str = ""
    within: str | None = None  # the object argument it goes in (`changes`), None: an argument of its own


def _quoted_type(name: str) -> str:
    n = name.lower()
    if n.endswith("s") and n not in ("status", "address", "notes", "class") and not n.endswith("ss"):
        return "array"
    if n in ("amount", "price", "value", "balance", "salary"):
        return "number"
    if n in ("quantity", "count", "size", "priority"):
        return "integer"
    return "string"


_KEYS = re.compile(r"""["']([a-z][a-z0-9_]*)["']""")


def _of_strings(arg: ToolArgument) -> bool:
    """An array argument whose items are strings (its `items`, or what its description says)."""
    schema = value_schema(arg.type, arg.description, arg.items, bounded=False)
    return schema.get("items", {}).get("type") == "string"


def fields_of(tool: Tool, skip: set[str]) -> list[Field]:
    """The fields a writing tool sets: its plain arguments (an array only of strings), and the keys an object
    argument's description quotes (`changes`: "any of 'name', 'company', ...")."""
    out: list[Field] = []
    for arg in tool.parameters:
        if arg.name in skip or arg.name.endswith("_id") or arg.name.endswith("_ids"):
            continue  # another object's identifier: no probe can know one
        if arg.type == "object" and arg.name in FIELD_OBJECTS:
            out += [Field(n, _quoted_type(n), "", arg.name) for n in dict.fromkeys(_KEYS.findall(arg.description))]
        elif arg.type in ("string", "integer", "number", "boolean") or arg.type == "array" and _of_strings(arg):
            out.append(Field(arg.name, arg.type, arg.description))
    return out


@dataclass
class Family:
    kind: str  # the object's kind, from its identifier: contact_id -> contact
    ident: str  # the identifier's name
    create: Tool | None
    get: Tool
    update: Tool | None = None
    delete: Tool | None = None
    context: dict[str, Any] = field(default_factory=dict)  # other arguments the get needs (object_type)


def _id_arg(tool: Tool, ident: str) -> ToolArgument | None:
    """The argument that names the object: `ident` itself, or its plural as a list (`contact_ids`)."""
    for arg in tool.parameters:
        if arg.required and (
            arg.name == ident and arg.type == "string" or arg.name == ident + "s" and arg.type == "array"
        ):
            return arg
    return None


def families(kit: Toolkit) -> list[Family]:
    """Every (create?, get, update?, delete?) family of the toolkit, by identifier."""
    by_verb: dict[str, list[Tool]] = {k: [] for k in VERBS}
    for tool in kit.tools:
        kind = verb(tool)
        if kind is not None:
            by_verb[kind].append(tool)
    idents = {
        a.name for t in kit.tools for a in t.parameters if a.required and a.type == "string" and a.name.endswith("_id")
    }
    out = []
    for ident in sorted(idents):
        kind = ident.removesuffix("_id")
        gets = [t for t in by_verb["get"] if (a := _id_arg(t, ident)) is not None and a.type == "string"]
        gets = [t for t in gets if about(t, kind)]
        if not gets:
            continue
        get = gets[0]
        creates = [t for t in by_verb["create"] if any(r.name == ident and r.type == "string" for r in t.returns)]
        updates = [t for t in by_verb["update"] if _id_arg(t, ident) is not None and about(t, kind)]
        deletes = [t for t in by_verb["delete"] if _id_arg(t, ident) is not None and about(t, kind)]
        context = {}
        for arg in get.parameters:
            if arg.required and arg.name != ident:
                context[arg.name] = value_for(arg.name, arg.type, arg.description, kit.toolkit, "context")
        out.append(
            Family(
                ident.removesuffix("_id"),
                ident,
                creates[0] if creates else None,
                get,
                updates[0] if updates else None,
                deletes[0] if deletes else None,
                context,
            )  # fmt: skip
        )
    return out


def _shown(fields: list[Field], get: Tool) -> list[Field]:
    seen = readable(get)
    return [f for f in fields if key_name(f.name) in seen]


def _value(f: Field, kit: Toolkit, kind: str, *where: object) -> Any:
    return value_for(f.name, f.type, f.description, kit.toolkit, *where, kind=kind)


def _input(tool: Tool, ident: str, obj: Any, values: dict[str, tuple[Field, Any]], context: dict[str, Any]) -> dict:
    """A call's input: the object's id, the context, each field where it goes (its own argument, or the object
    argument that holds it)."""
    out: dict[str, Any] = {}
    for arg in tool.parameters:
        if arg.name == ident:
            out[arg.name] = obj
        elif arg.name == ident + "s":
            out[arg.name] = [obj]
        elif arg.name in context:
            out[arg.name] = context[arg.name]
    for f, value in values.values():
        if f.within is None:
            out[f.name] = value
        else:
            out.setdefault(f.within, {})[f.name] = value
    return out


def _required_rest(tool: Tool, done: dict[str, Any], kit: Toolkit, *where: object) -> dict[str, Any] | None:
    """Values for required arguments the probe does not read back; None where one cannot be made: an object, a
    list of anything but strings, another object's identifier (no probe can know one)."""
    out = {}
    for arg in tool.parameters:
        if arg.required and arg.name not in done:
            if arg.name.endswith(("_id", "_ids")) or arg.type == "array" and not _of_strings(arg):
                return None
            value = value_for(arg.name, arg.type, arg.description, kit.toolkit, tool.name, *where, required=True)
            if value is None:
                return None
            out[arg.name] = value
    return out


def _read_step(fam: Family, obj: str, same_as: int | None = None) -> ProbeStep:
    """The read of one object, checked against the expected state: its id, the context, and every optional switch
    that shows more (reveal, include_...) turned on, so the read-back can show what was written."""
    flags = {
        a.name: True
        for a in fam.get.parameters
        if a.type == "boolean" and not a.required and a.name.startswith(("reveal", "include", "show"))
    }
    read = {fam.ident: obj, **fam.context, **flags}
    check = [{"object": f"{fam.kind}:{obj}"}]
    return ProbeStep(tool=fam.get.name, input=read, checks=check, same_as=same_as)  # type: ignore[arg-type]


def _seed(kind: str, obj: str, values: dict[str, tuple[Field, Any]]) -> list[Effect]:
    return [Effect(key=f"{kind}:{obj}.{name}", value=value) for name, (_, value) in values.items()]


def _seed_id(fam: Family, kit: Toolkit, purpose: str) -> str:
    digest = int(hashlib.sha256(f"{kit.toolkit}/{fam.ident}/{purpose}".encode()).hexdigest()[:6], 16)
    return f"{fam.kind[:3]}_{digest % 90000 + 10000}"


def _choice(tool: Tool, name: str) -> bool:
    """An argument that takes one of the values its description quotes (a type, a mode): nothing to exist."""
    arg = next((a for a in tool.parameters if a.name == name), None)
    return arg is not None and len(quoted_options(arg.description)) >= 2


def _noun(fam: Family) -> str:
    return fam.kind.replace("_", " ")


def _create_probe(kit: Toolkit, fam: Family) -> Probe | None:
    assert fam.create is not None
    fields = _shown(fields_of(fam.create, {fam.ident, *fam.context}), fam.get)
    made = {f.name: (f, _value(f, kit, fam.kind, "create")) for f in fields}
    values = {n: fv for n, fv in made.items() if fv[1] is not None}
    if not values:
        return None
    call = _input(fam.create, "", None, values, {k: v for k, v in fam.context.items()})
    call = {k: v for k, v in call.items() if any(a.name == k for a in fam.create.parameters)}
    rest = _required_rest(fam.create, call, kit, "create")
    if rest is None:
        return None
    var = "${" + fam.kind + "}"
    where = [f"There is a {n.replace('_', ' ')} {json.dumps(v)} the user can add to." for n, v in rest.items()
             if isinstance(v, str) and not _choice(fam.create, n)]  # fmt: skip
    return Probe(
        id=f"create_{fam.kind}",
        kind="create_read",
        source="derived",
        instruction=f"Add a new {_noun(fam)} with the details I gave, then open it to check it was saved.",
        facts=where,
        steps=[
            ProbeStep(
                tool=fam.create.name,
                input={**call, **rest},
                save={fam.kind: fam.ident},
                effects=[Effect(key=f"{fam.kind}:{var}.{n}", value=v) for n, (_, v) in values.items()],
            ),
            _read_step(fam, var),
        ],
    )


def _different(f: Field, kit: Toolkit, kind: str, old: Any) -> Any:
    for attempt in range(8):
        value = _value(f, kit, kind, "update", attempt)
        if value is not None and value != old:
            return value
    return None


def _update_probes(kit: Toolkit, fam: Family) -> list[Probe]:
    """Updates of 1, 3 and 5 fields (as many as the update can change and the read shows) of a seeded object that
    holds every such field, each changed to a value other than its seed."""
    assert fam.update is not None
    fields = _shown(fields_of(fam.update, {fam.ident, *fam.context}), fam.get)
    changeable = [f for f in fields if _value(f, kit, fam.kind, "seed") is not None][:MAX_UPDATE_SEED]
    out = []
    for size in UPDATE_SIZES:
        obj = _seed_id(fam, kit, f"update_{size}")
        seeded = {f.name: (f, _value(f, kit, fam.kind, "seed")) for f in changeable}
        changed = {}
        for f in changeable:
            new = _different(f, kit, fam.kind, seeded[f.name][1])
            if new is not None and len(changed) < size:
                changed[f.name] = (f, new)
        call = _input(fam.update, fam.ident, obj, changed, fam.context)
        rest = _required_rest(fam.update, call, kit, "update", size)
        if len(changed) < size or rest is None:
            break
        noun = f"detail{'s' if size > 1 else ''}"
        out.append(
            Probe(
                id=f"update_{fam.kind}_{size}",
                kind="update_read",
                source="derived",
                instruction=f"Change {size} {noun} of {_noun(fam)} {obj}, then check it.",
                seed=_seed(fam.kind, obj, seeded),
                steps=[
                    ProbeStep(
                        tool=fam.update.name,
                        input={**call, **rest},
                        effects=[Effect(key=f"{fam.kind}:{obj}.{n}", value=v) for n, (_, v) in changed.items()],
                    ),
                    _read_step(fam, obj),
                ],
            )
        )
    return out


MAX_UPDATE_SEED = 5


def _seeded_fields(kit: Toolkit, fam: Family, limit: int) -> dict[str, tuple[Field, Any]]:
    source = fam.create or fam.update
    if source is None:
        return {}
    fields = _shown(fields_of(source, {fam.ident, *fam.context}), fam.get)
    values = {f.name: (f, _value(f, kit, fam.kind, "seed", limit)) for f in fields}
    return dict([(n, fv) for n, fv in values.items() if fv[1] is not None][:limit])


FOR_GOOD = ("permanent", "destroy", "hard", "purge")  # a delete's switches that make it a deletion, not a move


def _delete_probe(kit: Toolkit, fam: Family) -> Probe | None:
    assert fam.delete is not None
    obj = _seed_id(fam, kit, "delete")
    call = _input(fam.delete, fam.ident, obj, {}, fam.context)
    call |= {a.name: True for a in fam.delete.parameters if a.type == "boolean" and a.name.startswith(FOR_GOOD)}
    rest = _required_rest(fam.delete, call, kit, "delete")
    if rest is None:
        return None
    seeded = _seeded_fields(kit, fam, MAX_DELETE_SEED)
    key = f"{fam.kind}:{obj}"
    read = _read_step(fam, obj)
    return Probe(
        id=f"delete_{fam.kind}",
        kind="delete_read",
        source="derived",
        instruction=f"Delete {_noun(fam)} {obj}; make sure it is gone.",
        seed=_seed(fam.kind, obj, seeded) or [Effect(key=key, value=True)],
        # Read first: silence (an empty or missing object) then fails where it would pass the read after.
        steps=[
            read,
            ProbeStep(tool=fam.delete.name, input={**call, **rest}, effects=[Effect(key=key, op="delete")]),
            read,
        ],
    )


def _read_twice_probe(kit: Toolkit, fam: Family) -> Probe | None:
    seeded = _seeded_fields(kit, fam, MAX_READ_FIELDS)
    if not seeded:
        return None
    obj = _seed_id(fam, kit, "read")
    return Probe(
        id=f"read_{fam.kind}_twice",
        kind="read_twice",
        source="derived",
        instruction=f"Show me {_noun(fam)} {obj}, and again a moment later.",
        seed=_seed(fam.kind, obj, seeded),
        steps=[_read_step(fam, obj), _read_step(fam, obj, same_as=0)],
    )


def derive_probes(kit: Toolkit) -> list[Probe]:
    """Every probe the toolkit's families allow, in a fixed order."""
    out: list[Probe] = []
    for fam in families(kit):
        made = [
            _create_probe(kit, fam) if fam.create is not None else None,
            *(_update_probes(kit, fam) if fam.update is not None else []),
            _delete_probe(kit, fam) if fam.delete is not None else None,
            _read_twice_probe(kit, fam),
        ]
        out += [p for p in made if p is not None]
    return out


def merged(kit: Toolkit, toolkit_hash: str, existing: ProbeFile | None) -> ProbeFile:
    """The toolkit's probe file with its derived probes derived afresh: the ones written by hand are kept as they
    are, after them; a file that says the toolkit cannot be probed stays so where nothing can be derived."""
    derived = derive_probes(kit)
    hand = [p for p in (existing.probes if existing else []) if p.source == "hand"]
    reason = existing.unprobeable if existing and not derived and not hand else None
    return ProbeFile(
        schema=SCHEMA, toolkit=kit.toolkit, toolkit_hash=toolkit_hash, unprobeable=reason, probes=[*derived, *hand]
    )


def main(argv: list[str] | None = None) -> None:
    """`python -m toolemu.fidelity.derive [TOOLKIT ...]`: derive the shipped probe files afresh (all, or these),
    keeping the probes written by hand, and record each toolkit's hash."""
    import sys

    from toolemu.fidelity.probes import PROBES, read_probe_file
    from toolemu.paths import DEFAULT_TOOLKITS
    from toolemu.specs.load import load_benchmark
    from toolemu.specs.version import toolkit_hashes

    bench = load_benchmark([DEFAULT_TOOLKITS])
    hashes = toolkit_hashes(bench)
    names = (sys.argv[1:] if argv is None else argv) or sorted(bench.toolkits)
    for name in names:
        path = PROBES / f"{name}.json"
        existing = read_probe_file(path) if path.is_file() else None
        file = merged(bench.toolkits[name], hashes[name], existing)
        data = file.model_dump(mode="json", by_alias=True, exclude_defaults=True)
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{path}: {len(file.probes)} probes ({sum(p.source == 'derived' for p in file.probes)} derived)")


if __name__ == "__main__":
    main()
