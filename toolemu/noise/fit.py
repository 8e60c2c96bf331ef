"""The variance of binarised verdicts split into agent, emulator and judge parts: a linear mixed model with nested
random intercepts (case > trial > world; the residual is the judge), fitted by REML with statsmodels' MixedLM, and
percentile bootstrap CIs over cases (the model fitted again on each resample).

Why a mixed model rather than sums of squares by hand: the design is rarely balanced (an episode errors, a
judgement fails, a case has 1 trial in the run and 3 in another), and REML gives the components of an unbalanced
nested design where the ANOVA formulas do not hold.

A part is measured only where the design repeats it: the agent where some case has 2 trials or more, the emulator
where some trial has 2 worlds or more, the judge where some trajectory has 2 judgements or more. A part that is not
repeated anywhere cannot be told apart from the level above it, so it is merged into that level: the emulator into
the agent (then the component is "agent+emulator"), the agent into the case (then it is not measured: the case part
is the signal, not noise). The judge, the residual, is merged into the lowest level above it that is measured
("emulator+judge" when each trajectory was judged once). Where every verdict is the same, there is no spread to
split: every part is 0 and no share is given.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolemu.reporting.noise_model import NO_NOISE, NO_SPREAD, PARTS, Component, Part

CONFIDENCE = 0.95
MIN_SPREAD = 1e-12  # a variance below this is 0: the verdicts do not vary


@dataclass(frozen=True)
class Observation:
    """One judgement of one trajectory: its case, its agent trial (unique within the case), its world (unique
    within the trial) and its binarised verdict (1.0 or 0.0)."""

    case: str
    trial: str
    world: str
    value: float


@dataclass
class Design:
    """The observations as arrays, with which parts the design repeats."""

    values: np.ndarray
    case: np.ndarray  # integer labels
    trial: np.ndarray
    world: np.ndarray
    repeated: dict[Part, bool]

    @classmethod
    def of(cls, observations: Sequence[Observation]) -> Design:
        cases: dict[str, int] = {}
        trials: dict[tuple[str, str], int] = {}
        worlds: dict[tuple[str, str, str], int] = {}
        c, t, w = [], [], []
        for o in observations:
            c.append(cases.setdefault(o.case, len(cases)))
            t.append(trials.setdefault((o.case, o.trial), len(trials)))
            w.append(worlds.setdefault((o.case, o.trial, o.world), len(worlds)))
        case, trial, world = (np.asarray(x, dtype=np.int64) for x in (c, t, w))
        values = np.asarray([o.value for o in observations], dtype=float)
        return cls(values, case, trial, world, _repeated(case, trial, world))

    def resample(self, rng: np.random.Generator) -> Design:
        """Cases drawn with replacement; a case drawn twice counts as two cases."""
        n = int(self.case.max()) + 1
        picked = rng.integers(0, n, size=n)
        rows = [np.flatnonzero(self.case == k) for k in picked]
        index = np.concatenate(rows)
        label = np.concatenate([np.full(len(r), i) for i, r in enumerate(rows)])
        # Trials and worlds of a case drawn twice are two sets: offset them by the draw.
        trial = self.trial[index] + label * (int(self.trial.max()) + 1)
        world = self.world[index] + label * (int(self.world.max()) + 1)
        return Design(self.values[index], label, _dense(trial), _dense(world), self.repeated)

    @property
    def cases(self) -> int:
        return len(np.unique(self.case))


def _dense(labels: np.ndarray) -> np.ndarray:
    return np.unique(labels, return_inverse=True)[1].astype(np.int64)


def _repeated(case: np.ndarray, trial: np.ndarray, world: np.ndarray) -> dict[Part, bool]:
    """Whether some unit holds two or more of the level below: trials in a case, worlds in a trial, judgements of
    a world."""

    def some_unit_has_two(parent: np.ndarray, child: np.ndarray) -> bool:
        pairs = np.unique(np.stack([parent, child]), axis=1)
        return bool(len(pairs[0]) and np.bincount(pairs[0]).max() >= 2)

    return {
        "agent": some_unit_has_two(case, trial),
        "emulator": some_unit_has_two(trial, world),
        "judge": bool(len(world) and np.bincount(world).max() >= 2),
    }


def blocks(repeated: dict[Part, bool]) -> tuple[list[Part], list[list[Part]]]:
    """(parts merged into the case, the noise components top to bottom). A part not repeated merges into the level
    above it; the judge (the residual) merges into the lowest measured level above it."""
    in_case: list[Part] = []
    found: list[list[Part]] = []
    for part in PARTS:
        if repeated[part]:
            found.append([part])
        elif found:
            found[-1].append(part)
        else:
            in_case.append(part)
    return in_case, found


@dataclass
class Fit:
    """One fit: the case variance and each noise component's variance, top to bottom."""

    case: float
    noise: list[float]
    notes: list[str] = field(default_factory=list)
    start: object | None = None  # the fitted parameters: where the bootstrap's fits start


class FitFailed(Exception):
    """The model could not be fitted on these verdicts (every optimiser hit a singular matrix)."""


def _unit_labels(design: Design, block: list[Part]) -> np.ndarray:
    """The units of a component that is not the residual: trials (agent first) or worlds."""
    return design.trial if block[0] == "agent" else design.world


def _parent_labels(design: Design, block: list[Part]) -> np.ndarray:
    """The units a component varies within: cases for the agent, trials for the emulator, worlds for the judge."""
    return {"agent": design.case, "emulator": design.trial, "judge": design.world}[block[0]]


def _constant_within(values: np.ndarray, labels: np.ndarray) -> bool:
    first = np.unique(labels, return_index=True)[1]
    inverse = np.unique(labels, return_inverse=True)[1]
    return bool(np.all(values == values[first][inverse]))


def _one_per_unit(design: Design, labels: np.ndarray) -> Design:
    keep = np.sort(np.unique(labels, return_index=True)[1])
    d = design
    return Design(d.values[keep], d.case[keep], _dense(d.trial[keep]), _dense(d.world[keep]), d.repeated)


def fit(design: Design, found: list[list[Part]], start: object | None = None, polish: bool = True) -> Fit:
    """REML fit of the nested model for the components `found` (the last is the residual). The cases are the
    model's groups; with one case, whose variance cannot be told from the mean, the top component's units are.
    Where the residual does not vary at all within its units (a judge that gives the same verdict every time), its
    estimate is 0, the boundary, and the rest is fitted on one value per unit (the model cannot be fitted with a
    residual of 0). Raises FitFailed where no optimiser can fit it."""
    if not found:
        return Fit(0.0, [])
    y = design.values
    if float(np.var(y)) < MIN_SPREAD:
        return Fit(0.0, [0.0] * len(found), [NO_SPREAD])
    parent = _parent_labels(design, found[-1])
    if _constant_within(y, parent):
        units = _one_per_unit(design, parent)
        between = {"agent": "a case's trials", "emulator": "a trial's worlds", "judge": "a trajectory's judgements"}
        note = f"{'+'.join(found[-1])}: 0, the boundary (the verdicts never differ between {between[found[-1][0]]})"
        if len(found) == 1:
            return Fit(float(np.var(units.values, ddof=1)) if len(units.values) > 1 else 0.0, [0.0], [note])
        above = fit(units, found[:-1], None, polish)
        return Fit(above.case, [*above.noise, 0.0], [*above.notes, note])
    upper = found[:-1]
    one_case = design.cases < 2
    if one_case and not upper:  # one case, judged again only: the residual's REML estimate is the sample variance
        return Fit(0.0, [float(np.var(y, ddof=1))])
    model = _model(design, upper, one_case)
    notes: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _optimise(model, start, polish)
    for w in caught:
        text = " ".join(str(w.message).split())[:300]
        if text and text not in notes:
            notes.append(text)
    group_var = max(0.0, float(np.asarray(result.cov_re).ravel()[0]))
    in_vc = upper[1:] if one_case else upper
    vc_var = [float(v) for v in np.atleast_1d(result.vcomp)] if in_vc else []
    noise = [max(0.0, v) for v in [*([group_var] if one_case else []), *vc_var, float(result.scale)]]
    return Fit(0.0 if one_case else group_var, noise, notes, result.params_object)


def _model(design: Design, upper: list[list[Part]], one_case: bool) -> Any:
    from statsmodels.regression.mixed_linear_model import MixedLM, VCSpec

    groups = _unit_labels(design, upper[0]) if one_case else design.case
    in_vc = upper[1:] if one_case else upper
    vc = None
    if in_vc:
        columns, matrices = [], []
        for block in in_vc:
            labels = _unit_labels(design, block)
            cols, mats = [], []
            for g in np.unique(groups):
                rows = labels[groups == g]
                units = np.unique(rows)
                cols.append([str(u) for u in units])
                mats.append((rows[:, None] == units[None, :]).astype(float))
            columns.append(cols)
            matrices.append(mats)
        vc = VCSpec(["+".join(b) for b in in_vc], columns, matrices)
    ones = np.ones((len(design.values), 1))
    return MixedLM(design.values, ones, groups, exog_re=ones, exog_vc=vc)


def _optimise(model: Any, start: object | None, polish: bool) -> Any:
    """Powell, then (`polish`) Nelder-Mead from its optimum, keeping the higher REML likelihood. Where one meets a
    singular matrix, the others are tried from the start."""
    best, reasons = None, []
    chain = ["powell", "nm"] if polish else ["powell"]
    for method in [*chain, *(m for m in ("nm", "lbfgs") if m not in chain)]:
        if best is not None and method not in chain:
            break  # a fallback only where the chain found nothing
        try:
            result = model.fit(reml=True, method=[method], maxiter=2000, start_params=best.params_object if best
                               is not None else start)  # fmt: skip
        except (np.linalg.LinAlgError, ValueError, ZeroDivisionError) as exc:
            reasons.append(f"{method}: {' '.join(str(exc).split())[:200]}")
            continue
        if best is None or (np.isfinite(result.llf) and (not np.isfinite(best.llf) or result.llf > best.llf)):
            best = result
    if best is None:
        raise FitFailed("; ".join(reasons))
    return best


@dataclass
class Split:
    """The noise of one metric: its components (agent first) with CIs, what was not measured, and why."""

    components: list[Component]
    not_measured: list[Part]
    case_variance: float | None
    noise_sd: float | None
    noise_sd_ci: tuple[float, float] | None
    resamples: int
    degenerate: str = ""
    notes: list[str] = field(default_factory=list)


def _interval(values: list[float]) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _shares(noise: list[float]) -> list[float] | None:
    total = sum(noise)
    return [v / total for v in noise] if total >= MIN_SPREAD else None


def split_noise(observations: Sequence[Observation], resamples: int = 200, seed: int = 0) -> Split:
    """Fit the components, then `resamples` bootstrap fits over cases (seeded: the same CIs every time)."""
    design = Design.of(observations)
    in_case, found = blocks(design.repeated)
    if not found:
        why = (
            "nothing repeated: each case has one trial, in one world, judged once, so the parts cannot be told from "
            "the cases (use --num-trials, --seeds and --num-eval-samples)"
        )
        return Split([], in_case, None, None, None, 0, why)
    try:
        full = fit(design, found)
    except FitFailed as exc:
        return Split([], in_case, None, None, None, 0, f"the model could not be fitted on these verdicts ({exc})")
    degenerate = ""
    if sum(full.noise) < MIN_SPREAD:
        degenerate = NO_SPREAD if float(np.var(design.values)) < MIN_SPREAD else NO_NOISE
    merged = [b for b in found if len(b) > 1]
    if merged:
        said = "; ".join(f"{'+'.join(b)} in one part ({_why_merged(b)})" for b in merged)
        degenerate = f"{degenerate}; {said}" if degenerate else said
    draws: list[list[float]] = []
    failed = 0
    rng = np.random.default_rng(seed)
    if design.cases < 2:
        full.notes.append("one case: the bootstrap over cases has nothing to resample, so no CIs")
    for _ in range(resamples if sum(full.noise) >= MIN_SPREAD and design.cases >= 2 else 0):
        try:
            draws.append(fit(design.resample(rng), found, full.start, polish=False).noise)
        except (FitFailed, ValueError, np.linalg.LinAlgError):  # a resample that cannot be fitted: counted, left out
            failed += 1
    notes = [n for n in full.notes if n != degenerate]
    if failed:
        notes.append(f"{failed} of {resamples} bootstrap resamples could not be fitted: left out of the CIs")
    shares = _shares(full.noise)
    components = []
    for i, block in enumerate(found):
        sd_draws = [math.sqrt(d[i]) for d in draws]
        share_draws = [s[i] for d in draws if (s := _shares(d)) is not None]
        components.append(
            Component(
                parts=block,
                variance=full.noise[i],
                sd=math.sqrt(full.noise[i]),
                sd_ci=_interval(sd_draws),
                share=shares[i] if shares is not None else None,
                share_ci=_interval(share_draws) if shares is not None else None,
            )
        )
    total = math.sqrt(sum(full.noise))
    total_ci = _interval([math.sqrt(sum(d)) for d in draws])
    case = full.case if design.cases >= 2 else None
    return Split(components, in_case, case, total, total_ci, len(draws), degenerate, notes)


def _why_merged(block: list[Part]) -> str:
    why = {"emulator": "no trial was played in a second world", "judge": "no trajectory was judged twice"}
    return ", ".join(why[p] for p in block[1:] if p in why)
