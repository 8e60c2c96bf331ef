"""Judge audits in a run's report: each judge's catch rate on planted violations and its false alarm rate, from the
judge_audit.json `toolemu judge-audit RUN` wrote beside the run; "not measured" where there is none. `toolemu
check` reads the same rows (min_judge_catch_rate)."""

from __future__ import annotations

from collections.abc import Sequence

from toolemu.log.judge_audit import AuditedJudge, JudgeAuditFile, RunAudit, Share, audit_path
from toolemu.reporting.load import LoadedRun, read_beside
from toolemu.reporting.text_parts import pct

NOT_MEASURED = "not measured (toolemu judge-audit RUN plants known violations and counts what each judge catches)"


def run_audits(runs: Sequence[LoadedRun]) -> list[RunAudit]:
    """A row per run whose folder holds a judge audit (the first of its files that has one); one that does not read
    is noted on the run and left out."""
    found = []
    for run in runs:
        for log in run.all_logs:
            file = audit_path(log.files)
            audit = read_beside(JudgeAuditFile, file, run.info.notes, "a judge audit of toolemu judge-audit")
            if audit is not None:
                found.append(RunAudit.of(run.info.run, str(file), audit))
                break
    return found


def _share(s: Share) -> str:
    return "-" if s.rate is None else f"{pct(s.rate, s.ci)} of {s.of}"


def judge_line(run: str, j: AuditedJudge) -> str:
    kinds = ", ".join(f"{k.kind} {_share(k.caught)}" for k in j.kinds if k.caught.of)
    catch = f"catch rate {_share(j.catch)} mutants" if j.catch.of else "no mutant of its kinds was judged"
    line = (
        f"judge audit {run} {j.scorer}: {j.label or j.model} ({'headline' if j.headline else 'panel'}): {catch}"
        + (f" ({kinds})" if kinds else "")
        + f"; false alarm rate {_share(j.false_alarm)} controls"
        + (f"; {j.errors} judgements failed" if j.errors else "")
    )
    if j.blind:
        line += f" - BLIND (p = {j.p_value:.2g}): it catches no more than it flags with no violation planted"
    return line


def audit_lines(audit: JudgeAuditFile) -> list[str]:
    """For the command's console: what was audited, each judge's rates, what it cost, where the file is."""
    s = audit.selection
    made = len(audit.mutants)
    lines = [
        f"episodes: {s.episodes} in the run, {s.passed} passed every headline judge, {s.audited} audited "
        f"({s.not_passed} not passed, {s.unjudged} errored or unjudged)",
        f"mutants: {made} ({audit.made_by}; {len(audit.not_made)} kinds could not be made for an episode: "
        "judge_audit.json says why)",
    ]
    lines += [judge_line(audit.run, j) for j in audit.judges]
    calls = ", ".join(f"{role} {n}" for role, n in audit.calls.items())
    per = f"{audit.calls_per_episode:.1f}" if audit.calls_per_episode is not None else "-"
    lines.append(f"model calls: {calls or 'none'} (+{audit.cache_hits} from the cache): {per} per audited episode")
    if audit.stopped:
        lines.append(f"stopped: {audit.stopped}; {audit.not_run} judgements not made")
    return lines + audit.notes


def report_lines(audits: Sequence[RunAudit], runs: Sequence[str]) -> list[str]:
    """For the report's console: each audited judge's rates; a run with no audit says its catch rate is not measured."""
    audited = {a.run for a in audits}
    lines = [judge_line(a.run, j) for a in audits for j in a.judges]
    return lines + [f"judge audit {run}: catch rate {NOT_MEASURED}" for run in runs if run not in audited]


def lowest_catch(audits: Sequence[RunAudit], run: str) -> tuple[str, float | None]:
    """(which judge, its catch rate): the lowest catch rate among the run's audited judges, for `toolemu check`."""
    judges = [j for a in audits if a.run == run for j in a.judges if j.catch.rate is not None]
    if not judges:
        return "judge catch rate", None
    worst = min(judges, key=lambda j: j.catch.rate or 0.0)
    label = f"judge catch rate ({worst.scorer} by {worst.label or worst.model}: {worst.catch.count}/{worst.catch.of})"
    return label, worst.catch.rate
