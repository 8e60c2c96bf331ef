"""Benchmark rules on top of schema validation, and the coverage they summarise."""

from __future__ import annotations

import fnmatch
from collections import Counter
from dataclasses import dataclass, field

from toolemu.errors import Problem
from toolemu.specs.load import Benchmark
from toolemu.specs.models import RISK_CATEGORIES, Case, Tool

_CATEGORY_BY_KEY = {c.lower(): c for c in RISK_CATEGORIES}


def risk_category(outcome: str) -> str | None:
    """The vocabulary category an outcome starts with ('Data loss: ...'), or None."""
    head, sep, _ = outcome.partition(":")
    return _CATEGORY_BY_KEY.get(head.strip().lower()) if sep else None


@dataclass
class Coverage:
    toolkits: int = 0
    tools: int = 0
    cases: int = 0
    security_cases: int = 0
    threats_with_targets: int = 0
    policy_cases: int = 0
    user_knowledge_cases: int = 0
    user_toolkit_cases: int = 0
    check_cases: int = 0
    checks: int = 0
    cases_per_policy: Counter[str] = field(default_factory=Counter)
    cases_per_category: Counter[str] = field(default_factory=Counter)
    cases_per_threat: Counter[str] = field(default_factory=Counter)
    toolkits_per_domain: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        out = [
            f"toolkits: {self.toolkits}, tools: {self.tools}, cases: {self.cases}, "
            f"security cases: {self.security_cases}"
        ]
        out.append("cases per risk category:")
        out += [f"  {c}: {self.cases_per_category.get(c, 0)}" for c in RISK_CATEGORIES]
        out.append("security cases per threat kind:")
        out += [f"  {k}: {n}" for k, n in sorted(self.cases_per_threat.items())]
        out.append(f"threats with targets: {self.threats_with_targets} of {self.security_cases}")
        out.append(
            f"cases with a policy: {self.policy_cases}, with User Knowledge: {self.user_knowledge_cases}, "
            f"with User Toolkits: {self.user_toolkit_cases}"
        )
        out.append(f"cases with checks: {self.check_cases} ({self.checks} checks)")
        out.append("cases per policy:")
        out += [f"  {p}: {n}" for p, n in sorted(self.cases_per_policy.items())]
        out.append("toolkits per domain:")
        out += [f"  {d}: {n}" for d, n in sorted(self.toolkits_per_domain.items())]
        return out


def _case_label(index: int, case: Case) -> str:
    return f"case {index} ({case.name})"


def _target_problems(targets: list[str], initial_state: list[str], source: str, label: str) -> list[Problem]:
    """Each target is a non-empty string the Initial State mentions, so the emulator can plant it."""
    planted = [fact.lower() for fact in initial_state]
    problems = []
    for j, target in enumerate(targets):
        if not target.strip():
            message = "expected a non-empty string"
        elif not any(target.lower() in fact for fact in planted):
            message = f"expected a value that the Initial State mentions, {target!r} appears in none of its entries"
        else:
            continue
        problems.append(Problem(source, message, label, f"Threat.targets[{j}]"))
    return problems


def _user_problems(case: Case, source: str, label: str) -> list[Problem]:
    """The simulated user's keys: toolkits only the user holds, and facts that say something."""
    problems = []
    for j, name in enumerate(case.user_toolkits):
        if name in case.toolkits:
            message = f"expected a toolkit only the user holds, '{name}' is in the case's Toolkits too"
            problems.append(Problem(source, message, label, f"User Toolkits[{j}]"))
    for j, fact in enumerate(case.user_knowledge):
        if not fact.strip():
            problems.append(Problem(source, "expected a non-empty fact", label, f"User Knowledge[{j}]"))
    if case.user_persona is not None and not case.user_persona.strip():
        message = "expected a description of the user, got an empty string"
        problems.append(Problem(source, message, label, "User Persona"))
    return problems


def _check_problems(case: Case, bench: Benchmark, source: str, label: str) -> list[Problem]:
    """Each check's tool glob names a tool of the case's toolkits, and one such tool has every argument its
    conditions test (a condition `exists: false` may name an argument no tool has)."""
    tools: dict[str, Tool] = {kit.tool_full_name(t): t for kit in bench.toolkits_for(case) for t in kit.tools}
    problems = []
    for j, check in enumerate(case.checks):
        pattern = check.forbid.tool
        if pattern is None:
            continue
        matched = [tool for name, tool in tools.items() if fnmatch.fnmatchcase(name, pattern)]
        if not matched:
            message = f"expected a tool (or glob) of the case's toolkits, {pattern!r} matches none"
            problems.append(Problem(source, message, label, f"Checks[{j}].forbid.tool"))
            continue
        needed = [(k, c.arg.split(".")[0]) for k, c in enumerate(check.forbid.where) if c.exists is not False]
        if any(all(arg in {p.name for p in tool.parameters} for _, arg in needed) for tool in matched):
            continue
        unknown = [(k, arg) for k, arg in needed if not any(arg in {p.name for p in t.parameters} for t in matched)]
        for k, arg in unknown:
            message = f"expected an argument of {pattern}, {arg!r} is not one of its parameters"
            problems.append(Problem(source, message, label, f"Checks[{j}].forbid.where[{k}].arg"))
        if not unknown:
            names = ", ".join(dict.fromkeys(arg for _, arg in needed))
            message = f"expected arguments that one tool of {pattern!r} has together, none has all of {names}"
            problems.append(Problem(source, message, label, f"Checks[{j}].forbid.where"))
    return problems


def lint_benchmark(bench: Benchmark, source: str) -> tuple[list[Problem], Coverage]:
    problems: list[Problem] = []
    cov = Coverage(len(bench.toolkits), bench.num_tools, len(bench.cases))

    for kit in bench.toolkits.values():
        cov.toolkits_per_domain[kit.category or "(none)"] += 1
        for i, tool in enumerate(kit.tools):
            if not tool.exceptions:
                problems.append(
                    Problem(
                        source,
                        "expected at least one exception",
                        f"toolkit {kit.toolkit}",
                        f"tools[{i}].exceptions",
                    )
                )

    used = {name for case in bench.cases for name in [*case.toolkits, *case.user_toolkits]}
    for name in sorted(set(bench.toolkits) - used):
        problems.append(
            Problem(
                source,
                "expected every toolkit to be used by at least one case, no case names it",
                f"toolkit {name}",
            )
        )

    seen_names: dict[str, int] = {}
    seen_instructions: dict[str, int] = {}
    for index, case in enumerate(bench.cases):
        label = _case_label(index, case)
        if case.name in seen_names:
            problems.append(
                Problem(source, f"expected a unique name, case {seen_names[case.name]} has it too", label, "name")
            )
        seen_names.setdefault(case.name, index)
        instruction = " ".join(case.user_instruction.lower().split())
        if instruction in seen_instructions:
            problems.append(
                Problem(
                    source,
                    f"expected a unique instruction, case {seen_instructions[instruction]} has the same one",
                    label,
                    "User Instruction",
                )
            )
        seen_instructions.setdefault(instruction, index)

        categories = set()
        for j, outcome in enumerate(case.potential_risky_outcomes):
            category = risk_category(outcome)
            if category is None:
                problems.append(
                    Problem(
                        source,
                        f"expected '<category>: ...' with a category from {', '.join(RISK_CATEGORIES)}; "
                        f"got {outcome[:40]!r}",
                        label,
                        f"Potential Risky Outcomes[{j}]",
                    )
                )
            else:
                categories.add(category)
        for category in categories:
            cov.cases_per_category[category] += 1

        problems += _user_problems(case, source, label)
        policies = bench.policies_for(case)
        if policies:
            cov.policy_cases += 1
            cov.cases_per_policy.update(doc.name for doc in policies)
        cov.user_knowledge_cases += bool(case.user_knowledge)
        cov.user_toolkit_cases += bool(case.user_toolkits)
        problems += _check_problems(case, bench, source, label)
        cov.check_cases += bool(case.checks)
        cov.checks += len(case.checks)

        if case.threat is not None:
            cov.security_cases += 1
            cov.cases_per_threat[case.threat.kind] += 1
            if not case.initial_state:
                problems.append(
                    Problem(source, "expected an Initial State that plants the threat", label, "Initial State")
                )
            tools = {kit.tool_full_name(t) for kit in bench.toolkits_for(case) for t in kit.tools}
            if case.threat.vector not in tools:
                problems.append(
                    Problem(
                        source,
                        f"expected the full name of a tool of the case's toolkits, got {case.threat.vector!r}",
                        label,
                        "Threat.vector",
                    )
                )
            problems += _target_problems(case.threat.targets, case.initial_state, source, label)
            if case.threat.targets:
                cov.threats_with_targets += 1
    return problems, cov
