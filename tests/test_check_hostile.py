"""`toolemu check` as a CI gate that cannot be fooled: every threshold file, run or --svg path below is bad input.
Each must end in exit 2 and one line on stderr that names the file, the key and what was expected; nothing on
stdout (no verdict on bad input), no traceback, and no summary.svg written over the run's own."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

VALID = "thresholds:\n  min_episodes: 0\n"  # what a bad run is checked against: any run of records passes it


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A small judged dry run, with the summary.svg a first check wrote beside it."""
    import sys

    from toolemu.cli.app import main

    out = tmp_path_factory.mktemp("hostile") / "run"
    sys.argv = ["toolemu", "run", "--dry-run", "--trunc-num", "3", "--dump-dir", str(out), "--no-progress"]
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None)
    (out / "summary.svg").write_text("<svg>the run's own</svg>", encoding="utf-8")
    return out


def _bad(result, *expected: str) -> None:
    assert result.code == 2, result.out + result.err
    assert result.out == ""  # no verdict was printed for bad input
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.err, result.err
    for text in expected:
        assert text in lines[0], lines[0]


def _check(run_cli, run: Path, thresholds: Path, *more: object):
    return run_cli("check", run, "--thresholds", thresholds, *more)


# ------------------------------------------------------------------------------------------------ threshold files

HOSTILE_FILES = [
    # keys given twice: YAML would keep the last one, and a gate could be loosened unseen
    ("dup-key", "thresholds:\n  min_episodes: 1000\n  min_episodes: 0\n", "'min_episodes' a second time at line 3"),
    ("dup-top", "thresholds:\n  min_episodes: 1000\nthresholds:\n  min_episodes: 0\n", "'thresholds' a second time"),
    ("dup-policy", "policy: fail\npolicy: warn\nthresholds:\n  min_episodes: 0\n", "'policy' a second time"),
    ("dup-scorer", "thresholds:\n  min_rate: {safety: 1.0, safety: 0.0}\n", "'safety' a second time"),
    ("dup-alias", "thresholds:\n  min_safe_rate: 1.0\n  min_rate: {safety: 0.0}\n", "also given as"),
    # nothing to check
    ("empty-map", "thresholds: {}\n", "field 'thresholds': expected at least one threshold"),
    ("null-map", "thresholds:\n", "field 'thresholds': expected at least one threshold"),
    ("no-thresholds", "policy: warn\n", "field 'thresholds': expected a mapping of thresholds"),
    ("empty-file", "", "expected a mapping with 'thresholds', got an empty file"),
    ("comments-only", "# nothing here\n", "got an empty file"),
    ("empty-scorers", "thresholds:\n  min_rate: {}\n", "field 'thresholds.min_rate': expected a mapping of scorer"),
    # empty values
    ("empty-rate", "thresholds:\n  min_safe_rate:\n", "thresholds.min_safe_rate': expected a share", "got nothing"),
    ("empty-count", "thresholds:\n  min_episodes:\n", "thresholds.min_episodes': expected a whole number"),
    ("empty-policy", "policy:\nthresholds:\n  min_episodes: 0\n", "field 'policy': expected warn or fail"),
    ("empty-in-map", "thresholds:\n  max_rate: {attack: }\n", "thresholds.max_rate.attack': expected a share"),
    # booleans
    ("bool-count", "thresholds:\n  min_episodes: true\n", "expected a whole number", "got a boolean (true)"),
    ("bool-denied", "thresholds:\n  max_denied_after_tool: false\n", "got a boolean (false)"),
    ("bool-yes", "thresholds:\n  min_safe_rate: yes\n", "expected a share", "got a boolean"),
    ("bool-policy", "policy: true\nthresholds:\n  min_episodes: 0\n", "field 'policy'", "got a boolean"),
    # strings that hold numbers
    ("str-rate", 'thresholds:\n  min_safe_rate: "0.5"\n', "expected a share", "got a string ('0.5')"),
    ("str-count", "thresholds:\n  min_episodes: '3'\n", "expected a whole number", "got a string"),
    ("str-pct", "thresholds:\n  max_error_rate: 5%\n", "expected a share", "got a string ('5%')"),
    # numbers that are not limits
    ("nan", "thresholds:\n  min_safe_rate: .nan\n", "expected a share", "got nan"),
    ("inf", "thresholds:\n  max_error_rate: .inf\n", "expected a share", "got inf"),
    ("neg-inf", "thresholds:\n  max_rate: {attack: -.inf}\n", "thresholds.max_rate.attack'", "got -inf"),
    ("nan-count", "thresholds:\n  min_episodes: .NaN\n", "expected a whole number", "got nan"),
    ("neg-rate", "thresholds:\n  max_error_rate: -0.1\n", "expected a share from 0 to 1", "got -0.1"),
    ("rate-over-1", "thresholds:\n  min_rate: {safety: 1.5}\n", "thresholds.min_rate.safety'", "got 1.5"),
    ("percent-as-rate", "thresholds:\n  min_helpful_rate: 60\n", "expected a share from 0 to 1 (0.6 is 60%)"),
    ("neg-count", "thresholds:\n  min_episodes: -1\n", "expected a whole number from 0", "got -1"),
    ("frac-count", "thresholds:\n  min_episodes: 2.5\n", "expected a whole number", "got 2.5"),
    ("huge-count", "thresholds:\n  max_denied_after_tool: 100000000000000000000\n", "expected a whole number"),
    ("digits-bomb", "thresholds:\n  min_episodes: 1" + "0" * 5000 + "\n", "expected YAML with values Python can"),
    # other shapes
    ("list-rate", "thresholds:\n  min_safe_rate: [0.6]\n", "expected a share", "got a list"),
    ("map-rate", "thresholds:\n  min_safe_rate: {value: 0.6}\n", "expected a share", "got a mapping"),
    ("list-scorers", "thresholds:\n  max_rate: [attack, 0.1]\n", "expected a mapping of scorer names", "got a list"),
    ("nested-share", "thresholds:\n  min_rate: {safety: {min: 0.6}}\n", "min_rate.safety'", "got a mapping"),
    ("binary", "thresholds:\n  min_safe_rate: !!binary AAAA\n", "expected a share"),
    ("date", "thresholds:\n  min_safe_rate: 2001-12-14\n", "expected a share", "datetime.date"),
    ("int-scorer", "thresholds:\n  min_rate: {1: 0.5}\n", "expected a scorer's name", "got 1"),
    ("null-scorer", "thresholds:\n  min_rate: {~: 0.5}\n", "expected a scorer's name", "got nothing"),
    ("space-scorer", "thresholds:\n  min_rate: {'safety ': 0.5}\n", "expected a scorer's name"),
    ("int-key", "thresholds:\n  1: 0.5\n", "field 'thresholds.1': expected one of min_episodes"),
    ("top-typo", "threshold:\n  min_episodes: 0\n", "field 'threshold': expected only 'policy' and 'thresholds'"),
    # YAML made to be expensive
    (
        "anchor-bomb",
        "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n" + VALID,
        "found an anchor (&a) at line 1",
    ),  # fmt: skip
    ("alias-value", "thresholds:\n  min_episodes: &n 0\n  max_denied_after_tool: *n\n", "found an anchor (&n)"),
    ("merge-key", "thresholds:\n  <<: {min_episodes: 0}\n  max_error_rate: 1\n", "found a merge key (<<)"),
    ("deep-map", "thresholds:\n  min_safe_rate: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", "nesting deeper than"),
    ("deep", "thresholds:\n  min_safe_rate: " + "[" * 5000 + "]" * 5000 + "\n", "nesting deeper than 32 levels"),
]


@pytest.mark.parametrize(
    ("text", "expected"), [pytest.param(text, expected, id=name) for name, text, *expected in HOSTILE_FILES]
)
def test_a_hostile_thresholds_file_is_one_line_exit_2(run, tmp_path, run_cli, text, expected) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    _bad(_check(run_cli, run, path, "--svg", tmp_path / "s.svg"), str(path), *expected)
    assert not (tmp_path / "s.svg").exists()


def test_an_unknown_scorer_is_bad_input_a_known_unjudged_one_a_breach(run, tmp_path, run_cli) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("thresholds:\n  min_rate: {safty: 0.5}\n", encoding="utf-8")
    _bad(_check(run_cli, run, path), "field 'thresholds.min_rate.safty': expected a scorer", "got 'safty'")
    path.write_text("thresholds:\n  max_failure_rate: {attack: 0.5}\n", encoding="utf-8")  # no threat case in 3
    result = _check(run_cli, run, path, "--svg", tmp_path / "s.svg")
    assert result.code == 4 and "attack failure rate cannot be measured" in result.out


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"thresholds:\n  min_episodes: \xff0\n", "expected UTF-8 text (byte 28 is not)"),
        (b"# " + b"x" * (1 << 20) + b"\nthresholds:\n  min_episodes: 0\n", "expected a settings file of at most"),
    ],
    ids=["non-utf8", "huge"],
)
def test_bytes_that_are_not_a_settings_file(run, tmp_path, run_cli, content, expected) -> None:
    path = tmp_path / "t.yaml"
    path.write_bytes(content)
    _bad(_check(run_cli, run, path), str(path), expected)


def test_a_folder_as_the_thresholds_file(run, tmp_path, run_cli) -> None:
    _bad(_check(run_cli, run, tmp_path), str(tmp_path), "expected a YAML file, got a folder")


def test_minus_zero_is_zero(run, tmp_path, run_cli) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("thresholds:\n  max_error_rate: -0.0\n", encoding="utf-8")
    result = _check(run_cli, run, path, "--svg", tmp_path / "s.svg")
    assert result.code == 0 and result.out.strip() == "OK: 1 thresholds met"
    texts = [t.text for t in ET.fromstring((tmp_path / "s.svg").read_text()).iter() if t.tag.endswith("text")]
    assert "≤ 0.0%" in texts and not any("-0" in (t or "") for t in texts)


# ------------------------------------------------------------------------------------------------ runs that are not


def _not_a_run(run: Path, tmp_path: Path, name: str) -> Path:
    """A file beside the run's own records (its summary.svg is the one check would write over)."""
    records = [json.loads(line) for line in (run / "trajectories_eval_agent_safe.jsonl").read_text().splitlines()]
    contents: dict[str, bytes] = {
        "empty.jsonl": b"",
        "blank.jsonl": b"\n\n  \n",
        "objects.jsonl": b'{"a": 1}\n{"b": [2]}\n',
        "arrays.jsonl": b"[1, 2]\n[3]\n",
        "evals.jsonl": "".join(json.dumps(r) + "\n" for r in records).encode(),
        "bytes.jsonl": b"\xff\xfe\x00\x01\n",
        "numbers.jsonl": b"1\n2\n",
    }
    path = run / name
    path.write_bytes(contents[name])
    return path


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("empty.jsonl", "expected a run: trajectories with at least one episode, no trajectory records"),
        ("blank.jsonl", "expected a run: trajectories with at least one episode"),
        ("objects.jsonl", "expected a run: trajectories with at least one episode"),
        ("arrays.jsonl", "expected a run: trajectories with at least one episode, 2 lines are not trajectory"),
        ("evals.jsonl", "expected a run: trajectories with at least one episode, 3 lines are not trajectory"),
        ("bytes.jsonl", "expected a run: trajectories with at least one episode, 1 lines are not trajectory"),
        ("numbers.jsonl", "expected a run: trajectories with at least one episode"),
    ],
)
def test_a_jsonl_that_is_not_a_run_is_bad_input_and_leaves_the_svg(run, tmp_path, run_cli, name, expected) -> None:
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text(VALID, encoding="utf-8")
    path = _not_a_run(run, tmp_path, name)
    try:
        _bad(_check(run_cli, path, thresholds), str(path), expected)
    finally:
        path.unlink()
    assert (run / "summary.svg").read_text() == "<svg>the run's own</svg>"


def test_an_eval_file_is_not_its_run(run, tmp_path, run_cli) -> None:
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text(VALID, encoding="utf-8")
    evals = run / "trajectories_eval_agent_safe.jsonl"
    _bad(_check(run_cli, evals, thresholds), str(evals), "expected a run's trajectories, got an eval file")
    assert (run / "summary.svg").read_text() == "<svg>the run's own</svg>"


def test_run_json_is_not_a_run(run, tmp_path, run_cli) -> None:
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text(VALID, encoding="utf-8")
    _bad(_check(run_cli, run / "run.json", thresholds), "run.json", "expected a run")
    assert (run / "summary.svg").read_text() == "<svg>the run's own</svg>"


# ------------------------------------------------------------------------------------------------ --svg


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        (".", "field '--svg': expected a file path for the SVG, got a folder"),
        ("missing/summary.svg", "field '--svg': expected an existing folder to write it in"),
        ("a-file/summary.svg", "field '--svg': expected an existing folder to write it in"),
        ("a-file", "field '--svg': expected a path ending in .svg"),
        ("x" * 300 + ".svg", "field '--svg': cannot be written: File name too long"),
    ],
    ids=["folder", "missing-parent", "file-as-parent", "not-an-svg", "name-too-long"],
)
def test_svg_where_it_cannot_go_is_one_line(run, tmp_path, run_cli, target, expected) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text(VALID, encoding="utf-8")
    _bad(_check(run_cli, run, thresholds, "--svg", tmp_path / target), expected)
    assert (tmp_path / "a-file").read_text() == "x"


def test_svg_over_the_runs_records_is_refused(run, tmp_path, run_cli) -> None:
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text(VALID, encoding="utf-8")
    records = (run / "trajectories.jsonl").read_bytes()
    _bad(_check(run_cli, run, thresholds, "--svg", run / "trajectories.jsonl"), "expected a path ending in .svg")
    assert (run / "trajectories.jsonl").read_bytes() == records
