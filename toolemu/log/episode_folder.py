"""A run folder that grows one episode at a time (a person playing, a gym), rather than by a planned selection.

The files are those of any run (`layout.py`): run.json with the run's id, the settings that must match to add to it
and the (case, trial) pairs played, and trajectories.jsonl; so `toolemu evaluate` and `toolemu report` read it like
any other run. Playing a case again adds its next trial; nothing already there is moved or rewritten.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from toolemu.errors import InputError
from toolemu.log.config import RunConfig
from toolemu.log.jsonl import JsonlWriter, scan_jsonl
from toolemu.log.layout import RUN_FILE, TRAJECTORIES
from toolemu.log.meta import RunMeta, read_meta, write_meta
from toolemu.log.records import Trajectory


class EpisodeFolder:
    def __init__(self, path: Path, meta: RunMeta):
        self.path, self.meta = path, meta
        self.writer = JsonlWriter(path / TRAJECTORIES)
        # The file's records as of our last append, and its size then: while the size is the same, no one else has
        # written to it, and the next position is known without reading the whole file again (an MCP server adds
        # thousands of episodes, one per session).
        self._known: tuple[int, int] | None = None
        # run.json as we last wrote or read it (inode, size, change times): while it is the same file, `meta` is what
        # it holds and need not be parsed again before the next pair is added to it (it grows by one per episode).
        self._meta_stamp: tuple[int, ...] | None = None

    @classmethod
    def open(cls, path: Path, config: RunConfig) -> EpisodeFolder:
        """Create the folder, or reopen one written with the same settings (those that make its episodes
        comparable: `RunConfig.identity`); a folder of other settings is bad input."""
        run_file = path / RUN_FILE
        if run_file.exists():
            meta = read_meta(run_file)
            if not meta.config.same_run(config):
                raise InputError.single(
                    run_file,
                    f"expected the same settings to add to this run, found {meta.config.identity()}; use another "
                    f"--dump-dir for {config.identity()}",
                    field="config",
                )
            return cls(path, meta)
        if path.exists() and not path.is_dir():
            raise InputError.single(path, "expected a folder for the run, found a file")
        path.mkdir(parents=True, exist_ok=True)
        meta = RunMeta(run_id=f"{path.name}-{uuid.uuid4().hex[:8]}", config=config)
        write_meta(run_file, meta)
        return cls(path, meta)

    @property
    def run_id(self) -> str:
        return self.meta.run_id

    @property
    def trajectories(self) -> Path:
        return self.path / TRAJECTORIES

    def next_trial(self, case_name: str) -> int:
        """One past the highest trial of `case_name` recorded, whatever its status: no trial number is reused."""
        trials = [
            record.get("trial")
            for record in scan_jsonl(self.trajectories).records
            if record.get("case_name") == case_name
        ]
        return 1 + max((t for t in trials if isinstance(t, int)), default=-1)

    def _size(self) -> int:
        try:
            return self.trajectories.stat().st_size
        except FileNotFoundError:
            return -1

    def _run_file_stamp(self) -> tuple[int, ...] | None:
        try:
            st = (self.path / RUN_FILE).stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def _current_meta(self) -> RunMeta:
        """run.json as it is now: another writer (a gate audit) may have added to it since we wrote it."""
        stamp = self._run_file_stamp()
        if stamp is None or stamp != self._meta_stamp:
            self.meta = read_meta(self.path / RUN_FILE)
            self._meta_stamp = stamp
        return self.meta

    def _records(self) -> int:
        """How many records the file holds (its readable lines)."""
        if self._known is not None and self._known[1] == self._size():
            return self._known[0]
        return len(scan_jsonl(self.trajectories).records)

    def add(self, trajectory: Trajectory, models: dict[str, str]) -> int:
        """Append the episode, then note its pair and the models that played it in run.json. Returns its position
        among the file's records (what an evaluation of it names as eval_id)."""
        position = self.append(trajectory)
        self.note([(trajectory.case_name, trajectory.trial)], models)
        return position

    def append(self, trajectory: Trajectory) -> int:
        """Append the episode's record alone (`note` then adds its pair to run.json); returns its position."""
        position = self._records()
        self.writer.append(trajectory)
        self._known = (position + 1, self._size())
        return position

    def note(self, pairs: list[tuple[str, int]], models: dict[str, str]) -> None:
        """Add the pairs of episodes appended, and the models that played them, to run.json: one rewrite for any
        number of them (an MCP server notes every episode that ended while the last rewrite was being made)."""
        meta = self._current_meta()
        self.meta = meta.model_copy(
            update={"expected_pairs": [*meta.expected_pairs, *pairs], "models": {**meta.models, **models}}
        )
        self._meta_stamp = None  # until written: a write cut short leaves the file as it was, or not there
        write_meta(self.path / RUN_FILE, self.meta)
        self._meta_stamp = self._run_file_stamp()
