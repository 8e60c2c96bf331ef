"""Reading a YAML settings file (a gate policy, CI thresholds): one clear error for anything that is not one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from toolemu.errors import InputError


def read_yaml_mapping(path: Path, key: str) -> dict[str, Any]:
    """The file's top-level mapping; `key` names what it must hold, for the error message."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError.single(path, f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError.single(path, "expected UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise InputError.single(path, f"expected YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise InputError.single(path, f"expected a mapping with '{key}', got {type(data).__name__}")
    return data
