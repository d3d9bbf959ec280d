"""Acts on signals for the task: ``log``, ``execute-snapshot`` (incremental or blocking), ``stop-snapshot``,
``pause-snapshot`` and ``resume-snapshot``, from the signal collection and from the Kafka signal topic; drives
the incremental snapshot between change-stream batches.

The Kafka signal topic is read from where the connector left it: the offset of the last signal acted on rides on
the records' source offsets (``incremental_snapshot_signal_offset``, the key Debezium gives the same position), so
a restart - graceful or not - continues after it and a signal sent while the connector was stopped is acted on.
Without that key (a new connector, or offsets written by Debezium) the position committed for the consumer group
``signal.kafka.groupId`` is used, else ``auto.offset.reset`` (``earliest``), as Debezium's channel does; the
position is committed for the group when the task stops.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Mapping, MutableSequence
from typing import Any

from connect.api.records import SourceRecord
from connect.api.topics import TopicReader, TopicReaders
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.notifications import DISABLED, NotificationService
from connectors.mongodb.position import Position
from connectors.mongodb.snapshot.incremental import IncrementalSnapshot
from connectors.mongodb.snapshot.metrics import SnapshotMeter
from connectors.mongodb.streaming import signals
from connectors.mongodb.streaming.raw_events import plain
from connectors.mongodb.streaming.signals import Signal, SignalError, SnapshotRequest

log = logging.getLogger(__name__)

WATERMARK_TYPES = ("snapshot-window-open", "snapshot-window-close")


@dataclasses.dataclass(frozen=True)
class SignalSettings:
    """The signal keys of the connector config."""

    topic_prefix: str
    data_collection: str | None
    kafka_topic: str | None
    kafka_settings: Mapping[str, str]
    poll_interval_ms: int
    chunk_size: int
    source_channel: bool = True  # "source" in signal.enabled.channels: inserts into data_collection are signals
    kafka_poll_timeout_ms: int = 0  # signal.kafka.poll.timeout.ms
    delete_open_watermark: bool = False  # incremental.snapshot.watermarking.strategy=INSERT_DELETE


class SignalDispatcher:
    """Receives signals and runs the incremental snapshot (on the task's polling thread)."""

    def __init__(self, client: Any, settings: SignalSettings, events: ChangeEventConverter, tag: str,
                 collections: Callable[[], list[str]], readers: TopicReaders | None,
                 stored: Mapping[str, Any] | None, notifications: NotificationService = DISABLED,
                 meter: SnapshotMeter | None = None) -> None:
        """``meter``: the snapshot metrics the incremental snapshot reports to, as Debezium's does."""
        self._settings = settings
        self._name = tag  # "<connector>|task-<n>", the prefix of every log line
        self._collections = collections
        self.blocking: SnapshotRequest | None = None
        self.incremental: IncrementalSnapshot | None = None
        if settings.data_collection:
            self.incremental = IncrementalSnapshot(client, settings.data_collection, events, settings.chunk_size,
                                                   tag, settings.delete_open_watermark, notifications, meter)
            self.incremental.restore(stored)
        self._reader: TopicReader | None = None
        self._signal_offset = Position.from_offset(stored).signal_offset if stored else None
        if settings.kafka_topic and readers is not None:
            start = None if self._signal_offset is None else self._signal_offset + 1
            self._reader = readers.open(settings.kafka_topic, settings.kafka_settings, 0, start)
            log.info("[%s] Reading signals from Kafka topic %s %s", tag, settings.kafka_topic,
                     "from the consumer group's position" if start is None else f"from offset {start}")
        self._next_kafka_poll = 0.0

    def passive(self, db: str, coll: str) -> bool:
        """Whether an event of ``db.coll`` needs nothing of the dispatcher: it is not the signal collection's, no
        incremental snapshot runs (no chunk window to watch, no state to stamp on records) and no Kafka signal
        position rides on the offsets. Such an event may skip :meth:`on_event` and :meth:`stamp`."""
        return self.quiet() and not self.watches(db, coll)

    def quiet(self) -> bool:
        """Whether no incremental snapshot runs and no Kafka signal position rides on the offsets: then only the
        signal collection's events (:meth:`watches`) need the dispatcher."""
        if self._signal_offset is not None:
            return False
        incremental = self.incremental
        return incremental is None or (not incremental.running and incremental.idle)

    def watches(self, db: str, coll: str) -> bool:
        """Whether ``db.coll`` is the signal collection."""
        return f"{db}.{coll}" == self._settings.data_collection

    def on_event(self, event: Mapping[str, Any], offset: Callable[[], Mapping[str, Any]]) -> list[SourceRecord]:
        """Act on a signal-collection insert; feed the watermark algorithm; records it emits now."""
        ns = event.get("ns") or {}
        if self._settings.source_channel and self._settings.data_collection \
                and event.get("operationType") == "insert" \
                and f"{ns.get('db')}.{ns.get('coll')}" == self._settings.data_collection:
            doc = plain(event.get("fullDocument") or {})
            if doc.get("type") not in WATERMARK_TYPES:
                self._safely(lambda: signals.from_document(doc), "signal collection")
        if self.incremental is None:
            return []
        return self.incremental.on_event(event, offset)

    def after_batch(self, records: MutableSequence[SourceRecord]) -> MutableSequence[SourceRecord]:
        """Read Kafka signals and the next incremental chunk (the records were stamped as they were made)."""
        if self._reader is not None and time.monotonic() >= self._next_kafka_poll:
            self._next_kafka_poll = time.monotonic() + self._settings.poll_interval_ms / 1000
            for record in self._reader.poll(self._settings.kafka_poll_timeout_ms / 1000):
                self._safely(functools.partial(signals.from_kafka, record.key, record.value,
                                               self._settings.topic_prefix), "Kafka signal topic")
                self._signal_offset = record.offset
        incremental = self.incremental
        if incremental is not None and incremental.running and incremental.idle:
            incremental.next_chunk()
        if incremental is not None:
            records.extend(incremental.take_notifications())  # no offset: stamping leaves them alone
        return records

    def stamp(self, records: MutableSequence[SourceRecord], start: int = 0) -> None:
        """Put the signal position and the incremental snapshot's state as they are NOW on ``records[start:]``, in
        place. Called as records are made, so a committed offset never claims more than the records before it
        delivered (a record stamped with the end of a chunk whose ``r`` records come later could lose them); an
        incremental ``r`` record keeps the snapshot state of its own."""
        if start >= len(records):
            return
        signal = self._signal_offset
        incremental = self.incremental
        state = tuple(incremental.state().items()) if incremental is not None and incremental.running else ()
        if signal is None and not state:
            return
        for index in range(start, len(records)):
            offset = records[index].source_offset
            if offset is None:  # a notification: it carries no position
                continue
            position = Position.from_offset(offset)
            stamped = dataclasses.replace(
                position, signal_offset=signal if position.signal_offset is None else position.signal_offset,
                incremental=position.incremental or state)
            if stamped != position:
                records[index] = dataclasses.replace(records[index], source_offset=stamped.to_offset())

    def _safely(self, parse: Callable[[], Signal | None], channel: str) -> None:
        try:
            signal = parse()
            if signal is not None:
                self.handle(signal)
        except SignalError as exc:
            log.warning("[%s] Signal from the %s ignored: %s", self._name, channel, exc)

    def handle(self, signal: Signal) -> None:
        """Act on one signal (SignalError when it cannot be acted on)."""
        log.info("[%s] Signal %s (%s) received", self._name, signal.id, signal.type)
        if signal.type == signals.LOG:
            log.info("[%s] Signal %s: %s", self._name, signal.id, signal.data.get("message", ""))
        elif signal.type == signals.EXECUTE_SNAPSHOT:
            self._execute(signals.snapshot_request(signal))
        elif signal.type == signals.STOP_SNAPSHOT:
            request = signals.snapshot_request(signal)
            self._require_incremental().stop(request.matching(self._collections()) if request.patterns else None)
        elif signal.type == signals.PAUSE_SNAPSHOT:
            self._require_incremental().pause()
            log.info("[%s] Incremental snapshot paused", self._name)
        elif signal.type == signals.RESUME_SNAPSHOT:
            self._require_incremental().resume()
            log.info("[%s] Incremental snapshot resumed", self._name)
        else:
            raise SignalError(f"unknown signal type {signal.type!r} (one of {', '.join(signals.KNOWN)})")

    def _execute(self, request: SnapshotRequest) -> None:
        collections = request.matching(self._collections())
        if not collections:
            raise SignalError(f"no captured collection matches {[p.pattern for p in request.patterns]}")
        if request.kind == "blocking":
            self.blocking = dataclasses.replace(request, conditions={ns: request.condition(ns) for ns in collections})
            return
        incremental = self._require_incremental()
        incremental.add(collections, {ns: request.condition(ns) for ns in collections}, request.correlation_id)
        if incremental.idle:  # as Debezium: the first chunk (and the maximum key) is read when the signal arrives,
            incremental.next_chunk()  # so a pause signal right after it leaves the snapshot's end where it was

    def _require_incremental(self) -> IncrementalSnapshot:
        if self.incremental is None:
            raise SignalError("incremental snapshots need signal.data.collection (the watermarks are written there)")
        return self.incremental

    def take_blocking(self) -> SnapshotRequest | None:
        """The blocking snapshot requested, once."""
        request, self.blocking = self.blocking, None
        return request

    def close(self) -> None:
        """Release the Kafka reader; idempotent."""
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
