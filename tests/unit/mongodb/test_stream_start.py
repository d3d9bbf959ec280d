"""A task resuming from a stored stream position checks that the server still holds it (Debezium's check at task
start): when streaming follows at once the stream it opens is the check (one aggregate); when a snapshot comes
first, or the task reads several replica sets, a separate probe is (the parts that need no server)."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo.errors import OperationFailure, ServerSelectionTimeoutError

from connect.api.errors import ConnectError
from connectors.mongodb import config as mongo_config
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.position import encode_resume_token
from connectors.mongodb.streaming.capture import StreamCapture
from connectors.mongodb.streaming.metrics import StreamingMetrics
from connectors.mongodb.task import MongoDbConnectorTask

STORED = {"sec": 5, "ord": 1, "resume_token": encode_resume_token({"_data": "00"})}


def _task(mode: str, streams: int = 1) -> tuple[MongoDbConnectorTask, list[str]]:
    """A task as ``start`` leaves it before its streams open: ``streams`` streams with a stored position whose
    check and opening are recorded in the returned list instead of reaching a server."""
    props = {"topic.prefix": "p", "mongodb.connection.string": "mongodb://h/", "snapshot.mode": mode}
    task = MongoDbConnectorTask()
    task.config = mongo_config.MongoDbConfig.parse(props)
    task.tag = "c|task-0"
    task._streaming = task.config.snapshot_mode is not mongo_config.SnapshotMode.INITIAL_ONLY
    task.streams, task._stored = [], {}
    for n in range(streams):
        partition = {"server_id": "p", "rs": f"rs{n}"}
        stream = StreamCapture(config=task.config, client=object(), partition=partition, label=f"c-task-0-rs{n}",
                               events=ChangeEventConverter(topic_prefix="p", run_id="r", partition=partition),
                               metrics=StreamingMetrics("p", "0", 1, lambda: 0))
        stream.restore(STORED)
        task.streams.append(stream)
        task._stored[id(stream)] = dict(STORED)
    return task, []


def _record(monkeypatch: pytest.MonkeyPatch, calls: list[str], *, held: bool) -> None:
    def answer(name: str) -> Any:
        def call(_stream: StreamCapture) -> bool:
            calls.append(name)
            return held
        return call

    monkeypatch.setattr(StreamCapture, "position_available", answer("probe"))
    monkeypatch.setattr(StreamCapture, "start_checked", answer("open"))


@pytest.mark.parametrize("mode", ["initial", "when_needed", "no_data"])
def test_streaming_at_once_opens_the_stream_as_the_check(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    task, calls = _task(mode)
    _record(monkeypatch, calls, held=True)
    assert task._position_lost(task.streams[0]) is False
    assert calls == ["open"]


@pytest.mark.parametrize(("mode", "streams"), [("always", 1), ("initial_only", 1), ("initial", 2)])
def test_a_snapshot_first_or_several_streams_probe_apart(monkeypatch: pytest.MonkeyPatch, mode: str,
                                                         streams: int) -> None:
    task, calls = _task(mode, streams)
    _record(monkeypatch, calls, held=True)
    assert task._position_lost(task.streams[0]) is False
    assert calls == ["probe"]


def test_a_lost_position_fails_the_task_with_debeziums_message(monkeypatch: pytest.MonkeyPatch) -> None:
    task, calls = _task("initial")
    _record(monkeypatch, calls, held=False)
    with pytest.raises(ConnectError, match="no longer available on the server"):
        task._position_lost(task.streams[0])


def test_a_lost_position_when_needed_forgets_it_for_a_new_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    task, calls = _task("when_needed")
    _record(monkeypatch, calls, held=False)
    stream = task.streams[0]
    assert task._position_lost(stream) is True
    assert calls == ["open"] and stream.resume_token is None and task._stored[id(stream)] is None


@pytest.mark.parametrize(("error", "held"), [(OperationFailure("history lost", 286), False),
                                             (ServerSelectionTimeoutError("down"), True)])
def test_start_checked_says_lost_only_for_a_lost_position(monkeypatch: pytest.MonkeyPatch, error: Exception,
                                                          held: bool) -> None:
    task, _ = _task("initial")
    stream = task.streams[0]

    def refuse(*_args: Any) -> Any:
        raise error

    monkeypatch.setattr(StreamCapture, "_open_stream", refuse)
    assert stream.start_checked() is held
    assert not stream.open
