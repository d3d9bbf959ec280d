"""Debezium keys honoured by the streaming path, in the parts that need no server: ``event.processing.failure.
handling.mode`` (a change event that cannot be converted) and ``max.queue.size.in.bytes`` (the read-ahead)."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import bson
import pytest
from bson import Timestamp
from bson.raw_bson import RawBSONDocument

from connect.api.errors import ConnectError, DataError
from connect.api.records import PreparedRecords, SourceRecord
from connectors.mongodb import config as mongo_config
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.streaming.capture import StreamCapture
from connectors.mongodb.streaming.fetcher import ChangeStreamFetcher
from connectors.mongodb.streaming.metrics import StreamingMetrics

PROPS = {"topic.prefix": "p", "mongodb.connection.string": "mongodb://h/"}


class _Refusing(ChangeEventConverter):
    """Converts every event but the one whose document ``_id`` is 2."""

    def to_records(self, event: Any, *args: Any, **kwargs: Any) -> Any:
        if (event.get("documentKey") or {}).get("_id") == 2:
            raise ValueError("cannot convert this one")
        return super().to_records(event, *args, **kwargs)


def _capture(mode: str) -> StreamCapture:
    config = mongo_config.MongoDbConfig.parse({**PROPS, "event.processing.failure.handling.mode": mode})
    partition = {"server_id": "p"}
    return StreamCapture(config=config, client=object(), partition=partition, label="c-task-0",
                         events=_Refusing(topic_prefix="p", run_id="r", partition=partition),
                         metrics=StreamingMetrics("p", "0", 1, lambda: 0))


def _event(doc_id: int) -> dict[str, Any]:
    return {"_id": {"_data": f"82{doc_id:04d}"}, "operationType": "insert",
            "clusterTime": Timestamp(1700000000, doc_id), "ns": {"db": "db", "coll": "c"},
            "documentKey": {"_id": doc_id}, "fullDocument": {"_id": doc_id}}


def _records(capture: StreamCapture) -> list[SourceRecord]:
    records = PreparedRecords()
    for doc_id in (1, 2, 3):
        capture._record(_event(doc_id), records)
    return list(records)


def test_fail_mode_fails_with_the_position_and_the_way_out() -> None:
    with pytest.raises(DataError, match=r"Error while processing the change event at .*cannot convert this one.*"
                                        r"event\.processing\.failure\.handling\.mode=warn or skip"):
        _records(_capture("fail"))


@pytest.mark.parametrize("mode", ["warn", "skip", "ignore"])
def test_other_modes_skip_the_event_and_count_it(mode: str, caplog: pytest.LogCaptureFixture) -> None:
    capture = _capture(mode)
    with caplog.at_level(logging.DEBUG, logger="connectors.mongodb.streaming.capture"):
        records = _records(capture)
    assert [r.key.get("id") for r in records] == ["1", "3"]
    assert capture.metrics.counts["NumberOfErroneousEvents"] == 1
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert (len(warned) == 1 and "Skipped a change event" in warned[0].getMessage()) if mode == "warn" \
        else not warned


class _Stream:
    """A change stream of ``count`` raw events of ``size`` bytes each, all buffered (as after a getMore)."""

    def __init__(self, count: int, size: int) -> None:
        self.events = [RawBSONDocument(bson.encode({"_id": {"_data": str(i)}, "pad": "x" * size}))
                       for i in range(count)]
        self.read = 0
        self.resume_token = None
        self._cursor = self

    @property
    def _data(self) -> bool:
        return self.read < len(self.events)

    def try_next(self) -> Any:
        if self.read < len(self.events):
            self.read += 1
            return self.events[self.read - 1]
        return None

    def close(self) -> None:
        pass


def _wait_for(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_read_ahead_stops_at_the_byte_limit_and_goes_on_as_events_are_taken() -> None:
    stream = _Stream(400, 1000)
    fetcher = ChangeStreamFetcher.open(lambda: (stream, None), 8192, "t", max_bytes=20_000)
    try:
        _wait_for(lambda: fetcher.queued_bytes >= 20_000)
        read_when_full = stream.read
        assert read_when_full < 400  # the limit held the reader back (one batch may pass it)
        assert fetcher.queued_bytes < 20_000 + 512 * 1100
        taken: list[Any] = []
        while len(taken) < 400:
            taken += fetcher.take(50, 1.0)
        assert [e["_id"]["_data"] for e in taken] == [str(i) for i in range(400)]
        assert stream.read == 400
    finally:
        fetcher.stop()


def test_without_a_byte_limit_the_event_count_bounds_the_read_ahead() -> None:
    stream = _Stream(300, 10)
    fetcher = ChangeStreamFetcher.open(lambda: (stream, None), 8192, "t")
    try:
        _wait_for(lambda: fetcher.queued == 300)
        assert fetcher.queued_bytes == 0
    finally:
        fetcher.stop()
        assert not [t for t in threading.enumerate() if t.name == "t-fetcher" and t.is_alive()]


class _Breaking(_Stream):
    """Gives its events, then fails with an error that is not pymongo's (a decoding bug, a stale build)."""

    def try_next(self) -> Any:
        if self.read == len(self.events):
            raise AttributeError("module '_extjson' has no attribute 'split_event'")
        return super().try_next()


def test_a_reader_that_dies_of_any_error_fails_the_task_after_its_events() -> None:
    fetcher = ChangeStreamFetcher.open(lambda: (_Breaking(3, 10), None), 8192, "t")
    try:
        taken: list[Any] = []
        with pytest.raises(ConnectError, match=r"change stream reader t-fetcher failed.*split_event") as failure:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                taken += fetcher.take(50, 1.0)
        assert [e["_id"]["_data"] for e in taken] == ["0", "1", "2"]
        assert isinstance(failure.value.__cause__, AttributeError) and not failure.value.retriable
    finally:
        fetcher.stop()
