"""The source-task loop (Connect's ``WorkerSourceTask``): poll, convert, send, acknowledge and commit
offsets, on one thread per task."""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from connect.api.errors import ConnectError, RetriableError
from connect.api.metrics import Metric
from connect.api.records import PreparedRecords, PreparedRow, SourceRecord
from connect.api.task import OffsetStorageReader, SourceTask, TransactionContext
from connect.api.topics import TopicReaders
from connect.runtime import log_setup
from connect.runtime.error_handling import FAILED, ErrorHandlingConfig, RetryWithToleranceOperator
from connect.runtime.offsets import OffsetReader, OffsetWriter, SubmittedRecord, SubmittedRecords
from connect.runtime.record_conversion import Converters, RecordConversion
from connect.runtime.row_sender import RowSender, written_envelopes
from connect.runtime.task_contracts import DirectSending, SourceProducer, TaskStatusListener
from connect.runtime.task_metrics import TaskMetrics
from connect.runtime.topic_readers import TOPIC_READERS
from connect.runtime.transformation_chain import TransformationChain
from connect.storage.base import OffsetStore
from connect.storage.config_state import ConnectorTaskId

__all__ = ["Converters", "WorkerSourceTask"]

log = logging.getLogger(__name__)

RETRY_BACKOFF_S = 0.1


class _InFlight(SubmittedRecord):
    """A record handed to the producer: tracked for its offset, and its own delivery callback (``done``, one
    direct call per record from the producer's acknowledgement thread)."""

    __slots__ = ("record", "task")
    # let go once delivered: it stays tracked (its offset) until the next commit; a prepared row
    # (WorkerSourceTask._send_rows) becomes its SourceRecord only if its delivery fails
    record: SourceRecord | PreparedRow | None
    task: WorkerSourceTask

    def done(self, error: Any, _message: Any = None, /) -> None:
        """Acknowledged (``error`` None): marked, counted, and committed to the task if it asks; else failed."""
        record, self.record = self.record, None
        assert record is not None, "a record's delivery ends once"
        if error is None:
            self.acked = True
            task = self.task
            task.task_metrics.written += 1
            if task._commits_records:
                assert isinstance(record, SourceRecord), "a task that commits records is sent no rows"
                task._commit_record(record)
            return
        if isinstance(record, tuple):
            record = record[8](record)
        self.task._failed_delivery(self, record, error)


class _Delegated(_InFlight):
    """The same for a task whose ``_on_done`` is its own (the exactly-once task's): every result goes there."""

    __slots__ = ()

    def done(self, error: Any, _message: Any = None, /) -> None:
        """``task._on_done`` with None or the failure as an exception."""
        record, self.record = self.record, None
        assert isinstance(record, SourceRecord), "a record's delivery ends once; this task is sent no rows"
        if error is None:
            self.task._on_done(self, record, None)
        else:
            self.task._failed_delivery(self, record, error)


@dataclass(frozen=True, slots=True)
class _Context:
    connector_name: str
    task_id: int
    offset_storage_reader: OffsetStorageReader
    topic_readers: TopicReaders | None = TOPIC_READERS  # Kafka signal channels (connect/runtime/topic_readers.py)
    transaction_context: TransactionContext | None = None  # transaction.boundary=connector (exactly_once.py)
    values_go_to_json_converter: bool = False


class WorkerSourceTask:
    """Runs one :class:`SourceTask` until stopped; at-least-once delivery of its records."""

    def __init__(self, task_id: ConnectorTaskId, task: SourceTask, props: Mapping[str, str],
                 converters: Converters, producer: SourceProducer, offset_store: OffsetStore,
                 listener: TaskStatusListener, *, flush_interval_ms: int, flush_timeout_ms: int,
                 chain: TransformationChain | None = None, errors: ErrorHandlingConfig | None = None,
                 close_store: Callable[[], None] | None = None) -> None:
        """``close_store`` releases an offset store of the task's own (a connector's ``offsets.storage.topic``)."""
        self.id = task_id
        self._close_store = close_store
        self._task = task
        # the default commit_record does nothing: not called per record (acknowledgement thread) unless overridden
        self._commits_records = type(task).commit_record is not SourceTask.commit_record
        self._props = dict(props)
        self._conv = converters
        self._producer = producer
        self._listener = listener
        # records in flight are their own delivery callbacks: the common acknowledgement inlined unless a subclass
        # has its own _on_done
        in_flight = _InFlight if type(self)._on_done is WorkerSourceTask._on_done else _Delegated
        self._submitted = SubmittedRecords(task_id.connector, in_flight)
        self._writer = OffsetWriter(offset_store)
        self._reader = OffsetReader(task_id.connector, offset_store)
        self._chain = chain or TransformationChain()
        self._flush_interval = flush_interval_ms / 1000
        self._flush_timeout = flush_timeout_ms / 1000
        self._stop = threading.Event()
        self._errors = RetryWithToleranceOperator(str(task_id), errors or ErrorHandlingConfig(), self._stop)
        self._conversion = RecordConversion(converters, self._errors)
        self._convert = self._conversion.convert
        self._done = threading.Event()
        self._paused = threading.Event()
        self._state_lock = threading.Lock()
        self._started = False
        self._topics: set[str] = set()
        self._send_error: BaseException | None = None
        self._cancelled = False
        self._failed = False
        self.task_metrics = TaskMetrics(task_id.connector, task_id.task)
        self._rows = self._row_sender()
        self._thread = threading.Thread(target=self.run, name=f"task-{task_id}", daemon=True)

    def _row_sender(self) -> RowSender | None:
        """The sender of prepared rows as written (:meth:`_send_rows`), where nothing can tell the difference: no
        transformation, converters that wrap written payloads (JsonConverter), no ``commit_record`` of the task's
        own and none of the exactly-once task's per-record hooks."""
        envelopes = written_envelopes(self._conv)
        hooks = ("_before_send", "_record_dispatched", "_batch_dispatched", "_on_done")
        plain = all(getattr(type(self), hook) is getattr(WorkerSourceTask, hook) for hook in hooks)
        if envelopes is None or self._chain or self._commits_records or not plain:
            return None
        # the producer's own call for the rows, where it has one
        direct = self._producer.direct_send() if isinstance(self._producer, DirectSending) else None
        return RowSender(envelopes, self._submitted, direct, self._conversion, self, self._topics,
                         lambda topic: self._listener.on_topic(self.id, topic), self._produce, self._send)

    def start(self) -> None:
        """Start the task thread."""
        self._thread.start()

    def stop(self) -> None:
        """Ask the task to stop; never blocks."""
        self._stop.set()
        try:
            self._task.stop()
        except Exception:
            log.exception("%s Task threw an exception while being stopped", self.id)

    def pause(self) -> None:
        """Stop polling until :meth:`resume` (the task keeps its resources and offsets)."""
        with self._state_lock:
            if not self._paused.is_set():
                self._paused.set()
                if self._started:
                    self._report(self._listener.on_pause)

    def resume(self) -> None:
        """Poll again after :meth:`pause`."""
        with self._state_lock:
            if self._paused.is_set():
                self._paused.clear()
                if self._started:
                    self._report(self._listener.on_resume)

    @property
    def paused(self) -> bool:
        """True while paused."""
        return self._paused.is_set()

    def await_stop(self, timeout: float) -> bool:
        """Wait for the task thread to end; True when it did."""
        return self._done.wait(timeout)

    def cancel(self) -> None:
        """Abandon a task that did not stop in time: it will not report its status any more, and its producer is
        closed at once (as Java's ``WorkerSourceTask.cancel``: ``close(Duration.ZERO)`` on a thread of its own).
        What the producer still holds fails instead of reaching Kafka later, after a new instance of the task
        started again from the stored offsets: a broker killed while the task was cut off from it had left records
        queued there (seq 45..241 after 472 in the chaos cell ``kafka_sigkill_restart``)."""
        self._cancelled = True
        log.error("%s Task did not stop in time and was abandoned", self.id)
        threading.Thread(target=self._close_producer_now, name=f"{self.id}-cancel", daemon=True).start()

    def _close_producer_now(self) -> None:
        try:
            self._producer.close(timeout=0)
        except Exception:
            log.exception("%s Closing the abandoned task's producer failed", self.id)

    @property
    def running(self) -> bool:
        """True while the task thread is alive."""
        return not self._done.is_set()

    def metrics(self) -> list[Metric]:
        """Connect's task metrics (:mod:`connect.runtime.task_metrics`) plus the task's own."""
        own = self.task_metrics.samples(self._errors.metrics()) + self._producer.metrics()
        try:
            return own + list(self._task.metrics())
        except Exception:
            log.exception("%s Task metrics failed", self.id)
            return own

    def run(self) -> None:
        """Thread body: start, loop, final commit, stop."""
        log_setup.set_context(self.id.connector, self.id.task)  # Connect's [name|task-0] on every line
        try:
            self._prepare_to_initialize()
            self._task.initialize(self._context())
            self._task.start(self._props)
            log.info("%s Source task finished initialization and start", self.id)
            with self._state_lock:  # a pause that arrived during start() wins over RUNNING
                self._report(self._listener.on_pause if self._paused.is_set() else self._listener.on_startup)
                self._started = True
            self._loop()
        except Exception as exc:
            self._failed = True
            log.error("%s Task threw an uncaught and unrecoverable exception", self.id, exc_info=exc)
            trace = "".join(traceback.format_exception(exc))
            self._report(lambda tid: self._listener.on_failure(tid, trace))
        else:
            self._report(self._listener.on_shutdown)
        finally:
            self._finish()

    # --- hooks of the exactly-once task (connect/runtime/exactly_once.py) ----------------------------
    def _prepare_to_initialize(self) -> None:
        """Before the task is initialized (the exactly-once task fences and initializes its producer here)."""

    def _context(self) -> _Context:
        return _Context(self.id.connector, self.id.task, self._reader,
                        values_go_to_json_converter=self._values_go_to_json_converter())

    def _values_go_to_json_converter(self) -> bool:
        """No transformation, and a value converter that sends a LazyStruct's written payload (JsonConverter)."""
        return not self._chain and bool(getattr(self._conv.value, "sends_written_payloads", False))

    def _before_send(self, record: SourceRecord, topic: str) -> None:
        """Before ``record`` is handed to the producer."""

    def _record_dispatched(self, record: SourceRecord) -> None:
        """``record`` was handed to the producer."""

    def _batch_dispatched(self) -> None:
        """Every record of the last poll was handed to the producer (or dropped)."""

    def _on_paused(self) -> None:
        """Called on the task thread while paused with nothing pending."""

    def _final_commit(self) -> None:
        """At the end: wait for the records in flight and commit their offsets."""
        self._producer.flush(timeout=self._flush_timeout)
        self._commit_offsets()

    def _report(self, call: Callable[[ConnectorTaskId], None]) -> None:
        if not self._cancelled:
            call(self.id)

    def _finish(self) -> None:
        try:
            self._task.stop()
        except Exception:
            log.exception("%s Task threw an exception while being stopped", self.id)
        try:
            self._final_commit()
        except Exception:
            log.exception("%s Final offset commit failed", self.id)
        finally:
            try:
                self._producer.close(timeout=self._flush_timeout)
            except Exception:
                log.exception("%s Closing the producer failed", self.id)
            self._chain.close()
            if self._close_store is not None:
                self._close_store()
            self._done.set()

    def _loop(self) -> None:
        pending: Sequence[SourceRecord] = []
        next_flush = time.monotonic() + self._flush_interval
        while not self._stop.is_set():
            if self._send_error is not None:
                raise ConnectError(f"Unrecoverable exception from producer send callback: {self._send_error}") \
                    from self._send_error
            if self._paused.is_set() and not pending:
                self._on_paused()
                self._stop.wait(0.1)
                next_flush = self._commit_if_due(next_flush)
                continue
            if not pending:
                pending = self._poll()
            if pending:
                pending = self._send(pending)
                if pending:
                    self._stop.wait(RETRY_BACKOFF_S)
            next_flush = self._commit_if_due(next_flush)

    def _commit_if_due(self, next_flush: float) -> float:
        """Commit offsets when ``next_flush`` has passed; returns the next deadline."""
        if time.monotonic() < next_flush:
            return next_flush
        self._commit_offsets()
        return time.monotonic() + self._flush_interval

    def _poll(self) -> Sequence[SourceRecord]:
        try:
            started = time.monotonic()
            records = self._task.poll() or []
            self.task_metrics.poll_batch(len(records), time.monotonic() - started)
            return records
        except RetriableError as exc:
            log.warning("%s Retriable exception from poll: %s", self.id, exc)
            self._stop.wait(RETRY_BACKOFF_S)
            return []

    def _send(self, records: Sequence[SourceRecord]) -> Sequence[SourceRecord]:
        """Send records in order; return the ones not sent because of a retriable error."""
        if self._rows is not None and type(records) is PreparedRecords:
            return self._send_rows(records)
        # bound once per batch, not looked up per record
        chain, convert, submit, produce = self._chain if self._chain else None, self._convert, \
            self._submitted.submit, self._produce
        before_send, dispatched, topics = self._before_send, self._record_dispatched, self._topics
        for index, original in enumerate(records):
            record = chain.apply(original, self._errors) if chain is not None else original
            converted = None if record is None or record is FAILED else convert(record)
            if converted is None:
                self._dropped(original)
                continue
            key, value, headers = converted
            topic = record.topic
            if topic not in topics:
                topics.add(topic)
                self._listener.on_topic(self.id, topic)
            before_send(original, topic)
            submitted = submit(record.source_partition, record.source_offset)
            submitted.record = original  # type: ignore[attr-defined]  # an _InFlight (the record type above)
            submitted.task = self  # type: ignore[attr-defined]
            if not produce(submitted, topic, key, value, headers, record.kafka_partition, record.timestamp):
                return records[index:]
            dispatched(original)
        self._producer.dispatch()
        self._batch_dispatched()
        return []

    def _produce(self, submitted: SubmittedRecord, topic: str, key: bytes | None, value: bytes | None,
                 headers: list[tuple[str, bytes]], partition: int | None, timestamp: int | None) -> bool:
        """Hand a record to the producer; False when the producer refused it for now (a retriable error: the
        record is forgotten, to be submitted again)."""
        try:
            self._producer.send(topic, value=value, key=key, headers=headers, partition=partition,
                                timestamp_ms=timestamp, on_done=submitted.done)  # type: ignore[attr-defined]
        except RetriableError as exc:
            log.warning("%s Failed to send record, will retry: %s", self.id, exc)
            self._submitted.remove(submitted)
            self._producer.dispatch()
            return False
        except ConnectError:
            raise
        except Exception as exc:
            raise ConnectError(f"Failed to send record to {topic}: {exc}") from exc
        return True

    def _send_rows(self, batch: PreparedRecords) -> Sequence[SourceRecord]:
        """:meth:`_send` of a poll holding prepared rows (:class:`RowSender`), then the producer's dispatch."""
        assert self._rows is not None
        try:
            return self._rows.send(batch)
        finally:
            self._producer.dispatch()

    def _dropped(self, record: SourceRecord) -> None:
        """A record filtered by a transform or skipped by ``errors.tolerance=all``: its offset still counts."""
        self._submitted.submit(record.source_partition, record.source_offset).ack()
        self._record_dispatched(record)
        self.task_metrics.dropped += 1
        self._commit_record(record)

    def _failed_delivery(self, submitted: _InFlight, record: SourceRecord, error: Any) -> None:
        """``record``'s delivery failed (``error`` as the producer handed it)."""
        failure = error if isinstance(error, BaseException) else self._producer.failure(error)
        self._on_done(submitted, record, failure)

    def _on_done(self, submitted: SubmittedRecord, record: SourceRecord, result: BaseException | None) -> None:
        """A record's delivery ended: acknowledged (``result`` None) or failed. Records acknowledged on the
        common path never come here (:class:`_InFlight`); a subclass's own ``_on_done`` gets them all."""
        if result is None:
            submitted.ack()
            self.task_metrics.written += 1
            self._commit_record(record)
            return
        if not self._errors.config.tolerance_all:
            self._on_error(record.topic, result)
            return
        # errors.tolerance=all skips records Kafka refused too, as Connect does (logged, counted, offset kept)
        self._errors.failures += 1
        self._errors.skipped += 1
        log.warning("%s Skipping a record Kafka refused for %s (errors.tolerance=all): %s", self.id,
                    record.topic, result)
        submitted.ack()
        self.task_metrics.dropped += 1
        self._commit_record(record)

    def _commit_record(self, record: SourceRecord) -> None:
        if not self._commits_records:
            return
        try:
            self._task.commit_record(record)
        except Exception:
            log.exception("%s commit_record failed", self.id)

    def _on_error(self, topic: str, exc: BaseException) -> None:
        if self._send_error is None:  # the first failure fails the task; the records after it fail with it
            log.error("%s Failed to send a record to %s: %s", self.id, topic, exc)
            self._send_error = exc

    def _commit_offsets(self) -> None:
        self._writer.stage(self._submitted.committable())
        started = time.monotonic()
        try:
            if self._writer.flush(self._flush_timeout):
                self.task_metrics.offset_commit(time.monotonic() - started, ok=True)
                self._task.commit()
        except Exception as exc:  # noqa: BLE001 - any flush failure is retried next interval
            self.task_metrics.offset_commit(time.monotonic() - started, ok=False)
            log.error("%s Failed to flush offsets, will retry: %s", self.id, exc)
