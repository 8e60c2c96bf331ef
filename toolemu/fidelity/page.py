"""The certificates as a page section (Markdown): state accuracy per toolkit, per kind of probe and per number of
facts changed, with CIs, and what went wrong; the toolkits that cannot be probed, and why."""

from __future__ import annotations

from collections.abc import Iterable

from toolemu.fidelity.certify import share
from toolemu.reporting.fidelity_model import Certificate, FidelityFile, Share

KIND_NAMES = {
    "create_read": "create, then read back",
    "update_read": "update, then read back",
    "delete_read": "delete, then read (gone)",
    "transfer": "transfer, then both balances",
    "read_twice": "read twice (nothing changes)",
}


def rate_text(s: Share) -> str:
    if s.rate is None:
        return "–"
    ci = f" [{100 * s.ci[0]:.0f}–{100 * s.ci[1]:.0f}]" if s.ci is not None else ""
    return f"{100 * s.rate:.1f}%{ci} ({s.k}/{s.n})"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _pooled(certs: Iterable[Certificate], key: str) -> dict[str, Share]:
    flags: dict[str, list[bool]] = {}
    for cert in certs:
        for result in cert.results:
            name = result.kind if key == "kind" else str(result.changed)
            flags.setdefault(name, []).append(result.passed)
    order = sorted(flags, key=lambda k: (int(k) if k.isdigit() else 0, k))
    return {k: share(flags[k]) for k in order}


def page_section(file: FidelityFile) -> str:
    version = file.benchmark_version or "unversioned"
    judged = f", undecided read-backs judged by {_cell(file.judge)}" if file.judge else ""
    lines = [
        f"## Emulator fidelity: {_cell(file.emulator)} ({', '.join(file.emulator_types)})",
        "",
        f"Benchmark {version} ({file.benchmark_hash[:15]}), probes {file.probes_hash[:15]}, "
        f"generated {file.generated_at}{judged}. State accuracy: the share of probes whose every read-back matched "
        "the state their known effects leave (bootstrap 95% CI, k/n); field accuracy: the share of single-field "
        "read-backs that matched.",
        "",
        "| toolkit | emulator | probes | state accuracy | field accuracy | contradictions | invented | lost | "
        "errors where success was due | model calls |",
        "|---|---|---:|---|---|---:|---:|---:|---:|---:|",
    ]
    for cert in file.certificates:
        c = cert.counts
        lines.append(
            f"| {_cell(cert.toolkit)} | {cert.emulator_type} | {cert.state.n}{'' if cert.complete else ' (part)'} | "
            f"{rate_text(cert.state)} | {rate_text(cert.fields)} | {c.contradiction} | {c.invented} | {c.lost} | "
            f"{c.errors_where_success_due} | {cert.model_calls + cert.judge_calls} |"
        )
    for kind in file.emulator_types:
        certs = [c for c in file.certificates if c.emulator_type == kind]
        if certs:
            pooled = share([r.passed for c in certs for r in c.results])
            fields = share([ch.outcome == "match" for c in certs for r in c.results for ch in r.checks if ch.field])
            calls = sum(c.model_calls + c.judge_calls for c in certs)
            lines.append(
                f"| **all {len(certs)} toolkits** | {kind} | {pooled.n} | {rate_text(pooled)} | {rate_text(fields)} "
                f"| {sum(c.counts.contradiction for c in certs)} | {sum(c.counts.invented for c in certs)} | "
                f"{sum(c.counts.lost for c in certs)} | {sum(c.counts.errors_where_success_due for c in certs)} | "
                f"{calls} |"
            )
    for key, title, names in (
        ("kind", "By kind of probe", KIND_NAMES),
        ("changed", "By number of facts changed", {}),
    ):
        lines += ["", f"### {title}", "", "| | emulator | state accuracy |", "|---|---|---|"]
        for kind in file.emulator_types:
            for name, s in _pooled((c for c in file.certificates if c.emulator_type == kind), key).items():
                lines.append(f"| {names.get(name, name)} | {kind} | {rate_text(s)} |")
    if file.unprobeable:
        lines += ["", "### Toolkits that cannot be probed", ""]
        lines += [f"- **{_cell(name)}**: {_cell(why)}" for name, why in file.unprobeable.items()]
    if file.not_run:
        lines += ["", f"Not run ({_cell(file.stop_reason) or 'stopped'}): {len(file.not_run)} probes."]
    return "\n".join(lines) + "\n"
