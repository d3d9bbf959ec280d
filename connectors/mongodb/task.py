"""``MongoDbConnectorTask``: snapshots when needed, then streams change events into Debezium records.

By default the task reads one change stream (the replica set, or the sharded cluster through mongos) and keeps
one offset, ``{"server_id": <topic.prefix>}`` -> ``{"sec","ord","resume_token",...}``, exactly as Debezium 3.x.
With ``mongodb.connection.mode=replica_set`` the connector hands each task one or more shard replica sets; the
task reads each one's stream on its own thread and keeps one offset per replica set (partition
``{"server_id", "rs"}``, Debezium 2.x's form). Failures follow :mod:`.connection`; snapshots are sequenced by
:mod:`.snapshot.runner`; signals (:mod:`.streaming.signal_dispatch`) act on the task's stream when it has exactly
one.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from pymongo.errors import NotPrimaryError, PyMongoError

from connect.api.errors import ConnectError, DataError
from connect.api.metrics import Metric
from connect.api.records import PreparedRecords, SourceRecord
from connect.api.task import SourceTask
from connectors.mongodb import connection, sharding, snapshot
from connectors.mongodb.config import MongoDbConfig, SnapshotMode
from connectors.mongodb.connection import Backoff, Fault, auth_message, classify, fatal_message, lost_position_message
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.fields import FieldSelector
from connectors.mongodb.notifications import NotificationService
from connectors.mongodb.position import Position
from connectors.mongodb.snapshot.runner import SnapshotRunner
from connectors.mongodb.streaming.capture import StreamCapture, rs_label
from connectors.mongodb.streaming.metrics import StreamingMetrics
from connectors.mongodb.streaming.signal_dispatch import SignalDispatcher, SignalSettings

log = logging.getLogger(__name__)


_LABEL_INVALID = re.compile(r"[^a-zA-Z0-9_]")


def custom_labels(tags: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """``custom.metric.tags`` as Prometheus labels: a name's characters outside ``[a-zA-Z0-9_]`` become ``_`` (as
    the JMX exporter names labels) and a leading digit gets a ``_``; the standard labels win over a tag of the
    same name."""
    labels = {}
    for key, value in tags:
        name = _LABEL_INVALID.sub("_", key)
        labels[f"_{name}" if name[:1].isdigit() or not name else name] = value
    return labels


class MongoDbConnectorTask(SourceTask):
    """Streams the change events of its replica set(s), or of a sharded cluster through mongos."""

    version = "3.6.1.Final"

    def start(self, props: Mapping[str, str]) -> None:
        """Connect, then snapshot or open the change streams from the stored positions."""
        self.config = MongoDbConfig.parse(props)
        self.name = props.get("name", "?")
        self.task_id = str(getattr(getattr(self, "context", None), "task_id", 0) or 0)
        self.tag = f"{self.name}|task-{self.task_id}"
        self._stopping = threading.Event()
        self._stopped = False
        self._backoff = Backoff(self.config.capture.max_retries, self.config.capture.retry_wait_ms)
        self.streams: list[StreamCapture] = []
        self._stored: dict[int, dict[str, Any] | None] = {}
        self._metrics = StreamingMetrics(self.config.topic_prefix, self.task_id, self.config.max_queue_size,
                                         lambda: sum(s.queued() for s in self.streams),
                                         self.config.honoured.max_queue_bytes,
                                         lambda: sum(s.queued_bytes() for s in self.streams),
                                         self.config.honoured.statistics_metrics)
        run_id = str(uuid.uuid4())
        self._streaming = self.config.snapshot_mode is not SnapshotMode.INITIAL_ONLY
        honoured = self.config.honoured
        self._notifications = NotificationService(honoured.notification_channels, honoured.notification_topic,
                                                  self.config.topic_prefix, self.tag)
        self._pending: list[SourceRecord] = []  # notifications to hand over on the next poll
        self._snapshots = SnapshotRunner(self.config, self.name, self.tag, self.task_id, self._stopping,
                                         self._notifications)
        self._signals: SignalDispatcher | None = None
        self._stream_from: float | None = None
        self._delay_streaming = False
        try:
            for rs, uri in sharding.assigned_replica_sets(props, self.config.connection_string):
                self.streams.append(self._make_stream(rs, uri, run_id))
            snapshot_first = [s for s in self.streams
                              if self._position_lost(s) or self._needs_snapshot(self._stored[id(s)])]
            self._signals = self._open_signals()
        except Exception:
            self.stop()
            raise
        for stream in snapshot_first:
            self._snapshots.enqueue(stream, self._stored[id(stream)], self.config.snapshot_delay_ms)
        for _skipped in range(len(self.streams) - len(snapshot_first)):  # Debezium: a start without a snapshot
            self._pending.extend(self._notifications.initial("SKIPPED"))
            self._snapshots.skipped()
        # Debezium delays streaming by streaming.delay.ms only after a snapshot it completed, not when it skipped it
        self._delay_streaming = bool(snapshot_first)
        if snapshot_first:
            return
        for stream in self.streams:
            if not stream.open:
                log.info("[%s] Starting change stream%s %s", self.tag, rs_label(stream), stream.describe_start())
                self._start_stream(stream)

    def _open_signals(self) -> SignalDispatcher | None:
        """Signals and incremental snapshots, on the task's stream (a task with several has none)."""
        config = self.config
        if not config.signal_data_collection and not config.signal_kafka_topic:
            return None
        if len(self.streams) != 1:
            log.warning("[%s] Signals (signal.data.collection, signal.kafka.topic) are ignored: this task reads "
                        "%s replica sets and signals are supported only with one change stream per task",
                        self.tag, len(self.streams))
            return None
        stream = self.streams[0]
        honoured = config.honoured
        settings = SignalSettings(config.topic_prefix, config.signal_data_collection, config.signal_kafka_topic,
                                  config.signal_kafka_settings, config.signal_poll_interval_ms,
                                  config.incremental_chunk_size, "source" in honoured.signal_channels,
                                  honoured.signal_kafka_poll_timeout_ms,
                                  honoured.watermarking == "INSERT_DELETE")

        def collections() -> list[str]:
            return [f"{db}.{coll}" for db, coll in snapshot.captured_collections(stream.client, stream.captured)]
        stream.signal_collection = config.signal_data_collection
        stream.signals = SignalDispatcher(stream.client, settings, stream.events, self.tag, collections,
                                          getattr(self.context, "topic_readers", None), self._stored[id(stream)],
                                          self._notifications, self._snapshots.meter)
        return stream.signals

    def _make_stream(self, rs: str | None, uri: str, run_id: str) -> StreamCapture:
        config = self.config
        client = connection.connect(config, uri, self.tag)
        partition = {"server_id": config.topic_prefix} if rs is None else {"server_id": config.topic_prefix, "rs": rs}
        events = ChangeEventConverter(
            topic_prefix=config.topic_prefix, release=config.release, tombstones_on_delete=config.tombstones_on_delete,
            extended_headers=config.extended_headers, task_id=self.task_id, run_id=run_id,
            partition=partition, naming=config.topic_naming,
            fields=FieldSelector(config.capture.field_excludes, config.capture.field_renames),
            written_payloads=bool(getattr(self.context, "values_go_to_json_converter", False)))
        label = f"{self.name}-task-{self.task_id}" + (f"-{rs}" if rs else "")
        stream = StreamCapture(config=config, client=client, events=events, partition=partition,
                               metrics=self._metrics, label=label)
        stored = self.context.offset_storage_reader.offset(partition)
        self._stored[id(stream)] = stored
        stream.restore(stored)
        return stream

    # -- snapshots (sequenced by snapshot.runner) ------------------------------------------------------------
    def _needs_snapshot(self, stored: Mapping[str, Any] | None) -> bool:
        mode = self.config.snapshot_mode
        interrupted = Position.from_offset(stored).initsync if stored else False
        if mode in (SnapshotMode.NO_DATA, SnapshotMode.NEVER):
            if interrupted:
                raise ConnectError(
                    "The connector previously stopped while taking a snapshot, but now the connector is configured "
                    "to never allow snapshots. Reconfigure the connector to use snapshots initially or when needed.")
            return False
        return mode is SnapshotMode.ALWAYS or not stored or interrupted

    def _position_lost(self, stream: StreamCapture) -> bool:
        """Debezium's check of a stored stream position at task start, in every snapshot mode: when the server no
        longer has it, ``when_needed`` forgets the offset and snapshots again (True); any other mode fails the
        task with Debezium's message (``always`` too: Debezium's check comes before its snapshot)."""
        stored = self._stored[id(stream)]
        if not stored or Position.from_offset(stored).initsync:
            return False
        if self._streaming and len(self.streams) == 1 and not self._needs_snapshot(stored):
            # streaming follows at once: the stream itself is the check (one aggregate, not two)
            log.info("[%s] Starting change stream%s %s", self.tag, rs_label(stream), stream.describe_start())
            if stream.start_checked():
                return False
        elif stream.position_available():
            return False
        if self.config.snapshot_mode is not SnapshotMode.WHEN_NEEDED:
            raise ConnectError(f"[{self.tag}] {lost_position_message(stored)}")
        log.warning("[%s] The stored change stream position is no longer available on the server; "
                    "snapshot.mode=when_needed takes a new snapshot", self.tag)
        stream.resume_token, stream.start_at = None, None
        self._stored[id(stream)] = None
        return True

    # -- streaming ---------------------------------------------------------------------------------------------
    def _start_stream(self, stream: StreamCapture) -> bool:
        try:
            stream.start()
            return True
        except PyMongoError as exc:
            self._on_failure(stream, exc)
            return False

    def _on_failure(self, stream: StreamCapture, exc: PyMongoError) -> None:
        """Close the stream and decide: retry later, snapshot again, or fail the task."""
        stream.close()
        self._metrics.connected = False
        self._metrics.count("NumberOfDisconnects")
        if isinstance(exc, NotPrimaryError):
            self._metrics.count("NumberOfPrimaryElections")
        fault = classify(exc)
        if fault is Fault.AUTH:
            raise ConnectError(auth_message(self.tag, self.config.user, self.config.auth_source, exc)) from exc
        if fault is Fault.POSITION_LOST:
            offset = stream.position() or self._stored.get(id(stream)) or {}
            if self.config.snapshot_mode is SnapshotMode.WHEN_NEEDED:
                log.warning("[%s] The change stream position is no longer available (%s); snapshot.mode=when_needed "
                            "takes a new snapshot", self.tag, exc)
                stream.resume_token, stream.start_at = None, None
                self._snapshots.enqueue(stream, None)
                return
            raise ConnectError(f"[{self.tag}] {lost_position_message(offset)} ({exc})") from exc
        if fault is Fault.FATAL:
            raise ConnectError(fatal_message(self.tag, exc)) from exc
        if not self._backoff.failed():
            raise ConnectError(f"[{self.tag}] Change stream failed {self._backoff.failures} times in a row "
                               f"(errors.max.retries={self.config.capture.max_retries}): {exc}") from exc
        log.warning("[%s] Change stream%s failed, resuming from the last position in %.1f s: %s", self.tag,
                    rs_label(stream), self._backoff.remaining(), exc)

    def poll(self) -> Sequence[SourceRecord] | None:
        """Up to ``max.batch.size`` events' records; returns after ``poll.interval.ms`` when idle."""
        if self._stopped:
            return None
        if self._pending:
            pending, self._pending = self._pending, []
            return pending
        if self._snapshots.active:
            return self._snapshots.poll()
        interval = self.config.honoured.poll_interval_ms / 1000
        if not self._streaming:
            self._stopping.wait(interval)
            return None
        wait = max(self._backoff.remaining(), self._streaming_delay())
        if wait > 0:
            self._stopping.wait(min(wait, interval))
            return None
        records = PreparedRecords()
        share = max(self.config.max_batch_size // len(self.streams), 1)
        timeout = interval / len(self.streams)
        for stream in self.streams:
            if self._stopped or self._snapshots.active:
                break
            if not stream.open and not self._start_stream(stream):
                continue
            try:
                records.extend(stream.take(share, 0 if records else timeout))
                self._backoff.succeeded()
                self._metrics.connected = True
            except PyMongoError as exc:
                if self._stopped:
                    return None
                self._on_failure(stream, exc)
            except DataError as exc:
                raise ConnectError(f"[{self.tag}] {exc}") from exc
        if self._signals is not None and not self._snapshots.active:
            self._signals.after_batch(records)  # in place
            if (blocking := self._signals.take_blocking()) is not None:
                self._snapshots.start_blocking(self.streams[0], blocking)
        return records or None

    def _streaming_delay(self) -> float:
        """Seconds left of ``streaming.delay.ms`` after the initial snapshot, counted from the first poll that would
        stream (the change stream opens then, from the snapshot's position); none when the task started without
        a snapshot."""
        delay_ms = self.config.honoured.streaming_delay_ms
        if not delay_ms or not self._delay_streaming:
            return 0.0
        if self._stream_from is None:
            self._stream_from = time.monotonic() + delay_ms / 1000
            log.info("[%s] Streaming starts in %d ms (streaming.delay.ms)", self.tag, delay_ms)
        return self._stream_from - time.monotonic()

    def metrics(self) -> list[Metric]:
        """Debezium's snapshot metrics (context ``snapshot``) and streaming metrics of this task."""
        snapshots: SnapshotRunner | None = getattr(self, "_snapshots", None)
        metrics = getattr(self, "_metrics", None)
        queue = metrics.queue_values() if metrics is not None else {}
        samples = ((snapshots.metrics(queue) if snapshots is not None else [])
                   + (metrics.samples() if metrics is not None else []))
        config: MongoDbConfig | None = getattr(self, "config", None)
        tags = custom_labels(config.honoured.metric_tags) if config is not None else {}
        if not tags:
            return samples
        return [dataclasses.replace(m, labels={**tags, **m.labels}) for m in samples]

    def _close_clients(self) -> None:
        for stream in getattr(self, "streams", []):
            stream.close()
            stream.client.close()

    def stop(self) -> None:
        """Called from another thread: closing the clients makes a blocked poll return."""
        self._stopped = True
        stopping = getattr(self, "_stopping", None)
        if stopping is not None:
            stopping.set()
        snapshots = getattr(self, "_snapshots", None)
        if snapshots is not None:
            snapshots.stop()
        signals = getattr(self, "_signals", None)
        if signals is not None:
            signals.close()
        self._close_clients()

