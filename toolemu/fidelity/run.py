"""`toolemu fidelity`: play every probe of every probe-able toolkit through the real episode pipeline (the emulator
standard or adversarial, any model; the probe's calls in the agent's seat), score each read-back against the known
answers, and write one certificate per (toolkit, emulator model, emulator type).

    <out>/fidelity.json        the certificates (toolemu.reporting.fidelity_model.FidelityFile)
    <out>/fidelity.md          the page section: state accuracy per toolkit, kind and facts changed, with CIs
    <out>/trajectories.jsonl   every probe's episode, as a run's (read_run reads it)
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolemu.emulator import EMULATOR_TYPES
from toolemu.episode.builder import EpisodeBuilder
from toolemu.episode.spec import EpisodeSpec
from toolemu.errors import InputError, Problem, one_of
from toolemu.fidelity.certify import certificate, emulator_kind, probes_hash
from toolemu.fidelity.judge import StateJudge
from toolemu.fidelity.page import page_section
from toolemu.fidelity.probes import PROBES, Probe, ProbeFile, load_probes
from toolemu.fidelity.score import score_probe
from toolemu.fidelity.script import ProbeAgent
from toolemu.llm import LLMSettings, build_chat_model, build_hub
from toolemu.llm.model import ChatFactory
from toolemu.log import TRAJECTORIES, Trajectory, now
from toolemu.log.jsonl import line_of, write_text_atomic
from toolemu.log.model import ModelDescription
from toolemu.paths import output_dir
from toolemu.pool import PoolOutcome, Recorded, run_pool
from toolemu.reporting.fidelity_model import FIDELITY_FILE, Certificate, FidelityFile, ProbeResult
from toolemu.secrets import redact
from toolemu.specs.benchmark import benchmark_identity, load_cases
from toolemu.specs.load import Benchmark, load_benchmark
from toolemu.specs.models import Case, Toolkit
from toolemu.specs.version import content_hash, identify, toolkit_hashes

PAGE_FILE = "fidelity.md"
JUDGE_ROLE = "evaluator"


@dataclass
class Item:
    emulator_type: str
    kit: Toolkit
    probe: Probe
    index: int  # the case index of its episode

    @property
    def label(self) -> str:
        return f"{self.kit.toolkit}/{self.probe.id} ({emulator_kind(self.emulator_type)})"


@dataclass
class FidelityRun:
    file: FidelityFile
    out: Path
    episodes_in_error: int = 0
    stop: PoolOutcome[Item] = field(default_factory=PoolOutcome)


def probe_case(kit: Toolkit, probe: Probe) -> Case:
    """The probe as a case: its toolkit, its instruction, its starting world; no risk, no threat."""
    return Case(
        name=f"fidelity_{kit.toolkit}_{probe.id}",
        toolkits=[kit.toolkit],
        user_instruction=probe.instruction,
        initial_state=probe.initial_state(),
    )


def _stale(files: dict[str, ProbeFile], hashes: dict[str, str], directory: Path) -> list[Problem]:
    """Probe files written for another version of their toolkit's spec."""
    out = []
    for name, probes in files.items():
        if probes.toolkit_hash and probes.toolkit_hash != hashes.get(name):
            out.append(
                Problem(
                    str(directory / f"{name}.json"),
                    f"the probes were written for the toolkit with hash {probes.toolkit_hash}, it now has "
                    f"{hashes.get(name)}: review them against the spec (derived ones: toolemu.fidelity.derive) and "
                    "record the new hash",
                    None,
                    "toolkit_hash",
                )
            )
    return out


def _selected(files: dict[str, ProbeFile], names: Sequence[str] | None, directory: Path) -> dict[str, ProbeFile]:
    if not names:
        return files
    unknown = [n for n in names if n not in files]
    if unknown:
        known = ", ".join(sorted(files))
        message = f"expected toolkits with a probe file in {directory} ({known}), got {', '.join(unknown)}"
        raise InputError.single("command line", message, field="--toolkit")
    return {n: files[n] for n in names}


def _certificates(
    builder: EpisodeBuilder,
    kind: str,
    items: list[Item],
    done: dict[int, tuple[Trajectory, ProbeResult]],
    probe_files: dict[str, ProbeFile],
    hashes: dict[str, str],
) -> list[Certificate]:
    """One emulator type's certificates, a toolkit each, from the probes that ran (in the order they were given)."""
    emulator = builder.emulator
    assert emulator is not None
    description = emulator.model.options.description().model_dump(mode="json")
    out = []
    for name, probes in sorted(probe_files.items()):
        positions = [n for n, it in enumerate(items) if it.emulator_type == kind and it.kit.toolkit == name]
        results = [done[n] for n in positions if n in done]
        if results:
            cost = sum(traj.usage["emulator"].cost_usd for traj, _ in results if "emulator" in traj.usage)
            rows = [r for _, r in results]
            out.append(certificate(name, hashes[name], probes, description, kind, emulator.config_id, rows, cost))
    return out


def certify_emulator(
    out: Path,
    *,
    settings: LLMSettings | None = None,
    simulator_types: Sequence[str] = ("adv_thought",),
    toolkits: Sequence[str] | None = None,
    toolkit_paths: Sequence[Path] | None = None,
    probes_dir: Path | None = None,
    judge: bool = True,
    batch_size: int = 1,
    show_progress: bool = False,
    chat_factory: ChatFactory = build_chat_model,
) -> FidelityRun:
    """Certify the emulator of `settings` (its `emulator` role) on each probe-able toolkit (`toolkits`: these only),
    once per emulator type; write fidelity.json, fidelity.md and the probes' trajectories into `out`."""
    settings = settings or LLMSettings()
    for kind in simulator_types:
        one_of(kind, EMULATOR_TYPES, "--simulator-type")
    directory = probes_dir or PROBES
    if toolkit_paths:  # toolkits of one's own: the benchmark is theirs, with no cases
        bench = load_benchmark(list(toolkit_paths))
        identity = identify(bench, shipped=False, files=toolkit_paths)
    else:
        bench = load_cases()
        identity = benchmark_identity(bench)
    hashes = toolkit_hashes(bench)
    every = load_probes(directory, bench.toolkits)
    stale = _stale(every, hashes, directory)
    if stale:
        raise InputError(stale)
    chosen = _selected(every, toolkits, directory)
    out = output_dir(out, "--out")
    probe_files = {n: f for n, f in chosen.items() if not f.unprobeable}
    longest = max((len(p.steps) for f in probe_files.values() for p in f.probes), default=1)
    specs = {kind: EpisodeSpec(simulator_type=kind, max_iterations=longest + 1) for kind in simulator_types}
    hub = build_hub(settings, ("emulator", *((JUDGE_ROLE,) if judge else ())), chat_factory)  # the probe: the agent
    state_judge = StateJudge(hub.model(JUDGE_ROLE)) if judge else None
    stop = threading.Event()
    bench_kits = Benchmark(toolkits=bench.toolkits)
    builders = {
        kind: EpisodeBuilder(hub, spec, bench_kits, run_id=f"fidelity-{emulator_kind(kind)}", stop=stop)
        for kind, spec in specs.items()
    }
    items = [
        Item(kind, bench.toolkits[name], probe, i)
        for kind in simulator_types
        for i, (name, probe) in enumerate((n, p) for n, f in sorted(probe_files.items()) for p in f.probes)
    ]
    done: dict[int, tuple[Trajectory, ProbeResult]] = {}
    index_of = {id(item): n for n, item in enumerate(items)}

    def play(item: Item) -> tuple[Trajectory, ProbeResult]:
        builder = builders[item.emulator_type]
        case = probe_case(item.kit, item.probe)
        episode = builder.start(case, item.index, 0, agent=ProbeAgent(item.probe, item.kit), policies=[])
        episode.run()
        traj = episode.finish(models={"agent": ModelDescription(model="probe")})
        return traj, score_probe(item.probe, traj, state_judge)

    def record(item: Item, result: tuple[Trajectory, ProbeResult]) -> Recorded:
        done[index_of[id(item)]] = result
        traj = result[0]
        return Recorded(None, traj.status == "error", traj.cost_usd)

    outcome = run_pool(items, play, record, workers=batch_size, label="probes", show_progress=show_progress, stop=stop)
    file = FidelityFile(
        generated_at=now(),
        benchmark_version=identity.version,
        benchmark_hash=identity.hash,
        probes_hash=content_hash({n: probes_hash(f) for n, f in sorted(chosen.items())}),
        emulator=hub.options_for("emulator").model,
        emulator_types=[emulator_kind(k) for k in simulator_types],  # type: ignore[misc]
        judge=hub.options_for(JUDGE_ROLE).model if judge else "",
        unprobeable={n: f.unprobeable for n, f in sorted(chosen.items()) if f.unprobeable},
        not_run=[item.label for item in outcome.not_run],
        stop_reason=outcome.stop_reason,
    )
    for kind in simulator_types:
        file.certificates += _certificates(builders[kind], kind, items, done, probe_files, hashes)
    trajectories = [done[n][0] for n in sorted(done)]
    # Scrubbed of secrets as every record is (a model may echo a key); each file whole or not at all.
    write_text_atomic(out / TRAJECTORIES, "".join(map(line_of, trajectories)), "--out")
    write_text_atomic(out / FIDELITY_FILE, redact(file.model_dump_json(indent=1)) + "\n", "--out")
    write_text_atomic(out / PAGE_FILE, redact(page_section(file)), "--out")
    errored = sum(t.status == "error" for t in trajectories)
    return FidelityRun(file, out, errored, outcome)
