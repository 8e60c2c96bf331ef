"""`toolemu docs`: a searchable page of every toolkit, tool and case, optionally OpenAPI files, optionally served."""

import threading
from pathlib import Path
from typing import Annotated

import typer

from toolemu.cli.options import takes
from toolemu.cli.report import serve
from toolemu.cli.run_options import CaseFlags, ToolkitFlags
from toolemu.paths import DOCS_DIR


def wait_until_interrupted() -> None:
    """Block until Ctrl-C (a function of its own so that tests can return at once)."""
    threading.Event().wait()


@takes(ToolkitFlags, CaseFlags)
def docs(
    ctx: typer.Context,
    out: Annotated[Path, typer.Option(help="Directory to write index.html (and openapi/) into.")] = DOCS_DIR,
    openapi: Annotated[
        bool, typer.Option("--openapi", help="Also write an OpenAPI 3.1 document per toolkit: openapi/<Toolkit>.json.")
    ] = False,
    serve_page: Annotated[
        bool, typer.Option("--serve", help="Serve the page on 127.0.0.1 and print its address; Ctrl-C stops.")
    ] = False,
    port: Annotated[int, typer.Option(help="Port for --serve on 127.0.0.1 (0: any free one).")] = 0,
) -> None:
    """Write one self-contained, searchable HTML page documenting every toolkit, its tools and the cases using it."""
    from toolemu.docs import load_catalog, write_docs

    catalog = load_catalog(ToolkitFlags.of(ctx).toolkits_path, CaseFlags.of(ctx).input_path)
    result = write_docs(catalog, out, openapi=openapi)
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
