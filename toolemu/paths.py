"""Where the shipped assets and run outputs live."""

from __future__ import annotations

import errno
from importlib import resources
from pathlib import Path

from toolemu.errors import InputError, Problem


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
# An episode's turns unless a run says otherwise (ToolEmu's max_iterations): RunConfig's and EpisodeSpec's default.
DEFAULT_MAX_ITERATIONS = 15


class OutputError(InputError):
    """A file or folder a command writes cannot be written: a full disk, a read-only folder, a folder where a file
    belongs, a name too long. One line and exit 2, as bad input: the path or the disk is what to fix."""


# Why a write failed, where the system's own words do not say what to do about it.
_HINTS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "larger than this process may write a file, ulimit -f",
    errno.EROFS: "a read-only file system",
    errno.ENAMETOOLONG: "a file name is at most 255 bytes",
}
# The errors that are about a path or a disk, not a bug or a network: what `output_error` and the CLI report in one
# line (a connection refused or reset is none of these).
FILE_ERRNOS = frozenset(
    {
        *_HINTS,
        errno.EACCES,
        errno.EPERM,
        errno.EISDIR,
        errno.ENOTDIR,
        errno.ENOENT,
        errno.EEXIST,
        errno.ELOOP,
        errno.EMLINK,
        errno.ENOTEMPTY,
        errno.EXDEV,
        errno.ETXTBSY,
        errno.EIO,
    }
)


def is_file_error(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in FILE_ERRNOS


def output_error(
    path: str | Path, exc: OSError, flag: str | None = None, doing: str = "cannot be written"
) -> OutputError:
    """`path` could not be written (`doing`), said in one line: the system's reason, and what it means where that
    helps."""
    reason = exc.strerror or type(exc).__name__
    hint = _HINTS.get(exc.errno or 0)
    if not doing:  # read or written: only what holds either way
        pass
    elif exc.errno == errno.EISDIR:
        hint = "a folder is where this file goes"
    elif exc.errno == errno.ENOTDIR:
        hint = "a file is where a folder on this path goes"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        hint = "the folder or file is read-only for this user"
    message = f"{doing}: {reason}" if doing else reason
    return OutputError(Problem(str(path), message + (f" ({hint})" if hint else ""), field=flag))


def output_dir(path: Path, flag: str) -> Path:
    """Create (if needed) a folder a command writes into; a file in the way is one clear error, not a traceback."""
    try:
        if path.exists() and not path.is_dir():
            raise InputError.single(path, "expected a folder to write into, found a file", field=flag)
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a parent that is a file, no permission, a full disk, a name too long
        raise output_error(path, exc, flag) from None
    return path
