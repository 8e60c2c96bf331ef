"""Probe results into one certificate per (toolkit, emulator model, emulator type): the state accuracy (probes
whose every read-back was right) overall, per kind of probe and per number of facts changed, the field accuracy,
with bootstrap CIs (toolemu.reporting.stats), and the counts of what went wrong."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolemu.fidelity.probes import ProbeFile
from toolemu.reporting.fidelity_model import Certificate, FidelityCounts, ProbeResult, Share
from toolemu.reporting.stats import bootstrap_mean_ci
from toolemu.specs.version import content_hash

ADVERSARIAL = {"adv_thought": "adversarial", "adversarial": "adversarial"}


def emulator_kind(simulator_type: str) -> str:
    """ToolEmu's std_thought / adv_thought (or our plain names) as a certificate names them."""
    return ADVERSARIAL.get(simulator_type, "standard")


def probes_hash(probes: ProbeFile) -> str:
    return content_hash(probes.model_dump(mode="json", by_alias=True))


def share(flags: Sequence[bool]) -> Share:
    if not flags:
        return Share()
    k = sum(flags)
    return Share(n=len(flags), k=k, rate=k / len(flags), ci=bootstrap_mean_ci([float(f) for f in flags]))


def counts(results: Sequence[ProbeResult]) -> FidelityCounts:
    out = FidelityCounts()
    for result in results:
        for check in result.checks:
            out.checks += 1
            setattr(out, check.outcome, getattr(out, check.outcome) + 1)
            out.judged += check.judged
        out.errors_where_success_due += result.errors
        out.read_writes += result.read_writes
    return out


def _grouped(results: Sequence[ProbeResult], key: Any) -> dict[str, Share]:
    groups: dict[str, list[bool]] = {}
    for result in sorted(results, key=lambda r: (key(r), r.probe)):
        groups.setdefault(str(key(result)), []).append(result.passed)
    return {name: share(flags) for name, flags in groups.items()}


def certificate(
    toolkit: str,
    toolkit_hash: str,
    probes: ProbeFile,
    emulator: dict[str, Any],
    emulator_type: str,
    emulator_id: str,
    results: Sequence[ProbeResult],
    cost_usd: float = 0.0,
) -> Certificate:
    """`emulator`: its model as records describe it (ModelOptions.description(): `model` and its settings)."""
    fields = [c.outcome == "match" for r in results for c in r.checks if c.field]
    return Certificate(
        toolkit=toolkit,
        toolkit_hash=toolkit_hash,
        probes_hash=probes_hash(probes),
        emulator=str(emulator.get("model", "")),
        emulator_type=emulator_kind(emulator_type),  # type: ignore[arg-type]
        emulator_model=emulator,
        emulator_id=emulator_id,
        state=share([r.passed for r in results]),
        fields=share(fields),
        by_kind=_grouped(results, lambda r: r.kind),
        by_changed=_grouped(results, lambda r: r.changed),
        counts=counts(results),
        model_calls=sum(r.calls for r in results),
        cache_hits=sum(r.cache_hits for r in results),
        judge_calls=sum(r.judge_calls for r in results),
        cost_usd=round(cost_usd, 6),
        complete=len(results) == len(probes.probes),
        results=list(results),
    )
