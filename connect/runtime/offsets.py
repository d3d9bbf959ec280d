"""At-least-once offset tracking for source tasks (Connect's ``SubmittedRecords``,
``OffsetStorageWriter`` and ``OffsetStorageReaderImpl``).

An offset becomes committable only when its record and every earlier record of the same source
partition have been acknowledged by Kafka.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

from connect.storage import codec
from connect.storage.base import OffsetStore

NO_OFFSET = b""
"""The key records without a source partition or offset are tracked under (never an offset-store key)."""


class SubmittedRecord:
    """One record in flight: its offset-store key and value, and whether Kafka acknowledged it."""

    __slots__ = ("acked", "key", "offset")

    def __init__(self, key: bytes, offset: Mapping[str, Any]) -> None:
        self.key = key
        self.offset = offset
        self.acked = False

    def ack(self) -> None:
        """Mark acknowledged (called from the producer's I/O thread)."""
        self.acked = True


class SubmittedRecords:
    """Records in flight, in submission order per source partition."""

    def __init__(self, connector: str, record_type: type[SubmittedRecord] = SubmittedRecord) -> None:
        """``record_type`` makes the tracked records (a task's own, which may also be their delivery callback)."""
        self.connector = connector
        self._type = record_type
        self._lock = threading.Lock()
        self._queues: dict[bytes, deque[SubmittedRecord]] = {}
        self._last: tuple[Mapping[str, Any], bytes] | None = None

    def _key(self, partition: Mapping[str, Any]) -> bytes:
        last = self._last
        if last is not None and (last[0] is partition or last[0] == partition):
            return last[1]
        key = codec.offset_key(self.connector, dict(partition))
        self._last = (partition, key)
        return key

    def submit(self, partition: Mapping[str, Any] | None, offset: Mapping[str, Any] | None) -> SubmittedRecord:
        """Track a record about to be sent. A record without a source partition or offset (Connect allows them)
        is tracked in flight but commits nothing: Java would write a null offset for it, which moves no
        position either."""
        if partition is None or offset is None:
            record = self._type(NO_OFFSET, {})
        else:
            last = self._last
            record = self._type(last[1] if last is not None and last[0] is partition else self._key(partition), offset)
        queue = self._queues.get(record.key)
        if queue is None:
            with self._lock:  # a new partition: the dict changes, which committable iterates under the lock
                queue = self._queues.setdefault(record.key, deque())
        queue.append(record)  # a deque's append and popleft are atomic: committable pops the other end
        return record

    def remove(self, record: SubmittedRecord) -> None:
        """Forget a record whose send failed synchronously (it will be submitted again)."""
        with self._lock:
            queue = self._queues.get(record.key)
            if queue and queue[-1] is record:
                queue.pop()

    def committable(self) -> dict[bytes, Mapping[str, Any]]:
        """Remove the acknowledged prefix of each partition; return each partition's latest offset."""
        result: dict[bytes, Mapping[str, Any]] = {}
        with self._lock:
            for key, queue in self._queues.items():
                while queue and queue[0].acked:
                    result[key] = queue.popleft().offset
        result.pop(NO_OFFSET, None)
        return result

    def in_flight(self) -> int:
        """How many records are not yet acknowledged or not yet collected."""
        with self._lock:
            return sum(len(q) for q in self._queues.values())


class OffsetWriter:
    """Stages committable offsets and flushes them; a failed flush keeps them for the next round."""

    def __init__(self, store: OffsetStore) -> None:
        self._store = store
        self._staged: dict[bytes, Mapping[str, Any]] = {}

    def stage(self, offsets: Mapping[bytes, Mapping[str, Any]]) -> None:
        """Add offsets (newer ones replace older ones of the same partition)."""
        self._staged.update(offsets)

    def flush(self, timeout: float) -> bool:
        """Write staged offsets; True when there was something to write and it was written."""
        if not self._staged:
            return False
        batch = {k: codec.dumps(dict(v)) for k, v in self._staged.items()}
        self._store.set(batch).result(timeout)
        for key in batch:
            self._staged.pop(key, None)
        return True


class OffsetReader:
    """Reads a connector's committed offsets (``OffsetStorageReader``)."""

    def __init__(self, connector: str, store: OffsetStore) -> None:
        self._connector = connector
        self._store = store

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The committed offset of ``partition``, or None."""
        key = codec.offset_key(self._connector, dict(partition))
        value = self._store.get([key]).get(key)
        parsed = codec.loads(value)
        return parsed if isinstance(parsed, dict) else None
