"""Debezium's incremental (ad hoc) snapshot with its watermark algorithm, interleaved with streaming.

Per chunk: insert ``{_id: "<chunk>-open", type: "snapshot-window-open"}`` into the signal collection, read up to
``incremental.snapshot.chunk.size`` documents after the last key (in ``_id`` order, up to the key that was the
largest when the collection started, with the signal's additional condition), buffer them by key, then insert
``"<chunk>-close"`` (with ``incremental.snapshot.watermarking.strategy=INSERT_DELETE``: delete ``"<chunk>-open"``
instead, its delete event closing the window). When the stream delivers the open watermark the window opens; while
it is open a streamed event of the collection whose key is buffered drops the buffered read (the streamed event is
newer). When the close watermark arrives the remaining reads are emitted as ``r`` records with ``source.snapshot =
incremental`` and the next chunk is read. The state rides on the records' offsets in Debezium's keys
(``incremental_snapshot_collections``, ``..._primary_key``, ``..._maximum_key``; :mod:`.incremental_state`), each
``r`` record's own ``_id`` as the last key sent, so a restart - ours or Debezium's - continues after the last
record committed.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from bson import Binary, Decimal128, ObjectId
from pymongo.errors import OperationFailure, PyMongoError

from connect.api.records import SourceRecord
from connect.javalang import value_of
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.notifications import DISABLED, INCREMENTAL_SNAPSHOT, NotificationService
from connectors.mongodb.position import Position
from connectors.mongodb.snapshot import incremental_state
from connectors.mongodb.snapshot.bson_order import range_filter, sort_key
from connectors.mongodb.snapshot.metrics import SnapshotMeter

log = logging.getLogger(__name__)

_UNSET: Any = object()


@dataclass
class _Pending:
    ns: str
    condition: Mapping[str, Any] = field(default_factory=dict)
    started: bool = False
    after: Any = None
    has_max: bool = False
    maximum: Any = None
    rows: int = 0  # documents read by this run's chunk queries (Debezium's total_rows_scanned)


class IncrementalSnapshot:
    """The running incremental snapshot of one task (driven by the polling thread)."""

    def __init__(self, client: Any, signal_ns: str, events: ChangeEventConverter, chunk_size: int, tag: str,
                 delete_open: bool = False, notifications: NotificationService = DISABLED,
                 meter: SnapshotMeter | None = None) -> None:
        """``delete_open``: close each window by deleting its open watermark (Debezium's ``INSERT_DELETE``
        watermarking strategy) rather than inserting a close watermark (``INSERT_INSERT``). ``notifications``:
        Debezium's ``Incremental Snapshot`` notifications, whose records :meth:`take_notifications` hands over.
        ``meter``: Debezium's snapshot metrics, which its incremental snapshot reports to (running, paused,
        collections remaining, rows scanned per collection)."""
        self._meter = meter or SnapshotMeter("", "")
        self._delete_open = delete_open
        self._notifications = notifications
        self._outbox: list[SourceRecord] = []
        self._client = client
        self._signal_db, _, self._signal_coll = signal_ns.partition(".")
        self._events = events
        self._chunk_size = max(1, chunk_size)
        self._name = tag  # "<connector>|task-<n>", the prefix of every log line
        self._queue: list[_Pending] = []
        self.paused = False
        self.correlation_id: str | None = None
        self._chunk_id: str | None = None
        self._window_open = False
        self._buffer: dict[tuple[Any, ...], Mapping[str, Any]] = {}
        self._read_ahead: _Pending | None = None
        self._chunk_last: Any = None

    @property
    def running(self) -> bool:
        """Whether collections are queued (paused or not)."""
        return bool(self._queue)

    @property
    def idle(self) -> bool:
        """Whether no chunk is in flight (a new one may be read)."""
        return self._chunk_id is None

    def add(self, collections: list[str], conditions: Mapping[str, Mapping[str, Any]],
            correlation_id: str | None = None) -> None:
        """Queue collections (``db.collection``) with their additional conditions (``correlation_id``: the
        signal's id, kept on the offsets as Debezium does)."""
        self.correlation_id = correlation_id or self.correlation_id
        was_running = self.running
        known = {p.ns for p in self._queue}
        added = [ns for ns in dict.fromkeys(collections) if ns not in known]
        for ns in added:
            self._queue.append(_Pending(ns, dict(conditions.get(ns) or {})))
        if not was_running and self.running:
            self._notify("STARTED", {"data_collections": self._queued()})
            self._meter.started(added)
        elif added:
            self._meter.added(added)
        log.info("[%s] Incremental snapshot of %s queued (%s collection(s) pending)", self._name,
                 ", ".join(collections), len(self._queue))

    def stop(self, collections: list[str] | None) -> None:
        """Drop the given collections (all when None) from the snapshot."""
        stopped = [p.ns for p in self._queue if collections is None or p.ns in collections]
        if stopped:
            self._notify("ABORTED", {"data_collections": ",".join(stopped)})
        if collections is None:
            self._queue.clear()
        else:
            self._queue = [p for p in self._queue if p.ns not in collections]
        if stopped and not self._queue:
            self._meter.aborted()
        if not self._queue or (self._chunk_id and self._read_ahead not in self._queue):
            self._reset_window()
        log.info("[%s] Incremental snapshot stopped for %s", self._name, collections or "every collection")

    def pause(self) -> None:
        """Stop reading chunks (a pause-snapshot signal)."""
        if self.running and not self.paused:
            self.paused = True
            self._notify("PAUSED", {"data_collections": self._queued()})
            self._meter.paused()

    def resume(self) -> None:
        """Read chunks again (a resume-snapshot signal)."""
        if self.running and self.paused:
            self.paused = False
            self._notify("RESUMED", {"data_collections": self._queued()})
            self._meter.resumed()

    # --- notifications ---------------------------------------------------------------------------------------

    def _queued(self) -> str:
        return ",".join(p.ns for p in self._queue)

    def _notify(self, type_: str, data: Mapping[str, str]) -> None:
        self._outbox.extend(self._notifications.notify(INCREMENTAL_SNAPSHOT, type_, data, self.correlation_id))

    def _scan_completed(self, current: _Pending, status: str) -> None:
        self._notify("TABLE_SCAN_COMPLETED", {"data_collections": self._queued(), "scanned_collection": current.ns,
                                              "total_rows_scanned": str(current.rows), "status": status})

    def take_notifications(self) -> list[SourceRecord]:
        """The notification records sent since the last call."""
        out, self._outbox = self._outbox, []
        return out

    def _reset_window(self) -> None:
        self._chunk_id, self._window_open, self._buffer, self._read_ahead = None, False, {}, None

    # --- offsets -------------------------------------------------------------------------------------------

    def state(self, current_after: Any = _UNSET) -> dict[str, Any]:
        """The offset keys of the queue ({} when idle): Debezium's, and ours where Debezium has none (see
        :mod:`.incremental_state`); ``current_after`` is the last key sent of the first collection
        when it differs from where its next chunk starts (within a chunk being emitted)."""
        queue = []
        for index, p in enumerate(self._queue):
            started, after = p.started, p.after
            if index == 0 and current_after is not _UNSET:
                started, after = True, current_after
            queue.append(incremental_state.Progress(p.ns, dict(p.condition), started, after, p.has_max, p.maximum))
        return incremental_state.encode(incremental_state.SnapshotState(tuple(queue), self.paused, self.correlation_id))

    def restore(self, stored: Mapping[str, Any] | None) -> None:
        """Continue the snapshot recorded on a stored source offset (ours or Debezium's); the rest of the chunk in
        flight is read again."""
        state = incremental_state.decode(dict(Position.from_offset(stored).incremental) if stored else None)
        if state is None or not state.queue:
            return
        self._queue = [_Pending(p.ns, dict(p.condition), p.started, p.after, p.has_max, p.maximum)
                       for p in state.queue]
        self.paused, self.correlation_id = state.paused, state.correlation_id
        self._meter.started([p.ns for p in self._queue])
        if self.paused:
            self._meter.paused()
        log.info("[%s] Resuming the incremental snapshot of %s", self._name, [p.ns for p in self._queue])

    # --- the watermark algorithm --------------------------------------------------------------------------

    def next_chunk(self) -> None:
        """Open a window and read the next chunk, unless one is in flight, nothing is queued or paused."""
        while self._queue and not self.paused and self._chunk_id is None:
            current = self._queue[0]
            db, _, coll = current.ns.partition(".")
            try:
                if not current.has_max and not self._find_maximum(current, db, coll):
                    self._scan_completed(current, "EMPTY")
                    self._finish(current)
                    continue
                chunk_id = str(uuid.uuid4())
                signals = self._client[self._signal_db][self._signal_coll]
                signals.insert_one({"_id": f"{chunk_id}-open", "type": "snapshot-window-open", "payload": ""})
                docs = self._read(current, db, coll)
                current.rows += len(docs)
                if not docs:
                    if self._delete_open:
                        signals.delete_one({"_id": f"{chunk_id}-open"})
                    self._scan_completed(current, "SUCCEEDED")
                    self._finish(current)
                    continue
                # keys sharing a HashMap bucket keep the order Debezium's Map.of iterates in (last_processed_key
                # before data_collections, as recorded from Debezium: golden/debezium-*-incremental.jsonl)
                self._notify("IN_PROGRESS", {
                    "current_collection_in_progress": current.ns, "maximum_key": java_key(current.maximum),
                    "last_processed_key": java_key(docs[-1]["_id"]), "data_collections": self._queued()})
                self._chunk_id, self._read_ahead, self._chunk_last = chunk_id, current, docs[-1]["_id"]
                self._buffer = {sort_key(d["_id"]): d for d in docs}
                if self._delete_open:
                    signals.delete_one({"_id": f"{chunk_id}-open"})
                else:
                    signals.insert_one({"_id": f"{chunk_id}-close", "type": "snapshot-window-close", "payload": ""})
            except PyMongoError as exc:
                log.warning("[%s] Incremental snapshot of %s skipped: %s", self._name, current.ns, exc)
                self._reset_window()
                self._scan_completed(current, "UNKNOWN_SCHEMA")
                self._finish(current)

    def _find_maximum(self, current: _Pending, db: str, coll: str) -> bool:
        found = by_id(self._client[db][coll], current.condition, -1, 1, {"_id": 1})
        if not found:
            return False
        current.has_max, current.maximum = True, found[0]["_id"]
        return True

    def _read(self, current: _Pending, db: str, coll: str) -> list[Mapping[str, Any]]:
        bound = range_filter(current.after, False, None) if current.started else {}
        parts = [part for part in (bound, current.condition) if part]
        query = parts[0] if len(parts) == 1 else {"$and": parts} if parts else {}
        limit_key = sort_key(current.maximum)
        docs = by_id(self._client[db][coll], query, 1, self._chunk_size)
        return [d for d in docs if sort_key(d["_id"]) <= limit_key]

    def _finish(self, current: _Pending) -> None:
        if current in self._queue:
            self._queue.remove(current)
        self._meter.collection_done(current.ns, current.rows)
        if not self._queue:
            self._notify("COMPLETED", {})
            self._meter.completed()
            self.correlation_id = None
        log.info("[%s] Incremental snapshot of %s completed", self._name, current.ns)

    def on_event(self, event: Mapping[str, Any], offset: Callable[[], Mapping[str, Any]]) -> list[SourceRecord]:
        """Watch the stream: watermarks open/close the window; a streamed key drops its buffered read.
        Returns the chunk's ``r`` records when its close watermark arrives."""
        ns = event.get("ns") or {}
        if self._chunk_id is None:
            return []
        if ns.get("db") == self._signal_db and ns.get("coll") == self._signal_coll:
            doc_id = (event.get("documentKey") or {}).get("_id")
            if doc_id == f"{self._chunk_id}-open":
                if event.get("operationType") != "delete":
                    self._window_open = True
                elif self._delete_open:
                    return self._close(offset())
            elif doc_id == f"{self._chunk_id}-close":
                return self._close(offset())
            return []
        current = self._read_ahead
        if self._window_open and current is not None and f"{ns.get('db')}.{ns.get('coll')}" == current.ns:
            key = (event.get("documentKey") or {}).get("_id")
            if key is not None:
                self._buffer.pop(sort_key(key), None)
        return []

    def _close(self, offset: Mapping[str, Any]) -> list[SourceRecord]:
        current, last = self._read_ahead, self._chunk_last
        buffered = sorted(self._buffer.items())
        self._reset_window()
        if current is None or current not in self._queue:
            return []
        db, _, coll = current.ns.partition(".")
        base = Position.from_offset(offset)
        records = [self._events.snapshot_record(doc, db, coll, self._read_offset(base, doc["_id"]),
                                                marker="incremental") for _, doc in buffered]
        current.started, current.after = True, last
        if sort_key(current.after) >= sort_key(current.maximum):
            self._scan_completed(current, "SUCCEEDED")
            self._finish(current)
        return records

    def _read_offset(self, stream: Position, doc_id: Any) -> dict[str, Any]:
        """The offset of the ``r`` record of ``doc_id``: the stream position with the snapshot sent up to it."""
        state = tuple(self.state(doc_id).items())
        return replace(stream, incremental=state, incremental_read=True).to_offset()

def java_key(value: Any) -> str:
    """A document key as Debezium's notifications print it (``Objects.toString`` of the Java driver's value):
    numbers, strings, ObjectId and Decimal128 as Java writes them, a standard UUID as its text."""
    if isinstance(value, ObjectId | Decimal128):
        return str(value)
    if isinstance(value, Binary) and value.subtype == 4 and len(value) == 16:
        return str(value.as_uuid())
    return value_of(value)


def by_id(collection: Any, query: Mapping[str, Any], direction: int, limit: int,
          projection: Mapping[str, Any] | None = None) -> list[Mapping[str, Any]]:
    """Up to ``limit`` documents matching ``query`` in ``_id`` order, the ``_id`` index hinted (no in-memory sort
    whatever index an ``additional-condition`` could use); asked again without the hint if the server refuses it
    (no ``_id`` index, as a view)."""
    try:
        return list(collection.find(query, projection).sort("_id", direction).hint([("_id", 1)]).limit(limit))
    except OperationFailure:
        return list(collection.find(query, projection).sort("_id", direction).limit(limit))
