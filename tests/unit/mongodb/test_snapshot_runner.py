"""The task's snapshot sequencing (one ParallelSnapshot per stream, in turn; resume from stored progress) and
signals only with one stream per task: the parts that need no server (the snapshots are stand-ins)."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest
from bson import Timestamp

from connectors.mongodb import config as mongo_config
from connectors.mongodb import snapshot
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.position import SNAPSHOT_PROGRESS_KEY as OFFSET_KEY
from connectors.mongodb.position import encode_resume_token
from connectors.mongodb.snapshot import runner as snapshot_runner
from connectors.mongodb.snapshot.progress import SnapshotProgress
from connectors.mongodb.streaming.capture import StreamCapture
from connectors.mongodb.streaming.metrics import StreamingMetrics
from connectors.mongodb.task import MongoDbConnectorTask

PROPS = {"topic.prefix": "p", "mongodb.connection.string": "mongodb://h/", "snapshot.max.threads": "3"}


def _stream(rs: str) -> StreamCapture:
    """A stream of replica set ``rs`` that never connects (the stand-in runs only pass its client on), with a stale
    start time: the runner must resume it from the snapshot's position instead."""
    config = mongo_config.MongoDbConfig.parse(PROPS)
    partition = {"server_id": "p", "rs": rs}
    stream = StreamCapture(config=config, client=object(), partition=partition, label=f"c-task-0-{rs}",
                           events=ChangeEventConverter(topic_prefix="p", run_id="r", partition=partition),
                           metrics=StreamingMetrics("p", "0", 1, lambda: 0))
    stream.start_at = Timestamp(1, 1)
    return stream


class _Run:
    """Stands in for ParallelSnapshot: one batch, then done."""

    runs: list[_Run] = []

    def __init__(self, client: Any, collections: Any, events: Any, position: Any, progress: Any, settings: Any,
                 name: str, notifications: Any = None) -> None:
        self.client, self.position, self.progress, self.settings = client, position, progress, settings
        self.batches: list[list[str] | None] = [[f"r-{len(_Run.runs)}"], None]
        self.started = 0.0
        self.finished: float | None = None  # as ParallelSnapshot: None while it runs
        self.total_collections = self.remaining_collections = self.rows_scanned = 0
        self.rows_by_collection: dict[str, int] = {}
        self.last_emit_ms = 0
        _Run.runs.append(self)

    def start(self) -> None:
        pass

    def poll(self, timeout: float) -> Any:
        return self.batches.pop(0)

    def stop(self, timeout: float = 5.0) -> None:
        self.finished = 1.0

    def aborted(self) -> None:
        pass


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> snapshot_runner.SnapshotRunner:
    _Run.runs = []
    token = encode_resume_token({"_data": "00"})
    monkeypatch.setattr(snapshot_runner, "ParallelSnapshot", _Run)
    monkeypatch.setattr(snapshot, "start_position",
                        lambda client, target: {"sec": -1, "ord": -1, "resume_token": token})
    monkeypatch.setattr(snapshot, "captured_collections", lambda client, captured, include: [])
    monkeypatch.setattr(snapshot_runner, "watch_target", lambda client, config: None)
    config = mongo_config.MongoDbConfig.parse(PROPS)
    return snapshot_runner.SnapshotRunner(config, "c", "c|task-0", "0", threading.Event())


def _drain(runner: snapshot_runner.SnapshotRunner) -> list[object]:
    """What the runner polled until it was done: the stand-ins' batches (strings, not records)."""
    out: list[object] = []
    for _ in range(20):
        if not runner.active:
            break
        out.extend(runner.poll() or [])
    return out


def test_streams_are_snapshotted_one_after_the_other(runner: snapshot_runner.SnapshotRunner) -> None:
    first, second = _stream("rs0"), _stream("rs1")
    runner.enqueue(first, None)
    runner.enqueue(second, None)
    assert _drain(runner) == ["r-0", "r-1"]
    assert [run.client for run in _Run.runs] == [first.client, second.client]
    assert all(run.settings.threads == 3 for run in _Run.runs)
    assert first.resume_token == {"_data": "00"} and first.start_at is None
    assert not runner.active and runner.metrics({})


def test_an_interrupted_snapshot_resumes_from_its_stored_progress(runner: snapshot_runner.SnapshotRunner) -> None:
    progress = SnapshotProgress()
    progress.plan("db.c", [5])
    stored_token = encode_resume_token({"_data": "11"})
    stored = {"sec": 5, "ord": 1, "resume_token": stored_token, "initsync": True, OFFSET_KEY: progress.encode()}
    stream = _stream("rs0")
    runner.enqueue(stream, stored)
    _drain(runner)
    assert _Run.runs[0].position == {"sec": 5, "ord": 1, "resume_token": stored_token}
    assert _Run.runs[0].progress.started and stream.resume_token == {"_data": "11"}


def test_signals_need_one_stream_per_task(caplog: pytest.LogCaptureFixture) -> None:
    task = MongoDbConnectorTask()
    task.config = mongo_config.MongoDbConfig.parse({**PROPS, "signal.data.collection": "db.signals"})
    task.tag = "c|task-0"
    task.streams = [_stream("rs0"), _stream("rs1")]
    with caplog.at_level(logging.WARNING):
        assert task._open_signals() is None
    assert "ignored" in caplog.text and all(s.signals is None for s in task.streams)
