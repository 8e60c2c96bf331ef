"""Fidelity certificates in a run's report: beside each toolkit's results, the state accuracy of the emulator that
produced them, where a certificate of that (toolkit, emulator model, emulator type) exists: in a fidelity.json
given to the report (`--fidelity`), or in the run's own folder. `toolemu check` reads the same rows
(min_state_accuracy)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from toolemu.errors import InputError, first_error
from toolemu.reporting.fidelity_model import FIDELITY_FILE, Certificate, FidelityFile, Share, ToolkitFidelity
from toolemu.reporting.load import LoadedRun

ADVERSARIAL = ("adv_thought", "adversarial")


def read_certificates(path: Path) -> FidelityFile:
    """A fidelity.json, or a folder holding one; what is not one is bad input (exit 2), named with its file."""
    file = path / FIDELITY_FILE if path.is_dir() else path
    try:
        return FidelityFile.model_validate_json(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise InputError.single(file, f"expected a fidelity.json (toolemu fidelity writes one): {reason}") from None
    except ValidationError as exc:
        where, message = first_error(exc)
        raise InputError.single(file, f"expected a fidelity.json: {message}", field=where) from None


def _in_run_folders(runs: Sequence[LoadedRun]) -> list[tuple[str, FidelityFile]]:
    """fidelity.json in a run's own folder (`toolemu fidelity --out RUN`); one that does not read is noted."""
    found = []
    for run in runs:
        for log in run.all_logs:
            file = log.files.directory / FIDELITY_FILE
            if not file.is_file():
                continue
            try:
                found.append((str(file), read_certificates(file)))
            except InputError as exc:
                run.info.notes.append(f"{file}: not read ({exc.problems[0].message})")
    return found


def _emulator(run: LoadedRun) -> tuple[str, str] | None:
    """The run's emulator model and type, as its first record of ours names them."""
    first = next((t for log in run.all_logs for t in log.trajectories if t.schema_version), None)
    if first is None or not first.model_of("emulator"):
        return None
    kind = "adversarial" if first.simulator_type in ADVERSARIAL else "standard"
    return first.model_of("emulator"), kind


def toolkit_fidelity(runs: Sequence[LoadedRun], given: Sequence[Path] = ()) -> list[ToolkitFidelity]:
    """A row per (run, toolkit) with a certificate of the run's emulator for it: the newest, where several are."""
    files = [(str(p), read_certificates(p)) for p in given] + _in_run_folders(runs)
    if not files:
        return []
    rows = []
    for run in runs:
        emulator = _emulator(run)
        if emulator is None:
            continue
        meta = next((log.meta for log in run.all_logs if log.meta is not None), None)
        hashes = meta.benchmark.toolkits if meta is not None and meta.benchmark is not None else {}
        toolkits = sorted({t for ep in run.episodes for t in ep.toolkits})
        for toolkit in toolkits:
            found: list[tuple[str, str, Certificate]] = [
                (f.generated_at, source, cert)
                for source, f in files
                for cert in f.certificates
                if cert.toolkit == toolkit and (cert.emulator, cert.emulator_type) == emulator
            ]
            if not found:
                continue
            _, source, cert = max(found, key=lambda x: x[0])
            recorded = hashes.get(toolkit)
            rows.append(
                ToolkitFidelity(
                    run=run.info.run,
                    toolkit=toolkit,
                    emulator=cert.emulator,
                    emulator_type=cert.emulator_type,
                    state=cert.state,
                    fields=cert.fields,
                    source=source,
                    same_spec=None if recorded is None else recorded == cert.toolkit_hash,
                )
            )
    return rows


def pooled_state(rows: Sequence[ToolkitFidelity], run: str) -> Share:
    """The state accuracy over a run's certified toolkits (certificates of another spec left out): k and n summed."""
    mine = [r for r in rows if r.run == run and r.same_spec is not False]
    n, k = sum(r.state.n for r in mine), sum(r.state.k for r in mine)
    return Share(n=n, k=k, rate=k / n if n else None)
