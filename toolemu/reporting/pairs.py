"""How a run's (case, trial) pairs are counted: each once, and a run with none says why.

A (case, trial) recorded twice in one run is flagged, and counted once.

A run of ours holds each (case, trial) pair once (resume keeps the first finished record of a pair and sets the rest
aside). A pair found twice means the files were put together by hand (a botched merge, two shards' lines
concatenated, a file appended to itself). Counting both would weigh that pair double and narrow every interval, so the
statistics count each pair once: the record a resume would keep (the first finished one, else the first), the same
one `toolemu merge` and a resume keep, so the report and the run agree on which episode a pair is. The others are
left out of every number and named in one note (report.json's `runs[].notes`, and the console).
"""

from __future__ import annotations

from pathlib import Path

from toolemu.log.read import Episode, RunLog
from toolemu.log.records import FINISHED
from toolemu.reporting.model import EpisodeView

SHOWN = 10  # pairs named in the note; the rest are counted


def keep_one_per_pair(
    episodes: list[Episode], views: list[EpisodeView], ours: list[bool]
) -> tuple[list[Episode], list[EpisodeView], str | None]:
    """The episodes with each (case, trial) once, and the note on what was left out (None: no pair repeats).
    `ours[i]`: episode i is from a run of ours (ToolEmu's dumps have no trial of their own: a case twice there is
    its replicates, not a repeat)."""
    seen: dict[tuple[str, int], list[int]] = {}
    for i, view in enumerate(views):
        if ours[i]:
            seen.setdefault((view.case_name, view.trial), []).append(i)
    repeated = {pair: where for pair, where in seen.items() if len(where) > 1}
    if not repeated:
        return episodes, views, None
    dropped: set[int] = set()
    described = []
    for (case, trial), where in repeated.items():
        kept = next((i for i in where if views[i].status in FINISHED), where[0])
        dropped.update(i for i in where if i != kept)
        one_file = len({views[i].source for i in where}) == 1
        places = ", ".join(_at(views[i], one_file) for i in where)
        described.append(f"{case}#{trial} x{len(where)} (records {places})")
    more = f" and {len(described) - SHOWN} more" if len(described) > SHOWN else ""
    pairs = "1 (case, trial) pair" if len(repeated) == 1 else f"{len(repeated)} (case, trial) pairs"
    left = "1 repeated record is" if len(dropped) == 1 else f"{len(dropped)} repeated records are"
    note = (
        f"{pairs} recorded more than once (files put together by hand?): {'; '.join(described[:SHOWN])}{more}; "
        f"each pair is counted once, as its first finished record (the one a resume keeps); {left} left out of "
        "the statistics"
    )
    keep = [i for i in range(len(views)) if i not in dropped]
    return [episodes[i] for i in keep], [views[i] for i in keep], note


def _at(view: EpisodeView, one_file: bool) -> str:
    """Where a record is: its position in its file (0: the first), with the file's name when a pair spans files."""
    at = str(view.record) if view.record is not None else "?"
    return at if one_file else f"{Path(view.source).name}:{at}"


def empty_shard_note(logs: list[RunLog]) -> str | None:
    """The note for a shard that holds no pair (`--shard 6/7` of 6 cases: pair j goes to shard j % 7, and none is
    j = 6): it is empty by the split, not by a failure. None for a run that is no shard, or holds an episode."""
    shards = [log.meta.shard for log in logs if log.meta is not None and log.meta.shard is not None]
    if not shards or any(log.trajectories for log in logs):
        return None
    names = ", ".join(f"{i}/{n}" for i, n in shards)
    return f"no pairs in this shard ({names}): the split gave it none of the selected pairs; the other shards hold them"
