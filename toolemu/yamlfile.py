"""Reading a YAML settings file (a gate policy, CI thresholds): one clear error for anything that is not one.

A settings file is plain YAML, read safely, less what such a file has no use for and a hostile one abuses:
- a key given twice in one mapping (YAML keeps the last one silently, so a gate could be loosened unseen);
- anchors, aliases and merge keys (`&a`, `*a`, `<<`): a few lines of them expand to billions of values;
- nesting deeper than MAX_DEPTH, a file over MAX_BYTES, anything that is not a regular file, text not in UTF-8.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from toolemu.errors import InputError

MAX_BYTES = 1 << 20  # 1 MiB: a settings file is a page or two
MAX_DEPTH = 32
WRITTEN_OUT = "expected each value written out (anchors and aliases are not read in settings files)"


class _Refused(yaml.YAMLError):
    """Something a settings file must not hold, with where it is."""

    def __init__(self, found: str, mark: yaml.Mark | None, expected: str) -> None:
        super().__init__(found)
        self.found, self.mark, self.expected = found, mark, expected


class _SettingsLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses duplicate keys, anchors, aliases, merge keys and deep nesting."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(f"an alias (*{event.anchor})", event.start_mark, WRITTEN_OUT)
        if getattr(event, "anchor", None):
            raise _Refused(f"an anchor (&{event.anchor})", event.start_mark, WRITTEN_OUT)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _Refused(f"nesting deeper than {MAX_DEPTH} levels", event.start_mark, "expected a flatter file")
        try:
            return super().compose_node(parent, index)  # type: ignore[arg-type]
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                raise _Refused("a merge key (<<)", key_node.start_mark, WRITTEN_OUT)
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # a list or mapping as a key: SafeLoader names it below
                continue
            if duplicate:
                raise _Refused(f"the key {key!r} a second time", key_node.start_mark, "expected each key once")
        return super().construct_mapping(node, deep)


def _where(mark: yaml.Mark | None) -> str:
    return f" at line {mark.line + 1}" if mark is not None else ""


def read_yaml_mapping(path: Path, key: str) -> dict[str, Any]:
    """The file's top-level mapping; `key` names what it must hold, for the error message."""
    try:
        if not path.is_file():
            raise InputError.single(path, "expected a YAML file" + (", got a folder" if path.is_dir() else ""))
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise InputError.single(path, f"expected a settings file of at most {MAX_BYTES} bytes, it has {size}")
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise InputError.single(path, f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError.single(path, f"expected UTF-8 text (byte {exc.start} is not)") from None
    try:
        data = yaml.load(text, Loader=_SettingsLoader)  # noqa: S506 - a SafeLoader, made stricter
    except _Refused as exc:
        raise InputError.single(path, f"found {exc.found}{_where(exc.mark)}; {exc.expected}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError.single(path, f"expected YAML{_where(mark)}: {getattr(exc, 'problem', None) or exc}") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer past Python's 4300-digit limit
        raise InputError.single(path, f"expected YAML with values Python can read: {str(exc)[:120]}") from None
    if not isinstance(data, dict):
        got = "an empty file" if data is None else type(data).__name__
        raise InputError.single(path, f"expected a mapping with '{key}', got {got}")
    return data
