"""A source task's Kafka producer on librdkafka (confluent-kafka), the default record path.

librdkafka builds and sends record batches in C on its own threads, outside the GIL: about 3 µs of the
task's CPU per record where kafka-python spends 16-18 µs in a tight loop and ~80 µs in the task worker
(benchmarks/results.md), so the task needs no producer child process. The settings are Kafka's Java producer
settings, translated key by key; a key librdkafka cannot honour is never dropped in silence (a warning naming
it for client tuning, an error for anything that changes delivery or security).

Delivery semantics are Connect's: a record is acknowledged when Kafka acknowledged it (``acks=all``, retries
until ``delivery.timeout.ms``), keyed records land on the partition Java's murmur2 partitioner picks, and a
failed delivery reaches the task through its callback.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import confluent_kafka

from connect.api.errors import ConnectError, RetriableError
from connect.api.metrics import Metric
from connect.kafka_clients.librdkafka import security_config
from connect.runtime import log_setup
from connect.runtime.producer_metrics import ProducerStatistics

if TYPE_CHECKING:
    from connect.runtime.task_contracts import DeliveryCallback

log = logging.getLogger(__name__)

ACK_POLL_S = 0.01
"""How long the acknowledgement thread's poll waits for delivery reports while records are in flight."""
IDLE_POLL_S = 0.1
"""How long it waits for a first record when none is in flight (it then polls for statistics and errors)."""

# Java producer keys librdkafka reads under the same name with the same meaning.
_SAME = frozenset({
    "bootstrap.servers", "client.id", "acks", "linger.ms", "batch.size", "compression.type", "compression.level",
    "enable.idempotence", "max.in.flight.requests.per.connection", "retries", "retry.backoff.ms",
    "retry.backoff.max.ms", "request.timeout.ms", "delivery.timeout.ms", "transactional.id",
    "transaction.timeout.ms", "socket.connection.setup.timeout.ms",
    "connections.max.idle.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms", "metadata.max.age.ms",
    "client.dns.lookup",
})
# Java keys with another name (and unit) in librdkafka.
_RENAMED: dict[str, tuple[str, Callable[[str], str]]] = {
    "max.request.size": ("message.max.bytes", str),
    "buffer.memory": ("queue.buffering.max.kbytes", lambda v: str(max(1, int(v) // 1024))),
    "send.buffer.bytes": ("socket.send.buffer.bytes", lambda v: "0" if int(v) < 0 else v),
    "receive.buffer.bytes": ("socket.receive.buffer.bytes", lambda v: "0" if int(v) < 0 else v),
}
# Keys Connect itself fixes for source-task producers, or that only matter to the Java client.
_IGNORED = frozenset({
    "key.serializer", "value.serializer", "partitioner.ignore.keys", "metric.reporters", "metrics.num.samples",
    "metrics.recording.level", "auto.include.jmx.reporter", "interceptor.classes",
    "enable.metrics.push", "partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms",
})
# Client tuning librdkafka has no equivalent of: harmless to leave out, but said once.
_TUNING = frozenset({"metadata.max.idle.ms", "metadata.recovery.strategy", "metadata.recovery.rebootstrap.trigger.ms",
                     "socket.connection.setup.timeout.max.ms"})
_DEFAULT_PARTITIONER = "org.apache.kafka.clients.producer.internals.DefaultPartitioner"
_warned: set[str] = set()
_warned_lock = threading.Lock()


def rdkafka_config(settings: Mapping[str, Any]) -> tuple[dict[str, str], float]:
    """librdkafka's configuration for Java producer ``settings``, and how long a full send buffer may block
    ``send`` (``max.block.ms``, in seconds). Raises :class:`ConnectError` naming a key it cannot honour."""
    config: dict[str, str] = {
        "partitioner": "murmur2_random",  # Java's partitioning of keyed records
        "message.max.bytes": "1048576",  # Java's max.request.size default
        "queue.buffering.max.kbytes": "32768",  # Java's buffer.memory default: at most 32 MiB unacknowledged
        # the statistics the producer metrics are read from, every Java sample window (metrics.sample.window.ms:
        # 30 s by default; 0 turns them off)
        "statistics.interval.ms": "30000",
    }
    max_block = 60.0
    config.update(security_config(settings))  # security.protocol, sasl.*, ssl.*: checked as for kafka-python
    for key, raw in settings.items():
        value = str(raw).lower() if isinstance(raw, bool) else str(raw)
        if key.startswith(("security.", "sasl.", "ssl.")):
            continue
        if key in _SAME:
            config[key] = value
        elif key in _RENAMED:
            name, convert = _RENAMED[key]
            config[name] = convert(value)
        elif key == "metrics.sample.window.ms":
            config["statistics.interval.ms"] = value
        elif key == "max.block.ms":
            max_block = int(value) / 1000
        elif key == "partitioner.class":
            if value not in ("", _DEFAULT_PARTITIONER):
                raise ConnectError(f"producer setting partitioner.class={value} is not supported: records are "
                                   "partitioned as Java's default partitioner does")
        elif key in _IGNORED:
            continue
        else:
            _warn_once(key)
    if int(config.get("batch.size", "0")) > int(config["message.max.bytes"]):
        config["batch.size"] = config["message.max.bytes"]  # librdkafka refuses a batch larger than a request
    return config, max_block


def _warn_once(key: str) -> None:
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    if key not in _TUNING:
        log.warning("Producer setting %s is not a Kafka producer setting librdkafka knows: ignored", key)
    else:
        log.warning("Producer setting %s has no librdkafka equivalent: ignored", key)


# librdkafka's errors as the Java client words them, where Connect users grep for them
_JAVA_ERRORS = {
    confluent_kafka.KafkaError.MSG_SIZE_TOO_LARGE: (
        "org.apache.kafka.common.errors.RecordTooLargeException: The request included a message larger than the max "
        "message size the server will accept."),
}


def _exception(error: confluent_kafka.KafkaError) -> ConnectError:
    message = _JAVA_ERRORS.get(error.code()) or f"{error.name()}: {error.str()}"
    return RetriableError(message) if error.retriable() else ConnectError(message)


_FENCED = frozenset({confluent_kafka.KafkaError._FENCED, confluent_kafka.KafkaError.PRODUCER_FENCED,
                     confluent_kafka.KafkaError.INVALID_PRODUCER_EPOCH})


def _transaction_error(action: str, exc: confluent_kafka.KafkaException) -> ConnectError:
    error = exc.args[0] if exc.args else None
    if not isinstance(error, confluent_kafka.KafkaError):
        return ConnectError(f"Failed to {action}: {exc}")
    if error.code() in _FENCED:
        return ConnectError(f"Failed to {action}: the producer was fenced by a newer instance with the same "
                            f"transactional.id ({error.name()}: {error.str()})")
    return ConnectError(f"Failed to {action}: {error.name()}: {error.str()}")


class RdKafkaProducer:
    """The subset of a producer a source task uses (:class:`~connect.runtime.worker_source_task.SourceProducer`)."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        config, self._max_block = rdkafka_config(settings)
        self._client_id = config.get("client.id", "")
        self._max_request_size = int(config["message.max.bytes"])
        self._statistics = ProducerStatistics(self._client_id)
        callbacks: dict[str, Any] = {"error_cb": self._on_error}
        if int(config["statistics.interval.ms"]) > 0:  # librdkafka hands them to poll(): the acks thread
            callbacks["stats_cb"] = self._statistics.record
        try:  # librdkafka's own log lines and errors go through Python logging, not stderr
            self._producer = confluent_kafka.Producer(config, logger=log, **callbacks)
        except confluent_kafka.KafkaException as exc:
            raise ConnectError(f"Invalid producer settings: {exc}") from exc
        self._closed = threading.Event()
        self._shut = False  # closed: send refuses records (a plain attribute: read once per record)
        # one thread at a time serves delivery reports (poll, flush, and the transaction ends, which flush): two
        # would run one partition's callbacks out of send order
        self._serving = threading.Lock()
        # callers other than the acks thread (a transaction's end, flush, close) waiting to serve: the acks thread
        # lets go of the lock for them. It re-took it at once after each poll, so a commit waited behind poll after
        # poll (a threading.Lock is not fair): ~80-150 ms per exactly-once commit, half of a drain's time
        self._callers = 0
        self._gate = threading.Condition()
        # with records in flight the acks thread polls 10 ms at a time (a poll returns as soon as reports arrive);
        # with none it waits on ``_wake`` (set by the first record, or by a caller wanting to serve) and polls
        # only for librdkafka's statistics and errors: a flush or close never waits a long poll out
        self._wake = threading.Event()
        self._idle = False
        self._log_context = log_setup.context()  # the task's [name|task-0], for librdkafka's lines
        # acknowledgements are served on a thread of their own, as kafka-python's sender thread does: a task that
        # polls nothing new still sees its records acknowledged and its offsets committed
        self._poller = threading.Thread(target=self._serve_acks, name=f"{self._client_id}-acks", daemon=True)
        self._poller.start()

    def _serve_acks(self) -> None:
        if self._log_context is not None:
            log_setup.set_context(*self._log_context)
        producer = self._producer
        while not self._closed.is_set():
            with self._gate:
                while self._callers and not self._closed.is_set():
                    self._gate.wait(0.1)
            timeout = ACK_POLL_S
            self._idle = True
            if not len(producer):  # nothing queued or in flight: wait for a record (or a caller), then poll once
                self._wake.wait(IDLE_POLL_S)
                self._wake.clear()
                timeout = 0.0
            self._idle = False
            if self._callers or self._closed.is_set():
                continue
            try:
                with self._serving:
                    producer.poll(timeout)
            except confluent_kafka.KafkaException as exc:  # fatal (a fenced transactional producer): said by send
                log.debug("%s producer poll: %s", self._client_id, exc)
                self._closed.wait(0.1)

    @contextlib.contextmanager
    def _served_here(self) -> Iterator[None]:
        """Serve delivery reports in the calling thread (librdkafka does in flush and the transaction calls): the
        acks thread steps aside until the caller is done; the caller waits at most for the acks thread's current
        poll (10 ms; an idle acks thread is woken)."""
        with self._gate:
            self._callers += 1
        self._wake.set()
        try:
            with self._serving:
                yield
        finally:
            with self._gate:
                self._callers -= 1
                self._gate.notify_all()

    def _on_error(self, error: confluent_kafka.KafkaError) -> None:
        if error.fatal():
            log.error("%s producer fatal error: %s", self._client_id, error.str())
        else:
            log.debug("%s producer: %s", self._client_id, error.str())

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: DeliveryCallback | None = None) -> None:
        """Queue a record; blocks (up to ``max.block.ms``) while librdkafka's queue is full.

        ``on_done(error, message)`` is librdkafka's own delivery callback, called once the record is delivered
        (``error`` None) or failed (librdkafka's ``KafkaError``: :meth:`failure` words it), on the acknowledgement
        thread; ``on_done(exception)`` on the caller's for a record refused before it was queued. It goes to
        librdkafka with the record, unwrapped: registered before the record can be acknowledged, nothing locked
        or allocated per record."""
        if self._shut:
            raise ConnectError(f"The producer {self._client_id} is closed")
        deadline: float | None = None
        while True:
            try:
                # no typing.cast here: two Python calls per record on the task thread
                self._producer.produce(topic, value, key, -1 if partition is None else partition,
                                       on_delivery=on_done, timestamp=timestamp_ms or 0,  # type: ignore[arg-type]
                                       headers=headers or None)  # type: ignore[arg-type]
                if self._idle and not self._wake.is_set():  # the acks thread waits for a first record: this one
                    self._wake.set()  # (once: Event.set takes a lock and notifies, ~1 us, the check a read)
                return
            except BufferError:
                deadline = deadline or time.monotonic() + self._max_block
                if time.monotonic() >= deadline:
                    raise RetriableError(f"The producer's send buffer stayed full for {self._max_block:.0f} s "
                                         "(max.block.ms)") from None
                self._closed.wait(0.05)  # the acknowledgement thread makes room
            except confluent_kafka.KafkaException as exc:
                error = exc.args[0] if exc.args else None
                if isinstance(error, confluent_kafka.KafkaError) and \
                        error.code() == confluent_kafka.KafkaError.MSG_SIZE_TOO_LARGE:
                    # Java's producer fails such a record through its callback, which Connect reports (or skips
                    # under errors.tolerance=all): the same here, with Java's words
                    size = len(value or b"") + len(key or b"") + sum(len(k) + len(v) for k, v in headers)
                    refused = ConnectError(
                        f"org.apache.kafka.common.errors.RecordTooLargeException: The message is {size} bytes when "
                        f"serialized which is larger than {self._max_request_size}, which is the value of the "
                        "max.request.size configuration.")
                    if on_done is not None:
                        on_done(refused)
                    return
                if isinstance(error, confluent_kafka.KafkaError):
                    raise _exception(error) from exc
                raise ConnectError(str(exc)) from exc

    def metrics(self) -> list[Metric]:
        """The producer's metrics from librdkafka's last statistics (:mod:`connect.runtime.producer_metrics`)."""
        return self._statistics.samples()

    @staticmethod
    def failure(error: Any) -> BaseException:
        """The exception for librdkafka's ``KafkaError`` handed to a delivery callback, as Java words it."""
        if isinstance(error, BaseException):
            return error
        if isinstance(error, confluent_kafka.KafkaError):
            return _exception(error)
        return ConnectError(f"The record's delivery failed: {error}")

    # --- transactions (exactly-once source tasks: connect/runtime/exactly_once.py) ----------------------------
    def init_transactions(self, timeout: float) -> None:
        """Register ``transactional.id`` with the coordinator: fences older producers with the same id and aborts
        the transaction they left open (InitProducerId)."""
        self._transactional("initialize the transactional producer", lambda: self._producer.init_transactions(timeout))

    def begin_transaction(self) -> None:
        """Start a transaction (local: nothing is sent before the first record)."""
        self._transactional("begin a transaction", self._producer.begin_transaction)

    def commit_transaction(self, timeout: float) -> None:
        """Flush and commit the open transaction; a retriable failure is retried until ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with self._served_here():  # librdkafka flushes first, serving delivery reports in this thread
                    self._producer.commit_transaction(max(0.0, deadline - time.monotonic()))
                return
            except confluent_kafka.KafkaException as exc:
                error = exc.args[0] if exc.args else None
                if not (isinstance(error, confluent_kafka.KafkaError) and error.retriable()) \
                        or time.monotonic() >= deadline:
                    raise _transaction_error("commit the transaction", exc) from exc
                log.warning("%s retrying a transaction commit: %s", self._client_id, error.str())

    def abort_transaction(self, timeout: float) -> None:
        """Abort the open transaction (its records and offsets are never seen by read_committed consumers)."""
        with self._served_here():  # librdkafka purges and flushes first, serving delivery reports in this thread
            self._transactional("abort the transaction", lambda: self._producer.abort_transaction(timeout))

    @staticmethod
    def _transactional(action: str, call: Callable[[], None]) -> None:
        try:
            call()
        except confluent_kafka.KafkaException as exc:
            raise _transaction_error(action, exc) from exc

    def direct_send(self) -> Any:
        """librdkafka's ``produce`` (``task_contracts.DirectSend``), called with its arguments in their order:
        topic, value, key, partition, callback, on_delivery, timestamp, headers. Its failures are :meth:`send`'s
        to deal with: the caller sends the record again through it."""
        return self._producer.produce

    def dispatch(self) -> None:
        """librdkafka batches by itself and acknowledgements are served on their own thread: an idle one is woken
        for records queued by :meth:`direct_send`'s call (which :meth:`send` wakes it for itself)."""
        if self._idle and not self._wake.is_set():
            self._wake.set()

    def flush(self, timeout: float | None = None) -> None:
        """Wait for every record sent so far (callbacks included)."""
        try:
            with self._served_here():
                left = self._producer.flush(-1 if timeout is None else timeout)
        except confluent_kafka.KafkaException as exc:
            raise ConnectError(f"The producer failed: {exc}") from exc
        if left:
            raise RetriableError(f"{left} record(s) still unacknowledged after {timeout} s")

    def close(self, timeout: float | None = None) -> None:
        """Deliver what is queued (bounded), then stop serving acknowledgements; idempotent. Records sent
        afterwards are refused. ``timeout`` 0 (Java's ``close(Duration.ZERO)``): what is queued or in flight fails
        at once, even while another thread waits in a flush of this producer."""
        self._shut = True
        if timeout == 0:
            self._producer.purge()  # thread-safe in librdkafka; the records fail in their delivery reports
        if self._closed.is_set():
            return
        self._closed.set()  # the acks thread ends after its current poll (at most 10 ms): the flush is served here
        self._wake.set()
        with self._gate:
            self._gate.notify_all()
        self._poller.join(5)
        try:
            with self._served_here():
                left = self._producer.flush(-1 if timeout is None else timeout)
            if left:  # as Java's close(timeout): what is still unsent fails now instead of going out later
                log.warning("%s producer closed with %d record(s) undelivered after %s s: dropped (their offsets "
                            "were not committed)", self._client_id, left, timeout)
                self._producer.purge()
                with self._served_here():
                    self._producer.flush(0)
        except confluent_kafka.KafkaException as exc:  # a fatal error (fenced): nothing more can be delivered
            log.warning("%s producer closed after a fatal error: %s", self._client_id, exc)


def fence_producers(settings: Mapping[str, Any], transactional_ids: list[str], timeout: float) -> None:
    """Fence the producers of ``transactional_ids`` (what Java's ``Admin.fenceProducers`` does): an
    ``InitProducerId`` for each id bumps its epoch, so an older producer with the id can no longer write or commit,
    and the transaction it left open is aborted."""
    config, _ = rdkafka_config(settings)
    config.pop("statistics.interval.ms")  # nothing reads them
    for txn_id in transactional_ids:
        producer = confluent_kafka.Producer({**config, "transactional.id": txn_id, "enable.idempotence": "true"},
                                            logger=log)
        try:
            producer.init_transactions(timeout)
        except confluent_kafka.KafkaException as exc:
            raise _transaction_error(f"fence the producers with transactional.id {txn_id}", exc) from exc
        log.debug("Fenced producers with transactional.id %s", txn_id)
