"""`toolemu judge-audit RUN`: plant known violations in episodes the run's judges passed, have every judge score the
mutants and a control of each episode, and write the catch and false alarm rates to RUN/judge_audit.json.

The judges are the run's own, as their records name them (a panel member by member), or the models the command line
names. With `emulate`, each new or changed call of a mutant is answered by the emulator (the run's, with the
recorded steps before it as the episode so far) instead of from the tool's spec. A stop (a budget, a refused key,
Ctrl-C, SIGTERM) ends the work: what was judged is written, with what was not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolemu.audit.emulate import emulate_drafts
from toolemu.audit.facts import case_texts, values_in
from toolemu.audit.judges import JudgeSpec, audited_kinds, audited_scorers, named_judges, recorded_judges
from toolemu.audit.mutate import Draft, Subject, control, mutants
from toolemu.audit.rates import tally
from toolemu.emulator import EMULATOR_TYPES, Emulator
from toolemu.errors import InputError, one_of
from toolemu.llm import LLMSettings, ModelHub, ModelOptions, build_chat_model, build_hub
from toolemu.llm.model import ChatFactory
from toolemu.log import Episode, Evaluation, Trajectory, read_run, write_json_atomic
from toolemu.log.evaluation import short_hash
from toolemu.log.judge_audit import (
    KINDS,
    AuditedJudge,
    Control,
    JudgeAuditFile,
    MutantResult,
    MutationKind,
    NotMade,
    Selection,
    Verdict,
    audit_path,
)
from toolemu.log.lock import run_lock
from toolemu.pool import PoolOutcome, Recorded, run_pool
from toolemu.scorers import ScoringContext, info_for_eval_type, score_trajectory
from toolemu.scorers.checks import parse_checks
from toolemu.scorers.identity import identity_of
from toolemu.scorers.panel import with_panel
from toolemu.secrets import clip
from toolemu.specs import load_toolkits
from toolemu.specs.models import Toolkit

MAX_EPISODES = 1_000_000  # the CLI's bounds (toolemu/cli/limits.py)
MAX_MUTANTS = len(KINDS)  # one mutant per kind and episode


def _passed(ep: Episode) -> bool | None:
    """True: every headline verdict of the episode (each judge's, replicates by their mean) a pass; False: one is
    not; None: the episode errored or no headline judge scored it."""
    if ep.trajectory.status == "error":
        return None
    verdicts = []
    for key, evaluations in ep.evaluations.items():
        info = info_for_eval_type(key)
        values = [v for ev in evaluations if ev.status == "ok" and (v := ev.value_of(info.metric)) is not None]
        if info.headline and values:
            verdicts.append(info.passes(sum(values) / len(values)))
    return all(verdicts) if verdicts else None


def choose(episodes: list[Episode], most: int | None) -> tuple[list[Episode], Selection]:
    """The passed episodes, or `most` of them chosen by a hash of their key (the same on every run), in file order."""
    states = [_passed(ep) for ep in episodes]
    passed = [ep for ep, s in zip(episodes, states, strict=True) if s]
    selection = Selection(
        episodes=len(episodes),
        passed=len(passed),
        not_passed=sum(s is False for s in states),
        unjudged=sum(s is None for s in states),
    )
    if most is not None and most < len(passed):
        ranked = sorted(passed, key=lambda ep: short_hash([ep.trajectory.case_name, ep.trajectory.trial, ep.position]))
        keep = {id(ep) for ep in ranked[:most]}
        passed = [ep for ep in passed if id(ep) in keep]
    selection.audited = len(passed)
    return passed, selection


def subject_of(traj: Trajectory, kits: dict[str, Toolkit]) -> Subject:
    case = traj.case_view
    try:
        checks = parse_checks(case.checks)
    except ValueError:
        checks = []
    tools = {kit.tool_full_name(t): t for name in case.toolkits if (kit := kits.get(name)) for t in kit.tools}
    targets = case.threat.targets if case.threat is not None else []
    values = values_in([*targets, *(f.text for f in case_texts(case))])
    return Subject(traj, case, checks, tools, values)


def _hub(
    specs: list[JudgeSpec], settings: LLMSettings, first: Trajectory, emulate: bool, chat: ChatFactory
) -> ModelHub:
    """One hub for every judge and the emulator (one cache, one budget), with the run's recorded models."""
    options: dict[str, ModelOptions] = {}
    for spec in specs:
        options.setdefault(spec.role, settings.options_for(spec.role, recorded=spec.recorded))
    if emulate:
        options["emulator"] = settings.options_for("emulator", recorded=first.model("emulator"))
    return build_hub(settings, (), chat, recorded=options)


def _verdict(spec: JudgeSpec, ev: Evaluation) -> Verdict:
    """The judge's own verdict (the attack scorer's LLM verdict, not its target check): caught when not a pass."""
    info = spec.scorer.info
    if ev.status != "ok":
        message = ev.error.message if ev.error is not None else ""
        return Verdict(judge=spec.key, status=ev.status, error=clip(message, 300))
    own = "judge_value" in ev.metadata  # the attack scorer: its LLM's verdict, apart from its target check
    value = ev.metadata["judge_value"] if own else ev.score
    if value is None:  # the target check decided: the judge itself gave no verdict
        return Verdict(judge=spec.key, status="error", error="the judge gave no verdict of its own")
    label = next((name for name, score in info.labels if score == value), None) if own else ev.label
    return Verdict(judge=spec.key, status="ok", value=value, label=label, caught=not info.passes(float(value)))


def _kinds(kinds: Sequence[str] | None) -> list[MutationKind]:
    if not kinds:
        return list(KINDS)
    for kind in kinds:
        one_of(kind, KINDS, "--kind")
    return [k for k in KINDS if k in kinds]


def check_counts(episodes: int | None, mutants_per_episode: int) -> None:
    """The counts within their bounds (the CLI's, toolemu/cli/limits.py), before any work."""
    if episodes is not None and not 1 <= episodes <= MAX_EPISODES:
        message = f"expected 1 to {MAX_EPISODES:,} episodes, got {episodes:,}"
        raise InputError.single("command line", message, field="--episodes")
    if not 1 <= mutants_per_episode <= MAX_MUTANTS:
        message = f"expected 1 to {MAX_MUTANTS} mutants per episode (one per kind), got {mutants_per_episode:,}"
        raise InputError.single("command line", message, field="--mutants")


def judge_audit(
    run: Path,
    *,
    settings: LLMSettings | None = None,
    judges: Sequence[str] = (),
    episodes: int | None = None,
    mutants_per_episode: int = MAX_MUTANTS,
    kinds: Sequence[str] | None = None,
    emulate: bool = False,
    toolkits: Sequence[Path] | None = None,
    batch_size: int = 1,
    show_progress: bool = False,
    chat_factory: ChatFactory = build_chat_model,
) -> JudgeAuditFile:
    """Audit the judges of `run` (or the `judges` named: model strings, a panel) on planted violations; writes
    judge_audit.json beside the run's trajectories and returns it."""
    chosen = _kinds(kinds)
    check_counts(episodes, mutants_per_episode)
    settings = settings or LLMSettings()
    recorded = read_run(run)
    scorers = audited_scorers(recorded)
    if not scorers:
        message = "expected a run judged by a headline judge (safety, attack): run toolemu evaluate first"
        raise InputError.single(str(run), message)
    specs = recorded_judges(recorded, scorers)
    if not specs and not judges:
        message = "expected its judges named in its eval records (ToolEmu's do not name them): --evaluator-model M"
        raise InputError.single(str(run), message)
    if judges:
        samples = max((j.samples for j in specs), default=1)
        settings, _ = with_panel(settings, list(judges))
        specs = named_judges(list(judges), scorers, samples)
    with run_lock(recorded.files.trajectories):
        all_episodes, notes = recorded.episodes()
        audited, selection = choose(all_episodes, episodes)
        out = JudgeAuditFile(
            run=recorded.files.label,
            source=str(run),
            made_by="emulator" if emulate else "edit",
            kinds=chosen,
            mutants_per_episode=mutants_per_episode,
            selection=selection,
            notes=notes,
        )
        if audited:
            hub = _hub(specs, settings, audited[0].trajectory, emulate, chat_factory)
            kits = load_toolkits(toolkits)
            Audit(out, specs, hub, kits, batch_size, show_progress).run(audited, emulate)
        else:
            out.notes.append("no episode of the run passed every headline judge: nothing to audit")
        write_json_atomic(audit_path(recorded.files), out.model_dump(mode="json"))
    return out


@dataclass
class Audit:
    out: JudgeAuditFile
    specs: list[JudgeSpec]
    hub: ModelHub
    kits: dict[str, Toolkit]
    batch_size: int
    show_progress: bool

    def run(self, audited: list[Episode], emulate: bool) -> None:
        out = self.out
        drafts: list[Draft] = []
        for i, ep in enumerate(audited):
            made, missed = mutants(subject_of(ep.trajectory, self.kits), out.kinds, out.mutants_per_episode, i)
            drafts += made
            t = ep.trajectory
            out.not_made += [NotMade(case_name=t.case_name, trial=t.trial, kind=k, reason=why) for k, why in missed]
        stop: PoolOutcome[Any] = PoolOutcome()
        if emulate:
            kind = audited[0].trajectory.simulator_type
            emulator = Emulator(self.hub.model("emulator"), kind if kind in EMULATOR_TYPES else "adv_thought")
            drafts, missed, stop = emulate_drafts(drafts, emulator, self.kits, self.batch_size, self.show_progress)
            out.not_made += missed
        controls = [control(ep.trajectory) for ep in audited]
        out.controls = [Control(case_name=t.case_name, trial=t.trial, edit=edit) for t, edit in controls]
        out.mutants = [MutantResult(mutation=d.mutation) for d in drafts]
        if not stop.stop_kind:
            stop = self.judge_all([t for t, _ in controls], drafts)
        for spec in self.specs:
            ctx = ScoringContext(hub=self.hub, samples=spec.samples, evaluator_role=spec.role)
            identity = identity_of(spec.scorer, ctx)
            judge = AuditedJudge(
                key=spec.key,
                scorer=spec.scorer.info.name,
                role=spec.role,
                model=identity.model,
                judge_id=identity.id,
                label=identity.label,
                headline=spec.headline,
            )
            tally(judge, audited_kinds(spec.scorer.info, out.kinds), out.controls, out.mutants)
            out.judges.append(judge)
        usage = self.hub.tracker.roles()
        out.calls = {role: u.calls for role, u in usage.items()}
        out.cache_hits = sum(u.cache_hits for u in usage.values())
        out.cost_usd = sum(u.cost_usd for u in usage.values())
        out.calls_per_episode = (sum(out.calls.values()) + out.cache_hits) / len(audited)
        out.stopped, out.stop_kind, out.not_run = stop.stop_reason, stop.stop_kind, len(stop.not_run)

    def judge_all(self, controls: list[Trajectory], drafts: list[Draft]) -> PoolOutcome[Task]:
        """Every judge scores every control and every mutant of a kind it is audited on, where its scorer applies."""
        ctxs = {
            s.key: ScoringContext(hub=self.hub, toolkits=self.kits, samples=s.samples, evaluator_role=s.role)
            for s in self.specs
        }
        identities = {s.key: identity_of(s.scorer, ctxs[s.key]) for s in self.specs}
        tasks: list[Task] = []
        for spec in self.specs:
            kinds = set(audited_kinds(spec.scorer.info, self.out.kinds))
            tasks += [(spec, "control", i) for i, t in enumerate(controls) if spec.scorer.applies(t)]
            tasks += [
                (spec, "mutant", j)
                for j, d in enumerate(drafts)
                if d.mutation.kind in kinds and spec.scorer.applies(d.trajectory)
            ]

        def work(task: Task) -> Verdict:
            spec, what, i = task
            traj = controls[i] if what == "control" else drafts[i].trajectory
            return _verdict(spec, score_trajectory(spec.scorer, traj, i, ctxs[spec.key], identities[spec.key]))

        def record(task: Task, verdict: Verdict) -> Recorded:
            _, what, i = task
            (self.out.controls[i] if what == "control" else self.out.mutants[i]).verdicts.append(verdict)
            return Recorded(failed=verdict.status == "error")

        label = "audit judgements"
        return run_pool(tasks, work, record, workers=self.batch_size, label=label, show_progress=self.show_progress)


Task = tuple[JudgeSpec, str, int]  # (judge, "control" or "mutant", its position)
