"""Toolkit docs: a searchable HTML page of every toolkit, tool and case, and OpenAPI documents per toolkit."""

from toolemu.docs.catalog import Catalog, build_catalog
from toolemu.docs.html import render_docs
from toolemu.docs.openapi import openapi_document
from toolemu.docs.write import DocsResult, load_catalog, write_docs

__all__ = ["Catalog", "DocsResult", "build_catalog", "load_catalog", "openapi_document", "render_docs", "write_docs"]
