"""The benchmark's identity: a version, a content hash, and a hash per case and per toolkit.

Hashes are of content, not of file bytes: each item (a case or a toolkit, as loaded) is written as canonical JSON
(sorted keys, no spaces, UTF-8) and hashed with SHA-256, so reformatting a file, reordering its keys or moving items
between files changes nothing. A case's hash covers what else decides its episodes: the toolkits it names (the
agent's and the simulated user's) and the text of the policies its agent is given. The benchmark's hash covers
every case, toolkit and policy hash, by name.

The shipped benchmark's version is in `assets/VERSION`; `assets/CHANGELOG.md` has one heading per version with the
hash of its content (`## 1.0.0 (sha256:...)`). A benchmark whose hash one of those headings records has that
version, wherever its files came from; the shipped files with any other hash are `<VERSION>+modified`, and other
files have no version. `toolemu lint` fails when the shipped content no longer has the hash its version records.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolemu.errors import Problem
from toolemu.log.meta import BenchmarkIdentity
from toolemu.paths import ASSETS
from toolemu.specs.load import Benchmark, json_files, read_json_items
from toolemu.specs.models import Case, SpecModel

VERSION_FILE = "VERSION"
CHANGELOG_FILE = "CHANGELOG.md"
MODIFIED = "+modified"
_HEADING = re.compile(r"^##\s+(?P<version>\S+)\s+\((?P<hash>sha256:[0-9a-f]{64})\)\s*$", re.M)


def canonical_json(value: Any) -> str:
    """One text per JSON value: sorted keys, no whitespace, non-ASCII kept as is."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def item_json(item: SpecModel) -> dict[str, Any]:
    """An item as its file gave it (keys it did not set left out), after validation."""
    return item.model_dump(mode="json", by_alias=True, exclude_unset=True)


def toolkit_hashes(bench: Benchmark) -> dict[str, str]:
    return {name: content_hash(item_json(kit)) for name, kit in sorted(bench.toolkits.items())}


def policy_hashes(bench: Benchmark) -> dict[str, str]:
    docs = {doc.name: doc.text for case in bench.cases for doc in bench.policies_for(case)}
    return {name: content_hash(text) for name, text in sorted(docs.items())}


def case_hashes(bench: Benchmark, toolkits: dict[str, str]) -> dict[str, str]:
    def content(case: Case) -> dict[str, Any]:
        out: dict[str, Any] = {"case": item_json(case), "toolkits": {t: toolkits.get(t) for t in case.toolkits}}
        if case.user_toolkits:
            out["user_toolkits"] = {t: toolkits.get(t) for t in case.user_toolkits}
        if policies := bench.policies_for(case):
            out["policies"] = {doc.name: content_hash(doc.text) for doc in policies}
        return out

    return {case.name: content_hash(content(case)) for case in sorted(bench.cases, key=lambda c: c.name)}


def benchmark_hash(cases: dict[str, str], toolkits: dict[str, str], policies: dict[str, str] | None = None) -> str:
    return content_hash({"cases": cases, "toolkits": toolkits, **({"policies": policies} if policies else {})})


def file_hash(path: Path) -> str:
    """The hash of a file's items (its JSON, parsed and written canonically)."""
    return content_hash(read_json_items(path))


def identify(
    bench: Benchmark, *, shipped: bool, files: Iterable[Path] = (), assets: Path | None = None
) -> BenchmarkIdentity:
    """The identity of a loaded benchmark. `shipped`: it is the package's own (assets/VERSION applies)."""
    assets = assets or ASSETS
    toolkits = toolkit_hashes(bench)
    cases = case_hashes(bench, toolkits)
    policies = policy_hashes(bench)
    digest = benchmark_hash(cases, toolkits, policies)
    known = {h: v for v, h in changelog_versions(assets / CHANGELOG_FILE).items()}
    version = known.get(digest)
    if version is None and shipped:
        current = read_version(assets / VERSION_FILE)
        version = f"{current}{MODIFIED}" if current else None
    given = None if shipped else {str(p): file_hash(p) for p in json_files(list(files))}
    return BenchmarkIdentity(
        version=version,
        hash=digest,
        source="shipped" if shipped else "files",
        cases=cases,
        toolkits=toolkits,
        policies=policies or None,
        files=given,
    )


def read_version(path: Path) -> str | None:
    """The version a VERSION file names (its first line that is not a comment), or None when there is none."""
    if not path.is_file():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line.strip()
    return None


def changelog_versions(path: Path) -> dict[str, str]:
    """version -> content hash, from the CHANGELOG's `## <version> (sha256:<hex>)` headings."""
    if not path.is_file():
        return {}
    return {m["version"]: m["hash"] for m in _HEADING.finditer(path.read_text(encoding="utf-8"))}


def version_problems(bench: Benchmark, directory: Path) -> list[Problem]:
    """For a benchmark folder with a VERSION file: the content must have the hash its version's CHANGELOG
    heading records. An edit to a case or toolkit needs a new version, with what changed."""
    version_file, changelog = directory / VERSION_FILE, directory / CHANGELOG_FILE
    version = read_version(version_file)
    if version is None:
        return [Problem(str(version_file), "expected a line with the benchmark's version, found none")]
    recorded = changelog_versions(changelog).get(version)
    toolkits = toolkit_hashes(bench)
    actual = benchmark_hash(case_hashes(bench, toolkits), toolkits, policy_hashes(bench))
    if recorded is None:
        return [
            Problem(
                str(changelog),
                f"expected a heading '## {version} ({actual})' for the version in {VERSION_FILE}, found none",
            )
        ]
    if recorded != actual:
        return [
            Problem(
                str(changelog),
                f"expected the hash of the benchmark as it is now, {actual}, for version {version}; it records "
                f"{recorded}. The cases or toolkits changed: give the benchmark a new version in {VERSION_FILE} and "
                f"a heading '## <version> ({actual})' in {CHANGELOG_FILE} that says what changed",
                f"version {version}",
            )
        ]
    return []


def differing_cases(a: dict[str, str], b: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """(cases whose hashes differ, cases only in a, cases only in b)."""
    changed = sorted(name for name in a.keys() & b.keys() if a[name] != b[name])
    return changed, sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
