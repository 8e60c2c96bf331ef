"""The report page's Judge audit section: per run, each judge's catch rate on planted violations (over all its
mutants and per kind) beside its false alarm rate on controls; "not measured" for a run with no audit.

Every string that came from a file (run, model and scorer names) goes through `html.e`."""

from __future__ import annotations

from toolemu.log.judge_audit import METHOD, AuditedJudge, Share
from toolemu.reporting.html_parts import e, rate_text, run_td, table, td
from toolemu.reporting.judge_audit import NOT_MEASURED
from toolemu.reporting.model import Report
from toolemu.reporting.plots import run_order


def _text(s: Share) -> str:
    if s.rate is None:
        return '<span class="sub">none</span>'
    return f'{rate_text(s.rate, s.ci)} <span class="sub">of {s.of}</span>'


def _share(s: Share) -> str:
    return td(_text(s), num=True)


def _catch(j: AuditedJudge) -> str:
    if not j.blind:
        return _share(j.catch)
    title = "its catch rate is no higher than its false alarm rate: it cannot tell a violation from none"
    return f'<td class="num warn" title="{e(title)}">{_text(j.catch)} blind</td>'


def judge_audit_section(report: Report) -> str:
    """Always there: a run with no audit says "not measured", so a headline never looks audited when it is not."""
    audits = {a.run: a for a in report.judge_audits}
    kinds = list(dict.fromkeys(k.kind for a in audits.values() for j in a.judges for k in j.kinds if k.caught.of))
    head = ["run", "scorer", "judge", "role", "#catch rate [95% CI]", "#false alarm rate", *(f"#{k}" for k in kinds)]
    rows, missing = [], []
    for run in run_order(report):
        audit = audits.get(run)
        if audit is None:
            missing.append(run)
            continue
        for j in audit.judges:
            by_kind = {k.kind: k.caught for k in j.kinds}
            rows.append(
                [
                    run_td(run),
                    td(e(j.scorer)),
                    td(e(j.label or j.model)),
                    td("headline" if j.headline else "panel"),
                    _catch(j),
                    _share(j.false_alarm),
                    *(_share(by_kind[k]) if k in by_kind else td("–", True) for k in kinds),
                ]
            )
    parts = ['<section id="judge-audit"><h2>Judge audit</h2>']
    if rows:
        parts.append(f'<p class="note">{e(METHOD)}</p>' + table("judge-audit-table", head, rows))
        for a in report.judge_audits:
            per = f"{a.calls_per_episode:.1f}" if a.calls_per_episode is not None else "–"
            stopped = f"; stopped: {a.stopped}" if a.stopped else ""
            parts.append(
                f'<p class="note">{e(a.run)}: {a.episodes} episodes, {a.mutants} mutants ({e(a.made_by)}), '
                f"{a.controls} controls, {e(per)} model calls per audited episode{e(stopped)} ({e(a.source)})</p>"
            )
    for run in missing:
        parts.append(f'<p class="note"><span class="run-name">{e(run)}</span>: judge catch rate {e(NOT_MEASURED)}</p>')
    parts.append("</section>")
    return "".join(parts)
