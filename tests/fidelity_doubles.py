"""Emulator doubles of known fidelity, for `toolemu fidelity`'s tests.

The world is a small card file (`Cardfile`: cards with five fields, two accounts) and its probes (`PROBES`: create,
update 1, 3 and 5 fields, get-delete-get, list-delete-list, a transfer, a read twice). The double plays the
emulator role: it reads the call and the episode's earlier calls from the emulator's prompt, rebuilds the world
from the seed and those calls, and answers as the real tool would, except for its one known fault:

- `drop=k`: an update applies all but the last k of the fields it names (it still says it succeeded);
- `forget_delete`: a delete says it succeeded and removes nothing;
- `first_state`: every read answers from the world as it was before the episode's first call;
- `random_seed`: every output is drawn at random (right types, random values).

Every output is valid for the tool's reply schema, so the pipeline takes it as any model's.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolemu.llm import ScriptedChatModel
from toolemu.llm.options import ModelOptions

KIT = "Cardfile"
FIELDS = ("title", "owner", "city", "color", "size")

TOOLKIT: dict[str, Any] = {
    "toolkit": KIT,
    "name_for_model": KIT,
    "name_for_human": "Cardfile",
    "description_for_model": "The user's index cards (title, owner, city, color, size) and two cash accounts.",
    "description_for_human": "Cards.",
    "tools": [
        {
            "name": "CreateCard",
            "summary": "Create a card.",
            "parameters": [
                {"name": "title", "type": "string", "required": True},
                {"name": "owner", "type": "string"},
                {"name": "city", "type": "string"},
                {"name": "color", "type": "string"},
                {"name": "size", "type": "integer"},
            ],
            "returns": [{"name": "card_id", "type": "string", "description": "The new card's id."}],
            "exceptions": [{"name": "InvalidRequestException", "description": "A bad field."}],
        },
        {
            "name": "GetCard",
            "summary": "Read one card.",
            "parameters": [{"name": "card_id", "type": "string", "required": True}],
            "returns": [{"name": "card", "type": "object", "description": "With 'card_id' and the card's fields."}],
            "exceptions": [{"name": "NotFoundException", "description": "No such card."}],
        },
        {
            "name": "UpdateCard",
            "summary": "Change fields of a card.",
            "parameters": [
                {"name": "card_id", "type": "string", "required": True},
                {"name": "changes", "type": "object", "required": True, "description": "Fields to set."},
            ],
            "returns": [{"name": "card", "type": "object", "description": "The updated card."}],
            "exceptions": [{"name": "NotFoundException", "description": "No such card."}],
        },
        {
            "name": "DeleteCard",
            "summary": "Delete a card.",
            "parameters": [{"name": "card_id", "type": "string", "required": True}],
            "returns": [{"name": "deleted", "type": "boolean"}],
            "exceptions": [{"name": "NotFoundException", "description": "No such card."}],
        },
        {
            "name": "ListCards",
            "summary": "List every card.",
            "parameters": [],
            "returns": [
                {
                    "name": "cards",
                    "type": "array",
                    "description": "Each an object with 'card_id', 'title', 'owner', 'city', 'color', 'size'.",
                }
            ],
            "exceptions": [],
        },
        {
            "name": "ListAccounts",
            "summary": "List the accounts and their balances.",
            "parameters": [],
            "returns": [
                {"name": "accounts", "type": "array", "description": "Each an object with 'account_id', 'balance'."}
            ],
            "exceptions": [],
        },
        {
            "name": "Transfer",
            "summary": "Move money between the two accounts.",
            "parameters": [
                {"name": "from_account", "type": "string", "required": True},
                {"name": "to_account", "type": "string", "required": True},
                {"name": "amount", "type": "number", "required": True},
            ],
            "returns": [{"name": "transfer_id", "type": "string"}],
            "exceptions": [{"name": "InsufficientFundsException", "description": "Not enough money."}],
        },
    ],
}


def _card(ident: str, **fields: Any) -> list[dict[str, Any]]:
    return [{"key": f"card:{ident}.{k}", "value": v} for k, v in fields.items()]


def _gone(ident: str) -> dict[str, Any]:
    return {"key": f"card:{ident}", "op": "delete"}


FIVE = {"title": "Atlas", "owner": "Mira Holt", "city": "Porto", "color": "teal", "size": 3}
CHANGES = {"title": "Beacon", "owner": "Ravi Menon", "city": "Leeds", "color": "amber", "size": 7}


def _update(n: int) -> dict[str, Any]:
    ident = f"c_10{n}"
    changes = dict(list(CHANGES.items())[:n])
    return {
        "id": f"update_{n}",
        "kind": "update_read",
        "instruction": f"Change {n} fields of card {ident}.",
        "seed": _card(ident, **FIVE),
        "steps": [
            {
                "tool": "UpdateCard",
                "input": {"card_id": ident, "changes": changes},
                "effects": [{"key": f"card:{ident}.{k}", "value": v} for k, v in changes.items()],
            },
            {"tool": "GetCard", "input": {"card_id": ident}, "checks": [{"object": f"card:{ident}"}]},
        ],
    }


PROBES: dict[str, Any] = {
    "schema": "toolemu-probes/1",
    "toolkit": KIT,
    "probes": [
        {
            "id": "create_read",
            "kind": "create_read",
            "instruction": "Make a card for Atlas.",
            "steps": [
                {
                    "tool": "CreateCard",
                    "input": FIVE,
                    "save": {"card": "card_id"},
                    "effects": [{"key": f"card:${{card}}.{k}", "value": v} for k, v in FIVE.items()],
                },
                {"tool": "GetCard", "input": {"card_id": "${card}"}, "checks": [{"object": "card:${card}"}]},
            ],
        },
        _update(1),
        _update(3),
        _update(5),
        {
            "id": "delete_read",
            "kind": "delete_read",
            "instruction": "Delete card c_201.",
            "seed": _card("c_201", title="Old", owner="Ana Ruiz"),
            "steps": [
                {"tool": "GetCard", "input": {"card_id": "c_201"}, "checks": [{"object": "card:c_201"}]},
                {"tool": "DeleteCard", "input": {"card_id": "c_201"}, "effects": [_gone("c_201")]},
                {"tool": "GetCard", "input": {"card_id": "c_201"}, "checks": [{"object": "card:c_201"}]},
            ],
        },
        {
            "id": "delete_list",
            "kind": "delete_read",
            "instruction": "Delete card c_202 and list what is left.",
            "seed": [*_card("c_202", title="Gone"), *_card("c_203", title="Kept", owner="Lee Park")],
            "steps": [
                {"tool": "ListCards", "checks": [{"object": "card:c_202"}]},
                {"tool": "DeleteCard", "input": {"card_id": "c_202"}, "effects": [_gone("c_202")]},
                {"tool": "ListCards", "checks": [{"object": "card:c_202"}, {"object": "card:c_203"}]},
            ],
        },
        {
            "id": "transfer",
            "kind": "transfer",
            "instruction": "Move 75 from a_1 to a_2.",
            "seed": [
                {"key": "account:a_1.balance", "value": 500.0},
                {"key": "account:a_2.balance", "value": 120.0},
            ],
            "steps": [
                {
                    "tool": "Transfer",
                    "input": {"from_account": "a_1", "to_account": "a_2", "amount": 75.0},
                    "effects": [
                        {"key": "account:a_1.balance", "value": 425.0},
                        {"key": "account:a_2.balance", "value": 195.0},
                    ],
                },
                {"tool": "ListAccounts", "checks": [{"object": "account:a_1"}, {"object": "account:a_2"}]},
            ],
        },
        {
            "id": "read_twice",
            "kind": "read_twice",
            "instruction": "Look at card c_301 twice.",
            "seed": _card("c_301", title="Still", owner="Kim Sato", city="Oslo"),
            "steps": [
                {"tool": "GetCard", "input": {"card_id": "c_301"}, "checks": [{"object": "card:c_301"}]},
                {"tool": "GetCard", "input": {"card_id": "c_301"}, "checks": [{"object": "card:c_301"}], "same_as": 0},
            ],
        },
    ],
}


def seed_world() -> dict[str, dict[str, Any]]:
    """Every object the probes seed, by id (ids are unique across the probes)."""
    world: dict[str, dict[str, Any]] = {}
    for probe in PROBES["probes"]:
        for effect in probe.get("seed", []):
            obj, field = effect["key"].rsplit(".", 1)
            world.setdefault(obj.partition(":")[2], {})[field] = effect["value"]
    return world


def write_fixture(folder: Path) -> tuple[Path, Path]:
    """The toolkit file and a probes folder holding its probe file."""
    kits = folder / "toolkits"
    probes = folder / "probes"
    kits.mkdir(parents=True, exist_ok=True)
    probes.mkdir(parents=True, exist_ok=True)
    (kits / f"{KIT}.json").write_text(json.dumps(TOOLKIT), encoding="utf-8")
    (probes / f"{KIT}.json").write_text(json.dumps(PROBES), encoding="utf-8")
    return kits / f"{KIT}.json", probes


_CALL = re.compile(r"^Call \d+: (\S+) (.*)$", re.M)
_NOW = re.compile(r"Now emulate this call\.\nTool:\n- (\w+)\(.*?^Input: (.*?)$", re.S | re.M)


@dataclass
class CardfileDouble:
    """An emulator of known fidelity (see the module's docstring)."""

    drop: int = 0
    forget_delete: bool = False
    first_state: bool = False
    random_seed: int | None = None

    def world_after(self, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
        world = {k: dict(v) for k, v in seed_world().items()}
        created = 0
        for tool, args in calls:
            name = tool.removeprefix(KIT)
            if name == "CreateCard":
                created += 1
                world[f"c_new_{created}"] = {k: v for k, v in args.items() if v is not None}
            elif name == "UpdateCard" and args.get("card_id") in world:
                items = list(args.get("changes", {}).items())
                for key, value in items[: max(0, len(items) - self.drop)]:
                    world[args["card_id"]][key] = value
            elif name == "DeleteCard" and not self.forget_delete:
                world.pop(args.get("card_id"), None)
            elif name == "Transfer":
                amount = float(args["amount"])
                world[args["from_account"]]["balance"] -= amount
                world[args["to_account"]]["balance"] += amount
        return world

    def answer(self, tool: str, args: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        name = tool.removeprefix(KIT)
        now = self.world_after(calls)
        seen = self.world_after([]) if self.first_state else now
        missing = {"exception": "NotFoundException", "message": "no such card"}
        if name == "CreateCard":
            created = sum(t.removeprefix(KIT) == "CreateCard" for t, _ in calls) + 1
            return {"card_id": f"c_new_{created}"}
        if name == "GetCard":
            card = seen.get(args["card_id"])
            return {"card": {"card_id": args["card_id"], **card}} if card is not None else missing
        if name == "UpdateCard":
            if args["card_id"] not in now:
                return missing
            after = self.world_after([*calls, (tool, args)])
            return {"card": {"card_id": args["card_id"], **after[args["card_id"]]}}
        if name == "DeleteCard":
            return {"deleted": True} if args["card_id"] in now else missing
        if name == "ListCards":
            cards = [{"card_id": k, **v} for k, v in seen.items() if k.startswith("c_")]
            return {"cards": cards}
        if name == "ListAccounts":
            return {"accounts": [{"account_id": k, **v} for k, v in seen.items() if k.startswith("a_")]}
        if name == "Transfer":
            return {"transfer_id": f"t_{len(calls) + 1}"}
        raise AssertionError(f"unknown tool {tool}")

    def respond(self, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> str:
        prompt = messages[-1]["content"]
        now = _NOW.search(prompt)
        assert now is not None, prompt[-500:]
        calls = [(t, json.loads(a)) for t, a in _CALL.findall(prompt)]
        tool, args = now.group(1), json.loads(now.group(2))
        if self.random_seed is not None:
            result = _random_result(tool, random.Random(f"{self.random_seed}:{prompt}"))
        else:
            result = self.answer(tool, args, calls)
        return json.dumps({"thought": "", "result": result, "summary": ""})

    def factory(self, judge_replies: list[str] | None = None) -> Any:
        """A chat factory (ModelHub's): this double for the emulator, a scripted judge for the evaluator."""

        def make(options: ModelOptions, role: str) -> ScriptedChatModel:
            if role == "emulator":
                return ScriptedChatModel(responder=self.respond)
            return ScriptedChatModel(replies=judge_replies or ['{"reason": "", "verdict": "differs"}'])

        return make


def _random_result(tool: str, rng: random.Random) -> dict[str, Any]:
    def word() -> str:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))

    def card() -> dict[str, Any]:
        return {"card_id": word(), **{k: word() for k in FIELDS[:4]}, "size": rng.randint(1, 1000)}

    name = tool.removeprefix(KIT)
    if name in ("GetCard", "UpdateCard"):
        return {"card": card()}
    if name == "ListCards":
        return {"cards": [card() for _ in range(3)]}
    if name == "ListAccounts":
        return {"accounts": [{"account_id": word(), "balance": rng.uniform(0, 1000)} for _ in range(2)]}
    if name == "DeleteCard":
        return {"deleted": rng.random() < 0.5}
    return {"card_id": word()} if name == "CreateCard" else {"transfer_id": word()}
