"""``MongoDbConnectorTask``: reads one change stream and turns its events into Debezium records.

The position is the change stream's resume token, stored as the source offset
(``{"server_id": <topic.prefix>}`` -> ``{"sec","ord","resume_token"}``). On start the task resumes
after the stored token; without one it starts at the current time.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

import pymongo
from bson import Timestamp, json_util
from pymongo import uri_parser
from pymongo.errors import PyMongoError

from connect.api.errors import ConnectError, RetriableError
from connect.api.metrics import Metric, debezium_metric
from connect.api.records import SourceRecord
from connect.api.task import SourceTask
from connectors.mongodb import snapshot
from connectors.mongodb.config import CaptureMode, CaptureScope, CollectionFilter, MongoDbConfig, SnapshotMode
from connectors.mongodb.events import ChangeEventConverter, decode_resume_token, encode_resume_token
from connectors.mongodb.fetcher import POSITION, ChangeStreamFetcher
from connectors.mongodb.heartbeat import Heartbeat
from connectors.mongodb.signal_dispatch import SignalDispatcher, SignalSettings
from connectors.mongodb.signals import SnapshotRequest
from connectors.mongodb.snapshot_parallel import ParallelSnapshot, SnapshotSettings
from connectors.mongodb.snapshot_progress import OFFSET_KEY, SnapshotProgress

log = logging.getLogger(__name__)

POLL_AWAIT_MS = 500


def _pipeline(config: MongoDbConfig) -> list[dict[str, Any]]:
    """No server-side stage: operation types and namespaces are filtered client-side, which is where
    Debezium's filters are authoritative too (full-match, case-insensitive Python regexes that a server-side
    ``$regexMatch`` would not always reproduce). A ``$match`` costs SecantusDB about 30 µs per event;
    user stages (``cursor.pipeline``) are the way to push filtering to the server."""
    return []


def _client_options(config: MongoDbConfig) -> dict[str, Any]:
    """Driver options from the ``mongodb.*`` keys; options in the connection string win, as in Debezium."""
    options: dict[str, Any] = {
        "connectTimeoutMS": config.connect_timeout_ms,
        "serverSelectionTimeoutMS": config.server_selection_timeout_ms,
        "socketTimeoutMS": config.socket_timeout_ms or None,
        "uuidRepresentation": "standard",
    }
    if config.user:
        options.update(username=config.user, password=config.password, authSource=config.auth_source)
    in_uri = {k.lower() for k in uri_parser.parse_uri(config.connection_string, validate=False)["options"]}
    return {k: v for k, v in options.items() if k.lower() not in in_uri}


class MongoDbConnectorTask(SourceTask):
    """Streams change events of one replica set (or of a sharded cluster through mongos)."""

    version = "3.6.1.Final"

    def start(self, props: Mapping[str, str]) -> None:
        """Connect, then open the change stream from the stored position."""
        self.config = MongoDbConfig.parse(props)
        self.name = props.get("name", "?")
        self.partition = {"server_id": self.config.topic_prefix}
        self.captured = CollectionFilter(self.config)
        self.heartbeat = Heartbeat(self.config.heartbeat_interval_ms, self.config.topic_prefix,
                                   self.config.heartbeat_topic_prefix, self.partition)
        self._last_event: dict[str, Any] | None = None
        self.events = ChangeEventConverter(
            topic_prefix=self.config.topic_prefix,
            tombstones_on_delete=self.config.tombstones_on_delete,
            extended_headers=self.config.extended_headers,
            task_id="0",
            run_id=str(uuid.uuid4()),
        )
        self.client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
            self.config.connection_string, **_client_options(self.config))
        try:
            self.client.admin.command("ping")
        except PyMongoError as exc:
            self.client.close()
            raise ConnectError(f"[{self.name}] Unable to connect to MongoDB: {exc}") from exc
        stored = self.context.offset_storage_reader.offset(self.partition)
        self._resume_token: dict[str, Any] | None = None
        self._start_at: Timestamp | None = None
        if stored and stored.get("resume_token"):
            self._resume_token = decode_resume_token(str(stored["resume_token"]))
        elif stored and int(stored.get("sec", -1)) > 0:
            self._start_at = Timestamp(int(stored["sec"]), max(int(stored.get("ord", 0)), 0))
        self._fetcher: ChangeStreamFetcher | None = None
        self._stopped = False
        self._stop_event = threading.Event()
        self._streaming = self.config.snapshot_mode is not SnapshotMode.INITIAL_ONLY
        self._snapshot: ParallelSnapshot | None = None
        self._last_snapshot: ParallelSnapshot | None = None
        self._snapshot_due: float | None = None
        self._signals = self._open_signals(stored)
        if self._needs_snapshot(stored):
            self._stored = stored
            self._snapshot_due = time.monotonic() + self.config.snapshot_delay_ms / 1000
            return
        log.info("[%s|task-0] Starting change stream %s", self.name,
                 "after the stored resume token" if self._resume_token else
                 f"at {self._start_at}" if self._start_at else "at the current time")
        self._open_fetcher()

    def _open_signals(self, stored: Mapping[str, Any] | None) -> SignalDispatcher | None:
        config = self.config
        if not config.signal_data_collection and not config.signal_kafka_topic:
            return None
        settings = SignalSettings(config.topic_prefix, config.signal_data_collection, config.signal_kafka_topic,
                                  config.signal_kafka_settings, config.signal_poll_interval_ms,
                                  config.incremental_chunk_size)

        def collections() -> list[str]:
            return [f"{db}.{coll}" for db, coll in snapshot.captured_collections(self.client, self.captured)]
        return SignalDispatcher(self.client, settings, self.events, self.name, collections,
                                getattr(self.context, "topic_readers", None), stored)

    def _start_blocking(self, request: SnapshotRequest) -> None:
        """Debezium's blocking snapshot: streaming pauses, the collections are read, streaming goes on."""
        self._close_fetcher()
        position = self._position() if self._resume_token is not None else {"sec": -1, "ord": -1}
        collections = sorted((ns.partition(".")[0], ns.partition(".")[2]) for ns in request.conditions)
        settings = SnapshotSettings(
            threads=self.config.snapshot_max_threads, chunk_size=self.config.snapshot_fetch_size or 2048,
            fetch_size=self.config.snapshot_fetch_size, batch=self.config.max_batch_size,
            filters={ns: dict(c) for ns, c in request.conditions.items() if c}, resumable=False)
        log.info("[%s|task-0] Blocking snapshot of %s; streaming pauses", self.name, ", ".join(request.conditions))
        self._snapshot = ParallelSnapshot(self.client, collections, self.events, position, SnapshotProgress(),
                                          settings, self.name)
        self._snapshot.start()

    def _needs_snapshot(self, stored: Mapping[str, Any] | None) -> bool:
        mode = self.config.snapshot_mode
        interrupted = bool(stored and stored.get("initsync"))
        if mode in (SnapshotMode.NO_DATA, SnapshotMode.NEVER):
            if interrupted:
                raise ConnectError(
                    "The connector previously stopped while taking a snapshot, but now the connector is configured "
                    "to never allow snapshots. Reconfigure the connector to use snapshots initially or when needed.")
            return False
        return mode is SnapshotMode.ALWAYS or not stored or interrupted

    def _begin_snapshot(self, stored: Mapping[str, Any] | None) -> None:
        """Resume an interrupted parallel snapshot from its stored position and progress, else start one."""
        progress, position = SnapshotProgress(), {}
        if stored and stored.get("initsync") and stored.get(OFFSET_KEY) and stored.get("resume_token"):
            try:
                progress = SnapshotProgress.decode(str(stored[OFFSET_KEY]))
                position = {"sec": stored.get("sec", -1), "ord": stored.get("ord", -1),
                            "resume_token": str(stored["resume_token"])}
                log.info("[%s|task-0] Resuming the interrupted snapshot", self.name)
            except ValueError as exc:
                log.warning("[%s|task-0] Snapshot starts over: %s", self.name, exc)
                progress = SnapshotProgress()
        if not progress.started:
            position = snapshot.start_position(self.client, self._watch_target())
        self._resume_token = decode_resume_token(position["resume_token"])
        self._start_at = None
        collections = snapshot.captured_collections(self.client, self.captured, self.config.snapshot_include)
        settings = SnapshotSettings(
            threads=self.config.snapshot_max_threads, chunk_size=self.config.snapshot_fetch_size or 2048,
            fetch_size=self.config.snapshot_fetch_size, batch=self.config.max_batch_size,
            filters={ns: json_util.loads(text) for ns, text in self.config.snapshot_filters.items()})
        self._snapshot = ParallelSnapshot(self.client, collections, self.events, position, progress, settings,
                                          self.name)
        self._snapshot.start()

    def _watch_target(self) -> Any:
        scope, target = self.config.capture_scope, self.config.capture_target or ""
        if scope is CaptureScope.DATABASE:
            return self.client[target]
        if scope is CaptureScope.COLLECTION:
            db, _, coll = target.partition(".")
            return self.client[db][coll]
        return self.client

    def _open_fetcher(self) -> None:
        self._fetcher = ChangeStreamFetcher.open(self._open_stream, self.config.max_batch_size,
                                                 f"{self.name}-task-0")

    def _open_stream(self) -> Any:
        mode = self.config.capture_mode
        options: dict[str, Any] = {"batch_size": self.config.max_batch_size,
                                   "max_await_time_ms": self.config.max_await_time_ms or POLL_AWAIT_MS}
        if mode in (CaptureMode.CHANGE_STREAMS_UPDATE_FULL, CaptureMode.CHANGE_STREAMS_UPDATE_FULL_WITH_PRE_IMAGE):
            options["full_document"] = "updateLookup"
        if mode in (CaptureMode.CHANGE_STREAMS_WITH_PRE_IMAGE, CaptureMode.CHANGE_STREAMS_UPDATE_FULL_WITH_PRE_IMAGE):
            options["full_document_before_change"] = "whenAvailable"
        if self._resume_token is not None:
            options["resume_after"] = self._resume_token
        elif self._start_at is not None:
            options["start_at_operation_time"] = self._start_at
        return self._watch_target().watch(_pipeline(self.config), **options)

    def poll(self) -> list[SourceRecord] | None:
        """Up to ``max.batch.size`` events' records; returns after about half a second when idle."""
        if self._stopped:
            return None
        if self._snapshot_due is not None:
            return self._start_snapshot_when_due()
        if self._snapshot is not None:
            return self._poll_snapshot()
        if not self._streaming:
            return None
        if self._fetcher is None:
            try:
                self._open_fetcher()
            except PyMongoError as exc:
                raise RetriableError(f"[{self.name}] Cannot reopen the change stream: {exc}") from exc
        fetcher = self._fetcher
        if fetcher is None:
            return None
        try:
            events = fetcher.take(self.config.max_batch_size, POLL_AWAIT_MS / 1000)
        except PyMongoError as exc:
            self._close_fetcher()
            raise RetriableError(f"[{self.name}] Change stream failed, will resume: {exc}") from exc
        records: list[SourceRecord] = []
        for event in events:
            if POSITION in event:
                self._resume_token, self._last_event = event[POSITION], None
                continue
            self._resume_token, self._last_event = event["_id"], event
            ns = event.get("ns") or {}
            if self.captured(ns.get("db", ""), ns.get("coll", "")) or self._signal_namespace(ns):
                records.extend(self.events.to_records(event))
            if self._signals is not None:
                records.extend(self._signals.on_event(event, functools.partial(self.events.offset, event)))
        if self._signals is not None:
            records = self._signals.after_batch(records)
            if (blocking := self._signals.take_blocking()) is not None:
                self._start_blocking(blocking)
        if self.heartbeat.due() and self._resume_token is not None:
            records.append(self.heartbeat.record(self._position()))
        return records or None

    def _signal_namespace(self, ns: Mapping[str, Any]) -> bool:
        """The signal collection is always captured (its inserts are signals and watermarks)."""
        wanted = self.config.signal_data_collection
        return bool(wanted) and f"{ns.get('db')}.{ns.get('coll')}" == wanted

    def _position(self) -> dict[str, Any]:
        """The offset of the last event taken, or of the idle stream's resume token (sec/ord -1, as Debezium)."""
        if self._last_event is not None:
            return self.events.offset(self._last_event)
        assert self._resume_token is not None
        return {"sec": -1, "ord": -1, "resume_token": encode_resume_token(self._resume_token)}

    def _start_snapshot_when_due(self) -> list[SourceRecord] | None:
        assert self._snapshot_due is not None
        wait = self._snapshot_due - time.monotonic()
        if wait > 0:
            self._stop_event.wait(min(wait, POLL_AWAIT_MS / 1000))
            return None
        self._snapshot_due = None
        try:
            self._begin_snapshot(self._stored)
        except PyMongoError as exc:
            raise ConnectError(f"[{self.name}] Snapshot failed: {exc}") from exc
        return None

    def _poll_snapshot(self) -> list[SourceRecord] | None:
        running = self._snapshot
        assert running is not None
        try:
            records = running.poll(POLL_AWAIT_MS / 1000)
        except Exception as exc:
            if self._stopped:
                return None
            raise ConnectError(f"[{self.name}] Snapshot failed: {exc}") from exc
        if records is None:
            running.stop()
            self._snapshot, self._last_snapshot = None, running
            log.info("[%s|task-0] Snapshot completed in %.1f s%s", self.name,
                     (running.finished or time.monotonic()) - running.started,
                     "" if self._streaming else "; not streaming")
        return records or None

    def metrics(self) -> list[Metric]:
        """Debezium's snapshot metrics (context ``snapshot``)."""
        run = self._snapshot or self._last_snapshot
        if run is None:
            return []
        end = run.finished or time.monotonic()
        values = {"TotalTableCount": run.total_collections, "RemainingTableCount": run.remaining_collections,
                  "RowsScanned": run.rows_scanned, "SnapshotRunning": int(run.finished is None),
                  "SnapshotCompleted": int(run.finished is not None), "SnapshotAborted": 0,
                  "SnapshotDurationInSeconds": int(end - run.started)}
        return [debezium_metric(key, value, plugin="mongodb", server=self.config.topic_prefix, context="snapshot",
                                task=0) for key, value in values.items()]

    def _close_fetcher(self) -> None:
        fetcher, self._fetcher = self._fetcher, None
        if fetcher is not None:
            fetcher.stop()

    def stop(self) -> None:
        """Called from another thread: closing the client makes a blocked poll return."""
        self._stopped = True
        stop_event = getattr(self, "_stop_event", None)
        if stop_event is not None:
            stop_event.set()
        running = getattr(self, "_snapshot", None)
        if running is not None:
            running.stop(timeout=0)
        signals = getattr(self, "_signals", None)
        if signals is not None:
            signals.close()
        if getattr(self, "_fetcher", None) is not None:
            self._close_fetcher()
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
