"""One change stream turned into records: the stream options of ``capture.mode``/``capture.scope``, the
pipeline, split-event reassembly, collection and operation filters, field excludes/renames, transaction metadata,
heartbeats and the streaming metrics. A task runs one :class:`StreamCapture` (Debezium 3.x's single stream) or
one per replica set (``mongodb.connection.mode=replica_set``); each reads ahead on its own fetcher thread.

The position is the change stream's resume token: after the last event taken, or the idle cursor's token
(``sec``/``ord`` -1, as Debezium), so offsets advance on filtered or idle streams.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from bson import Timestamp
from pymongo.errors import PyMongoError

from connect.api.errors import DataError
from connect.api.records import PreparedRecords, SourceRecord
from connectors.mongodb import _extjson
from connectors.mongodb.capture_config import FullUpdateType
from connectors.mongodb.config import CaptureMode, CaptureScope, CollectionFilter, MongoDbConfig
from connectors.mongodb.connection import Fault, classify
from connectors.mongodb.event_converter import OPERATIONS, ChangeEventConverter
from connectors.mongodb.fields import FieldSelector
from connectors.mongodb.position import Position, decode_resume_token, session_txn
from connectors.mongodb.streaming.fetcher import POSITION, ChangeStreamFetcher
from connectors.mongodb.streaming.heartbeat import Heartbeat
from connectors.mongodb.streaming.metrics import StreamingMetrics
from connectors.mongodb.streaming.pipeline import FragmentMerger, build_pipeline
from connectors.mongodb.streaming.raw_events import Decoder, Scanned, watch_raw
from connectors.mongodb.streaming.signal_dispatch import SignalDispatcher
from connectors.mongodb.streaming.transactions import TransactionMonitor, transaction_id

log = logging.getLogger(__name__)

POLL_AWAIT_MS = 500
# _extjson.StreamRows: how a run ended (all taken; no plan for the next event; the next takes the Python path) and
# what a plan makes of its events (filtered out, the Python path, rows)
ROWS_DONE, ROWS_NO_PLAN, ROWS_PYTHON_PATH = 0, 1, 2
ROWS_SKIP, ROWS_PYTHON, ROWS_MADE = 0, 1, 2


def watch_target(client: Any, config: MongoDbConfig) -> Any:
    """What ``capture.scope``/``capture.target`` watch: the deployment, a database or a collection."""
    scope, target = config.capture_scope, config.capture_target or ""
    if scope is CaptureScope.DATABASE:
        return client[target]
    if scope is CaptureScope.COLLECTION:
        db, _, coll = target.partition(".")
        return client[db][coll]
    return client


def stream_options(config: MongoDbConfig) -> dict[str, Any]:
    """``watch()`` options of ``capture.mode`` and the cursor keys (without the start position)."""
    mode = config.capture_mode
    options: dict[str, Any] = {"batch_size": config.max_batch_size,
                               "max_await_time_ms": config.max_await_time_ms or POLL_AWAIT_MS}
    if mode in (CaptureMode.CHANGE_STREAMS_UPDATE_FULL, CaptureMode.CHANGE_STREAMS_UPDATE_FULL_WITH_PRE_IMAGE):
        post_image = config.capture.full_update_type is FullUpdateType.POST_IMAGE
        options["full_document"] = "whenAvailable" if post_image else "updateLookup"
    if mode in (CaptureMode.CHANGE_STREAMS_WITH_PRE_IMAGE, CaptureMode.CHANGE_STREAMS_UPDATE_FULL_WITH_PRE_IMAGE):
        options["full_document_before_change"] = "whenAvailable"
    return options


class StreamCapture:
    """One change stream of one client, from a stored position."""

    def __init__(self, *, config: MongoDbConfig, client: Any, events: ChangeEventConverter,
                 partition: Mapping[str, Any], metrics: StreamingMetrics, label: str) -> None:
        self.config = config
        self.client = client
        self.events = events
        self.partition = dict(partition)
        self.metrics = metrics
        self.label = label
        self.captured = CollectionFilter(config)
        self.fields = FieldSelector(config.capture.field_excludes, config.capture.field_renames)
        self.skipped = {op for op in config.capture.skipped_operations if op in ("c", "u", "d")}
        naming = config.topic_naming
        self.transactions = (TransactionMonitor(naming.transaction_topic, self.partition)
                             if config.capture.transaction_metadata else None)
        self.heartbeat = Heartbeat(config.heartbeat_interval_ms, config.topic_prefix, naming.heartbeat_topic,
                                   self.partition)
        self._resume_token: dict[str, Any] | None = None
        # the position after the last event when it was a scanned one (what _last_event is for a decoded one):
        # (sec, ord, resume token in the offset's form); the token's document is decoded only if asked for
        self._scanned: tuple[int, int, str] | None = None
        self._token_text: str | None = None  # the resume token, until decoded
        self._decoder: Decoder | None = None
        self._rows: _extjson.StreamRows | None = None  # the plain data events' rows, a run at a time (scanning)
        self.start_at: Timestamp | None = None
        self._last_event: dict[str, Any] | None = None
        self._last_offset: dict[str, Any] | None = None
        self._merger = FragmentMerger()
        self._ops: list[str] = []  # the operations and source.ts_ms of the events emitted by this take
        self._stamps: list[int] = []
        # and, with Debezium's advanced metrics (internal.advanced.metrics.enable), their collections
        self._namespaces: list[str] | None = [] if config.honoured.advanced_metrics else None
        self._fetcher: ChangeStreamFetcher | None = None
        self.signals: SignalDispatcher | None = None  # set by the task on its only stream, with:
        self.signal_collection: str | None = None  # always captured: its inserts are signals and watermarks

    # -- position ----------------------------------------------------------------------------------------------
    @property
    def resume_token(self) -> dict[str, Any] | None:
        """The change stream's resume token after the last event taken (or the idle cursor's); None before any."""
        if self._token_text is not None:
            self._resume_token, self._token_text = decode_resume_token(self._token_text), None
        return self._resume_token

    @resume_token.setter
    def resume_token(self, token: dict[str, Any] | None) -> None:
        self._resume_token, self._token_text = token, None

    def restore(self, stored: Mapping[str, Any] | None) -> None:
        """Start from a stored offset (token first, then its time), or ``capture.start.op.time``."""
        position = Position.from_offset(stored) if stored else None
        if position is not None and position.resume_token:
            self.resume_token = position.resume_token_document()
        elif position is not None and position.sec is not None and position.sec > 0:
            self.start_at = Timestamp(position.sec, max(position.ord or 0, 0))
        elif self.config.capture.start_op_time is not None:
            value = self.config.capture.start_op_time
            self.start_at = Timestamp(value >> 32, value & 0xFFFFFFFF)

    def position(self) -> dict[str, Any] | None:
        """The offset of the last event taken, or of the idle stream's token; None before any."""
        if self._last_event is not None:
            offset = Position.from_event(self._last_event).to_offset()
            return self.transactions.offset(offset) if self.transactions is not None else offset
        if self._scanned is not None:  # only without transaction metadata: Position.from_event's offset
            sec, order, token = self._scanned
            return {"sec": sec, "ord": order, "resume_token": token}
        if self.resume_token is None:
            return None
        return Position.at_token(self.resume_token).to_offset()

    def describe_start(self) -> str:
        """Where the stream starts, for the log."""
        if self.resume_token is not None:
            return "after the stored resume token"
        return f"at {self.start_at}" if self.start_at is not None else "at the current time"

    def position_available(self) -> bool:
        """Whether the server still holds the stored resume token (Debezium checks it at task start). Any other
        failure counts as available: the stream's own retries deal with it."""
        if self.resume_token is None:
            return True
        try:
            with watch_target(self.client, self.config).watch(resume_after=self.resume_token,
                                                              max_await_time_ms=1) as stream:
                stream.try_next()  # a server may report the lost position at the first batch
                return True
        except PyMongoError as exc:
            return classify(exc) is not Fault.POSITION_LOST

    def start_checked(self) -> bool:
        """:meth:`start` from the stored resume token, standing for :meth:`position_available` when streaming
        follows at once: False (the stream stays closed) when the server no longer holds the position; any other
        failure leaves the stream closed for the task's retries (True). A server that reports the lost position
        only with a later batch fails the stream's reads instead, which the task handles alike."""
        try:
            self.start()
        except PyMongoError as exc:
            return classify(exc) is not Fault.POSITION_LOST
        return True

    # -- stream ------------------------------------------------------------------------------------------------
    @property
    def open(self) -> bool:
        """Whether the stream is being read."""
        return self._fetcher is not None

    def start(self) -> None:
        """Open the change stream on the calling thread (errors surface here), then read ahead."""
        self._merger = FragmentMerger()
        self._fetcher = ChangeStreamFetcher.open(self._open_stream, self.config.max_queue_size, self.label,
                                                 self.config.honoured.max_queue_bytes)
        self.metrics.connected = True

    def _open_stream(self) -> tuple[Any, Decoder]:
        """The change stream, read as raw BSON (document images stay bytes), and the decoder of its events."""
        options = stream_options(self.config)
        if self.resume_token is not None:
            options["resume_after"] = self.resume_token
        elif self.start_at is not None:
            options["start_at_operation_time"] = self.start_at
        stream, decoder = watch_raw(watch_target(self.client, self.config), build_pipeline(self.config.capture),
                                    **options)
        # plain data events skip decoding where nothing but their record needs them (no transaction metadata or
        # field excludes/renames, values written ahead for a JsonConverter; signals idle: checked per event)
        self._rows = None
        if self.transactions is None and not self.fields.active and self.events.writes_payloads:
            decoder.scan(self.events.plus_exponent)
            self._rows = _extjson.StreamRows(self.events.plus_exponent)
        self._decoder = decoder
        return stream, decoder

    def queued(self) -> int:
        """Events read ahead and not taken yet."""
        return self._fetcher.queued if self._fetcher is not None else 0

    def queued_bytes(self) -> int:
        """BSON bytes read ahead and not taken yet (0 without ``max.queue.size.in.bytes``)."""
        return self._fetcher.queued_bytes if self._fetcher is not None else 0

    def close(self) -> None:
        """Stop reading; idempotent."""
        fetcher, self._fetcher = self._fetcher, None
        if fetcher is not None:
            fetcher.stop()

    def take(self, max_events: int, timeout: float) -> PreparedRecords:
        """The records of up to ``max_events`` events (raises the stream's error after the events before it); a
        scanned event's records prepared (``ChangeEventConverter.prepare_scanned``)."""
        assert self._fetcher is not None
        records = PreparedRecords()
        asked = time.monotonic()
        events = self._fetcher.take(max_events, timeout)
        took_ms = int((time.monotonic() - asked) * 1000)
        if not events:
            self.metrics.poll(True, took_ms)
        elif type(events[-1]) is not dict or POSITION not in events[-1]:
            self.metrics.poll(False, took_ms)
        try:
            index, count = 0, len(events)
            while index < count:
                event = events[index]
                if isinstance(event, bytes):
                    index = self._take_plain(events, index, records)
                    continue
                index += 1
                if isinstance(event, tuple):
                    self._take_scanned(event, records)
                    continue
                if POSITION in event:
                    if not self._merger.pending:
                        self.resume_token, self._last_event, self._scanned = event[POSITION], None, None
                    self.metrics.poll(True, took_ms)
                    continue
                whole = self._merger.add(event)
                if whole is not None:
                    self._emit(whole, records)
        finally:
            if self._ops:
                namespaces = self._namespaces
                self.metrics.events(self._ops, self._stamps, namespaces)
                self._ops, self._stamps = [], []
                if namespaces is not None:
                    self._namespaces = []
        position = self.position() if self.heartbeat.due() else None
        if position is not None:
            records.append(self.heartbeat.record(position))
            if self.signals is not None:
                self.signals.stamp(records, len(records) - 1)
        return records

    def _take_plain(self, events: list[Any], index: int, records: PreparedRecords) -> int:
        """The records of the plain data events (their bytes) of ``events`` from ``index`` on, made by
        ``_extjson.StreamRows`` a run at a time as :meth:`_take_scanned` makes them one by one; returns the index
        of the first event not taken. An event that needs more than its row, and every event while a split event
        is pending or the signals need the events, takes :meth:`_take_scanned`."""
        rows, signals = self._rows, self.signals
        if rows is None or self._merger.pending or (signals is not None and not signals.quiet()):
            self._take_raw(events[index], records)
            return index + 1
        context = self.events.rows_context(self._decoder.decode)  # type: ignore[union-attr]
        while True:
            index, status, filtered, last = rows.run(events, index, records.rows, self._ops, self._stamps,
                                                     self._namespaces, context)
            if last is not None:
                self._last_event, self._scanned, self._token_text = None, last, last[2]
            if filtered:
                self.metrics.count("NumberOfEventsFiltered", filtered)
            if status == ROWS_DONE:
                return index
            scanned = _extjson.scan_event(events[index], self.events.plus_exponent)
            if status == ROWS_NO_PLAN and scanned is not None:
                self._plan(rows, scanned)
                continue
            self._take_raw(events[index], records, scanned)
            return index + 1

    def _plan(self, rows: _extjson.StreamRows, scanned: Scanned) -> None:
        """The plan of the events like ``scanned`` (collection, operation, update shape): filtered out, the Python
        path (the signal collection; an envelope not written ahead), or rows."""
        op, db, coll, update = scanned[0], scanned[1], scanned[2], scanned[7] is not None
        if self.signals is not None and self.signals.watches(db, coll):
            rows.plan(db, coll, op, update, ROWS_PYTHON)
        elif op in self.skipped or not self.captured(db, coll):
            rows.plan(db, coll, op, update, ROWS_SKIP)
        elif (plan := self.events.stream_plan(db, coll, op, update)) is None:
            rows.plan(db, coll, op, update, ROWS_PYTHON)
        else:
            rows.plan(db, coll, op, update, ROWS_MADE, *plan)

    def _take_raw(self, raw: bytes, records: PreparedRecords, scanned: Scanned | None = None) -> None:
        """:meth:`_take_scanned` of the plain data event ``raw``."""
        scanned = scanned or _extjson.scan_event(raw, self.events.plus_exponent)
        if scanned is None:  # the fetcher hands out only events the scan reads
            raise DataError("A change event could not be read again")
        self._take_scanned(scanned, records)

    def _take_scanned(self, scanned: Scanned, records: PreparedRecords) -> None:
        """:meth:`_emit` of a scanned data event (the decoder scans only where transaction metadata and field
        selection are off): its records made from the scanned fields, else, when the signals need the event,
        from the decoded event."""
        assert self._decoder is not None
        op, db, coll, token = scanned[0], scanned[1], scanned[2], scanned[3]
        signals = self.signals
        if self._merger.pending or (signals is not None and not signals.passive(db, coll)):
            whole = self._merger.add(self._decoder.decode(scanned[-1]))  # inside a split event, or a signal's
            if whole is not None:
                self._emit(whole, records)
            return
        self._last_event, self._scanned, self._token_text = None, (scanned[8], scanned[9], token), token
        if op in self.skipped or not self.captured(db, coll):  # never the signal collection (not passive)
            self.metrics.count("NumberOfEventsFiltered")
            return
        try:
            prepared = self.events.prepare_scanned(scanned, self._decoder.decode, records)
        except Exception:  # the decoding path converts it again and deals with the failure
            log.debug("[%s] A scanned event is converted again from its decoded form", self.label, exc_info=True)
            prepared = False
        if not prepared:
            self._record(self._decoder.decode(scanned[-1]), records)
            return
        self._counted(op, scanned[10] or scanned[8] * 1000, db, coll)

    def _emit(self, event: dict[str, Any], records: PreparedRecords) -> None:
        start = len(records)
        self._record(event, records)
        if self.signals is not None:
            self.signals.stamp(records, start)  # the state before this event's signal or watermark acts
            start = len(records)
            records.extend(self.signals.on_event(event, lambda: Position.from_event(event).to_offset()))
            self.signals.stamp(records, start)

    def _record(self, event: dict[str, Any], records: PreparedRecords) -> None:
        previous = self.position() if self.transactions is not None else None
        self.resume_token, self._last_event, self._scanned = event["_id"], event, None
        op = OPERATIONS.get(event.get("operationType", ""))
        if op is None:
            return
        ns = event.get("ns") or {}
        db, coll = ns.get("db", ""), ns.get("coll", "")
        if op in self.skipped or not (self.captured(db, coll) or f"{db}.{coll}" == self.signal_collection):
            self.metrics.count("NumberOfEventsFiltered")
            return
        selected = self.fields.for_collection(db, coll) if self.fields.active else None
        if selected is not None:
            event = selected.event(event)
        ts_ms = self.events.source_ts_ms(event)
        if self.transactions is None:
            converted = self._convert(event)
        else:
            session = session_txn(event) if "lsid" in event or "txnNumber" in event else None
            txn = transaction_id(session[0], session[1]) if session else None
            before, block = self.transactions.on_event(txn, f"{db}.{coll}", ts_ms, previous)
            records.extend(before)
            converted = self._convert(event, block, self.transactions.offset)
            self.metrics.counts["NumberOfCommittedTransactions"] = self.transactions.committed
        if converted is None:
            self.metrics.count("NumberOfErroneousEvents")
            return
        self._emitted(converted, records, op, ts_ms, db, coll)

    def _emitted(self, converted: list[SourceRecord], records: PreparedRecords, op: str, ts_ms: int, db: str,
                 coll: str) -> None:
        """An event's records added and the event :meth:`_counted`."""
        records.extend(converted)
        self._counted(op, ts_ms, db, coll)

    def _counted(self, op: str, ts_ms: int, db: str, coll: str) -> None:
        """An emitted event's operation and ``source.ts_ms`` (and collection) kept for the metrics, counted once
        per take (StreamingMetrics.events)."""
        self._ops.append(op)
        self._stamps.append(ts_ms)
        if self._namespaces is not None:
            self._namespaces.append(f"{db}.{coll}")

    def _convert(self, event: dict[str, Any], *block: Any) -> list[SourceRecord] | None:
        """The event's records; None when it cannot be converted and ``event.processing.failure.handling.mode``
        says to skip it (``fail``, the default, raises)."""
        try:
            return self.events.to_records(event, *block)
        except Exception as exc:
            mode = self.config.honoured.failure_mode
            where = Position.from_event(event).to_offset()
            if mode == "fail":
                raise DataError(f"Error while processing the change event at {where}: {exc} (the event can be "
                                f"skipped with event.processing.failure.handling.mode=warn or skip)") from exc
            if mode == "warn":
                log.warning("[%s] Skipped a change event that cannot be processed, at %s: %s", self.label, where,
                            exc, exc_info=exc)
            else:
                log.debug("[%s] Skipped a change event that cannot be processed, at %s: %s", self.label, where, exc)
            return None


def rs_label(stream: StreamCapture) -> str:
    """`` of replica set <rs>`` for a per-replica-set stream, else nothing (for the log)."""
    rs = stream.partition.get("rs")
    return f" of replica set {rs}" if rs else ""
