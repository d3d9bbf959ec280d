"""Exactly-once source delivery (KIP-618; Connect's ``ExactlyOnceWorkerSourceTask``): each task's records and the
source offsets they lead to are written by one transactional producer in one Kafka transaction, so that a consumer
with ``isolation.level=read_committed`` sees every record once, whatever crashed when.

The transactional id is Connect's ``<group.id>-<connector>-<task>``: a restarted or moved task fences its
predecessor (``init_transactions``, Kafka's InitProducerId), which also aborts the transaction the predecessor
left open. Offsets go to the worker's offsets topic with the keys and values of the at-least-once path.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from enum import Enum
from typing import Any, Protocol

from connect import clients, test_hooks
from connect.api.errors import ConnectError
from connect.api.records import SourceRecord
from connect.runtime.offsets import SubmittedRecord
from connect.runtime.task_contracts import SourceProducer
from connect.runtime.worker_source_task import WorkerSourceTask, _Context
from connect.storage import codec

log = logging.getLogger(__name__)

ENABLED, PREPARING, DISABLED = "enabled", "preparing", "disabled"
_JUSTIFICATION = "for connectors when exactly-once source support is enabled"
TRANSACTION_TIMEOUT_MS = 60_000  # the Java producer's (and librdkafka's) transaction.timeout.ms default


class TransactionBoundary(Enum):
    """``transaction.boundary``: where a task's transactions end."""

    POLL = "poll"
    INTERVAL = "interval"
    CONNECTOR = "connector"

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> TransactionBoundary:
        """The connector config's boundary (validated already; case-insensitive as Connect's)."""
        return cls(props.get("transaction.boundary", "poll").strip().lower())


def transactional_id(group_id: str, connector: str, task: int) -> str:
    """Connect's ``Worker.taskTransactionalId``."""
    return f"{group_id}-{connector}-{task}"


def leader_transactional_id(group_id: str) -> str:
    """Connect's ``DistributedConfig.transactionalProducerId``: the leader's config-topic producer's id, one per
    cluster, so that each new leader fences the previous one."""
    return f"connect-cluster-{group_id}"


def leader_producer_settings(settings: Mapping[str, Any], group_id: str, client_id: str) -> dict[str, Any]:
    """The leader's fencable config-topic producer (Connect's ``KafkaConfigBackingStore.fencableProducerProps``,
    used with ``exactly.once.source.support`` ``preparing`` or ``enabled``): acks=all, idempotent, transactional."""
    result: dict[str, Any] = {**settings, "client.id": client_id, "acks": "all",
                              "max.in.flight.requests.per.connection": 5}
    justification = ("for the worker's config topic producer when exactly-once source support is enabled or in "
                     "preparation to be enabled")
    ensure_property(result, "enable.idempotence", "true", justification, case_sensitive=False)
    ensure_property(result, "transactional.id", leader_transactional_id(group_id), justification, case_sensitive=True)
    return result


def ensure_property(props: MutableMapping[str, Any], key: str, expected: str, justification: str, *,
                    case_sensitive: bool) -> None:
    """Connect's ``ConnectUtils.ensureProperty``: set ``key`` to ``expected``, warning (in Java's words) when the
    user had set another value, which cannot be honoured."""
    if key not in props:
        props[key] = expected
        return
    value = str(props[key]).lower() if isinstance(props[key], bool) else str(props[key])
    if value == expected if case_sensitive else value.lower() == expected.lower():
        return
    props[key] = expected
    log.warning("The value '%s' for the '%s' property will be ignored as it cannot be overridden %s. The value '%s' "
                "will be used instead.", value, key, justification, expected)


def producer_settings(base: Mapping[str, Any], overrides: Mapping[str, str], txn_id: str) -> dict[str, Any]:
    """The settings of an exactly-once task's producer (Connect's ``exactlyOnceSourceTaskProducerConfigs``):
    ``base`` is the at-least-once settings with ``overrides`` (``producer.*`` then ``producer.override.*``) applied;
    idempotence and the transactional id are forced. A delivery timeout the user did not set is bounded by the
    transaction timeout, as librdkafka requires."""
    settings = dict(base)
    if "enable.idempotence" not in overrides:
        settings.pop("enable.idempotence", None)  # the at-least-once base turns it off; not asked for by the user
    ensure_property(settings, "enable.idempotence", "true", _JUSTIFICATION, case_sensitive=False)
    ensure_property(settings, "transactional.id", txn_id, _JUSTIFICATION, case_sensitive=True)
    if "delivery.timeout.ms" not in overrides:
        settings["delivery.timeout.ms"] = str(overrides.get("transaction.timeout.ms", TRANSACTION_TIMEOUT_MS))
    if "max.in.flight.requests.per.connection" not in overrides:
        settings["max.in.flight.requests.per.connection"] = 5  # ordered by idempotence, as Java's producer
    return settings


def task_producer_settings(bootstrap: str, group_id: str, connector: str, task: int,
                           overrides: Mapping[str, str]) -> dict[str, Any]:
    """An exactly-once task's producer settings from the ``producer.*``/``producer.override.*`` ``overrides``:
    Connect's source-task defaults, ``transactional.id`` ``<group.id>-<connector>-<task>``; librdkafka's only."""
    overrides = dict(overrides)
    library = overrides.pop("client.library", "librdkafka").strip().lower()
    if library != "librdkafka":
        raise ConnectError(f"producer.client.library={library} cannot be used when exactly-once source support is "
                           "enabled: transactions run on the librdkafka producer")
    overrides.pop("process.enable", None)
    base = clients.source_task_producer_settings(bootstrap, f"connector-producer-{connector}-{task}", overrides)
    return producer_settings(base, overrides, transactional_id(group_id, connector, task))


class TransactionalProducer(SourceProducer, Protocol):
    """A :class:`SourceProducer` with Kafka transactions (librdkafka's ``RdKafkaProducer``)."""

    def init_transactions(self, timeout: float) -> None:
        """Fence older instances of the transactional id and abort their open transaction."""

    def begin_transaction(self) -> None:
        """Open a transaction."""

    def commit_transaction(self, timeout: float) -> None:
        """Flush and commit."""

    def abort_transaction(self, timeout: float) -> None:
        """Abort."""


class WorkerTransactionContext:
    """The task's :class:`~connect.api.task.TransactionContext` (``transaction.boundary=connector``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._commit_batch = self._abort_batch = False
        self._commit_on: set[int] = set()
        self._abort_on: set[int] = set()

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._commit_batch = True
            else:
                self._commit_on.add(id(record))

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            if record is None:
                self._abort_batch = True
            else:
                self._abort_on.add(id(record))

    def take_batch(self) -> tuple[bool, bool]:
        """(commit, abort) requested for the batch; clears them."""
        with self._lock:
            result = (self._commit_batch, self._abort_batch)
            self._commit_batch = self._abort_batch = False
        return result

    def take_record(self, record: SourceRecord) -> tuple[bool, bool]:
        """(commit, abort) requested right after ``record``; clears them."""
        key = id(record)
        with self._lock:
            commit, abort = key in self._commit_on, key in self._abort_on
            self._commit_on.discard(key)
            self._abort_on.discard(key)
        return commit, abort


class ExactlyOnceWorkerSourceTask(WorkerSourceTask):
    """A :class:`WorkerSourceTask` whose records and offsets are committed together, one transaction per
    ``transaction.boundary``."""

    def __init__(self, *args: Any, offsets_topic: str, boundary: TransactionBoundary, interval_ms: int,
                 preflight: Callable[[], None], read_offsets: Callable[[], None],
                 postflight: Callable[[], None] = lambda: None,
                 mirror: Callable[[Mapping[bytes, bytes | None]], None] | None = None, **kwargs: Any) -> None:
        """``preflight`` runs before the producer is initialized (zombie fencing of the connector's earlier task
        generation); ``postflight`` right after it (the task's configs are still the latest and still this worker's);
        ``read_offsets`` then, once the transaction a predecessor left open is aborted, reads the
        offsets topic to its end (committed records only); ``mirror`` copies committed offsets to the worker's offsets
        topic when the connector has a topic of its own."""
        super().__init__(*args, **kwargs)
        self._txn: TransactionalProducer = self._producer  # type: ignore[assignment]
        self._offsets_topic = offsets_topic
        self._boundary = boundary
        self._interval = interval_ms / 1000
        self._preflight = preflight
        self._read_offsets = read_offsets
        self._postflight = postflight
        self._mirror = mirror
        self._txn_context = WorkerTransactionContext() if boundary is TransactionBoundary.CONNECTOR else None
        self._open = False
        self._aborting = False  # records failed while it is set were purged by the abort
        self._offsets: dict[bytes, Mapping[str, Any]] = {}
        self._acked: list[SourceRecord] = []
        self._acked_lock = threading.Lock()
        self._next_commit = time.monotonic() + self._interval
        self.transactions = 0  # committed, for metrics and tests
        self.task_metrics.track_transactions()

    def _prepare_to_initialize(self) -> None:
        self._preflight()
        if self._stop.is_set():
            return
        self._txn.init_transactions(self._flush_timeout + 30)  # the coordinator may first abort a zombie's txn
        log.info("%s Initialized the transactional producer", self.id)
        self._postflight()
        self._read_offsets()

    def _context(self) -> _Context:
        return _Context(self.id.connector, self.id.task, self._reader, transaction_context=self._txn_context,
                        values_go_to_json_converter=self._values_go_to_json_converter())

    def _before_send(self, record: SourceRecord, topic: str) -> None:
        if topic == self._offsets_topic:
            raise ConnectError("Source tasks may not produce to their own offsets topics when exactly-once support "
                               "is enabled")
        self._begin()

    def _begin(self) -> None:
        if not self._open:
            self._txn.begin_transaction()
            self._open = True

    def _record_dispatched(self, record: SourceRecord) -> None:
        if record.source_partition is not None and record.source_offset is not None:
            self._offsets[self._submitted_key(record)] = record.source_offset
        if self._txn_context is not None:
            commit, abort = self._txn_context.take_record(record)
            self._maybe_end(commit, abort)

    def _submitted_key(self, record: SourceRecord) -> bytes:
        return codec.offset_key(self.id.connector, dict(record.source_partition or {}))

    def _batch_dispatched(self) -> None:
        if self._boundary is TransactionBoundary.POLL:
            self._commit_transaction()
        elif self._txn_context is not None:
            self._maybe_end(*self._txn_context.take_batch())

    def _maybe_end(self, commit: bool, abort: bool) -> None:
        if abort:
            # as Connect does: the aborted transaction's records are dropped, but the offsets they lead to are then
            # committed in a transaction of their own, so that the task does not read those records again
            self._abort("as requested by the connector", keep_offsets=True)
            self._commit_transaction()
        elif commit:
            self._commit_transaction()

    def _commit_if_due(self, next_flush: float) -> float:
        if self._boundary is TransactionBoundary.INTERVAL and time.monotonic() >= self._next_commit:
            self._commit_transaction()
            self._next_commit = time.monotonic() + self._interval
        return next_flush

    def _commit_offsets(self) -> None:
        self._commit_transaction()

    def _on_paused(self) -> None:
        if self._open or self._offsets:
            self._final_commit()

    def _final_commit(self) -> None:
        if self._failed:
            log.debug("%s Skipping final offset commit as task has failed", self.id)
            if self._open:
                self._abort("as the task failed")
            return
        if self._txn_context is None:
            self._commit_transaction()
        else:
            self._maybe_end(*self._txn_context.take_batch())

    def _on_done(self, submitted: SubmittedRecord, record: SourceRecord, result: BaseException | None) -> None:
        if result is not None:  # errors.tolerance does not apply: the transaction is lost
            if self._aborting:  # purged by the abort (librdkafka reports it from inside abort_transaction)
                log.debug("%s A record of the aborted transaction was not delivered: %s", self.id, result)
                return
            self._on_error(record.topic, result)
            return
        submitted.ack()
        self.task_metrics.written += 1
        with self._acked_lock:
            self._acked.append(record)

    def _abort(self, why: str, keep_offsets: bool = False) -> None:
        """Abort the open transaction; its staged offsets are dropped too unless ``keep_offsets``."""
        if not self._open:
            log.warning("%s Ignoring request to abort transaction as the current transaction is empty", self.id)
            return
        log.info("%s Aborting transaction %s", self.id, why)
        self._aborting = True
        try:
            self._txn.abort_transaction(self._flush_timeout)
        finally:
            self._aborting = False
        self._open = False
        if not keep_offsets:
            self._offsets.clear()
        self._submitted.committable()  # forget what was acknowledged inside the aborted transaction
        with self._acked_lock:
            self._acked.clear()

    def _commit_transaction(self) -> None:
        """Write the staged offsets in the open transaction, then commit it (Connect's ``commitTransaction``)."""
        if not self._open and not self._offsets:
            return
        self._begin()
        batch = {key: codec.dumps(dict(offset)) for key, offset in self._offsets.items()}
        for key, value in batch.items():
            self._producer.send(self._offsets_topic, value=value, key=key, headers=[], partition=None,
                                timestamp_ms=None)
        if test_hooks.armed("transaction-commit"):  # tests: a crash with the records and offsets written, uncommitted
            self._producer.flush(self._flush_timeout)
            test_hooks.hold("transaction-commit")
        started = time.monotonic()
        try:
            self._txn.commit_transaction(self._flush_timeout + 30)
        except ConnectError as exc:
            self.task_metrics.offset_commit(time.monotonic() - started, ok=False)
            raise ConnectError(f"Failed to flush offsets and/or records for task {self.id}: {exc}") from exc
        finally:
            self._open = False
        self.task_metrics.offset_commit(time.monotonic() - started, ok=True)
        self._offsets.clear()
        self._submitted.committable()
        self.transactions += 1
        with self._acked_lock:
            acked, self._acked = self._acked, []
        # every record of the transaction is acknowledged once it committed (librdkafka served their reports
        # before commit_transaction returned): its size, without the dropped records, as Connect counts it
        self.task_metrics.transaction_committed(len(acked))
        if self._mirror is not None and batch:
            self._mirror(batch)
        for record in acked:
            self._commit_record(record)
        try:
            self._task.commit()
        except Exception:
            log.exception("%s Task commit failed", self.id)
