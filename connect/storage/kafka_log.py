"""A compacted Kafka topic read from the beginning by a background thread (Connect's ``KafkaBasedLog``).

The reader thread owns the consumer: it hands every record to the callback and resolves
:meth:`KafkaLog.read_to_end` futures once it has consumed up to the end offsets the caller took when it made
the request.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, NewTopic
from kafka.errors import KafkaError, KafkaTimeoutError, TopicAlreadyExistsError

from connect.api.errors import ConnectError, RetriableError
from connect.clients import client_kwargs

log = logging.getLogger(__name__)

RecordCallback = Callable[[bytes | None, bytes | None, int, int], None]
"""Called with ``(key, value, partition, offset)`` for every record, on the reader thread."""
#: the end offsets are asked for in attempts of 1 s, 2 s, 4 s, then 5 s (a slow broker still answers one) so that
#: the caller's interrupt is asked between them
_ENDS_FIRST_ATTEMPT_MS, _ENDS_LONGEST_ATTEMPT_MS = 1000, 5000


def read_until(refresh: Callable[[float], None], visible: Callable[[], bool], timeout: float) -> bool:
    """Read a topic to its end (``refresh(timeout)``) until ``visible()`` says a write of this process is applied;
    False if it is not within ``timeout`` seconds. A ``read_committed`` read to the end stops at the last stable
    offset, which the broker moves past a transaction only once its commit marker is written, after
    ``commit_transaction`` returned: one read to the end may miss a transaction just committed."""
    deadline = time.monotonic() + timeout
    while True:
        refresh(max(0.1, deadline - time.monotonic()))
        if visible():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """How to create an internal topic when it is missing."""

    name: str
    partitions: int
    replication_factor: int
    configs: Mapping[str, str]


def ensure_compacted_topic(admin: KafkaAdminClient, spec: TopicSpec) -> None:
    """Create ``spec`` as a compacted topic if missing; refuse a topic that is not compacted."""
    configs = {**spec.configs, "cleanup.policy": "compact"}
    topic = NewTopic(spec.name, spec.partitions, spec.replication_factor, topic_configs=configs)
    try:
        admin.create_topics([topic], timeout_ms=30_000)
        log.info("Created internal topic %s (%s partitions, compacted)", spec.name, spec.partitions)
    except TopicAlreadyExistsError:
        log.debug("Internal topic %s exists already", spec.name)
    policy = cleanup_policy(admin, spec.name)
    if policy is not None and policy != "compact":
        raise ConnectError(
            f"Topic '{spec.name}' supplied via the internal topic configuration is required to have "
            f"'cleanup.policy=compact' to guarantee consistency and durability, but found the topic "
            f"currently has 'cleanup.policy={policy}'."
        )


def cleanup_policy(admin: KafkaAdminClient, topic: str) -> str | None:
    """The topic's ``cleanup.policy``, or None when it cannot be read."""
    resource = ConfigResource(ConfigResourceType.TOPIC, topic)
    try:
        result = admin.describe_configs([resource], config_filter="all")
    except KafkaError as exc:
        log.warning("Could not read the cleanup policy of %s: %s", topic, exc)
        return None
    entry = result.get("topic", {}).get(topic, {}).get("cleanup.policy") if isinstance(result, Mapping) else None
    return None if not isinstance(entry, Mapping) or entry.get("value") is None else str(entry["value"])


class KafkaLog:
    """A compacted topic with a producer and a reader thread."""

    def __init__(self, topic: str, client_settings: Mapping[str, Any], callback: RecordCallback) -> None:
        self.topic = topic
        self._settings = dict(client_settings)
        self._callback = callback
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._pending: list[tuple[Future[None], dict[TopicPartition, int]]] = []
        self._positions: dict[TopicPartition, int] = {}
        self._failure: Exception | None = None
        self._tps: list[TopicPartition] = []
        self._producer: KafkaProducer | None = None
        self._ends: KafkaConsumer | None = None
        self._ends_lock = threading.Lock()
        self._stable: KafkaConsumer | None = None
        self._thread: threading.Thread | None = None

    def start(self, timeout: float = 60.0) -> None:
        """Connect, read the topic to its end, then keep reading in the background."""
        kwargs = client_kwargs(self._settings, KafkaProducer.DEFAULT_CONFIG)
        kwargs.update(acks="all", enable_idempotence=False, retries=2**31 - 1, linger_ms=0)
        self._producer = KafkaProducer(**kwargs)
        consumer_kwargs = client_kwargs(self._settings, KafkaConsumer.DEFAULT_CONFIG)
        consumer_kwargs.update(group_id=None, enable_auto_commit=False)
        consumer = KafkaConsumer(**consumer_kwargs)
        partitions = consumer.partitions_for_topic(self.topic) or set()
        if not partitions:
            consumer.close()
            raise ConnectError(f"Internal topic {self.topic} has no partitions")
        self._tps = [TopicPartition(self.topic, p) for p in sorted(partitions)]
        consumer.assign(self._tps)
        consumer.seek_to_beginning(*self._tps)
        # end offsets are asked for by the caller of read_to_end, with a consumer of its own (same isolation
        # level): the reader never has to be interrupted, so a read to the end costs one round trip when
        # nothing new was written and the fetch's wake-up on new data when something was
        self._ends = KafkaConsumer(**consumer_kwargs)
        self._thread = threading.Thread(target=self._run, args=(consumer,), name=f"KafkaLog-{self.topic}",
                                        daemon=True)
        self._thread.start()
        self.read_to_end().result(timeout)

    def send(self, key: bytes, value: bytes | None) -> Future[None]:
        """Produce one record; the future resolves when Kafka acknowledges it."""
        if self._producer is None:
            raise ConnectError(f"KafkaLog for {self.topic} is not started")
        result: Future[None] = Future()
        sent = self._producer.send(self.topic, key=key, value=value)
        sent.add_callback(lambda _meta: result.set_result(None))
        sent.add_errback(lambda exc: result.set_exception(ConnectError(f"Write to {self.topic} failed: {exc}")))
        return result

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until every sent record has been acknowledged."""
        if self._producer is not None:
            self._producer.flush(timeout=timeout)

    def read_to_end(self, interrupt: Callable[[], str | None] | None = None) -> Future[None]:
        """A future resolved once the reader has consumed everything written before this call (the end offsets
        are taken now, in the calling thread, bounded by 30 s, or until ``interrupt`` names a reason to stop
        waiting: they are asked for in attempts of 1 to 5 s)."""
        future: Future[None] = Future()
        if self._ends is None:
            future.set_exception(ConnectError(f"KafkaLog for {self.topic} is not started"))
            return future
        deadline, attempt_ms = time.monotonic() + 30.0, _ENDS_FIRST_ATTEMPT_MS
        while True:
            try:
                with self._ends_lock:
                    ends = dict(self._ends.end_offsets(self._tps, timeout_ms=attempt_ms))
                break
            except KafkaTimeoutError as exc:
                reason = None if interrupt is None else interrupt()
                if reason is not None:
                    future.set_exception(RetriableError(f"Reading the end offsets of {self.topic} was given up: "
                                                        f"{reason}"))
                    return future
                left_ms = int((deadline - time.monotonic()) * 1000)
                if left_ms > 0:
                    attempt_ms = min(2 * attempt_ms, _ENDS_LONGEST_ATTEMPT_MS, left_ms)
                    continue
                future.set_exception(ConnectError(f"Could not read the end offsets of {self.topic}: {exc}"))
                return future
            except KafkaError as exc:
                future.set_exception(ConnectError(f"Could not read the end offsets of {self.topic}: {exc}"))
                return future
        with self._lock:
            if self._failure is not None:
                future.set_exception(ConnectError(f"Reader of {self.topic} failed: {self._failure}"))
            elif self._reached(ends):
                future.set_result(None)
            else:
                self._pending.append((future, ends))
        return future

    def wait_stable_past(self, partition: int, offset: int, timeout: float,
                         interrupt: Callable[[], str | None] | None = None) -> bool:
        """Wait until the last stable offset of ``partition`` is past ``offset``: a transaction whose last record is
        at ``offset`` has its commit marker in the log. The broker answers ``EndTxn`` (``commit_transaction``
        returns) once the commit is prepared, and writes the markers after: a write of another producer made in
        between lands before the marker. Asked with ``read_committed`` end offsets, whatever the reader's isolation
        level; False if not within ``timeout`` seconds or once ``interrupt`` names a reason."""
        tp = TopicPartition(self.topic, partition)
        deadline = time.monotonic() + timeout
        while True:
            left_ms = int((deadline - time.monotonic()) * 1000)
            try:
                with self._ends_lock:
                    if self._ends is None:  # stopped
                        return False
                    if self._stable is None:
                        kwargs = client_kwargs(self._settings, KafkaConsumer.DEFAULT_CONFIG)
                        kwargs.update(group_id=None, enable_auto_commit=False, isolation_level="read_committed")
                        self._stable = KafkaConsumer(**kwargs)
                    stable = self._stable.end_offsets([tp], timeout_ms=max(100, min(_ENDS_LONGEST_ATTEMPT_MS,
                                                                                         left_ms)))
                if stable.get(tp, -1) > offset:
                    return True
            except KafkaError as exc:
                log.debug("Could not read the last stable offset of %s: %s", tp, exc)
            if time.monotonic() >= deadline or (interrupt is not None and interrupt() is not None):
                return False
            time.sleep(0.005)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the reader and close the clients; idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._producer is not None:
            self._producer.close(timeout=timeout)
            self._producer = None
        with self._ends_lock:
            for consumer in (self._ends, self._stable):
                if consumer is not None:
                    consumer.close()
            self._ends = self._stable = None

    def _reached(self, ends: Mapping[TopicPartition, int]) -> bool:
        return all(tp in self._positions and self._positions[tp] >= end for tp, end in ends.items())

    def _run(self, consumer: KafkaConsumer) -> None:
        try:
            while not self._stop.is_set():
                batches = consumer.poll(timeout_ms=200)
                for records in batches.values():
                    for rec in records:
                        self._deliver(rec.key, rec.value, rec.partition, rec.offset)
                positions = {tp: consumer.position(tp) for tp in self._tps}
                with self._lock:
                    self._positions = positions
                    done = [future for future, ends in self._pending if self._reached(ends)]
                    self._pending = [(f, ends) for f, ends in self._pending if not self._reached(ends)]
                for future in done:
                    future.set_result(None)
        except Exception as exc:
            log.exception("Reader of %s failed", self.topic)
            with self._lock:
                self._failure = exc
                failed, self._pending = self._pending, []
            for future, _ in failed:
                future.set_exception(ConnectError(f"Reader of {self.topic} failed: {exc}"))
        finally:
            consumer.close()

    def _deliver(self, key: bytes | None, value: bytes | None, partition: int, offset: int) -> None:
        try:
            self._callback(key, value, partition, offset)
        except Exception:
            log.exception("Failed to apply record at %s-%s@%s", self.topic, partition, offset)
