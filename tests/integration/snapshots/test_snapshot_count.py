"""The document count of a collection read as one range: not taken while the copy starts (a server may count by
scanning, competing with the copy), taken once a progress line is due for a copy still running, and never for a
snapshot that ends before."""

from __future__ import annotations

import logging
import time
from typing import Any

import pymongo
import pytest
from pymongo import monitoring

from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.position import Position
from connectors.mongodb.snapshot import parallel
from connectors.mongodb.snapshot.parallel import ParallelSnapshot, SnapshotSettings
from connectors.mongodb.snapshot.progress import SnapshotProgress
from tests.integration.support import unique

pytestmark = pytest.mark.integration

DOCS = 20_000
SHORT = 500  # read in one chunk, far within a progress interval


def _snapshot(client: Any, db: str, settings: SnapshotSettings) -> ParallelSnapshot:
    return ParallelSnapshot(client, [(db, "c")], ChangeEventConverter(topic_prefix="p", run_id="r"),
                            Position(1, 1, None).to_offset(), SnapshotProgress(), settings, "count|task-0")


def _lines(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


def test_the_count_comes_with_the_first_progress_line(mongo: pymongo.MongoClient[dict[str, Any]],
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    db = unique("count")
    mongo[db]["c"].insert_many([{"_id": n} for n in range(DOCS)])
    monkeypatch.setattr(parallel, "LOG_INTERVAL_S", 0.05)
    caplog.set_level(logging.INFO, logger=parallel.__name__)
    snapshot = _snapshot(mongo, db, SnapshotSettings(threads=1, chunk_size=1, batch=1))
    snapshot.start()
    records: list[Any] = []
    try:
        # one record per poll (one document per chunk, two chunks queued): 20,000 polls take far longer than a
        # progress interval, so the copy still runs when the first progress line is due; polled until it names
        # the count
        deadline = time.monotonic() + 120
        while not _lines(caplog, f"of ~{DOCS} documents"):
            assert time.monotonic() < deadline, _lines(caplog, "Snapshot of")
            batch = snapshot.poll(0.5)
            assert batch is not None, "the snapshot ended before a progress line named the count"
            records.extend(batch)
        while (batch := snapshot.poll(0.5)) is not None:
            records.extend(batch)
    finally:
        snapshot.stop()
    planned = _lines(caplog, "range(s)")
    assert planned == [f"[count|task-0] Snapshot of {db}.c: 1 range(s)"], "planned without a count"
    assert len([r for r in records if r.value and r.value.get("op") == "r"]) == DOCS


class _Commands(monitoring.CommandListener):
    """The names of the commands a client sent."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.names.append(event.command_name)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


def test_a_short_snapshot_takes_no_count(stack: Any, mongo: pymongo.MongoClient[dict[str, Any]],
                                         caplog: pytest.LogCaptureFixture) -> None:
    db = unique("count")
    mongo[db]["c"].insert_many([{"_id": n} for n in range(SHORT)])
    caplog.set_level(logging.INFO, logger=parallel.__name__)
    commands = _Commands()
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(stack.mongo_uri, event_listeners=[commands])
    snapshot = _snapshot(client, db, SnapshotSettings(threads=1))
    snapshot.start()
    emitted = 0
    try:
        while (batch := snapshot.poll(0.5)) is not None:
            emitted += sum(1 for r in batch if r.value and r.value.get("op") == "r")
    finally:
        snapshot.stop()
        client.close()
    assert emitted == SHORT
    assert "find" in commands.names
    assert "count" not in commands.names and "aggregate" not in commands.names, commands.names
    assert not _lines(caplog, "documents, "), "no progress line"
