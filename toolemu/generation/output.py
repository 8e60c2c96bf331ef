"""Validate generated files exactly as `toolemu validate` would, and only then write them."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolemu.errors import InputError
from toolemu.generation.text import SAFE_NAME
from toolemu.log.jsonl import write_text_atomic
from toolemu.specs import Case, Toolkit, load_benchmark
from toolemu.specs.lint import lint_benchmark
from toolemu.specs.load import Benchmark

DEFAULT_DIR = Path("dumps/generated")


def _dump(items: Any) -> str:
    return json.dumps(items, ensure_ascii=False, indent=2) + "\n"


def _check(files: dict[Path, Any], kind: str, known: dict[str, Toolkit] | None) -> Benchmark:
    """Load `files` (target path -> JSON) from a scratch folder; raise InputError naming the targets.

    On top of schema validation, the lint rules that concern one file of `kind` ('toolkit' or 'case')
    apply; the benchmark-wide one (every toolkit used by some case) does not.
    """
    with tempfile.TemporaryDirectory(prefix="toolemu-gen-") as scratch:
        scratch_paths: dict[Path, Path] = {}
        for i, (target, items) in enumerate(files.items()):
            path = Path(scratch) / f"{i}_{target.name}"
            path.write_text(_dump(items), encoding="utf-8")
            scratch_paths[path] = target
        try:
            bench = load_benchmark(list(scratch_paths), known_toolkits=known)
        except InputError as exc:
            raise InputError(
                [replace(p, file=str(scratch_paths.get(Path(p.file), p.file))) for p in exc.problems]
            ) from None
    label = ", ".join(map(str, files))
    problems, _ = lint_benchmark(bench, label)
    mine = [p for p in problems if p.field and (p.item or "").startswith(kind)]
    if mine:
        raise InputError(mine)
    return bench


def _write(target: Path, items: Any) -> None:
    """Atomic: a reader never sees half a file, and a failure leaves the old one in place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(target, _dump(items))


def write_toolkits(out_dir: Path, toolkits: list[Toolkit]) -> list[Path]:
    """One <Toolkit>.json per toolkit, as in assets/toolkits; all are checked before any is written."""
    for kit in toolkits:
        if not SAFE_NAME.match(kit.toolkit):  # model text never names a path
            raise InputError.single(out_dir, f"expected a CamelCase toolkit name, got {kit.toolkit!r}")
    files = {out_dir / f"{kit.toolkit}.json": kit.to_json() for kit in toolkits}
    _check(files, "toolkit", None)
    for target, items in files.items():
        _write(target, items)
    return list(files)


def existing_cases(path: Path, known: dict[str, Toolkit]) -> list[Case]:
    return load_benchmark([path], known_toolkits=known).cases if path.exists() else []


def write_cases(path: Path, cases: list[Case], known: dict[str, Toolkit], append: bool = False) -> Path:
    """A JSON array of cases (ToolEmu's layout), checked against the toolkits they name.

    With `append`, the cases already in `path` are kept in front.
    """
    before = existing_cases(path, known) if append else []
    items = [c.to_json() for c in [*before, *cases]]
    _check({path: items}, "case", known)
    _write(path, items)
    return path


def write_json(path: Path, items: Any) -> Path:
    _write(path, items)
    return path
