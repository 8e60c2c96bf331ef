"""Warnings for reports that compare runs on different benchmarks: which versions, and which cases differ."""

from __future__ import annotations

from toolemu.reporting.load import LoadedRun
from toolemu.specs.version import BenchmarkIdentity, differing_cases

SHOWN = 8  # case names per warning; the rest are counted


def _names(names: list[str]) -> str:
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return ", ".join(names[:SHOWN]) + more


def _identity(run: LoadedRun) -> BenchmarkIdentity | None:
    return run.log.meta.benchmark if run.log is not None and run.log.meta is not None else None


def benchmark_warnings(runs: list[LoadedRun]) -> list[str]:
    """One line per run whose benchmark differs from the first versioned run's, naming the cases both ran whose
    content differs; one per run that records no benchmark, where others do (a report of ToolEmu dumps alone has
    nothing to compare)."""
    known = [(run, ident) for run in runs if (ident := _identity(run)) is not None]
    if len(runs) < 2 or not known:
        return []
    out = [
        f"{run.info.run} records no benchmark version (a ToolEmu dump, or a run from before versions): "
        "its cases cannot be checked against the other runs'"
        for run in runs
        if _identity(run) is None
    ]
    ref_run, ref = known[0]
    ref_cases = {ep.case_name for ep in ref_run.episodes}
    for run, ident in known[1:]:
        if ident.hash == ref.hash:
            continue
        shared = ref_cases & {ep.case_name for ep in run.episodes}
        changed, _, _ = differing_cases(ref.cases, ident.cases)
        changed_shared = [c for c in changed if c in shared]
        line = f"{ref_run.info.run} and {run.info.run} ran different benchmarks ({ref.label()} and {ident.label()}): "
        if changed_shared:
            line += f"{len(changed_shared)} of the {len(shared)} cases both ran differ: {_names(changed_shared)}"
        else:
            line += f"none of the {len(shared)} cases both ran differ"
        out.append(line)
    return out
