"""Reads a change stream on its own thread into a bounded queue (the role of Debezium's
``BufferingChangeStreamCursor``): the next ``getMore`` travels while the task converts the previous batch.

Events cross the queue in lists (one per server batch, at most ``chunk`` events), not one by one: a queue
hand-off per event cost more than decoding the event. A stream read as raw BSON comes with a
:class:`~connectors.mongodb.streaming.raw_events.Decoder`, applied as the task takes the events: the reader thread
only runs getMores and hands each batch over as read (~4 us of its CPU per event instead of ~13), so the next
getMore leaves as soon as a batch arrives: the server idles between a reply and the next request. The decoding is
the same CPU on the task's thread (benchmarks/results.md). Events leave as dicts whose document images are still
raw, or, for a decoder that scans, plain data events as their BSON bytes (``Decoder.plain_run``).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import bson
from pymongo.errors import InvalidOperation, PyMongoError

from connect.api.errors import ConnectError
from connectors.mongodb.streaming.raw_events import Decoder, Scanned

log = logging.getLogger(__name__)

_FAILED = object()
_STOPPED = object()  # put by stop(): a task waiting for events returns at once
CHUNK = 512
POSITION = "__position__"
"""Key of the marker put in order behind the events when the stream is idle: its value is the stream's resume
token, valid once every event before it has been taken."""


def _bson_size(event: Any) -> int:
    """The BSON size of an event as read: its raw bytes, else its encoding."""
    raw = getattr(event, "raw", None)
    return len(raw) if raw is not None else len(bson.encode(event))


def _buffered(stream: Any) -> bool:
    """Whether the stream holds more events in memory (the next ``try_next`` needs no round trip)."""
    data = getattr(getattr(stream, "_cursor", None), "_data", None)
    return bool(data)


def _rest_of_batch(stream: Any) -> list[Any]:
    """The events of the server batch still buffered in pymongo's change stream, taken at once, with the stream's
    resume token left where ``try_next`` would leave it after the last of them (the batch's
    ``postBatchResumeToken`` if the server sent one, else the last event's ``_id``): what pymongo resumes from
    after a resumable error. ``try_next`` costs ~5 us per event (its bookkeeping and the ``_id`` it reads of
    each) where one getMore brings up to ``max.batch.size`` events; an empty list for any other stream."""
    cursor = getattr(stream, "_cursor", None)
    data = getattr(cursor, "_data", None)
    if not isinstance(data, deque) or not data or not hasattr(stream, "_resume_token"):
        return []
    events = list(data)
    data.clear()
    token = getattr(cursor, "_post_batch_resume_token", None)
    if token is None:
        try:
            token = events[-1]["_id"]
        except KeyError:
            raise InvalidOperation("Cannot provide resume functionality when the resume token is missing.") from None
    stream._resume_token = token
    return events


class ChangeStreamFetcher:
    """One change stream, read ahead into at most about ``capacity`` events."""

    def __init__(self, stream: Any, capacity: int, name: str, decoder: Decoder | None = None,
                 max_bytes: int = 0) -> None:
        """``capacity``: events read ahead (``max.queue.size``); ``max_bytes``: their BSON bytes
        (``max.queue.size.in.bytes``, 0 for no byte limit)."""
        self._stream = stream
        self._decoder = decoder
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=max(2, capacity // CHUNK))
        self._pending: deque[Any] = deque()
        self._stop = threading.Event()
        self._error: Exception | None = None
        self._queued = 0
        self._max_bytes = max_bytes
        self._bytes = 0  # BSON bytes in the queue (counted only with a byte limit)
        self._room = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=f"{name}-fetcher", daemon=True)

    @classmethod
    def open(cls, open_stream: Callable[[], tuple[Any, Decoder | None]], capacity: int,
             name: str, max_bytes: int = 0) -> ChangeStreamFetcher:
        """Open the stream on the calling thread (so connection errors surface there), then read ahead.
        ``open_stream`` gives the stream and, for a raw BSON one, the decoder of its events."""
        stream, decoder = open_stream()
        fetcher = cls(stream, capacity, name, decoder, max_bytes)
        fetcher._thread.start()
        return fetcher

    def _run(self) -> None:
        batch: list[dict[str, Any]] = []
        marked: Any = None
        decoder = self._decoder
        size = 0
        try:
            while not self._stop.is_set():
                event = self._stream.try_next()
                if event is not None:
                    rest = _rest_of_batch(self._stream)
                    if rest:
                        self._hand_over(batch, size, [event, *rest])
                        batch, size = [], 0
                        continue
                    if self._max_bytes:
                        size += _bson_size(event)
                    batch.append(event)
                    if len(batch) < CHUNK and _buffered(self._stream) \
                            and not (self._max_bytes and self._bytes + size >= self._max_bytes):
                        continue
                else:
                    token = self._stream.resume_token
                    if decoder is not None:
                        token = decoder.token(token)
                    if token is not None and token != marked:
                        batch.append({POSITION: token})
                        marked = token
                if batch:
                    self._wait_for_room()
                    self._queued += len(batch)
                    self._put((batch, size))
                    batch, size = [], 0
        except PyMongoError as exc:
            self._fail(batch, size, exc)
        except Exception as exc:  # noqa: BLE001 - any failure fails the task, never leaves it idle
            error = ConnectError(f"The change stream reader {self._thread.name} failed: {exc!r}")
            error.__cause__ = exc
            self._fail(batch, size, error)

    def _hand_over(self, pending: list[dict[str, Any]], pending_size: int, events: list[Any]) -> None:
        """The ``pending`` events, then a server batch taken at once, decoded and queued ``CHUNK`` at a time."""
        if pending:
            self._wait_for_room()
            self._queued += len(pending)
            self._put((pending, pending_size))
        for start in range(0, len(events), CHUNK):
            chunk = events[start:start + CHUNK]
            self._wait_for_room()
            self._queued += len(chunk)
            self._put((chunk, sum(map(_bson_size, chunk)) if self._max_bytes else 0))

    def _fail(self, batch: list[dict[str, Any]], size: int, error: Exception) -> None:
        """Hand what was read, then the error, to the task (it raises once it has taken the events)."""
        if not self._stop.is_set():
            if batch:
                self._put((batch, size))
            self._error = error
            self._put(_FAILED)

    def _wait_for_room(self) -> None:
        """With a byte limit: until the queue holds fewer bytes than the limit (one batch may pass it)."""
        if not self._max_bytes:
            return
        with self._room:
            while self._bytes >= self._max_bytes and not self._stop.is_set():
                self._room.wait(0.5)

    def _put(self, item: Any) -> None:
        if self._max_bytes and item is not _FAILED:
            with self._room:
                self._bytes += item[1]
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.5)
                return
            except queue.Full:
                continue

    def take(self, max_items: int, timeout: float) -> list[dict[str, Any] | Scanned | bytes]:
        """Up to ``max_items`` events, waiting at most ``timeout`` seconds for the first one.

        Raises the stream's error once every event read before it has been taken.
        """
        if not self._pending and not self._fill(timeout):
            return []
        events: list[dict[str, Any] | Scanned | bytes] = []
        while len(events) < max_items:
            if not self._pending and not self._fill(None):
                break
            first = self._pending[0]
            if first is _FAILED:
                if events:
                    break
                assert self._error is not None
                raise self._error
            events.append(self._pending.popleft())
        self._queued -= len(events)
        return events

    @property
    def queued(self) -> int:
        """Events read ahead and not taken yet (approximate: read without a lock)."""
        return max(self._queued, 0)

    def _fill(self, timeout: float | None) -> bool:
        """Move one queued list into the pending events; False when none is available."""
        try:
            waits = timeout is not None and not self._stop.is_set()
            item = self._queue.get(timeout=timeout) if waits else self._queue.get_nowait()
        except queue.Empty:
            return False
        if item is _STOPPED:
            return False
        if item is _FAILED:
            self._pending.append(item)
            return True
        events, size = item
        if self._decoder is None:
            self._pending.extend(events)
        else:
            self._decode_into_pending(events)
        if self._max_bytes:
            with self._room:
                self._bytes -= size
                self._room.notify()
        return True

    def _decode_into_pending(self, events: list[Any]) -> None:
        """The raw events (and the reader's position markers, already dicts) decoded into the pending events, a
        plain data event as its bytes where the decoder scans (:meth:`Decoder.plain_run`); a failure ends them:
        the events before it are taken, then the failure is raised (as the reader's own)."""
        decode, plain, pending = self._decoder.read, self._decoder.plain_run, self._pending  # type: ignore[union-attr]
        index, count = 0, len(events)
        while index < count:
            run = plain(events, index)  # plain data events: their bytes, made records as a run by the task
            if run:
                pending.extend(run)
                index += len(run)
                if index == count:
                    break
            raw = events[index]
            index += 1
            if type(raw) is dict:
                pending.append(raw)
                continue
            try:
                event = decode(raw)
                if type(event) is dict and "_id" not in event:  # what pymongo's try_next checks of every event
                    # (a scanned event, a tuple, has a resume token: the scan asks for one)
                    raise InvalidOperation("Cannot provide resume functionality when the resume token is missing.")
            except PyMongoError as exc:
                self._failed_at(exc)
                return
            except Exception as exc:  # noqa: BLE001 - any failure fails the task, never leaves it idle
                error = ConnectError(f"The change stream reader {self._thread.name} failed: {exc!r}")
                error.__cause__ = exc
                self._failed_at(error)
                return
            pending.append(event)

    def _failed_at(self, error: Exception) -> None:
        self._error = error
        self._pending.append(_FAILED)
        self._stop.set()  # nothing after a failure is taken: the reader stops too

    @property
    def queued_bytes(self) -> int:
        """BSON bytes of the batches read ahead and still queued (0 without a byte limit)."""
        return self._bytes

    def stop(self, timeout: float = 5.0) -> None:
        """Stop reading and close the stream; idempotent."""
        self._stop.set()
        with self._room:
            self._room.notify_all()
        with contextlib.suppress(queue.Full):  # a full queue has no taker waiting
            self._queue.put_nowait(_STOPPED)
        try:
            self._stream.close()
        except PyMongoError:
            log.debug("Error closing the change stream", exc_info=True)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
