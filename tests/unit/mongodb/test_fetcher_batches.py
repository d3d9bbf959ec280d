"""The change-stream reader takes each server batch from pymongo's buffer at once: every event in order, and the
stream's resume token (what pymongo resumes from after a resumable error) where ``try_next`` would leave it."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

import bson
import pytest
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo.errors import InvalidOperation

from connect.api.errors import ConnectError
from connectors.mongodb.streaming.fetcher import POSITION, ChangeStreamFetcher
from connectors.mongodb.streaming.raw_events import Decoder, RawEvent

RAW: CodecOptions[RawBSONDocument] = CodecOptions(document_class=RawBSONDocument)


def _event(n: int, with_id: bool = True) -> RawEvent:
    event: dict[str, Any] = {"_id": {"_data": f"{n:04d}"}} if with_id else {}
    event.update(operationType="insert", ns={"db": "d", "coll": "c"}, documentKey={"_id": n},
                 fullDocument={"_id": n, "pad": "x" * 50})
    return RawEvent(bson.encode(event), RAW)


class BatchedStream:
    """pymongo's ChangeStream as the reader sees it: ``try_next`` runs a getMore when its cursor's buffer is empty
    and keeps the resume token per event; each batch may carry a postBatchResumeToken."""

    def __init__(self, batches: list[tuple[list[RawEvent], dict[str, str] | None]]) -> None:
        self._batches = deque(batches)
        self._cursor = self
        self._data: deque[RawEvent] = deque()
        self._post_batch_resume_token: dict[str, str] | None = None
        self._resume_token: Any = None
        self.tokens: list[Any] = []  # the resume token each time a getMore is run (what a resume would use)

    def try_next(self) -> RawEvent | None:
        if not self._data:
            self.tokens.append(self._resume_token)
            if not self._batches:
                return None
            events, self._post_batch_resume_token = self._batches.popleft()
            self._data.extend(events)
            if not self._data:
                self._resume_token = self._post_batch_resume_token or self._resume_token
                return None
        change = self._data.popleft()
        token = change["_id"]
        self._resume_token = self._post_batch_resume_token if not self._data and self._post_batch_resume_token \
            else token
        return change

    @property
    def resume_token(self) -> Any:
        return self._resume_token

    def close(self) -> None:
        pass


def _take_all(fetcher: ChangeStreamFetcher, count: int) -> list[Any]:
    taken: list[Any] = []
    deadline = time.monotonic() + 10
    while len([e for e in taken if POSITION not in e]) < count:
        assert time.monotonic() < deadline, "events not read"
        taken += fetcher.take(5000, 0.5)
    return taken


def test_each_batch_is_taken_whole_in_order_with_the_resume_token_try_next_leaves() -> None:
    events = [_event(n) for n in range(1300)]
    stream = BatchedStream([(events[:1000], {"_data": "pbrt-1"}), (events[1000:1001], None),
                      (events[1001:], None), ([], {"_data": "pbrt-idle"})])
    fetcher = ChangeStreamFetcher.open(lambda: (stream, Decoder(CodecOptions())), 8192, "t")
    try:
        taken = _take_all(fetcher, 1300)
        assert [e["_id"]["_data"] for e in taken if POSITION not in e] == [f"{n:04d}" for n in range(1300)]
        assert all(type(e["fullDocument"]).__name__ == "RawBSONDocument" for e in taken if POSITION not in e)
        deadline = time.monotonic() + 10
        while {"_data": "pbrt-idle"} not in stream.tokens[4:]:
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        fetcher.stop()
    # before each getMore: nothing yet, then the first batch's postBatchResumeToken, the one event's _id, the last
    # event's _id of a batch without a postBatchResumeToken, then the idle batch's token
    tokens = [t if t is None else dict(t) for t in stream.tokens[:5]]
    assert tokens == [None, {"_data": "pbrt-1"}, {"_data": "1000"}, {"_data": "1299"}, {"_data": "pbrt-idle"}]


def test_an_event_without_its_resume_token_fails_the_reader_as_pymongo_would() -> None:
    stream = BatchedStream([([_event(0), _event(1, with_id=False), _event(2)], None)])
    fetcher = ChangeStreamFetcher.open(lambda: (stream, Decoder(CodecOptions())), 8192, "t")
    try:
        with pytest.raises((InvalidOperation, ConnectError), match="resume token is missing"):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                fetcher.take(50, 0.5)
    finally:
        fetcher.stop()


def test_stop_wakes_a_task_waiting_for_events() -> None:
    """The task waits for events with a timeout (the poll's); a stop from another thread (the herder's, when the
    connector is deleted) ends that wait instead of leaving the herder waiting for it."""
    fetcher = ChangeStreamFetcher.open(lambda: (BatchedStream([]), Decoder(CodecOptions())), 8192, "t")
    taken: list[list[Any]] = []
    taker = threading.Thread(target=lambda: taken.append(fetcher.take(50, 120)))
    taker.start()
    fetcher.stop()
    taker.join(30)
    assert not taker.is_alive(), "the task still waits for events after the stop"
    assert taken == [[]]
