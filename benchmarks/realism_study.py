"""The realism checks and the awareness patterns on real data: a published 27-agent ToolEmu study, labelled by hand.

The study: github:bplaut/safety-persists-llm-agents (MIT), its `data/raw_data_by_eval` folder: two judges' folders
(gpt5m, q32), one folder per agent, ToolEmu dumps (`*.jsonl`) with their eval files beside them. The same trajectory
may be in both judges' folders; each is counted once. Its files are not in this repository: name a copy.

What it prints (for the checks as they are, and for a baseline commit's, loaded from git):
- the flag rate: the share of all emulated observations (the steps of every distinct trajectory) a check flags;
- precision and recall per check and overall on the labelled sample (tests/fixtures/realism_labels.csv). A finding
  is matched to the label of its observation (file, line, step), check and subject (the text, id or field it is
  about); a second finding on a label already matched is a duplicate, counted false (one placeholder found twice).
  Precision is also weighted by each check's share of all findings on the study (the sample over-draws rare kinds);
- the awareness scorer's patterns: how many trajectories they find an agent saying it is in a test or simulation.

The labels, one row per (observation, check, subject): `file` (under the study folder), `line` (1-based), `step`
(0-based, as Step.index), `check`, `subject`, `label` ("true": a real problem of the check's kind, flagged or not;
"false": a finding that names none; for check "none", "clean": nothing to find, or "not_emulated": ToolEmu's
executor wrote it), `needs` (what deciding it takes beyond the observation's text: "user" ToolEmu's user, "input" the
call's input, "history" earlier steps, "list" the whole list, "executor" the step's shape; empty: the text alone),
`reason` (one line) and `excerpt` (under 80 characters, to recognise the observation; no more of it is kept).

Run:  python benchmarks/realism_study.py STUDY [--labels FILE] [--baseline e348042] [--json] [--errors]
      python benchmarks/realism_study.py STUDY --draw    (the stratified sample the labels were made on)
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import re
import subprocess
import sys
import time
import types
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from pydantic import ValidationError

from toolemu.emulator import realism_checks
from toolemu.log import Trajectory
from toolemu.log.toolemu_format import upgrade_trajectory
from toolemu.scorers import awareness
from toolemu.scorers import registry as scorer_registry

REPO = Path(__file__).resolve().parents[1]
LABELS = REPO / "tests" / "fixtures" / "realism_labels.csv"
CHECKS = ("placeholder", "sequential_ids", "id_reuse", "contradiction", "mentions_emulation")
FIELDS = ("file", "line", "step", "check", "subject", "label", "reason", "excerpt")
SEED = 26
DRAWN_WITH = "5e230e2"  # the commit whose checks drew the labelled sample (with the baseline's): `--draw` redraws it
LABEL_VALUES = ("true", "false", "clean", "not_emulated")
EVAL_FILE = re.compile(r"_eval_[A-Za-z_]+\.jsonl$")  # <dump>_eval_<type>.jsonl (a dump's own name has "_eval-<model>")


def fail(message: str) -> NoReturn:
    """Bad input: one line, exit code 2."""
    print(message, file=sys.stderr)
    sys.exit(2)


# ------------------------------------------------------------------------------------------------------- reading


@dataclass
class Episode:
    file: str  # relative to the study folder: <judge>/<agent>/<dump>.jsonl
    line: int  # 1-based
    trajectory: Trajectory
    copies: list[tuple[str, int]] = field(default_factory=list)  # every (file, line) holding the same trajectory

    @property
    def agent(self) -> str:
        return self.file.split("/")[1]


def _finish_as_list(record: dict[str, Any]) -> dict[str, Any]:
    """LangChain's AgentFinish object as ToolEmu's [return_values, log], so that a reader from before that form was
    read (a baseline commit's) sees the same steps."""
    steps = record.get("intermediate_steps")
    if not isinstance(steps, list):
        return record
    fixed = [
        [[e[0].get("return_values") or {}, e[0].get("log") or ""], e[1]]
        if isinstance(e, list) and len(e) == 2 and isinstance(e[0], dict) and e[0].get("type") == "AgentFinish"
        else e
        for e in steps
    ]
    return {**record, "intermediate_steps": fixed}


def episodes(study: Path) -> list[Episode]:
    """Every distinct trajectory of the study, once, under the first (file, line) holding it (sorted paths)."""
    by_content: dict[str, Episode] = {}
    for path in sorted(study.glob("*/*/*.jsonl")):
        if EVAL_FILE.search(path.name):  # an eval file (safety, helpfulness...) beside its dump
            continue
        rel = path.relative_to(study).as_posix()
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as e:
                fail(f"{path}: line {number}: not JSON ({e.msg}); expected one ToolEmu trajectory record a line")
            if not isinstance(record, dict):
                fail(f"{path}: line {number}: expected a JSON object (a ToolEmu trajectory record)")
            key = hashlib.sha1(
                json.dumps([record.get("case_idx"), record.get("intermediate_steps")], sort_keys=True).encode()
            ).hexdigest()
            if key in by_content:
                by_content[key].copies.append((rel, number))
                continue
            try:
                trajectory = upgrade_trajectory(_finish_as_list(record), number - 1)
            except ValidationError as e:
                fail(f"{path}: line {number}: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}")
            # The raw steps stay as written: awareness reads the final AgentFinish's log from them.
            trajectory = trajectory.model_copy(update={"intermediate_steps": record.get("intermediate_steps") or []})
            by_content[key] = Episode(rel, number, trajectory, [(rel, number)])
    return list(by_content.values())


# ------------------------------------------------------------------------------------------------ the detectors


@dataclass
class Detectors:
    """One version of the checks and of the awareness patterns: the working tree's, or a commit's."""

    name: str
    findings: Callable[[Trajectory], list[Any]]
    rated: Callable[[Any], bool]
    aware: Callable[[Trajectory], list[dict[str, Any]]]


def current() -> Detectors:
    return Detectors("current", realism_checks.check_trajectory, realism_checks.rated, awareness.pattern_hits)


def _module_at(commit: str, path: str, name: str) -> types.ModuleType:
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{commit}:{path}"], capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType(name)
    module.__file__ = f"{commit}:{path}"
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - this repository's own history
    return module


def baseline(commit: str) -> Detectors:
    """The checks and awareness patterns as `commit` had them (read from git, this checkout's history)."""
    checks = _module_at(commit, "toolemu/emulator/realism_checks.py", f"_baseline_realism_checks_{commit}")
    saved = (dict(scorer_registry._FACTORIES), dict(scorer_registry._INFOS))
    try:  # the old module registers its scorer again on import: the registry is put back as it was
        aware = _module_at(commit, "toolemu/scorers/awareness.py", f"_baseline_awareness_{commit}")
    finally:
        scorer_registry._FACTORIES.clear()
        scorer_registry._FACTORIES.update(saved[0])
        scorer_registry._INFOS.clear()
        scorer_registry._INFOS.update(saved[1])
    check = getattr(checks, "check_trajectory", None) or (lambda t: checks.check_steps(t.steps))
    return Detectors(commit, check, checks.rated, aware.pattern_hits)


# --------------------------------------------------------------------------------------------------- subjects

_QUOTED = re.compile(r": (['\"])(.*)\1$", re.DOTALL)
_SEQUENCE = re.compile(r"^(\S+) counts ")
_REUSE = re.compile(r"^id (['\"])(.*?)\1 names ")
_CONTRADICTION = re.compile(r"^\S* (['\"])(.*?)\1 (?:shows (.+?)=|was deleted)")


def subject(finding: Any) -> str:
    """What a finding is about, from its detail (any version writes it so): a placeholder's or a mention's text, a
    counted list's `list.key`, a reused id, a contradicted object's `id.field` (its id alone when deleted)."""
    detail = finding.detail
    patterns = {
        "placeholder": (_QUOTED, lambda m: m[2]),
        "mentions_emulation": (_QUOTED, lambda m: m[2]),
        "sequential_ids": (_SEQUENCE, lambda m: m[1]),
        "id_reuse": (_REUSE, lambda m: m[2]),
        "contradiction": (_CONTRADICTION, lambda m: f"{m[2]}.{m[3]}" if m[3] else m[2]),
    }
    pattern, take = patterns[finding.kind]
    m = pattern.search(detail)
    return norm(take(m) if m else detail)


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip()


# ----------------------------------------------------------------------------------------------------- labels


@dataclass(frozen=True)
class Label:
    file: str
    line: int
    step: int
    check: str  # a check, or "none": the observation was read and nothing is to be found in it
    subject: str
    label: str  # "true", "false"; for "none": "clean" or "not_emulated" (the executor wrote it)
    reason: str
    excerpt: str

    @property
    def observation(self) -> tuple[str, int, int]:
        return (self.file, self.line, self.step)


def read_labels(path: Path) -> list[Label]:
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for number, row in enumerate(rows, 2):
        if row.get("check") not in (*CHECKS, "none") or row.get("label") not in (
            "true",
            "false",
            "clean",
            "not_emulated",
        ):
            fail(f"{path}: line {number}: check {row.get('check')!r} / label {row.get('label')!r} unknown")
        out.append(
            Label(
                row["file"], int(row["line"]), int(row["step"]), row["check"], norm(row["subject"]),
                row["label"], row["reason"], row["excerpt"],
            )
        )  # fmt: skip
    return out


# ---------------------------------------------------------------------------------------------------- measures


def flag_rate(eps: list[Episode], det: Detectors) -> dict[str, Any]:
    started = time.perf_counter()
    observations = rated = flagged = 0
    kinds: Counter[str] = Counter()
    flagged_by: Counter[str] = Counter()
    for ep in eps:
        steps = ep.trajectory.steps
        observations += len(steps)
        rated += sum(1 for s in steps if det.rated(s))
        found = det.findings(ep.trajectory)
        flagged += len({f.step for f in found})
        kinds.update(f.kind for f in found)
        flagged_by.update(kind for kind, _ in {(f.kind, f.step) for f in found})
    return {
        "trajectories": len(eps),
        "observations": observations,
        "rated": rated,
        "flagged": flagged,
        "flag_rate": round(flagged / observations, 4) if observations else None,
        "flag_rate_of_rated": round(flagged / rated, 4) if rated else None,
        "findings": dict(sorted(kinds.items())),
        "observations_flagged_by": dict(sorted(flagged_by.items())),
        "seconds": round(time.perf_counter() - started, 1),
    }


def _located(eps: list[Episode]) -> dict[tuple[str, int], Episode]:
    return {copy: ep for ep in eps for copy in ep.copies}


def score_labels(eps: list[Episode], labels: list[Label], det: Detectors) -> dict[str, Any]:
    located = _located(eps)
    by_observation: dict[tuple[str, int, int], list[Label]] = defaultdict(list)
    for label in labels:
        by_observation[label.observation].append(label)
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    dup: Counter[str] = Counter()
    positives: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    unlabelled: list[str] = []
    errors: list[str] = []  # every false finding and every missed true label, for reading
    missing = [f"{f}:{n}" for f, n, _ in by_observation if (f, n) not in located]
    findings_cache: dict[tuple[str, int], list[Any]] = {}
    for (file, line, step), rows in sorted(by_observation.items()):
        ep = located.get((file, line))
        if ep is None:
            continue
        if (file, line) not in findings_cache:
            findings_cache[(file, line)] = det.findings(ep.trajectory)
        found = [f for f in findings_cache[(file, line)] if f.step == step]
        matched: set[Label] = set()
        for finding in found:
            key = subject(finding)
            row = next((r for r in rows if r.check == finding.kind and r.subject == key), None)
            if row is None:
                unlabelled.append(f"{file}:{line} step {step} {finding.kind} {key!r} ({finding.detail[:80]})")
                fp[finding.kind] += 1
            elif row in matched:
                dup[finding.kind] += 1
                fp[finding.kind] += 1
                errors.append(f"duplicate {file}:{line} step {step} {finding.kind} {key!r}")
            elif row.label == "true":
                tp[finding.kind] += 1
                matched.add(row)
            else:
                fp[finding.kind] += 1
                matched.add(row)
                errors.append(f"false {file}:{line} step {step} {finding.kind} {key!r}: {row.reason}")
        for row in rows:
            if row.check in CHECKS and row.label == "true":
                positives[row.check] += 1
                caught[row.check] += row in matched
                if row not in matched:
                    errors.append(f"missed {file}:{line} step {step} {row.check} {row.subject!r}: {row.reason}")

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    per_check = {
        kind: {
            "findings": tp[kind] + fp[kind],
            "true": tp[kind],
            "false": fp[kind],
            "duplicates": dup[kind],
            "precision": ratio(tp[kind], tp[kind] + fp[kind]),
            "labelled_true": positives[kind],
            "recall": ratio(caught[kind], positives[kind]),
        }
        for kind in CHECKS
    }
    total_tp, total_fp = sum(tp.values()), sum(fp.values())
    return {
        "observations": len(by_observation),
        "per_check": per_check,
        "overall": {
            "findings": total_tp + total_fp,
            "precision": ratio(total_tp, total_tp + total_fp),
            "recall": ratio(sum(caught.values()), sum(positives.values())),
        },
        "unlabelled_findings": unlabelled,
        "errors": errors,
        "labels_not_in_study": missing,
    }


def weighted_precision(scored: dict[str, Any], rate: dict[str, Any]) -> float | None:
    """Each check's sample precision, weighted by its share of all findings on the study."""
    counts = rate["findings"]
    total = sum(counts.get(k, 0) for k in CHECKS if scored["per_check"][k]["precision"] is not None)
    if not total:
        return None
    return round(
        sum(
            counts.get(k, 0) * scored["per_check"][k]["precision"]
            for k in CHECKS
            if scored["per_check"][k]["precision"] is not None
        )
        / total,
        4,
    )


def awareness_count(eps: list[Episode], det: Detectors) -> dict[str, Any]:
    found = {f"{ep.file}:{ep.line}": det.aware(ep.trajectory) for ep in eps}
    hits = {k: v for k, v in found.items() if v}
    return {
        "trajectories": len(eps),
        "aware_by_patterns": len(hits),
        "episodes": {k: sorted({h["phrase"] for h in v}) for k, v in sorted(hits.items())},
    }


# -------------------------------------------------------------------------------------------------------- draw


def strata(ep: Episode, step: Any, versions: list[Detectors], found: dict[str, list[Any]]) -> set[str]:
    """The strata an observation is in: each kind of finding any version makes on it (placeholders by what they
    are), whether the executor wrote it, or none."""
    out: set[str] = set()
    for det in versions:
        for f in found[det.name]:
            if f.step != step.index:
                continue
            out.add(f"placeholder:{f.detail.split(':')[0]}" if f.kind == "placeholder" else f.kind)
    if realism_checks.executor_wrote(step):
        out.add("executor")
    return out or {"unflagged"}


QUOTAS = {"unflagged": 90, "executor": 12}
DEFAULT_QUOTA = 12
PLACEHOLDER_QUOTA = {
    "the placeholder name John/Jane Doe": 22,
    "a counting placeholder number": 22,
    "a fictional 555 phone number": 14,
    "a 555-555 placeholder phone number": 6,
    "an example.com address": 16,
    "the placeholder phone number 123-456-7890": 12,
    "the placeholder address 123 Main St": 10,
    "a placeholder id": 10,
}


def draw(eps: list[Episode], versions: list[Detectors], seed: int) -> list[tuple[str, int, int, str, str]]:
    """A stratified sample: per stratum, observations in a seeded order, one per case first (spread over agents,
    toolkits and cases), each observation in the rarest of its strata. Each trajectory is taken from a judge's folder
    drawn at random among those holding it."""
    rng = random.Random(seed)
    pool: dict[str, list[tuple[str, int, int, str, str]]] = defaultdict(list)
    sizes: Counter[str] = Counter()
    items = []
    for ep in eps:
        found = {det.name: det.findings(ep.trajectory) for det in versions}
        file, line = rng.choice(sorted(ep.copies))
        for step in ep.trajectory.steps:
            names = strata(ep, step, versions, found)
            sizes.update(names)
            items.append((names, (file, line, step.index, ep.trajectory.case_name, step.tool)))
    for names, item in items:
        rarest = min(names, key=lambda n: (sizes[n], n))
        pool[rarest].append(item)
    chosen = []
    for name in sorted(pool):
        quota = QUOTAS.get(name) or PLACEHOLDER_QUOTA.get(name.partition(":")[2]) or DEFAULT_QUOTA
        if name.startswith("placeholder:") and name.partition(":")[2] not in PLACEHOLDER_QUOTA:
            quota = 5
        candidates = pool[name][:]
        rng.shuffle(candidates)
        cases: set[str] = set()
        picked = []
        for item in candidates:  # one per case first, then the rest in order
            if len(picked) < quota and item[3] not in cases:
                picked.append(item)
                cases.add(item[3])
        picked += [i for i in candidates if i not in picked][: quota - len(picked)]
        chosen += [(*i[:3], name, i[4]) for i in picked]
    return chosen


# -------------------------------------------------------------------------------------------------------- main


def table(scored: dict[str, Any]) -> str:
    lines = [f"{'check':<20} {'findings':>8} {'true':>5} {'false':>5} {'dup':>4} {'precision':>9} {'recall':>7}"]
    for kind, row in scored["per_check"].items():
        p = "-" if row["precision"] is None else f"{row['precision']:.3f}"
        r = "-" if row["recall"] is None else f"{row['recall']:.3f} ({row['labelled_true']})"
        lines.append(
            f"{kind:<20} {row['findings']:>8} {row['true']:>5} {row['false']:>5} {row['duplicates']:>4} {p:>9} {r:>7}"
        )
    o = scored["overall"]
    p = "-" if o["precision"] is None else f"{o['precision']:.3f}"
    r = "-" if o["recall"] is None else f"{o['recall']:.3f}"
    lines.append(f"{'overall':<20} {o['findings']:>8} {'':>5} {'':>5} {'':>4} {p:>9} {r:>7}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("study", type=Path, help="the study's data/raw_data_by_eval folder")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--baseline", default="e348042", help="a commit whose checks to measure too ('' for none)")
    parser.add_argument("--draw", action="store_true", help="print the stratified sample to label, as CSV keys")
    parser.add_argument(
        "--draw-checks", default=DRAWN_WITH, help="the commit whose checks (beside the baseline's) make the strata"
    )
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--errors", action="store_true", help="list every false finding and every missed label")
    args = parser.parse_args()
    if not args.study.is_dir():
        fail(f"{args.study}: not a folder (the study's data/raw_data_by_eval)")
    if not args.draw and not args.labels.is_file():
        fail(f"{args.labels}: no such labels file (expected the CSV of tests/fixtures/realism_labels.csv)")
    eps = episodes(args.study)
    if not eps:
        fail(f"{args.study}: no trajectory record in <judge>/<agent>/*.jsonl")
    versions = [current(), *([baseline(args.baseline)] if args.baseline else [])]
    if args.draw:
        drawn_with = [baseline(args.draw_checks), *versions[1:]] if args.draw_checks else versions
        writer = csv.writer(sys.stdout)
        writer.writerow(["file", "line", "step", "stratum", "tool"])
        writer.writerows(draw(eps, drawn_with, args.seed))
        return
    labels = read_labels(args.labels)
    out: dict[str, Any] = {"study": str(args.study), "labels": len(labels)}
    for det in reversed(versions):
        rate = flag_rate(eps, det)
        scored = score_labels(eps, labels, det)
        scored["overall"]["precision_weighted_by_study"] = weighted_precision(scored, rate)
        out[det.name] = {"flag_rate": rate, "labelled": scored, "awareness": awareness_count(eps, det)}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    for det in reversed(versions):
        res = out[det.name]
        rate, scored, aware = res["flag_rate"], res["labelled"], res["awareness"]
        print(f"== {det.name}")
        print(
            f"flagged {rate['flagged']} of {rate['observations']} observations ({rate['flag_rate']:.1%}); "
            f"{rate['rated']} rated, {rate['flag_rate_of_rated']:.1%} of them; findings {rate['findings']}"
        )
        print(f"labelled sample: {scored['observations']} observations")
        print(table(scored))
        print(f"precision weighted by the study's findings: {scored['overall']['precision_weighted_by_study']}")
        if scored["unlabelled_findings"]:
            print(f"{len(scored['unlabelled_findings'])} findings with no label:")
            print("\n".join(f"  {u}" for u in scored["unlabelled_findings"]))
        if scored["labels_not_in_study"]:
            print(f"labels naming no record of the study: {scored['labels_not_in_study'][:5]}")
        if args.errors:
            print("\n".join(f"  {e}" for e in scored["errors"]))
        print(f"awareness patterns: {aware['aware_by_patterns']} of {aware['trajectories']} trajectories")
        print()


if __name__ == "__main__":
    main()
