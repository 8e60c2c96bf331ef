"""`toolemu docs` as a library call: load the specs, resolve the catalog, write the page (and OpenAPI files)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolemu.docs.catalog import Catalog, build_catalog
from toolemu.docs.html import render_docs
from toolemu.docs.openapi import check_names, openapi_document
from toolemu.errors import InputError
from toolemu.log.jsonl import write_text_atomic
from toolemu.paths import DEFAULT_CASES, DEFAULT_TOOLKITS, DOCS_DIR
from toolemu.specs.load import Benchmark, load_benchmark

INDEX_HTML = "index.html"
OPENAPI_DIR = "openapi"


@dataclass
class DocsResult:
    catalog: Catalog
    page: Path
    openapi: list[Path] = field(default_factory=list)


def load_catalog(toolkits: Sequence[Path] | None = None, cases: Sequence[Path] | None = None) -> Catalog:
    """The given toolkit and case files, resolved for the page.

    Without toolkits, the shipped ones. Without cases, the shipped ones only when the toolkits are the shipped
    ones too: they name no other toolkit, so someone documenting their own toolkits gets a page without cases.
    """
    toolkit_paths = list(toolkits or [DEFAULT_TOOLKITS])
    case_paths = list(cases or ([] if toolkits else [DEFAULT_CASES]))
    # The page shows a policy that is missing or malformed (toolemu.docs.policies) instead of refusing the specs.
    kits = load_benchmark(toolkit_paths, check_policies=False).toolkits
    bench = (
        load_benchmark(case_paths, known_toolkits=kits, check_policies=False)
        if case_paths
        else Benchmark(toolkits=kits)
    )
    return build_catalog(bench, [*toolkit_paths, *case_paths])


def write_docs(catalog: Catalog, out: Path = DOCS_DIR, openapi: bool = False) -> DocsResult:
    """Write out/index.html and, with `openapi`, out/openapi/<Toolkit>.json; nothing is written if a name is bad."""
    kits = [entry.toolkit for entry in catalog.entries]
    if openapi:
        check_names(kits)
    if out.exists() and not out.is_dir():
        raise InputError.single(out, "expected a directory to write the docs into, but it is a file")
    result = DocsResult(catalog=catalog, page=out / INDEX_HTML)
    try:  # each file whole or not at all (write_text_atomic): a full disk leaves no page cut off
        out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(result.page, render_docs(catalog), "--out")
        if openapi:
            (out / OPENAPI_DIR).mkdir(exist_ok=True)
            for kit in kits:
                path = out / OPENAPI_DIR / f"{kit.toolkit}.json"
                text = json.dumps(openapi_document(kit), indent=2, ensure_ascii=False)
                write_text_atomic(path, text + "\n", "--out")
                result.openapi.append(path)
    except OSError as exc:
        raise InputError.single(exc.filename or out, f"cannot be written: {exc.strerror or exc}") from None
    return result
