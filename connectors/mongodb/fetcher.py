"""Reads a change stream on its own thread into a bounded queue (the role of Debezium's
``BufferingChangeStreamCursor``): the next ``getMore`` travels while the task converts the previous batch."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from pymongo.errors import PyMongoError

log = logging.getLogger(__name__)

_FAILED = object()


class ChangeStreamFetcher:
    """One change stream, read ahead into at most ``capacity`` events."""

    def __init__(self, stream: Any, capacity: int, name: str) -> None:
        self._stream = stream
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=capacity)
        self._stop = threading.Event()
        self._error: PyMongoError | None = None
        self._thread = threading.Thread(target=self._run, name=f"{name}-fetcher", daemon=True)

    @classmethod
    def open(cls, open_stream: Callable[[], Any], capacity: int, name: str) -> ChangeStreamFetcher:
        """Open the stream on the calling thread (so connection errors surface there), then read ahead."""
        fetcher = cls(open_stream(), capacity, name)
        fetcher._thread.start()
        return fetcher

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                event = self._stream.try_next()
                if event is not None:
                    self._put(event)
        except PyMongoError as exc:
            if not self._stop.is_set():
                self._error = exc
                self._put(_FAILED)

    def _put(self, item: Any) -> None:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.5)
                return
            except queue.Full:
                continue

    def take(self, max_items: int, timeout: float) -> list[dict[str, Any]]:
        """Up to ``max_items`` events, waiting at most ``timeout`` seconds for the first one.

        Raises the stream's error once every event read before it has been taken.
        """
        try:
            first = self._queue.get(timeout=timeout)
        except queue.Empty:
            return []
        events: list[dict[str, Any]] = []
        item = first
        while True:
            if item is _FAILED:
                if events:
                    self._queue.put(_FAILED)
                    return events
                assert self._error is not None
                raise self._error
            events.append(item)
            if len(events) >= max_items:
                return events
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return events

    def stop(self, timeout: float = 5.0) -> None:
        """Stop reading and close the stream; idempotent."""
        self._stop.set()
        try:
            self._stream.close()
        except PyMongoError:
            log.debug("Error closing the change stream", exc_info=True)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
