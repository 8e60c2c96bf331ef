"""Load toolkits and cases from files or directories, reporting every problem as one clear line."""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolemu import strict_json
from toolemu.errors import InputError, Problem
from toolemu.paths import ASSETS
from toolemu.specs.models import Case, Toolkit
from toolemu.specs.policy import POLICY_DIR, POLICY_NAME, PolicyDoc, PolicyFormatError, find_policy, read_policy

TOOLKIT_KEYS = ("toolkit", "tools")
# A fidelity probe file (toolemu.fidelity; assets/probes/): it lives beside the benchmark, it is not a spec.
PROBE_SCHEMA = "toolemu-probes/"
CASE_KEYS = ("Toolkits", "User Instruction")
# The names an agent calls (name_for_model + tool name) must be one token for ReAct text and native tool calls.
CALLABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# Names no toolkit's tool may be called by: the simulated user's action (toolemu.user, above this package, defines
# it as toolemu.log.ASK_USER; a test keeps the two the same).
RESERVED_TOOL_NAMES = ("AskUser",)


def has_control_char(text: str) -> bool:
    return any(unicodedata.category(c) == "Cc" for c in text)


@dataclass
class FileSummary:
    path: str
    toolkits: int = 0
    tools: int = 0
    cases: int = 0

    def line(self) -> str:
        return f"{self.path}: {self.toolkits} toolkits, {self.tools} tools, {self.cases} cases"


@dataclass
class Benchmark:
    """Everything loaded from a set of paths: toolkits by name, cases in file order."""

    toolkits: dict[str, Toolkit] = field(default_factory=dict)
    cases: list[Case] = field(default_factory=list)
    files: list[FileSummary] = field(default_factory=list)

    @property
    def num_tools(self) -> int:
        return sum(len(t.tools) for t in self.toolkits.values())

    def case_named(self, name: str, source: str = "command line", field: str | None = None) -> tuple[int, Case]:
        """The case of that name and its index; none is one line naming a few loaded cases (`source`, `field`: where
        the name was given)."""
        for index, case in enumerate(self.cases):
            if case.name == name:
                return index, case
        known = ", ".join(c.name for c in self.cases[:5])
        message = f"expected the name of a loaded case (e.g. {known}), got {name!r}"
        raise InputError.single(source, message, field=field)

    def toolkits_for(self, case: Case) -> list[Toolkit]:
        return [self.toolkits[name] for name in case.toolkits]

    def user_toolkits_for(self, case: Case) -> list[Toolkit]:
        """The toolkits only the simulated user can use (the case's `User Toolkits`)."""
        return [self.toolkits[name] for name in case.user_toolkits]

    def policies_for(self, case: Case) -> list[PolicyDoc]:
        """The policies the agent must follow: the case's own, then its toolkits', each once."""
        docs = [case.policy_doc, *(kit.policy_doc for kit in self.toolkits_for(case))]
        unique: dict[str, PolicyDoc] = {}
        for doc in docs:
            if doc is not None:
                unique.setdefault(doc.name, doc)
        return list(unique.values())


def _expected(err: dict[str, Any]) -> str:
    if err["type"] == "missing":
        return "expected a value, but it is missing"
    got = json.dumps(err.get("input"), ensure_ascii=False, default=str)
    if len(got) > 60:
        got = got[:57] + "..."
    message = err["msg"].replace("Input should be", "expected").removeprefix("Value error, ")
    return f"{message}, got {got}"


def _item_label(index: int, obj: Any) -> str:
    name = None
    if isinstance(obj, dict):
        name = obj.get("toolkit") or obj.get("name")
    return f"item {index}" + (f" ({name})" if isinstance(name, str) else "")


def read_json_items(path: Path) -> list[Any]:
    """The JSON items of one file: an array's elements, or the single object."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError.single(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError.single(path, f"expected UTF-8 text, found a non-UTF-8 byte at offset {exc.start}") from None
    if not text.strip():
        raise InputError.single(path, "expected a JSON object or array, but the file is empty")
    parsed = strict_json.parse(text)
    if parsed.problems:
        raise InputError.single(path, str(parsed.problems[0])) from None
    data = parsed.value
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        if not data:
            raise InputError.single(path, "expected at least one toolkit or case, but the array is empty")
        return data
    raise InputError.single(path, f"expected a JSON object or array, got {type(data).__name__}")


def json_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories (recursively) into their .json files; keep files as given."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(q for q in p.rglob("*.json") if q.is_file())
            if not found:
                raise InputError.single(p, "expected a directory holding .json files, found none")
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            raise InputError.single(p, "expected a file or directory, but it does not exist")
    return files


def _parse_item(path: Path, index: int, obj: Any, problems: list[Problem]) -> Toolkit | Case | None:
    label = _item_label(index, obj)
    if not isinstance(obj, dict):
        problems.append(Problem(str(path), f"expected an object, got {type(obj).__name__}", label))
        return None
    if any(k in obj for k in TOOLKIT_KEYS):
        model: type[Toolkit] | type[Case] = Toolkit
    elif any(k in obj for k in CASE_KEYS):
        model = Case
        if "name" not in obj:
            obj = {**obj, "name": f"{path.stem}_{index}"}
    else:
        problems.append(
            Problem(
                str(path),
                "expected a toolkit (keys 'toolkit', 'tools') or a case (keys 'Toolkits', 'User Instruction')",
                label,
            )
        )
        return None
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        for err in exc.errors():
            problems.append(Problem(str(path), _expected(err), label, strict_json.where(err["loc"])))
        return None


def _name_problem(value: str, callable_name: bool) -> str | None:
    """What is wrong with a name, if anything: control characters anywhere; for a callable one, any non-token."""
    if has_control_char(value):
        return f"expected a name without control characters (newline, tab, NUL...), got {json.dumps(value)[:60]}"
    if callable_name and not CALLABLE_NAME.fullmatch(value):
        return (
            f"expected one word of letters, digits, _ or - (the agent calls it by name), got {json.dumps(value)[:60]}"
        )
    if not value.strip():
        return "expected a name, got an empty one"
    return None


def _check_names(path: Path, label: str, kit: Toolkit, problems: list[Problem]) -> None:
    checks: list[tuple[str, str, bool]] = [
        ("toolkit", kit.toolkit, False),
        ("name_for_model", kit.name_for_model, True),
    ]
    for i, tool in enumerate(kit.tools):
        checks.append((f"tools[{i}].name", tool.name, True))
        for kind, entries in (
            ("parameters", tool.parameters),
            ("returns", tool.returns),
            ("exceptions", tool.exceptions),
        ):
            checks += [(f"tools[{i}].{kind}[{j}].name", e.name, False) for j, e in enumerate(entries)]
    for field_path, value, callable_name in checks:
        if (message := _name_problem(value, callable_name)) is not None:
            problems.append(Problem(str(path), message, label, field_path))


def _check_toolkit(path: Path, index: int, kit: Toolkit, problems: list[Problem]) -> None:
    label = _item_label(index, {"toolkit": kit.toolkit})
    if not kit.tools:
        problems.append(Problem(str(path), "expected at least one tool, got none", label, "tools"))
    _check_names(path, label, kit, problems)
    seen: set[str] = set()
    for i, tool in enumerate(kit.tools):
        if tool.name in seen:
            problems.append(
                Problem(
                    str(path),
                    f"expected a unique tool name, '{tool.name}' appears twice",
                    label,
                    f"tools[{i}].name",
                )
            )
        seen.add(tool.name)
        for kind, entries in (("parameters", tool.parameters), ("returns", tool.returns)):
            names = [e.name for e in entries]
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                problems.append(
                    Problem(
                        str(path),
                        f"expected unique names, '{dupes[0]}' appears twice",
                        label,
                        f"tools[{i}].{kind}",
                    )
                )


def _colliding_tool_names(origins: list[tuple[Toolkit, Path, int]], known: dict[str, Toolkit]) -> list[Problem]:
    """A problem for each tool whose callable name (model name + tool name) another toolkit's tool already has, or
    a reserved action has: "AB" + "C" and "A" + "BC" are both ABC, and an agent's call could not say which it
    meant. Toolkits known from elsewhere count as earlier; a toolkit's own tools are checked by `_check_toolkit`."""
    first: dict[str, tuple[str, str]] = {}  # callable name -> (its toolkit, where it is, in words)
    for kit in known.values():
        for tool in kit.tools:
            first.setdefault(kit.tool_full_name(tool), (kit.toolkit, f"toolkit '{kit.toolkit}' tool '{tool.name}'"))
    problems: list[Problem] = []
    for kit, path, index in origins:
        for i, tool in enumerate(kit.tools):
            name = kit.tool_full_name(tool)
            if name in RESERVED_TOOL_NAMES:
                other = "the built-in action by which an agent asks the user"
            elif name in first and first[name][0] != kit.toolkit:
                other = first[name][1]
            else:
                first.setdefault(
                    name, (kit.toolkit, f"toolkit '{kit.toolkit}' tool '{tool.name}' in {path} item {index}")
                )
                continue
            problems.append(
                Problem(
                    str(path),
                    f"expected a tool name no other tool is called by, but the agent calls this one '{name}' "
                    f"(name_for_model '{kit.name_for_model}' + '{tool.name}'), as it calls {other}",
                    _item_label(index, {"toolkit": kit.toolkit}),
                    f"tools[{i}].name",
                )
            )
    return problems


class _PolicyResolver:
    """Finds and reads each named policy once: `policies/<name>.md` near the naming file, else the shipped one."""

    def __init__(self, check: bool = True) -> None:
        self.check = check  # False: an unresolvable policy is left unresolved, not reported
        self._read: dict[Path, PolicyDoc | str] = {}  # a document, or what is wrong with it

    def resolve(self, name: Any, near: Path) -> PolicyDoc | str:
        if not isinstance(name, str) or not POLICY_NAME.fullmatch(name):
            return f"expected a policy name (letters, digits, '-' or '_'; no path), got {name!r}"
        shipped = ASSETS / POLICY_DIR / f"{name}.md"
        path = find_policy(name, near) or (shipped if shipped.is_file() else None)
        if path is None:
            return f"expected a policy document {POLICY_DIR}/{name}.md beside the benchmark, found none"
        if path not in self._read:
            try:
                self._read[path] = read_policy(name, path)
            except (OSError, UnicodeDecodeError) as exc:
                self._read[path] = f"cannot read policy document {path}: {exc}"
            except PolicyFormatError as exc:
                self._read[path] = f"policy document {path}: {exc}"
        return self._read[path]


def _attach_policy(
    item: Toolkit | Case, path: Path, index: int, field_name: str, resolver: _PolicyResolver, problems: list[Problem]
) -> None:
    if item.policy is None:
        return
    found = resolver.resolve(item.policy, path)
    if isinstance(found, str) and not resolver.check:
        return
    if isinstance(found, str):
        label = _item_label(index, {"toolkit": item.toolkit} if isinstance(item, Toolkit) else {"name": item.name})
        problems.append(Problem(str(path), found, label, field_name))
    else:
        item._policy_doc = found


def load_benchmark(
    paths: Iterable[str | Path], known_toolkits: dict[str, Toolkit] | None = None, check_policies: bool = True
) -> Benchmark:
    """Load every toolkit and case under `paths`; raise InputError listing every problem found.

    Cases may name toolkits from the same paths or from `known_toolkits`. A named policy that cannot be found or
    read is a problem too; with `check_policies=False` it is left unresolved instead (the docs page, which shows
    what is wrong with a spec rather than refusing it).
    """
    bench = Benchmark()
    problems: list[Problem] = []
    case_origin: list[tuple[Path, int]] = []
    policies = _PolicyResolver(check_policies)
    case_names: dict[str, tuple[Path, int]] = {}
    origins: list[tuple[Toolkit, Path, int]] = []  # every toolkit read, where it was read
    for path in json_files(paths):
        summary = FileSummary(str(path))
        try:
            items = read_json_items(path)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        if len(items) == 1 and isinstance(items[0], dict) and str(items[0].get("schema", "")).startswith(PROBE_SCHEMA):
            continue
        for index, obj in enumerate(items):
            parsed = _parse_item(path, index, obj, problems)
            if isinstance(parsed, Toolkit):
                _check_toolkit(path, index, parsed, problems)
                if parsed.toolkit in bench.toolkits:
                    problems.append(
                        Problem(
                            str(path),
                            f"expected a unique toolkit name, '{parsed.toolkit}' is defined twice",
                            _item_label(index, obj),
                            "toolkit",
                        )
                    )
                _attach_policy(parsed, path, index, "policy", policies, problems)
                bench.toolkits[parsed.toolkit] = parsed
                origins.append((parsed, path, index))
                summary.toolkits += 1
                summary.tools += len(parsed.tools)
            elif isinstance(parsed, Case):
                _attach_policy(parsed, path, index, "Policy", policies, problems)
                label = _item_label(index, {"name": parsed.name})
                if (message := _name_problem(parsed.name, False)) is not None:
                    problems.append(Problem(str(path), message, label, "name"))
                if parsed.name in case_names:
                    # Resume, merge and reports key on (case name, trial): a second case of the same name would
                    # take the first one's place.
                    first_path, first_index = case_names[parsed.name]
                    problems.append(
                        Problem(
                            str(path),
                            f"expected a unique case name, '{parsed.name}' is also {first_path} item {first_index}",
                            label,
                            "name",
                        )
                    )
                case_names.setdefault(parsed.name, (path, index))
                bench.cases.append(parsed)
                case_origin.append((path, index))
                summary.cases += 1
        bench.files.append(summary)

    problems += _colliding_tool_names(origins, known_toolkits or {})
    available = {**(known_toolkits or {}), **bench.toolkits}
    for case, (path, index) in zip(bench.cases, case_origin, strict=True):
        named = [("Toolkits", case.toolkits), ("User Toolkits", case.user_toolkits)]
        for key, names in named:
            for j, name in enumerate(names):
                if name not in available:
                    problems.append(
                        Problem(
                            str(path),
                            f"expected the name of a known toolkit, got '{name}'",
                            _item_label(index, {"name": case.name}),
                            f"{key}[{j}]",
                        )
                    )
    if problems:
        raise InputError(problems)
    bench.toolkits = available
    return bench
