"""Execute a notebook as CI does: nbclient, the python3 kernel from this venv."""

from __future__ import annotations

import time

import nbclient
import nbformat
import pytest
from conftest import REPO


def execute(name: str, monkeypatch: pytest.MonkeyPatch, **env: str) -> float:
    """Run every cell of notebooks/<name> with `env` set; return the wall time. A failing cell raises
    CellExecutionError with its traceback."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    notebook = nbformat.read(REPO / "notebooks" / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=600,
        startup_timeout=300,  # a loaded CI box starts kernels slowly
        resources={"metadata": {"path": str(REPO / "notebooks")}},
    )
    started = time.perf_counter()
    client.execute()
    return time.perf_counter() - started
