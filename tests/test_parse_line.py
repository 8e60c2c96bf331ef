"""parse_line: the fast JSON reader gives what Python's json gives, or hands the line to the strict reader."""

from __future__ import annotations

import json
import math
import random
import struct

import pytest

from toolemu.log.jsonl import parse_line, scan_jsonl
from toolemu.strict_json import NotStrictJson


def _same(a: object, b: object) -> bool:
    """Equal values of equal types all the way down (1 and 1.0 differ; -0.0 and 0.0 differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and (a == b or (math.isnan(a) and math.isnan(b)))  # type: ignore[arg-type]
    return a == b


STRICT = [
    '{"a": 1, "b": [true, false, null], "c": {"d": "e"}}',
    '{"big": 123456789012345678901234567890, "neg": -9223372036854775809, "edge": 18446744073709551616}',
    '{"tiny": 5e-324, "max": 1.7976931348623157e308, "over": 1e400, "under": 1e-400, "negzero": -0.0}',
    '{"z": -0, "e": 1E5, "f": 0.1e1, "g": 100000000000000000000000.0}',
    '{"dup": 1, "dup": 2}',
    '{"pair": "\\ud83d\\ude00", "esc": "\\u0000\\/\\b\\f\\n\\r\\t", "raw": "caf\u00e9 \u2028 \u2029 \U0001f600"}',
    '{"a": 1}\r\n',
    ' \t{"a": 1} \n',
    '{"deep": ' + "[" * 150 + "]" * 150 + "}",
]


@pytest.mark.parametrize("line", STRICT)
def test_strict_json_reads_as_the_standard_library_reads_it(line: str) -> None:
    value, strict = parse_line(line)
    assert strict
    assert _same(value, json.loads(line))


def test_what_jiter_refuses_past_its_depth_is_read_by_the_strict_reader() -> None:
    line = '{"a": ' + "[" * 400 + "]" * 400 + "}"
    value, strict = parse_line(line)
    assert not strict
    assert value == {"a": json.loads("[" * 400 + "]" * 400)}


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ('{"a": NaN}', "constant"),
        ('{"a": -Infinity}', "constant"),
        ('{"a": "\\ud800"}', "surrogate"),  # a lone high surrogate
        ('{"a": "\\udc00x"}', "surrogate"),  # a lone low one
        ('{"\\ud800": 1}', "surrogate"),  # in a key
        ('{"a": 1,}', "syntax"),
        ("{'a': 1}", "syntax"),
        ('{"a": "\t"}', "syntax"),
        ('{"a": 1} {"b": 2}', "syntax"),
        ('{"a": 01}', "syntax"),
        ("\ufeff{}", "syntax"),
        ("[" * 100_000, "depth"),
    ],
)
def test_what_is_not_json_is_named_by_the_strict_reader(line: str, kind: str) -> None:
    with pytest.raises(NotStrictJson) as raised:
        parse_line(line)
    assert raised.value.problem.kind == kind


def test_numbers_read_exactly_as_the_standard_library_reads_them() -> None:
    """Floats correctly rounded and integers of any size, over random bit patterns, long decimals and big ints."""
    rng = random.Random(7)
    texts = []
    for _ in range(20_000):
        bits = struct.unpack("d", rng.randbytes(8))[0]
        if math.isfinite(bits):
            texts.append(repr(bits))
        whole, fraction = (rng.randint(0, 10 ** rng.randint(1, 25)) for _ in range(2))
        texts.append(f"{whole}.{fraction}e{rng.randint(-330, 330)}")
        texts.append(str(rng.randint(-(10**30), 10**30)))
    line = '{"n": [' + ",".join(texts) + "]}"
    value, strict = parse_line(line)
    assert strict
    expected = json.loads(line)["n"]
    wrong = [t for t, a, b in zip(texts, value["n"], expected, strict=True) if not _same(a, b)]
    assert not wrong, wrong[:5]


def test_a_scanned_file_mixes_both_readers_line_by_line(tmp_path) -> None:
    path = tmp_path / "mixed.jsonl"
    lines = ['{"n": 1}', '{"s": "\\ud800"}', '{"big": 123456789012345678901234567890}', '{"x": NaN}', "[1]"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    content = scan_jsonl(path)
    assert content.records == [{"n": 1}, {"big": 123456789012345678901234567890}]
    assert content.lines == [1, 3]
    assert [n for n, _ in content.bad_lines] == [2, 4, 5]
    assert "\\ud800" in content.problems[0] and "NaN" in content.problems[1] and "got list" in content.problems[2]
