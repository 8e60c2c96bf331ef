"""What a run will cost before it runs (`toolemu run --estimate`): the expected calls, tokens and dollars per role.

The method, as the estimate prints it:

- A token profile says, per case, what one episode asks of each role (calls, prompt and completion tokens) and what
  one judgement of one sample asks of each scorer's judge. The profile shipped with the package
  (token_profile.json, written by scripts/token_profile.py) was recorded by a dry run of the shipped benchmark whose
  scripted models count a token per four characters of text, once with the simulated user off and once with it on
  (and the monitor gate on). Its scripted agent makes one tool call and answers in a few words, so its prompts are
  the real ones but its episodes are short: for real models read the estimate as a floor. `--estimate-from RUN`
  takes the profile from a run of your own instead (its recorded usage per case and role: the best guess for the
  same models).
- Each selected (case, trial) pair adds its case's episode; a case the profile lacks adds the profile's mean
  episode. Each scorer that asks a model adds its judgement times the samples drawn and the judges of a panel;
  deterministic scorers cost nothing.
- Dollars: the tokens at the price table's prices for each role's model (toolemu.llm.prices). A free model (own
  hardware, or no model) costs $0; an unpriced one, or a role the profile has no record of, is named and left out
  of the dollars, which are then a lower bound.
- A reference run is read whole or not at all: a line that is not a record (a text file given as a run), a count
  outside its bounds (a negative one, one past a trillion: toolemu.llm.usage) or a judge's samples outside 1..100
  is one error line naming the file, line and field, and a run with no finished episode gives nothing to scale:
  an estimate never rests on a part of a file, nor goes below $0, so `--confirm-above` always has a true floor.

Nothing is built or written: no model, no run folder.
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field, ValidationError

from toolemu.errors import InputError, first_error
from toolemu.llm.prices import model_price, price_table
from toolemu.log import RunLog, read_run, split_eval_key
from toolemu.log.usage import MAX_COUNT, Usage
from toolemu.scorers import info_for_eval_type

PROFILE_FILE = "token_profile.json"
MAX_SAMPLES = 100  # a judge's samples per trajectory (the CLI's --num-eval-samples bound)
Mean = Annotated[float, Field(ge=0, le=MAX_COUNT, allow_inf_nan=False)]
TOKENS_PER_CHAR = 0.25  # what the shipped profile's scripted models count: a token per four characters


class Tokens(BaseModel):
    """Mean calls and tokens (per episode of a role, or per judgement of one sample)."""

    calls: Mean = 0.0
    prompt_tokens: Mean = 0.0
    completion_tokens: Mean = 0.0

    @classmethod
    def of(cls, used: Usage | Tokens, per: float = 1) -> Tokens:
        """The calls and tokens of a record's usage (or of a sum), each divided by `per`."""
        return cls(
            calls=used.calls / per,
            prompt_tokens=used.prompt_tokens / per,
            completion_tokens=used.completion_tokens / per,
        )

    def plus(self, other: Tokens, times: float = 1.0) -> Tokens:
        """A sum (the bounds are on what is read: a plan's total may be larger)."""
        return Tokens.model_construct(
            calls=self.calls + times * other.calls,
            prompt_tokens=self.prompt_tokens + times * other.prompt_tokens,
            completion_tokens=self.completion_tokens + times * other.completion_tokens,
        )


class CaseProfile(BaseModel):
    roles: dict[str, Tokens] = Field(default_factory=dict)  # per episode, by role
    judges: dict[str, Tokens] = Field(default_factory=dict)  # per judgement of one sample, by scorer


class TokenProfile(BaseModel):
    """What episodes and judgements asked of each role, per case: the reference an estimate scales."""

    version: int = 1
    source: str  # how it was recorded, for people
    tokens: str = "as the models reported them"  # how tokens were counted
    benchmark: str | None = None  # version and hash of the benchmark it was recorded on
    cases: dict[str, CaseProfile] = Field(default_factory=dict)  # the simulated user off
    cases_with_user: dict[str, CaseProfile] = Field(default_factory=dict)  # the simulated user on

    def for_user(self, user: bool) -> dict[str, CaseProfile]:
        return (self.cases_with_user or self.cases) if user else self.cases


@functools.cache
def shipped_profile() -> TokenProfile:
    path = Path(str(resources.files("toolemu.reporting") / PROFILE_FILE))
    try:
        return TokenProfile.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError.single(path, f"cannot be read: {exc}") from None
    except ValidationError as exc:
        where, message = first_error(exc)
        raise InputError.single(path, message, field=where) from None


# --------------------------------------------------------------------------------------------- recording


def profile_of_runs(runs: Sequence[Path], flag: str = "--estimate-from") -> dict[str, CaseProfile]:
    """Per case: the mean use of each role per episode and of each scorer's judge per judgement of one sample, over
    the episodes of the runs (a judgement the scorer did not make, as not applicable, counts as none). A run with a
    line that is not a record, or with no finished episode, is refused (`flag` names where it was given)."""
    roles: dict[str, list[dict[str, Tokens]]] = defaultdict(list)
    judges: dict[str, dict[str, list[Tokens]]] = defaultdict(lambda: defaultdict(list))
    for path in runs:
        log = read_run(path)
        if log.problems:  # every line counts, or the estimate scales a part of the run as if it were all of it
            raise InputError.from_lines(log.problems)
        before = sum(len(episodes) for episodes in roles.values())
        _add_run(log, roles, judges)
        if sum(len(episodes) for episodes in roles.values()) == before:
            message = "expected a run with at least one finished episode whose usage to scale, found none"
            raise InputError.single(log.files.trajectories, message, field=flag)
    out = {}
    for case, episodes in roles.items():
        n = len(episodes)
        names = sorted({r for ep in episodes for r in ep})
        mean_roles = {r: _mean([ep.get(r, Tokens()) for ep in episodes], n) for r in names}
        mean_judges = {s: _mean(ts, n) for s, ts in sorted(judges[case].items())}
        out[case] = CaseProfile(roles=mean_roles, judges=mean_judges)
    return out


def _add_run(
    log: RunLog, roles: dict[str, list[dict[str, Tokens]]], judges: dict[str, dict[str, list[Tokens]]]
) -> None:
    episodes, _ = log.episodes()
    for ep in episodes:
        traj = ep.trajectory
        if traj.status == "error":
            continue
        case = traj.case_name
        roles[case].append({role: Tokens.of(u) for role, u in traj.usage.items() if role != "total"})
        for key, evaluations in ep.evaluations.items():
            eval_type, judge = split_eval_key(key)
            if judge is not None:
                continue  # a panel's other judges: the estimate multiplies the headline judge's use
            for ev in evaluations[:1]:
                samples = ev.sampling.samples if ev.sampling is not None else (len(ev.samples) or 1)
                if not 1 <= samples <= MAX_SAMPLES:
                    message = f"expected 1 to {MAX_SAMPLES} samples per trajectory, got {samples:,}"
                    where = f"{log.files.eval_file(key)}: {case}#{traj.trial}"
                    raise InputError.single(where, message, field="sampling.samples")
                judges[case][info_for_eval_type(eval_type).name].append(Tokens.of(ev.usage, samples))


def _mean(items: list[Tokens], n: int) -> Tokens:
    total = Tokens()
    for t in items:
        total = total.plus(t)
    return Tokens.of(total, n)


# --------------------------------------------------------------------------------------------- estimating


class RoleEstimate(BaseModel):
    role: str
    model: str
    calls: float = 0.0
    prompt_tokens: float = 0.0
    completion_tokens: float = 0.0
    cost_usd: float | None = None  # None: unpriced, or no reference for this role
    pricing: str = "priced"  # priced, free, unpriced, no reference


class RunEstimate(BaseModel):
    pairs: int
    cases: int
    profile: str  # the profile's source
    tokens: str  # how its tokens were counted
    price_table: str
    roles: list[RoleEstimate] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def cost_usd(self) -> float:
        return sum(r.cost_usd or 0.0 for r in self.roles)

    @property
    def unknown(self) -> list[RoleEstimate]:
        """Roles whose dollars are not in the total: an unpriced model, or no reference to estimate from."""
        return [r for r in self.roles if r.cost_usd is None]

    def lines(self) -> list[str]:
        head = f"{'role':<24} {'model':<34} {'calls':>8} {'prompt tok':>12} {'completion':>11} {'cost':>11}"
        out = [
            f"estimate: {self.pairs} episodes ({self.cases} cases), before running; nothing was run or written",
            head,
        ]
        for r in self.roles:
            cost = f"${r.cost_usd:.4f}" if r.cost_usd is not None else r.pricing
            if r.pricing == "no reference":
                cost += " (calls unknown)" if r.cost_usd is not None else ""
            out.append(
                f"{r.role:<24} {r.model[:34]:<34} {_count(r.calls):>8} {_count(r.prompt_tokens):>12} "
                f"{_count(r.completion_tokens):>11} {cost:>11}"
            )
        calls = sum(r.calls for r in self.roles)
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in self.roles)
        floor = " (at least: some roles are not in it)" if self.unknown else ""
        out.append(f"total: {_count(calls)} calls, {_count(tokens)} tokens, ${self.cost_usd:.4f}{floor}")
        for r in self.unknown:
            why = (
                "the price table has no price for it" if r.pricing == "unpriced" else "the profile has no record of it"
            )
            out.append(f"not in the dollars: {r.role} ({r.model}): {why}")
        out += self.notes
        out.append(
            f"method: per case and role, one episode of the token profile ({self.profile}; tokens {self.tokens}) "
            "times the trials, a case it lacks at its mean episode; each judge's judgement times the samples and "
            f"judges; dollars at the price table {self.price_table} (toolemu/llm/prices.toml). See docs: Cost."
        )
        return out


def _count(x: float) -> str:
    return f"{math.ceil(x):,}"


@dataclass(frozen=True)
class Judge:
    """One judge of the plan: its role label, its scorer, its model, the samples it draws."""

    label: str
    scorer: str
    model: str
    samples: int


def estimate_run(
    pairs: Sequence[str],
    roles: dict[str, str],
    judges: Sequence[Judge],
    profile: TokenProfile,
    user: bool,
) -> RunEstimate:
    """`pairs`: the case of each (case, trial) pair to run; `roles`: each emulation role's model; `judges`: every
    judge that asks a model."""
    cases = profile.for_user(user)
    estimate = RunEstimate(
        pairs=len(pairs),
        cases=len(set(pairs)),
        profile=profile.source,
        tokens=profile.tokens,
        price_table=price_table().version,
    )
    missing = sorted({c for c in pairs if c not in cases})
    if missing:
        estimate.notes.append(
            f"{len(missing)} cases are not in the profile: each counted as its mean episode ({_names(missing)})"
        )
    if not cases:
        estimate.notes.append("the profile holds no case: nothing can be estimated")
    if not pairs:
        estimate.notes.append("no (case, trial) pair is selected: nothing to run")
        return estimate
    mean = _mean_case(cases)
    for role, model in roles.items():
        if not any(role in cases.get(c, mean).roles for c in pairs):
            estimate.roles.append(_unreferenced(role, model))
            continue
        total = Tokens()
        for case in pairs:
            total = total.plus(cases.get(case, mean).roles.get(role, Tokens()))
        estimate.roles.append(_priced(role, model, total))
    for judge in judges:
        if not any(cases.get(c, mean).judges for c in pairs):
            estimate.roles.append(_unreferenced(judge.label, judge.model))
            continue
        if not any(judge.scorer in cases.get(c, mean).judges for c in pairs):
            estimate.notes.append(f"{judge.label}: not in the profile; counted as the mean of the judges it has")
        total = Tokens()
        for case in pairs:
            found = cases.get(case, mean).judges
            total = total.plus(found.get(judge.scorer) or _mean_of(list(found.values())), judge.samples)
        estimate.roles.append(_priced(judge.label, judge.model, total))
    return estimate


def _names(names: list[str], shown: int = 5) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _mean_case(cases: dict[str, CaseProfile]) -> CaseProfile:
    n = len(cases) or 1
    roles = sorted({r for c in cases.values() for r in c.roles})
    judges = sorted({s for c in cases.values() for s in c.judges})
    return CaseProfile(
        roles={r: _mean([c.roles.get(r, Tokens()) for c in cases.values()], n) for r in roles},
        judges={s: _mean([c.judges.get(s, Tokens()) for c in cases.values()], n) for s in judges},
    )


def _mean_of(items: list[Tokens]) -> Tokens:
    return _mean(items, len(items)) if items else Tokens()


def _unreferenced(role: str, model: str) -> RoleEstimate:
    """A role the profile has no record of: its calls are unknown; its dollars too, unless its model is free."""
    free = model_price(model).pricing == "free"
    return RoleEstimate(role=role, model=model, cost_usd=0.0 if free else None, pricing="no reference")


def _priced(role: str, model: str, tokens: Tokens) -> RoleEstimate:
    price = model_price(model)
    cost = price.cost(round(tokens.prompt_tokens), round(tokens.completion_tokens))
    return RoleEstimate(
        role=role,
        model=model,
        calls=tokens.calls,
        prompt_tokens=tokens.prompt_tokens,
        completion_tokens=tokens.completion_tokens,
        cost_usd=cost,
        pricing=price.pricing,
    )
