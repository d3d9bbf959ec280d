"""Debezium's snapshot metrics of the MongoDB connector (``context=snapshot``), as Debezium's ``SnapshotMeter`` keeps
them: fed by the initial and blocking snapshots (:mod:`.runner`) and by the incremental snapshot (:mod:`.incremental`,
which Debezium reports in the same MBean), rendered as ``debezium_metrics_<Name>{plugin="mongodb",
name=<topic.prefix>,context="snapshot",task=<id>}``.

The MBean exists from the task's start, so every sample is there before any snapshot (zeros), as a JMX exporter
scraping a Java worker shows it. String attributes (``LastEvent``, ``ChunkId``, ``ChunkFrom``, ``ChunkTo``,
``TableFrom``, ``TableTo``) and the ``CapturedTables`` array have no sample: Debezium's exporter rules export
numbers only. ``TableChunkCounts``/``TableChunksCompletedCounts`` stay empty maps for MongoDB in Debezium (only
relational connectors report chunk progress), so they have no sample either.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from connect.api.metrics import Metric, debezium_metric

Live = Callable[[], tuple[Mapping[str, int], int, int]]
"""A running initial/blocking snapshot's (rows per collection, collections remaining, last emission in ms)."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class SnapshotMeter:
    """The snapshot context's state; written by the task thread, read by the REST thread (under a lock)."""

    def __init__(self, server: str, task: str) -> None:
        self._server, self._task = server, task
        self._lock = threading.Lock()
        self.running = self.paused_now = self.completed_now = self.aborted_now = self.skipped_now = False
        self._start_ms = self._stop_ms = self._pause_start_ms = self._paused_ms = 0
        self._captured: set[str] = set()
        self._remaining: set[str] = set()
        self._rows: dict[str, int] = {}
        self._events_seen = 0  # of finished runs; the live run's are added when read
        self._last_event_ms = 0
        self._disconnects = 0
        self._live: Live | None = None

    def _state(self, running: bool = False, paused: bool = False, completed: bool = False,
               aborted: bool = False) -> None:
        self.running, self.paused_now, self.completed_now, self.aborted_now = running, paused, completed, aborted
        self.skipped_now = False

    def started(self, collections: Iterable[str], live: Live | None = None) -> None:
        """A snapshot of ``collections`` (``db.collection``) starts; ``live`` reads a parallel run's progress."""
        with self._lock:
            self._settle()
            self._state(running=True)
            self._start_ms, self._stop_ms, self._pause_start_ms, self._paused_ms = _now_ms(), 0, 0, 0
            names = list(collections)
            self._captured.update(names)
            self._remaining = set(names)
            self._live = live

    def added(self, collections: Iterable[str]) -> None:
        """Collections joined the running (incremental) snapshot."""
        with self._lock:
            names = list(collections)
            self._captured.update(names)
            self._remaining.update(names)

    def paused(self) -> None:
        with self._lock:
            self._state(paused=True)
            self._pause_start_ms = _now_ms()

    def resumed(self) -> None:
        with self._lock:
            self._state(running=True)
            now = _now_ms()
            self._paused_ms += now - (self._pause_start_ms or now)
            self._pause_start_ms = 0

    def collection_done(self, ns: str, rows: int) -> None:
        """A collection was read completely (``rows`` documents)."""
        with self._lock:
            self._rows[ns] = rows
            self._remaining.discard(ns)
            self._events_seen += rows
            self._last_event_ms = _now_ms()

    def completed(self) -> None:
        with self._lock:
            self._settle()
            self._state(completed=True)
            self._stop_ms = _now_ms()

    def aborted(self) -> None:
        with self._lock:
            if not (self.running or self.paused_now):
                return
            self._settle()
            self._state(aborted=True)
            self._stop_ms = _now_ms()

    def skipped(self) -> None:
        """The initial snapshot is not taken (offsets exist, or ``snapshot.mode`` says so): additive, as Debezium."""
        with self._lock:
            self.skipped_now = True
            self._stop_ms = _now_ms()

    def disconnected(self) -> None:
        with self._lock:
            self._disconnects += 1

    def _settle(self) -> None:
        """Fold a parallel run's live progress into the meter (its rows become final)."""
        if self._live is None:
            return
        rows, remaining, last_ms = self._live()
        self._rows.update(rows)
        self._events_seen += sum(rows.values())
        self._remaining = set(list(self._remaining)[:remaining]) if remaining else set()
        self._last_event_ms = max(self._last_event_ms, last_ms)
        self._live = None

    def samples(self, queue: Mapping[str, float]) -> list[Metric]:
        """Every attribute with a numeric value; ``queue`` are the queue attributes the contexts share."""
        now = _now_ms()
        with self._lock:
            rows, events, remaining, last_ms = dict(self._rows), self._events_seen, len(self._remaining), \
                self._last_event_ms
            if self._live is not None:
                live_rows, remaining, live_last = self._live()
                rows.update(live_rows)
                events += sum(live_rows.values())
                last_ms = max(last_ms, live_last)
            stop = self._stop_ms or now
            values: dict[str, float] = {
                "SnapshotRunning": self.running, "SnapshotPaused": self.paused_now,
                "SnapshotCompleted": self.completed_now, "SnapshotAborted": self.aborted_now,
                "SnapshotSkipped": self.skipped_now,
                "SnapshotDurationInSeconds": (stop - self._start_ms) // 1000 if self._start_ms else 0,
                "SnapshotPausedDurationInSeconds": (self._paused_ms + (now - self._pause_start_ms
                                                                       if self._pause_start_ms else 0)) // 1000,
                "TotalTableCount": len(self._captured), "RemainingTableCount": remaining,
                "TotalNumberOfEventsSeen": events, "TotalNumberOfCreateEventsSeen": 0,
                "TotalNumberOfUpdateEventsSeen": 0, "TotalNumberOfDeleteEventsSeen": 0,
                "NumberOfEventsFiltered": 0, "NumberOfErroneousEvents": 0, "NumberOfDisconnects": self._disconnects,
                "MilliSecondsSinceLastEvent": now - last_ms if last_ms else -1, **queue}
        server, task = self._server, self._task
        result = [debezium_metric(key, float(value), plugin="mongodb", server=server, context="snapshot", task=task,
                                  kind="counter" if key.startswith(("TotalNumberOf", "NumberOf")) else "gauge")
                  for key, value in values.items()]
        # RowsScanned is a map per collection: Debezium's exporter rule labels each entry with ``table``
        for ns, count in sorted(rows.items()):
            metric = debezium_metric("RowsScanned", count, plugin="mongodb", server=server, context="snapshot",
                                     task=task)
            result.append(replace(metric, labels={**metric.labels, "table": ns}))
        return result
