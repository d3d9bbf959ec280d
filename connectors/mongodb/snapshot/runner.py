"""Sequences the task's snapshots, one stream at a time: the initial snapshot of each stream that needs one (after
``snapshot.delay.ms``, resumed from a stored ``snapshot_progress``), a new one when a stream's position is lost
under ``snapshot.mode=when_needed``, and blocking snapshots asked for by a signal. Each run is a
:class:`ParallelSnapshot`; the stream resumes from the position taken before it. Also Debezium's snapshot
metrics (context ``snapshot``: :mod:`.metrics`), which the incremental snapshot feeds too.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from bson import json_util
from pymongo.errors import PyMongoError

from connect.api.errors import ConnectError
from connect.api.metrics import Metric
from connect.api.records import SourceRecord
from connectors.mongodb import snapshot
from connectors.mongodb.config import MongoDbConfig, SnapshotMode
from connectors.mongodb.notifications import DISABLED, NotificationService
from connectors.mongodb.position import Position
from connectors.mongodb.snapshot.metrics import SnapshotMeter
from connectors.mongodb.snapshot.parallel import ParallelSnapshot, SnapshotSettings
from connectors.mongodb.snapshot.progress import SnapshotProgress
from connectors.mongodb.streaming.capture import POLL_AWAIT_MS, StreamCapture, rs_label, watch_target
from connectors.mongodb.streaming.signals import SnapshotRequest

log = logging.getLogger(__name__)


class SnapshotRunner:
    """The snapshots of one task's streams, run on the task's polling thread (reading on their own threads)."""

    def __init__(self, config: MongoDbConfig, name: str, tag: str, task_id: str, stopping: threading.Event,
                 notifications: NotificationService = DISABLED) -> None:
        self._config = config
        self._notifications = notifications
        self._name = name
        self._tag = tag
        self._task_id = task_id
        self._stopping = stopping
        self._queue: list[tuple[StreamCapture, Mapping[str, Any] | None]] = []
        self._due: float | None = None
        self._running: ParallelSnapshot | None = None
        self._stopped = False
        self.meter = SnapshotMeter(config.topic_prefix, task_id)

    @property
    def active(self) -> bool:
        """Whether a snapshot runs or waits to start (streaming waits meanwhile)."""
        return self._running is not None or self._due is not None or bool(self._queue)

    def enqueue(self, stream: StreamCapture, stored: Mapping[str, Any] | None, delay_ms: int = 0) -> None:
        """Snapshot ``stream`` after the ones queued (resuming from ``stored`` when it was interrupted)."""
        self._queue.append((stream, stored))
        if self._running is None and self._due is None:
            self._due = time.monotonic() + delay_ms / 1000

    def poll(self) -> Sequence[SourceRecord] | None:
        """The next records of the running snapshot; starts the next one when due."""
        if self._running is None:
            self._start_when_due()
            return None
        running = self._running
        try:
            records = running.poll(POLL_AWAIT_MS / 1000)
        except Exception as exc:
            running.aborted()
            self.meter.aborted()
            if isinstance(exc, PyMongoError):
                self.meter.disconnected()
            if self._stopped:
                return None
            raise ConnectError(f"[{self._tag}] Snapshot failed: {exc}") from exc
        if records is None:
            running.stop()
            self._running = None
            self.meter.completed()
            streaming = self._config.snapshot_mode is not SnapshotMode.INITIAL_ONLY
            log.info("[%s] Snapshot completed in %.1f s%s", self._tag,
                     (running.finished or time.monotonic()) - running.started, "" if streaming else "; not streaming")
            if self._queue:
                self._due = time.monotonic()
        return records or None

    def _start_when_due(self) -> None:
        if self._due is None:
            return
        wait = self._due - time.monotonic()
        if wait > 0:
            self._stopping.wait(min(wait, POLL_AWAIT_MS / 1000))
            return
        self._due = None
        if not self._queue:
            return
        stream, stored = self._queue.pop(0)
        try:
            self._begin(stream, stored)
        except PyMongoError as exc:
            if not self._stopped:
                raise ConnectError(f"[{self._tag}] Snapshot failed: {exc}") from exc

    def _settings(self, **overrides: Any) -> SnapshotSettings:
        config = self._config
        values: dict[str, Any] = {
            "threads": config.snapshot_max_threads, "chunk_size": config.snapshot_fetch_size or 2048,
            "fetch_size": config.snapshot_fetch_size, "batch": config.max_batch_size, "split": config.snapshot_split,
            "filters": {ns: json_util.loads(text) for ns, text in config.snapshot_filters.items()}}
        values.update(overrides)
        return SnapshotSettings(**values)

    def _begin(self, stream: StreamCapture, stored: Mapping[str, Any] | None) -> None:
        """Resume an interrupted snapshot from its stored position and progress, else start one now."""
        progress, position = SnapshotProgress(), {}
        interrupted = Position.from_offset(stored) if stored else None
        if interrupted is not None and interrupted.initsync and interrupted.snapshot_progress \
                and interrupted.resume_token:
            try:
                progress = SnapshotProgress.decode(interrupted.snapshot_progress)
                position = Position(-1 if interrupted.sec is None else interrupted.sec,
                                    -1 if interrupted.ord is None else interrupted.ord,
                                    interrupted.resume_token).to_offset()
            except ValueError as exc:
                log.warning("[%s] Snapshot starts over: %s", self._tag, exc)
                progress = SnapshotProgress()
            else:
                if progress.started:
                    log.info("[%s] Resuming the interrupted snapshot%s", self._tag, rs_label(stream))
                else:
                    log.info("[%s] The interrupted snapshot%s stored no progress: it starts over from the current "
                             "position", self._tag, rs_label(stream))
        if not progress.started:
            position = snapshot.start_position(stream.client, watch_target(stream.client, self._config))
        stream.resume_token, stream.start_at = Position.from_offset(position).resume_token_document(), None
        collections = snapshot.captured_collections(stream.client, stream.captured, self._config.snapshot_include)
        log.info("[%s] Snapshot%s of %s collection(s) starts; streaming resumes from the position taken first",
                 self._tag, rs_label(stream), len(collections))
        self._running = ParallelSnapshot(stream.client, collections, stream.events, position, progress,
                                         self._settings(), self._tag, self._notifications)
        self._track(self._running, collections)
        self._running.start()

    def start_blocking(self, stream: StreamCapture, request: SnapshotRequest) -> None:
        """Debezium's blocking snapshot: the stream pauses, the collections are read, the stream goes on."""
        stream.close()
        position = stream.position() or Position(-1, -1).to_offset()
        collections = sorted((ns.partition(".")[0], ns.partition(".")[2]) for ns in request.conditions)
        settings = self._settings(filters={ns: dict(c) for ns, c in request.conditions.items() if c},
                                  resumable=False)
        log.info("[%s] Blocking snapshot of %s; streaming pauses", self._tag, ", ".join(request.conditions))
        self._running = ParallelSnapshot(stream.client, collections, stream.events, position, SnapshotProgress(),
                                         settings, self._tag, self._notifications)
        self._track(self._running, collections)
        self._running.start()

    def _track(self, run: ParallelSnapshot, collections: list[tuple[str, str]]) -> None:
        self.meter.started([f"{db}.{coll}" for db, coll in collections],
                           lambda: (dict(run.rows_by_collection), run.remaining_collections, run.last_emit_ms))

    def skipped(self) -> None:
        """A stream starts without its initial snapshot (Debezium's ``SnapshotSkipped``)."""
        self.meter.skipped()

    def metrics(self, queue: Mapping[str, float]) -> list[Metric]:
        """Debezium's snapshot metrics (context ``snapshot``); ``queue``: the queue attributes both contexts show."""
        return self.meter.samples(queue)

    def stop(self) -> None:
        """Stop the running snapshot's threads without waiting; idempotent."""
        self._stopped = True
        running = self._running
        if running is not None:
            running.stop(timeout=0)
            running.aborted()
            self.meter.aborted()
