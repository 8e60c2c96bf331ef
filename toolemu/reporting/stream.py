"""A report read and reduced run by run, in bounded memory, each run from the report cache where its files and the
code are unchanged.

`read_parts` reads one run, reduces it (`toolemu.reporting.build.reduce_run`: every number that depends on it
alone), drops its records (`slim_run`) and goes on to the next: memory holds each run's summaries and numbers, never
two runs' records. With a cache (`toolemu.reporting.cache`), a run whose key is found is not read at all; a run that
is read is stored, with its traces where the page still holds them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from toolemu.log.layout import run_files
from toolemu.reporting.build import RunPart, reduce_run, slim_run
from toolemu.reporting.cache import Hashed, ReportCache, hash_file
from toolemu.reporting.gc_pause import gc_paused
from toolemu.reporting.groups import RunGroup, group_runs
from toolemu.reporting.load import ROBUST_DIR, Listings, load_group, run_labels
from toolemu.reporting.model import EpisodeView
from toolemu.reporting.traces import TraceStore, trace_json
from toolemu.secrets import redactor

log = logging.getLogger("toolemu")
Traces = tuple[list[str], list[int]]  # a run's trace texts, and the one of each episode kept in it


def run_inputs(group: RunGroup, listings: Listings) -> list[Path]:
    """Every file a run's reduction reads: each trajectory file, run.json, every file named as one of its eval
    files (panels, re-judgements and error files too), and the whole of a run folder's robust/."""
    found: list[Path] = []
    for path in group.paths:
        files = run_files(path)
        found.append(files.trajectories)
        if files.run_file is not None and files.run_file.is_file():
            found.append(files.run_file)
        names = listings.of(files.directory).by_stem.get(files.trajectories.stem, [])
        found += [files.directory / name for name in sorted(names)]
        robust = path / ROBUST_DIR if path.is_dir() else None
        if robust is not None and robust.is_dir():
            found += sorted(p for p in robust.rglob("*") if p.is_file())
    return list(dict.fromkeys(found))


class _Recorder:
    """A trace store's `add` that also keeps the texts of one run, for its cache entry: every text, where the store
    wanted traces when the run began (None where it did not: the page refers to the run files instead)."""

    def __init__(self, store: TraceStore):
        self.store = store
        self.texts: list[str] | None = [] if store.wants_traces else None
        self.at: dict[int, int] = {}  # id(view) -> its text's position

    def add(self, view: EpisodeView) -> int | None:
        if self.texts is None:
            return self.store.add(view)
        text = trace_json(view)
        self.at[id(view)] = len(self.texts)
        self.texts.append(text)
        return self.store.add_text(text)

    def kept(self, views: list[EpisodeView]) -> Traces | None:
        """The texts, and where each view kept in the run finds its own (a repeated pair's view is left out of the
        run, but its trace was stored: so it is again, and every id comes out as reading gave it)."""
        return None if self.texts is None else (self.texts, [self.at[id(v)] for v in views])


def read_parts(
    paths: list[Path], group_by: str | None, traces: TraceStore, cache: ReportCache | None = None
) -> list[RunPart]:
    """The runs the paths name (grouped as `load_runs` groups them, with the same labels), each reduced as it is
    read; from `cache` where a run's entry is found."""
    groups = group_runs(paths, group_by)
    labels = run_labels(groups)
    listings = Listings()
    scrub = redactor()  # the environment's secrets read once for every file of the report
    parts: list[RunPart] = []
    inputs = [run_inputs(g, listings) for g in groups] if cache is not None else [[] for _ in groups]
    # The files no digest is known of are hashed by a thread ahead of the reading (hashlib lets it run alongside):
    # a first report pays for the keys on another core, where there is one.
    pool = ThreadPoolExecutor(1, thread_name_prefix="report-cache") if cache is not None else None
    try:
        hashing = [_hash_ahead(pool, cache, files) for files in inputs]
        with gc_paused():  # records hold no cycles: each run's are freed by reference counting as it is slimmed
            for group, label, files, hashed in zip(groups, labels, inputs, hashing, strict=True):
                parts.append(_one(group, label, traces, cache, listings, files, hashed, scrub))
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
    if cache is not None:
        cache.save_index()
        counts = cache.counts
        log.debug(
            "report cache %s: %d runs from the cache, %d read (%d stored); %d files hashed, %d known by their stat",
            cache.root,
            counts.hits,
            counts.misses,
            counts.stored,
            counts.hashed,
            counts.trusted,
        )
    return parts


def _hash_ahead(
    pool: ThreadPoolExecutor | None, cache: ReportCache | None, files: list[Path]
) -> Future[dict[Path, Hashed | None]] | None:
    if pool is None or cache is None:
        return None
    todo = [path for path in files if not cache.trusted(path)]
    return pool.submit(lambda: {path: hash_file(path) for path in todo}) if todo else None


def _one(
    group: RunGroup,
    label: str,
    traces: TraceStore,
    cache: ReportCache | None,
    listings: Listings,
    files: list[Path],
    hashed: Future[dict[Path, Hashed | None]] | None,
    scrub: Callable[[str], str],
) -> RunPart:
    keyed = None
    if cache is not None:
        what = {"label": label, "paths": [str(p) for p in group.paths], "notes": group.notes}
        keyed = cache.key(what, files, hashed.result() if hashed is not None else None)
    if keyed is not None:
        assert cache is not None
        found = cache.get(keyed[0])
        if found is not None:
            part, kept = found
            if _restore_traces(part, kept, traces):
                return part
    recorder = _Recorder(traces)
    run = load_group(group, recorder, label, listings, slim=False, scrub=scrub)
    part = reduce_run(run)
    slim_run(part)
    if keyed is not None:
        assert cache is not None
        key, stats = keyed
        if cache.unchanged(stats):
            cache.put(key, (part, recorder.kept(part.run.episodes)))
        else:  # a file was written while the run was read: its numbers may be of either version
            cache.counts.unstable += 1
    return part


def _restore_traces(part: RunPart, kept: Traces | None, traces: TraceStore) -> bool:
    """Give a cached run's traces to the store, as reading it would have; False where the store wants traces the
    entry does not hold (the run is read again)."""
    views = part.run.episodes
    if not traces.wants_traces:
        for view in views:
            view.trace_id = None
        return True
    if kept is None:
        return False
    texts, positions = kept
    ids = [traces.add_text(text) for text in texts]
    for view, at in zip(views, positions, strict=True):
        view.trace_id = ids[at]
    return True
