"""The batched trajectory writer: appends from many threads, one write and one fsync per batch, and a record is
reported written only once it is on disk."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from toolemu.log.batched import BatchedJsonlWriter
from toolemu.paths import OutputError


def test_records_from_many_threads_are_whole_lines_in_few_fsyncs(tmp_path, monkeypatch) -> None:
    fsyncs = []
    real_fsync = os.fsync

    def slow_fsync(fd: int) -> None:  # a disk that takes its time: appends queue up meanwhile
        fsyncs.append(fd)
        time.sleep(0.05)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", slow_fsync)
    writer = BatchedJsonlWriter(tmp_path / "t.jsonl")
    done = []

    def worker(n: int) -> None:
        for i in range(25):
            done.append(writer.append({"thread": n, "i": i, "text": "x\n\u2028" * 50}))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    lines = (tmp_path / "t.jsonl").read_bytes().split(b"\n")  # bytes: U+2028 inside a record is no line break
    records = [json.loads(line) for line in lines if line]
    assert len(records) == 200 and all(f.done() and f.exception() is None for f in done)
    for n in range(8):  # each thread's records in the order it appended them
        assert [r["i"] for r in records if r["thread"] == n] == list(range(25))
    assert writer.batches == len(fsyncs) < 40  # one fsync per batch, not per record


def test_a_record_is_reported_written_only_after_its_fsync(tmp_path, monkeypatch) -> None:
    gate = threading.Event()
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (gate.wait(10), real_fsync(fd)))
    writer = BatchedJsonlWriter(tmp_path / "t.jsonl")
    first = writer.append({"n": 1})
    time.sleep(0.1)
    assert not first.done()  # written, perhaps, but not yet on disk: not reported
    gate.set()
    first.result(timeout=10)
    writer.close()
    assert json.loads((tmp_path / "t.jsonl").read_text()) == {"n": 1}


def test_a_failed_write_fails_its_records_and_close(tmp_path) -> None:
    (tmp_path / "t.jsonl").mkdir()  # not a file: the write fails
    writer = BatchedJsonlWriter(tmp_path / "t.jsonl")
    record = writer.append({"n": 1})
    with pytest.raises(OutputError, match="t.jsonl: cannot be written: Is a directory"):  # one line, exit 2
        record.result(timeout=10)
    with pytest.raises(OutputError):
        writer.close()
    with pytest.raises(OutputError):  # a writer that failed takes no more: the first failure again
        writer.append({"n": 2})


def test_secrets_are_scrubbed_as_the_unbatched_writer_does(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-batched-0123456789")
    writer = BatchedJsonlWriter(tmp_path / "t.jsonl")
    writer.append({"output": "key sk-batched-0123456789 here"})
    writer.close()
    assert "sk-batched" not in (tmp_path / "t.jsonl").read_text()
