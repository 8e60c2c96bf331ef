"""The scorer registry: name -> factory. The built-in scorers are registered in `toolemu.builtins`, on the first
lookup; an outside scorer registers with `register_scorer`, or is named by import path (`package.module:factory`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from toolemu.errors import InputError
from toolemu.log import split_eval_key
from toolemu.registration import ensure_builtins, import_target
from toolemu.scorers.base import MetricInfo, Scorer

ScorerFactory = Callable[[], Scorer]
_FACTORIES: dict[str, ScorerFactory] = {}
_INFOS: dict[str, MetricInfo] = {}


def register_scorer(info: MetricInfo) -> Callable[[ScorerFactory], ScorerFactory]:
    """Register a scorer under `info.name`; its eval files are `_eval_<info.eval_type>.jsonl`."""
    ensure_builtins("scorers")  # the built-ins first: an eval type of one's own must not take theirs

    def add(factory: ScorerFactory) -> ScorerFactory:
        clash = next((i.name for i in _INFOS.values() if i.eval_type == info.eval_type and i.name != info.name), None)
        if clash:
            raise ValueError(f"scorer {info.name!r}: eval type {info.eval_type!r} is taken by {clash!r}")
        _FACTORIES[info.name] = factory
        _INFOS[info.name] = info
        return factory

    return add


def scorer_names() -> list[str]:
    ensure_builtins("scorers")
    return list(_FACTORIES)


def _from_import_path(spec: str) -> Scorer:
    target = import_target(spec, "scorer", "--scorer")
    # A class or a factory is called; an instance is used as it is (a class would pass the protocol check too).
    scorer = target() if inspect.isclass(target) or (callable(target) and not isinstance(target, Scorer)) else target
    if not isinstance(scorer, Scorer):
        raise InputError.single("command line", f"{spec!r} is not a scorer (info, applies, score)", field="--scorer")
    _INFOS.setdefault(scorer.info.name, scorer.info)
    return scorer


def get_scorer(name: str) -> Scorer:
    """A registered scorer by name or by its eval type (agent_safe -> safety), or one named by import path."""
    ensure_builtins("scorers")
    if ":" in name:
        return _from_import_path(name)
    key = name if name in _FACTORIES else next((n for n, i in _INFOS.items() if i.eval_type == name), None)
    if key is None:
        raise InputError.single(
            "command line", f"expected a scorer, one of {', '.join(scorer_names())}, got {name!r}", field="--scorer"
        )
    return _FACTORIES[key]()


def info_for_eval_type(eval_type: str) -> MetricInfo:
    """How to read an eval file: its registered scorer's info, or one worked out for a file we did not write
    (a fork's `agent_help_ignore_safety` is a helpfulness variant, shown under its own name). A panel judge's
    file (`agent_safe@<judge>`) reads like its type's."""
    eval_type, _ = split_eval_key(eval_type)
    ensure_builtins("scorers")
    for info in _INFOS.values():
        if info.eval_type == eval_type:
            return info
    base = next((i for i in _INFOS.values() if eval_type.startswith(i.eval_type + "_")), None)
    if base is not None:
        # Shown right after its base (same order, then by name, would put it before e.g. "helpfulness").
        return base.model_copy(
            update={
                "name": eval_type,
                "eval_type": eval_type,
                "title": f"{base.title} [{eval_type}]",
                "order": base.order + 1,
                # A variant judge is shown, not relied on: robust and submissions follow the scorer itself.
                "headline": False,
                "submitted": False,
            }
        )
    return MetricInfo(name=eval_type, metric=eval_type, eval_type=eval_type, title=eval_type)


def registered_infos() -> list[MetricInfo]:
    ensure_builtins("scorers")
    return list(_INFOS.values())
