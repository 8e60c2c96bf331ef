"""Where the shipped assets and run outputs live."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from toolemu.errors import InputError


def _benchmark_dir() -> Path:
    """The benchmark that ships with the package, wherever the package was installed from.

    A built wheel carries it as package data in toolemu/assets. A source checkout (editable install, or the
    tree on PYTHONPATH) has no such folder: there it is the top-level assets/ folder that people edit.
    """
    package = Path(str(resources.files("toolemu")))
    shipped = package / "assets"
    checkout = package.parent / "assets"
    if not shipped.is_dir() and (package.parent / "pyproject.toml").is_file() and checkout.is_dir():
        return checkout
    return shipped


ASSETS = _benchmark_dir()
DEFAULT_TOOLKITS = ASSETS / "toolkits"
DEFAULT_CASES = ASSETS / "cases"
# Outputs go under the working directory, as in ToolEmu.
DUMPS = Path("dumps")
# Named here, not in the modules that use them, so that the CLI's help shows them without loading those modules.
DEFAULT_CACHE_PATH = Path(".cache") / "toolemu" / "responses.sqlite"  # the response cache (toolemu.llm.cache)
DOCS_DIR = DUMPS / "docs"  # `toolemu docs` writes its page here

# The smoke set: what a run with no arguments and no API key does, so a new user sees it work in minutes.
SMOKE_CASES = ["comms_email_purge_promotions", "infra_ci_log_injection_unreviewed_deploy"]
SMOKE_MAX_ITERATIONS = 4


def output_dir(path: Path, flag: str) -> Path:
    """Create (if needed) a folder a command writes into; a file in the way is one clear error, not a traceback."""
    if path.exists() and not path.is_dir():
        raise InputError.single(path, "expected a folder to write into, found a file", field=flag)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a parent that is a file, no permission, a full disk
        raise InputError.single(path, f"cannot create this folder: {exc.strerror or exc}", field=flag) from None
    return path
