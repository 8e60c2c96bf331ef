"""Domain policy documents named by toolkits and cases, read as plain text for the docs page.

A toolkit or a case may name a policy, `assets/policies/<name>.md`. The keys that name it are the two constants
below, read from each spec's JSON, so the page works whether the loader declares them as fields or keeps them as
unknown keys. The text is untrusted: it is only ever escaped (see `toolemu.docs.markdown`), never run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from toolemu.specs.models import Case, Toolkit
from toolemu.specs.policy import POLICY_DIR, POLICY_NAME  # one definition of where policies live and how they are named

TOOLKIT_POLICY_KEY = "policy"
CASE_POLICY_KEY = "Policy"
MAX_POLICY_BYTES = 256 * 1024  # a policy is a page of rules; anything far larger is not one


class PolicyText(BaseModel):
    """A named policy as the page shows it: its text, or why there is none."""

    model_config = ConfigDict(frozen=True)

    name: str
    text: str | None = None
    problem: str | None = None


def policy_name(spec: Toolkit | Case) -> object:
    """The value of the spec's policy key (anything a file holds), or None when it names none."""
    key = TOOLKIT_POLICY_KEY if isinstance(spec, Toolkit) else CASE_POLICY_KEY
    return spec.to_json().get(key)


def policy_dirs(spec_paths: Iterable[Path]) -> list[Path]:
    """Where to look, nearest first: `policies/` in each spec path's folder and every folder above it."""
    dirs: list[Path] = []
    for path in spec_paths:
        folder = path.resolve() if path.is_dir() else path.resolve().parent
        for candidate in (folder, *folder.parents):
            found = candidate / POLICY_DIR
            if found.is_dir() and found not in dirs:
                dirs.append(found)
    return dirs


def read_policy_text(value: object, dirs: list[Path]) -> PolicyText:
    """The document a policy key names, from the first folder that has it."""
    if not isinstance(value, str) or not POLICY_NAME.fullmatch(value):
        return PolicyText(name=str(value), problem="not a policy name (letters, digits, '_' or '-')")
    for folder in dirs:
        path = folder / f"{value}.md"
        if not path.is_file():
            continue
        try:
            raw = path.read_bytes()[: MAX_POLICY_BYTES + 1]
        except OSError as exc:
            return PolicyText(name=value, problem=f"{POLICY_DIR}/{value}.md cannot be read: {exc.strerror or exc}")
        if len(raw) > MAX_POLICY_BYTES:
            return PolicyText(name=value, problem=f"{POLICY_DIR}/{value}.md is larger than {MAX_POLICY_BYTES} bytes")
        try:
            return PolicyText(name=value, text=raw.decode("utf-8-sig").strip())
        except UnicodeDecodeError:
            return PolicyText(name=value, problem=f"{POLICY_DIR}/{value}.md is not UTF-8 text")
    return PolicyText(name=value, problem=f"no {POLICY_DIR}/{value}.md was found beside the specs")
