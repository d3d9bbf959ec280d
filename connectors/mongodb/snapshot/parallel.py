"""The initial snapshot, read by ``snapshot.max.threads`` threads at once, across and within collections, and
resumable after a crash.

A *planner* thread cuts each collection into up to ``threads`` ``_id`` ranges at split points taken from a
``$sample`` of ``_id``s, sorted in the server's order (:mod:`.bson_order`: every BSON type, mixed types, type-
bracketed bounds). *Fetcher* threads read the ranges, each in ``_id`` order, and hand chunks of documents to the
polling thread, which turns them into ``r`` records.

Progress (:mod:`.progress`) rides on the records' offsets: the last record of a chunk carries the state
with that chunk emitted (its range's last ``_id``), so an offset committed by the framework never claims more than
Kafka acknowledged. A restart continues each range after its last committed ``_id``: only chunks in flight are
read twice.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pymongo.errors import OperationFailure, PyMongoError

from connect.api.records import PreparedRecords, PreparedRow, SourceRecord
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.notifications import DISABLED, NotificationService
from connectors.mongodb.position import Position
from connectors.mongodb.snapshot.bson_order import NO_SERVER_BOUND, range_filter, sort_key, type_rank
from connectors.mongodb.snapshot.progress import RangeState, SnapshotProgress
from connectors.mongodb.snapshot.raw_cursor import document_batches
from connectors.mongodb.streaming.raw_events import plain

log = logging.getLogger(__name__)

_END = object()
_WAKE = object()  # put by stop(): a poll waiting for documents returns at once
SAMPLES_PER_RANGE = 32
LOG_INTERVAL_S = 10.0


@dataclass(frozen=True)
class SnapshotSettings:
    """How to read: threads, ids per chunk, server batch size, ``max.batch.size`` and per-collection filters."""

    threads: int = 1
    chunk_size: int = 2048
    fetch_size: int = 0
    batch: int = 2048
    filters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    resumable: bool = True  # False: records carry the plain position (a blocking snapshot)
    split: str = "auto"  # snapshot.split.mode: auto (when _id ranges are index reads), always, never


@dataclass
class _Stats:
    """Per collection: documents emitted, the estimated total, when it started."""

    started: float = field(default_factory=time.monotonic)
    emitted: int = 0
    estimate: int | None = None
    logged: float = field(default_factory=time.monotonic)
    first: float | None = None  # when its first documents arrived (the rate leaves out planning)


class ParallelSnapshot:
    """One run of the initial snapshot (started by :meth:`start`, drained by :meth:`poll`)."""

    def __init__(self, client: Any, collections: list[tuple[str, str]], events: ChangeEventConverter,
                 position: Mapping[str, Any], progress: SnapshotProgress, settings: SnapshotSettings,
                 tag: str, notifications: NotificationService = DISABLED) -> None:
        self._client = client
        self._collections = [(db, coll) for db, coll in collections if not progress.completed(f"{db}.{coll}")]
        self.total_collections = len(collections)
        self._events = events
        self._position = Position.from_offset(position)
        self._progress = progress
        self._settings = settings
        self._name = tag  # "<connector>|task-<n>", the prefix of every log line
        self._threads = max(1, settings.threads)
        self._work: queue.Queue[Any] = queue.Queue(maxsize=self._threads * 2)
        self._results: queue.Queue[Any] = queue.Queue(maxsize=self._threads * 2)
        self._stop = threading.Event()
        self._workers: list[threading.Thread] = []
        self._ended = 0
        self._held: SourceRecord | PreparedRow | None = None  # the last record emitted, held for its marker
        self._running = self._progress_offset(progress.encode()) if settings.resumable \
            else self._position.to_offset()
        self._stats: dict[str, _Stats] = {}
        self._unhinted: set[str] = set()
        self.rows_scanned = 0
        self.rows_by_collection: dict[str, int] = {}  # Debezium's RowsScanned map, "<db>.<collection>" -> rows
        self.last_emit_ms = 0  # wall-clock time of the last chunk emitted (MilliSecondsSinceLastEvent)
        self.started = time.monotonic()
        self.finished: float | None = None
        self._notifications = notifications
        self._announced: set[str] = set()  # collections whose IN_PROGRESS notification was sent
        self._pending: list[SourceRecord] = notifications.initial("STARTED")

    @property
    def remaining_collections(self) -> int:
        """Collections not completely emitted yet."""
        return self.total_collections - self._progress.completed_count

    def start(self) -> None:
        """Start the planner and the fetcher threads."""
        log.info("[%s] Snapshot of %s collection(s) (%s already done) with %s thread(s)", self._name,
                 self.total_collections, self.total_collections - len(self._collections), self._threads)
        self._spawn(self._plan, "planner")
        for index in range(self._threads):
            self._spawn(self._fetch, f"fetcher-{index}")

    def _spawn(self, target: Callable[[], None], role: str) -> None:
        thread = threading.Thread(target=target, name=f"{self._name.replace('|', '-')}-snapshot-{role}", daemon=True)
        self._workers.append(thread)
        thread.start()

    def _failed(self, exc: Exception) -> None:
        """Hand a reading thread's error to the polling thread (before that thread reports its end)."""
        if not self._stop.is_set():
            self._put(self._results, exc)

    def _put(self, target: queue.Queue[Any], item: Any) -> bool:
        while not self._stop.is_set():
            try:
                target.put(item, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def _plan(self) -> None:
        """Cut each collection into ``_id`` ranges and queue them, collection after collection; then take the
        document counts the plan did not need, for the progress lines."""
        uncounted: list[tuple[str, str]] = []
        try:
            for db, coll in self._collections:
                if self._stop.is_set():
                    return
                if not self._plan_collection(db, coll):
                    uncounted.append((db, coll))
        except Exception as exc:  # noqa: BLE001 - the polling thread fails the task with it
            self._failed(exc)
            return
        finally:
            for _ in range(self._threads):
                self._put(self._work, _END)
        self._count_later(uncounted)

    def _plan_collection(self, db: str, coll: str) -> bool:
        """Queue the collection's ranges; whether its document count was taken. The count decides the split points
        only when the collection may be split; otherwise it is left for the progress lines (:meth:`_count_later`):
        on a server that counts by scanning (SecantusDB: ~0.3 s per 30,000 documents) it competed with the copy
        (benchmarks/results.md)."""
        ns = f"{db}.{coll}"
        self._stats[ns] = stats = _Stats()
        ranges = self._progress.ranges(ns)
        splittable = ranges is None and self._threads > 1 and self._settings.split != "never"
        if splittable:
            self._estimate(db, coll, stats)
        if ranges is None:
            ranges = self._progress.plan(ns, self._split_points(db, coll, stats.estimate or 0) if splittable else [])
        if all(r.done for r in ranges):
            self._put(self._results, (ns, 0, [], True))
        for index, state in enumerate(ranges):
            if not state.done and not self._put(self._work, (ns, db, coll, index, state)):
                return True
        log.info("[%s] Snapshot of %s: %s range(s)%s", self._name, ns, len(ranges),
                 f", about {stats.estimate} documents" if stats.estimate is not None else "")
        return splittable

    def _count_later(self, uncounted: list[tuple[str, str]]) -> None:
        """The counts of ``uncounted`` collections, taken once the first progress line is due
        (``LOG_INTERVAL_S`` after the start) for those still being copied; a snapshot that ends sooner (the
        runner stops this thread then) counts nothing."""
        if not uncounted or self._stop.wait(LOG_INTERVAL_S):
            return
        for db, coll in uncounted:
            if self._stop.is_set():
                return
            if not self._progress.completed(f"{db}.{coll}"):
                self._estimate(db, coll, self._stats[f"{db}.{coll}"])

    def _split_points(self, db: str, coll: str, estimate: int) -> list[Any]:
        """Up to ``threads - 1`` split points from a ``$sample`` of ``_id``s (none for a small collection)."""
        wanted = min(self._threads, estimate // max(self._settings.chunk_size, 1))
        split = self._settings.split
        if wanted < 2 or split == "never" or (split == "auto" and not self._ranged_reads(db, coll)):
            return []
        sample = self._client[db][coll].aggregate([{"$sample": {"size": wanted * SAMPLES_PER_RANGE}},
                                                   {"$project": {"_id": 1}}])
        keyed: dict[tuple[Any, ...], Any] = {}
        for doc in sample:
            value = doc["_id"]
            if type_rank(value) not in NO_SERVER_BOUND:
                keyed.setdefault(sort_key(value), value)
        ordered = [keyed[k] for k in sorted(keyed)]
        if len(ordered) < wanted:
            return []
        step = len(ordered) / wanted
        return [ordered[int(step * i)] for i in range(1, wanted)]

    def _ranged_reads(self, db: str, coll: str) -> bool:
        """Whether the server reads an ``_id`` range by its index: the query planner's plan (not executed) for
        one. A plain ``COLLSCAN`` (a server without a usable ``_id`` index, such as SecantusDB) means every range
        costs a scan of the whole collection, so splitting would multiply the work: such a collection is read as
        one range. An unreadable plan counts as ranged (MongoDB's ``_id`` index always exists)."""
        command = {"explain": {"find": coll, "filter": {"_id": {"$gt": 0}}, "sort": {"_id": 1}},
                   "verbosity": "queryPlanner"}
        try:
            plan = self._client[db].command(command).get("queryPlanner", {})
        except PyMongoError:
            log.debug("[%s] No query plan for %s.%s", self._name, db, coll, exc_info=True)
            return True
        if plan_scans_range(plan):
            return True
        log.info("[%s] Snapshot of %s.%s: the server reads an _id range by scanning the whole collection "
                 "(plan COLLSCAN), so it is read as one range (snapshot.split.mode=always splits it anyway)",
                 self._name, db, coll)
        return False

    def _estimate(self, db: str, coll: str, stats: _Stats) -> None:
        try:
            stats.estimate = int(self._client[db][coll].estimated_document_count(maxTimeMS=60_000))
        except PyMongoError:
            log.debug("[%s] No document count for %s.%s", self._name, db, coll, exc_info=True)

    def _fetch(self) -> None:
        """Read ranges in ``_id`` order, chunk by chunk."""
        try:
            while not self._stop.is_set():
                try:
                    item = self._work.get(timeout=0.5)
                except queue.Empty:
                    continue
                if item is _END:
                    return
                if not self._read_range(*item):
                    return
        except Exception as exc:  # noqa: BLE001 - the polling thread fails the task with it
            self._failed(exc)
        finally:
            self._put(self._results, _END)

    def _read_range(self, ns: str, db: str, coll: str, index: int, state: RangeState) -> bool:
        low, inclusive = (state.after, False) if state.started else (state.low, True)
        bound = range_filter(low, inclusive, state.high)
        skip_to = sort_key(state.after) if state.started and bound is None else None
        if bound is None:  # a resume point the server cannot bound: skip to it here
            bound = range_filter(state.low, True, state.high) or {}
        query = dict(self._settings.filters.get(ns) or {})
        query = {"$and": [query, bound]} if query and bound else bound or query
        size = self._settings.chunk_size
        chunk: list[bytes] = []
        for docs in self._batches(ns, db, coll, query):
            if self._stop.is_set():
                return False
            if skip_to is not None:
                docs = [doc for doc in docs if sort_key(plain(doc)["_id"]) > skip_to]
            chunk.extend(docs)
            while len(chunk) >= size:
                if not self._put(self._results, (ns, index, chunk[:size], False)):
                    return False
                chunk = chunk[size:]
        return self._put(self._results, (ns, index, chunk, True))

    def _batches(self, ns: str, db: str, coll: str, query: Mapping[str, Any]) -> Iterator[list[bytes]]:
        """The documents of one range in ``_id`` order, batch by batch from ONE cursor (``snapshot.fetch.size``
        per batch), each document as its BSON bytes: the server's replies are cut by the compiled module
        (:mod:`.raw_cursor`), so no Python object but the bytes is made per document here (the compiled writer
        takes the bytes).

        The ``_id`` index is hinted: the range is then walked in index order whatever other index a filter
        override could use, with no in-memory sort (MongoDB's would be bounded by 100 MB). A server that refuses
        the hint before the first document (no ``_id`` index, as a view) is asked again without it."""
        hinted = ns not in self._unhinted
        collection = self._client[db][coll]
        cursor = document_batches(collection, query, self._settings.fetch_size or self._settings.chunk_size)
        cursor = cursor.sort("_id", 1)
        if hinted:
            cursor = cursor.hint([("_id", 1)])
        read = False
        try:
            for batch in cursor:
                read = True
                yield batch
        except OperationFailure as exc:
            if read or not hinted:
                raise
            log.info("[%s] Snapshot of %s: reading without the _id index hint (%s)", self._name, ns, exc)
            self._unhinted.add(ns)
            cursor.close()
            yield from self._batches(ns, db, coll, query)
        finally:
            cursor.close()

    def poll(self, timeout: float = 0.5) -> PreparedRecords | None:
        """The next records; ``[]`` while waiting; None once everything was emitted (the last batch before
        that carries the record marked ``last``). Raises the first error of a reading thread."""
        if self.finished is not None:
            return None
        out, self._pending = PreparedRecords(self._pending), []
        wait = timeout
        while len(out) < self._settings.batch:
            try:
                item = self._results.get(timeout=wait) if wait else self._results.get_nowait()
            except queue.Empty:
                break
            wait = 0
            if item is _WAKE:
                break
            if item is _END:
                self._ended += 1
                if self._ended >= self._threads:
                    return self._finish(out)
                continue
            if isinstance(item, BaseException):
                raise item
            ns, index, docs, done = item
            self._emit(ns, index, docs, done, out)
        self._log_progress()
        return out

    def _emit(self, ns: str, index: int, docs: Sequence[Mapping[str, Any] | bytes], done: bool,
              out: PreparedRecords) -> None:
        db, _, coll = ns.partition(".")
        if ns not in self._announced:
            self._announced.add(ns)
            out.extend(self._notifications.initial("IN_PROGRESS", {"current_collection_in_progress": ns}))
        running = self._running
        held = self._held
        add, row_of = out.add, self._events.snapshot_row
        for doc in docs:
            if held is not None:
                add(held)
            held = row_of(doc, db, coll, running)
        self.rows_scanned += len(docs)
        self.rows_by_collection[ns] = self.rows_by_collection.get(ns, 0) + len(docs)
        self.last_emit_ms = time.time_ns() // 1_000_000
        stats = self._stats.get(ns)
        if stats is not None:
            stats.emitted += len(docs)
            if stats.first is None and docs:
                stats.first = time.monotonic()
        state, finished = self._progress.emitted(ns, index, plain(docs[-1])["_id"] if docs else None, done)
        if self._settings.resumable:
            self._running = self._progress_offset(state)
        if held is not None and docs and self._settings.resumable:  # the chunk's last record: state with it emitted
            held = self._events.with_snapshot_marker(held, "true", self._running)
        self._held = held
        if finished:
            out.extend(self._notifications.initial("TABLE_SCAN_COMPLETED", {"scanned_collection": ns,
                                                                            "status": "SUCCEEDED"}))
        if finished and stats is not None:
            elapsed = max(time.monotonic() - stats.started, 1e-3)
            log.info("[%s] Snapshot of %s completed: %s documents in %.1f s (%.0f documents/s)",
                     self._name, ns, stats.emitted, elapsed, stats.emitted / elapsed)

    def _finish(self, out: PreparedRecords) -> PreparedRecords | None:
        self.finished = time.monotonic()
        if self._held is not None:
            out.append(self._events.with_snapshot_marker(self._held, "last", self._position.to_offset()))
            self._held = None
        out.extend(self._notifications.initial("COMPLETED"))
        return out or None

    def aborted(self) -> None:
        """Debezium's ``ABORTED`` notification, when the snapshot fails or is stopped before it completed (only
        its log channel reaches anyone: the task stops)."""
        if self.finished is None and "<aborted>" not in self._announced:
            self._announced.add("<aborted>")
            self._notifications.initial("ABORTED")

    def _progress_offset(self, progress: str) -> dict[str, Any]:
        """The offset of a record of a resumable snapshot, with the progress made once it is delivered."""
        return dataclasses.replace(self._position, initsync=True, snapshot_progress=progress).to_offset()

    def _log_progress(self) -> None:
        now = time.monotonic()
        for ns, stats in list(self._stats.items()):
            if now - stats.logged < LOG_INTERVAL_S or (stats.estimate is not None and stats.emitted >= stats.estimate):
                continue
            stats.logged = now
            reading = now - (stats.first or now)
            rate = stats.emitted / reading if reading >= 1.0 else 0.0
            total = "?" if stats.estimate is None else f"~{stats.estimate}"
            left = "" if stats.estimate is None or rate <= 0 else \
                f", about {max(stats.estimate - stats.emitted, 0) / rate:.0f} s left"
            log.info("[%s] Snapshot of %s: %s of %s documents, %s documents/s%s", self._name, ns,
                     stats.emitted, total, f"{rate:.0f}" if rate else "?", left)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop every reading thread; idempotent."""
        self._stop.set()
        with contextlib.suppress(queue.Full):  # a full queue has no poll waiting
            self._results.put_nowait(_WAKE)
        deadline = time.monotonic() + timeout
        for thread in self._workers:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))


_RANGED_STAGES = frozenset({"IXSCAN", "IDHACK", "CLUSTERED_IXSCAN", "EXPRESS_IXSCAN", "EXPRESS_CLUSTERED_IXSCAN"})


def plan_scans_range(plan: Any) -> bool:
    """Whether a query plan (``explain``'s ``queryPlanner``, any shape: classic, SBE, per shard) reads an index
    range or a bounded clustered scan; False only when every scan in it is an unbounded ``COLLSCAN``."""
    scans: list[bool] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            stage = node.get("stage")
            if stage in _RANGED_STAGES:
                scans.append(True)
            elif stage == "COLLSCAN":
                scans.append("minRecord" in node or "maxRecord" in node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(plan.get("winningPlan", plan) if isinstance(plan, Mapping) else plan)
    return not scans or any(scans)
