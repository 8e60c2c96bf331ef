"""A replay (`--replay RUN`): the observations a recorded run gave are reused wherever the case, the emulator and
every earlier call and observation are the same (`toolemu.episode.replay`). Not part of the run's identity: a
reused observation is the one this emulator would be keyed to give. The run folder records how many were reused."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from toolemu.episode.element_spec import REPLAY, ElementSpec, Option, Placed

if TYPE_CHECKING:
    from toolemu.episode.builder import EpisodeBuilder

log = logging.getLogger("toolemu")


@dataclass(frozen=True)
class ReplaySpec(ElementSpec):
    name: ClassVar[str] = "replay"
    options: ClassVar[tuple[Option, ...]] = (
        Option(
            "replay",
            ("--replay",),
            "A recorded run (directory or trajectory file): reuse its observations wherever the case, the emulator "
            "and every earlier call and observation are the same, and emulate afresh from the first call that "
            "differs.",
            kind=Path,
            panel="Run",
        ),
    )

    source: Path

    @classmethod
    def from_options(cls, values: Mapping[str, Any]) -> ReplaySpec | None:
        """The run, checked now: a path that is no run is one line naming the flag."""
        path = values.get("replay")
        if path is None:
            return None
        from toolemu.errors import InputError
        from toolemu.log import run_files

        try:
            return cls(run_files(path).source)
        except InputError as exc:
            raise InputError.single(path, exc.problems[0].message, field="--replay") from None

    def build(self, builder: EpisodeBuilder) -> list[Placed]:
        from toolemu.episode.replay import ReplayElement, ReplayIndex

        index = ReplayIndex.from_run(self.source)
        if not index.steps:
            log.warning("%s records no observation keys (written before replay keys?): nothing to reuse", index.source)
        assert builder.emulator is not None
        return [(REPLAY, ReplayElement(index, builder.emulator))]

    def after_run(self, folder: Path) -> list[str]:
        """The reuse rate over the folder's episodes, recorded in its run.json."""
        from toolemu.episode.replay import record_replay

        use = record_replay(folder, str(self.source))
        share = f" ({100 * use.rate:.0f}%)" if use.rate is not None else ""
        return [f"replay: reused {use.reused} of {use.calls} observations{share} from {use.source}"]
