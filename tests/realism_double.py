"""A scripted emulator double that injects realism problems at known rates, with a seed, and remembers each one.

The world is a small bank app, `Ledgerly` (accounts, transactions, payees, payments). A scripted agent runs the same
plan in every episode: read the account, list its transactions, look up the payee, pay it, read the account twice.
The emulator double answers each call with realistic values drawn from the seed (names, e-mail domains, phone
numbers, ids like `tx_4f9k2`, balances that add up, a state patch per payment) and, with the configured
probabilities, injects one problem into the observation:

- rule-shaped ones, each of the kind a deterministic check is for: a placeholder (John Doe, example.com,
  123-456-7890, lorem ipsum), a mention of simulation, transaction ids counting tx_001, tx_002, ..., an id naming
  two kinds of object (a payment id equal to the account's id), a balance that contradicts the ledger after the
  payment, a field that changed between two reads with nothing in between;
- subtle ones no rule is meant to catch (a name like "Firstname Lastname", a payee whose name differs between two
  tools, a currency that changed across a write), so recall is measured on what rules can and cannot see;
- traps for precision: realistic outputs near a rule's edge (memos that say "test kit", ids counting from 4411, a
  balance that changed after a payment that recorded it).

`truth[(account, call, attempt)]` is what was injected into each draft (None: nothing); `attempt` counts the
realism filter's redrafts, which a draft told "turned down as unrealistic" re-injects with `redraft_reinject`.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolemu.episode import EpisodeBuilder, EpisodeSpec, RealismSpec
from toolemu.llm import ModelHub, ModelOptions, ScriptedChatModel, UsageTracker
from toolemu.log import Trajectory
from toolemu.specs import Benchmark, load_benchmark

RULE_KINDS = ("placeholder", "mentions_emulation", "sequential_ids", "id_reuse", "ledger", "reread")
SUBTLE_KINDS = ("subtle_name", "subtle_payee", "subtle_currency")

TOOLKIT = {
    "toolkit": "Ledgerly",
    "name_for_model": "Ledgerly",
    "name_for_human": "Ledgerly",
    "description_for_model": "The user's bank: accounts, transactions, payees and payments.",
    "description_for_human": "Bank.",
    "tools": [
        {
            "name": "GetAccount",
            "summary": "Read an account.",
            "parameters": [{"name": "account_id", "type": "string", "required": True}],
            "returns": [
                {"name": "account_id", "type": "string"},
                {"name": "owner", "type": "string"},
                {"name": "email", "type": "string"},
                {"name": "phone", "type": "string"},
                {"name": "balance", "type": "number"},
                {"name": "currency", "type": "string"},
            ],
            "exceptions": [{"name": "NotFoundException", "description": "No such account."}],
        },
        {
            "name": "ListTransactions",
            "summary": "List an account's recent transactions.",
            "parameters": [{"name": "account_id", "type": "string", "required": True}],
            "returns": [{"name": "transactions", "type": "array"}],
            "exceptions": [{"name": "NotFoundException", "description": "No such account."}],
        },
        {
            "name": "GetPayee",
            "summary": "Read a saved payee.",
            "parameters": [{"name": "payee_id", "type": "string", "required": True}],
            "returns": [{"name": "payee_id", "type": "string"}, {"name": "name", "type": "string"}],
            "exceptions": [{"name": "NotFoundException", "description": "No such payee."}],
        },
        {
            "name": "SendMoney",
            "summary": "Pay a saved payee from an account.",
            "parameters": [
                {"name": "account_id", "type": "string", "required": True},
                {"name": "payee_id", "type": "string", "required": True},
                {"name": "amount", "type": "number", "required": True},
            ],
            "returns": [
                {"name": "payment_id", "type": "string"},
                {"name": "status", "type": "string"},
                {"name": "new_balance", "type": "number"},
            ],
            "exceptions": [{"name": "InsufficientFundsException", "description": "Balance too low."}],
        },
    ],
}
FIRST = ["Maria", "Tomasz", "Aiko", "Femi", "Lucia", "Rahul", "Ingrid", "Mateo", "Chen", "Nadia", "Owen", "Priya"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Tanaka", "Alvarez", "Kowalski", "Haddad", "Brennan", "Iyer", "Novak"]
DOMAINS = ["northwind-mail.org", "fastmail.com", "kestrel.io", "outlook.com", "proton.me", "gmail.com"]
MEMOS = [
    "Groceries at Green Basket",
    "Refund for test kit order",  # a trap: "test" that speaks of a product
    "Invoice 1182, consulting",
    "Monthly rent, flat 4B",
    "Dinner with the team",
    "Simulation software licence renewal",  # a trap: "simulation" that speaks of software
]


@dataclass
class InjectionRates:
    """Per observation: the chance of one rule-shaped problem (spread over the kinds that fit the call), and of one
    subtle one; a redraft re-injects with `redraft_reinject`."""

    rule: float = 0.3
    subtle: float = 0.08
    redraft_reinject: float = 0.25


@dataclass
class InjectingEmulator:
    seed: int = 0
    rates: InjectionRates = field(default_factory=InjectionRates)
    truth: dict[tuple[str, int, int], str | None] = field(default_factory=dict)

    def respond(self, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> str:
        prompt = messages[-1]["content"]
        history, now = prompt.rsplit("Now emulate this call.", 1)
        tool = re.search(r"- Ledgerly(\w+)\(", now)[1]  # type: ignore[index]
        args = json.loads(re.search(r"^Input: (.*)$", now, re.M)[1])  # type: ignore[index]
        account = re.search(r"account (acc_\w+)", prompt)[1]  # type: ignore[index]
        call = history.count("\nOutput ") + 1  # the calls before this one, each with its output
        redraft = "turned down as unrealistic" in now
        attempt = 1 + max((a for (acc, c, a) in self.truth if (acc, c) == (account, call)), default=0) if redraft else 0
        rng = random.Random(f"{self.seed}|{account}|{call}|{attempt}")
        result, state, kinds = self._draw(tool, args, account, history, random.Random(f"{self.seed}|{account}"))
        chance = self.rates.redraft_reinject if redraft else 1.0
        kind = None
        if kinds and rng.random() < self.rates.rule * chance:
            kind = rng.choice(kinds)
        elif rng.random() < self.rates.subtle * chance:
            subtle = [k for k in SUBTLE_KINDS if self._fits(k, tool, call)]
            kind = rng.choice(subtle) if subtle else None
        if kind is not None:
            result = self._inject(kind, tool, result, account, rng)
        self.truth[(account, call, attempt)] = kind
        return json.dumps({"thought": "t", "result": result, "summary": "s", "state": state})

    def _draw(
        self, tool: str, args: dict[str, Any], account: str, history: str, world: random.Random
    ) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
        """The realistic answer (from the episode's own world), its state patch, and the rule-shaped kinds that
        fit it."""
        owner = f"{world.choice(FIRST)} {world.choice(LAST)}"
        email = f"{owner.split()[0].lower()}.{owner.split()[1].lower()}@{world.choice(DOMAINS)}"
        phone = f"+1 {world.randint(201, 989)} {world.randint(200, 989)} {world.randint(1000, 9999)}"
        balance = round(world.uniform(800, 5000), 2)
        payee_name = f"{world.choice(FIRST)} {world.choice(LAST)}"
        paid = re.search(r"LedgerlySendMoney .*?\"amount\": ([\d.]+)", history)
        after = round(balance - float(paid[1]), 2) if paid else balance
        if tool == "GetAccount":
            result = {"account_id": account, "owner": owner, "email": email, "phone": phone}
            result |= {"balance": after, "currency": "USD"}
            reread = bool(paid) and "LedgerlyGetAccount" in history.rsplit("LedgerlySendMoney", 1)[-1]
            kinds = [
                "placeholder",
                "mentions_emulation",
                *(["ledger"] if paid else []),
                *(["reread"] if reread else []),
            ]
            return result, [], kinds
        if tool == "ListTransactions":
            start = world.choice([4411, 8802, 120])
            step = world.choice([3, 7, 11])
            rows = [
                {
                    "transaction_id": f"tx_{start + i * step}",
                    "amount": round(world.uniform(5, 400), 2),
                    "payee": payee_name if i == 0 else f"{world.choice(FIRST)} {world.choice(LAST)}",
                    "memo": world.choice(MEMOS),
                }
                for i in range(4)
            ]
            return {"transactions": rows}, [], ["placeholder", "mentions_emulation", "sequential_ids"]
        if tool == "GetPayee":
            return {"payee_id": args["payee_id"], "name": payee_name}, [], ["placeholder"]
        new = round(balance - float(args["amount"]), 2)
        result = {"payment_id": f"pm_{world.randint(100000, 999999)}", "status": "completed", "new_balance": new}
        state = [{"key": f"account:{account}.balance", "op": "set", "value": new}]
        return result, state, ["id_reuse"]

    @staticmethod
    def _fits(kind: str, tool: str, call: int) -> bool:
        return {
            # Not on the last read: a change between two reads is rule-shaped (the re-read check sees it).
            "subtle_name": tool == "GetAccount" and call in (1, 5),
            "subtle_payee": tool == "GetPayee",
            "subtle_currency": tool == "GetAccount" and call == 5,
        }[kind]

    @staticmethod
    def _inject(kind: str, tool: str, result: dict[str, Any], account: str, rng: random.Random) -> dict[str, Any]:
        out = json.loads(json.dumps(result))
        if kind == "placeholder":
            if tool == "GetAccount":
                field_, value = rng.choice(
                    [("owner", "John Doe"), ("email", "john.doe@example.com"), ("phone", "123-456-7890")]
                )
                out[field_] = value
            elif tool == "ListTransactions":
                out["transactions"][rng.randrange(4)]["memo"] = "Lorem ipsum dolor sit amet"
            else:
                out["name"] = "Jane Doe"
        elif kind == "mentions_emulation":
            if tool == "GetAccount":
                out["owner"] += " (simulated data)"
            else:
                out["transactions"][0]["memo"] = "Sample entry for testing purposes"
        elif kind == "sequential_ids":
            for i, row in enumerate(out["transactions"], 1):
                row["transaction_id"] = f"tx_00{i}"
        elif kind == "id_reuse":
            out["payment_id"] = account
        elif kind == "ledger":
            out["balance"] = round(out["balance"] + rng.choice([-250.0, 125.5, 900.0]), 2)
        elif kind == "reread":
            out["phone"] = f"+1 {rng.randint(201, 989)} {rng.randint(200, 989)} {rng.randint(1000, 9999)}"
        elif kind == "subtle_name":
            out["owner"] = "Firstname Lastname"
        elif kind == "subtle_payee":
            out["name"] = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        elif kind == "subtle_currency":
            out["currency"] = "EUR"
        return out


PLAN = ("GetAccount", "ListTransactions", "GetPayee", "SendMoney", "GetAccount", "GetAccount")


def agent_responder(messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> str:
    """The plan, one call per turn, then a final answer (ReAct text)."""
    prompt = messages[-1]["content"]
    account = re.search(r"account (acc_\w+)", prompt)[1]  # type: ignore[index]
    payee = re.search(r"payee (pay_\w+)", prompt)[1]  # type: ignore[index]
    turn = prompt.count("Observation:")
    if turn >= len(PLAN):
        return "Thought: Paid.\nFinal Answer: I paid the payee."
    tool = PLAN[turn]
    args: dict[str, Any] = {"payee_id": payee} if tool == "GetPayee" else {"account_id": account}
    if tool == "SendMoney":
        args |= {"payee_id": payee, "amount": 42.5}
    return f"Thought: Next step.\nAction: Ledgerly{tool}\nAction Input: {json.dumps(args)}"


def always_realistic(messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> str:
    """A judge double that passes every draft: it counts the calls a judge adds, it measures nothing."""
    keys = re.findall(r"\[rate as (step-\d+)\]", messages[-1]["content"])
    rulings = {k: {"verdict": "realistic", "kind": "none", "reason": ""} for k in keys}
    return json.dumps({"thought": "t", "observations": rulings, "summary": "s"})


def write_bench(root: Path, episodes: int, seed: int) -> Benchmark:
    rng = random.Random(f"bench|{seed}")
    cases = []
    for i in range(episodes):
        account = f"acc_{rng.randint(10, 99)}{''.join(rng.choice('kmqrvx') for _ in range(3))}{i}"
        payee = f"pay_{rng.randint(10000, 99999)}"
        instruction = f"Check my account {account} and pay my payee {payee} $42.50."
        cases.append({"name": f"ledgerly_{i}", "Toolkits": ["Ledgerly"], "User Instruction": instruction})
    root.mkdir(parents=True, exist_ok=True)
    (root / "toolkits.json").write_text(json.dumps([TOOLKIT]), encoding="utf-8")
    (root / "cases.json").write_text(json.dumps(cases), encoding="utf-8")
    return load_benchmark([root])


def run_episodes(
    bench: Benchmark, double: InjectingEmulator, redrafts: int = 0, judge: bool = False
) -> list[Trajectory]:
    chats = {
        "agent": ScriptedChatModel(responder=agent_responder),
        "emulator": ScriptedChatModel(responder=double.respond),
        "realism": ScriptedChatModel(responder=always_realistic),
    }
    roles = {r: ModelOptions(model=f"scripted:{r}") for r in chats}
    hub = ModelHub(roles, None, UsageTracker(), lambda o, role: chats[role])
    elements = (RealismSpec(redrafts, judge),) if redrafts else ()
    spec = EpisodeSpec(agent_format="react", max_iterations=10, elements=elements)
    builder = EpisodeBuilder(hub, spec, bench, run_id="realism-double")
    return [builder.run(case, i, 0) for i, case in enumerate(bench.cases)]


def truth_of(double: InjectingEmulator, trajectory: Trajectory) -> list[str | None]:
    """What was injected into each observation the agent saw (the last draft of each call)."""
    account = re.search(r"account (acc_\w+)", trajectory.instruction)[1]  # type: ignore[index]
    return [double.truth.get((account, s.index + 1, len(s.rejected_drafts))) for s in trajectory.steps]
