"""`toolemu docs`: a searchable page of every toolkit, tool and case, optionally OpenAPI files, optionally served."""

import threading
from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli.report import serve
from toolemu.paths import DOCS_DIR


def wait_until_interrupted() -> None:
    """Block until Ctrl-C (a function of its own so that tests can return at once)."""
    threading.Event().wait()


def docs(
    out: Annotated[Path, typer.Option(help="Directory to write index.html (and openapi/) into.")] = DOCS_DIR,
    openapi: Annotated[
        bool, typer.Option("--openapi", help="Also write an OpenAPI 3.1 document per toolkit: openapi/<Toolkit>.json.")
    ] = False,
    serve_page: Annotated[
        bool, typer.Option("--serve", help="Serve the page on 127.0.0.1 and print its address; Ctrl-C stops.")
    ] = False,
    port: Annotated[int, typer.Option(help="Port for --serve on 127.0.0.1 (0: any free one).")] = 0,
    toolkits_path: Annotated[
        list[Path] | None,
        typer.Option(help="Toolkit files or directories (default: the shipped benchmark; ToolEmu's work too)."),
    ] = None,
    input_path: Annotated[
        list[Path] | None,
        typer.Option(
            help="Case files or directories (default: the shipped cases, unless --toolkits-path names other toolkits)."
        ),
    ] = None,
) -> None:
    """Write one self-contained, searchable HTML page documenting every toolkit, its tools and the cases using it."""
    from toolemu.docs import load_catalog, write_docs

    result = write_docs(load_catalog(toolkits_path, input_path), out, openapi=openapi)
    catalog = result.catalog
    typer.echo(
        f"docs: {result.page} ({len(catalog.entries)} toolkits, {catalog.num_tools} tools, {catalog.num_cases} cases)"
    )
    if result.openapi:
        typer.echo(f"openapi: {len(result.openapi)} documents in {result.openapi[0].parent}")
    if not serve_page:
        return
    server = serve(result.page.parent, port)
    url = f"http://127.0.0.1:{server.server_address[1]}/{result.page.name}"
    typer.echo(f"serving {result.page} at {url} (Ctrl-C stops)")
    try:
        wait_until_interrupted()
    finally:
        server.shutdown()
