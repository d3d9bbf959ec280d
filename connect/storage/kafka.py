"""Config, offset and status stores on Kafka topics, byte-compatible with Java Kafka Connect's
``KafkaConfigBackingStore``, ``KafkaOffsetBackingStore`` and ``KafkaStatusBackingStore``."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol

from kafka.errors import KafkaError

from connect import clients, test_hooks
from connect.api.errors import ConnectError, RetriableError
from connect.storage import codec
from connect.storage.base import ConfigStore, Status, StatusStore
from connect.storage.kafka_log import KafkaLog, TopicSpec, ensure_compacted_topic, read_until

log = logging.getLogger(__name__)
_INTERRUPT_CHECK_S = 0.25


def create_internal_topics(admin_settings: Mapping[str, Any], specs: list[TopicSpec]) -> None:
    """Create the missing internal topics (compacted) and check the existing ones."""
    try:
        admin = clients.admin(admin_settings)
    except KafkaError as exc:
        raise ConnectError(f"Cannot reach Kafka at {admin_settings.get('bootstrap.servers')}: {exc}") from exc
    try:
        for spec in specs:
            ensure_compacted_topic(admin, spec)
    finally:
        admin.close()


class LeaderWriter(Protocol):
    """The leader's transactional producer for the config topic (librdkafka's ``RdKafkaProducer``)."""

    def init_transactions(self, timeout: float) -> None:
        """Fence the previous leader's producer (same ``transactional.id``) and abort its open transaction."""

    def begin_transaction(self) -> None:
        """Open a transaction."""

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: Any = None) -> Any:
        """Queue a record in the open transaction; ``on_done(error, message)`` once it is delivered (served
        before :meth:`commit_transaction` returns)."""

    def commit_transaction(self, timeout: float) -> None:
        """Flush and commit; fails once a newer leader fenced this producer."""

    def close(self, timeout: float | None = None) -> None:
        """Release the producer; idempotent."""


class PrivilegedWriteError(ConnectError):
    """A leader's transactional write to the config topic failed (Connect's ``PrivilegedWriteException``): most
    likely a newer leader fenced this worker's producer. Nothing of it is visible to ``read_committed`` readers."""


class KafkaConfigStore(ConfigStore):
    """Connector configs on the single-partition config topic.

    With ``exactly.once.source.support`` ``preparing`` or ``enabled`` the store has a fencable writer (Connect's
    ``KafkaConfigBackingStore.fencableProducer``): the leader's privileged writes go through a transactional
    producer whose ``transactional.id`` is ``connect-cluster-<group.id>``, claimed by each new leader, which fences
    every earlier leader's producer: a zombie leader cannot write connector configs, task configs or task counts."""

    def __init__(self, topic: str, client_settings: Mapping[str, Any],
                 leader_writer: Callable[[], LeaderWriter] | None = None) -> None:
        """``leader_writer`` creates the leader's transactional producer (None: privileged writes are plain)."""
        super().__init__()
        self._log = KafkaLog(topic, client_settings, self._on_record)
        self._leader_writer = leader_writer
        self._writer: LeaderWriter | None = None
        self._writer_lock = threading.Lock()
        self._fenced = False

    def start(self) -> None:
        """Read the config topic to its end (restart requests already in it are history, not work)."""
        self._log.start()
        self.take_restart_requests()
        self.take_logger_levels()

    def refresh(self, timeout: float) -> None:
        """Read to the end of the topic (given up early when the interrupt set by the membership says so)."""
        self._wait(self._log.read_to_end(self._interrupt), timeout, "Reading the config topic")

    def _wait(self, future: Future[None], timeout: float, what: str) -> None:
        """``future.result(timeout)``, but a :class:`RetriableError` as soon as the interrupt names a reason."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                future.result(max(0.0, min(_INTERRUPT_CHECK_S, deadline - time.monotonic())))
                return
            except FutureTimeout:
                if time.monotonic() >= deadline:
                    raise
                reason = self._interrupt()
                if reason is not None:
                    raise RetriableError(f"{what} was given up: {reason}; the request can be retried once the "
                                         "worker is back in its group") from None

    def stop(self, timeout: float = 10.0) -> None:
        """Give up the write privileges and stop reading; idempotent."""
        self.relinquish_write_privileges()
        self._log.stop(timeout)

    def claim_write_privileges(self) -> None:
        """Create and initialize the fencable producer (Connect's ``claimWritePrivileges``): its ``InitProducerId``
        fences every earlier holder of the transactional id. Nothing to do without a fencable writer or when held."""
        with self._writer_lock:
            if self._leader_writer is None or self._writer is not None:
                return
            writer: LeaderWriter | None = None
            try:
                writer = self._leader_writer()
                writer.init_transactions(30)
            except Exception as exc:
                if writer is not None:
                    writer.close(0)
                raise ConnectError(f"Failed to create and initialize fencable producer for config topic: {exc}"
                                   ) from exc
            self._writer = writer
        log.info("Claimed write privileges for the config topic %s", self._log.topic)

    def needs_write_privileges(self) -> bool:
        return self._leader_writer is not None and self._writer is None

    def take_write_fenced(self) -> bool:
        with self._writer_lock:
            fenced, self._fenced = self._fenced, False
        return fenced

    def relinquish_write_privileges(self) -> None:
        """Close the fencable producer, if any."""
        with self._writer_lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close(0)

    def _on_record(self, key: bytes | None, value: bytes | None, _partition: int, offset: int) -> None:
        if key is None:
            log.warning("Skipping config record without key at offset %s", offset)
            return
        self._apply(key.decode(), value, offset)

    def _write(self, records: list[tuple[str, dict[str, Any] | None]], *, privileged: bool = True,
               read_back: bool = True) -> None:
        encoded = [(key.encode(), None if value is None else codec.dumps(value)) for key, value in records]
        if privileged and self._leader_writer is not None:
            last = self._send_privileged(encoded)
            # until its own records are applied (the session key was written twice when a read missed them)
            if read_back:
                read_until(self.refresh, lambda: self.snapshot().offset > last, 30)
        else:
            futures = [self._log.send(key, value) for key, value in encoded]
            for future in futures:
                self._wait(future, 30, "Writing to the config topic")
            if read_back:
                self.refresh(30)

    def _send_privileged(self, records: list[tuple[bytes, bytes | None]]) -> int:
        """One transaction of the leader's fencable producer (Connect's ``sendPrivileged``), returning once its
        commit marker is in the log too; the offset of its last record (-1 if unknown, or none was written)."""
        writer = self._writer
        if writer is None:
            raise ConnectError("Cannot produce to config topic without claiming write privileges first")
        test_hooks.hold("config-write")
        offsets: list[tuple[int, int]] = []

        def delivered(error: Any, message: Any = None) -> None:
            if error is None and message is not None:
                offsets.append((int(message.offset()), int(message.partition())))

        try:
            writer.begin_transaction()
            for key, value in records:
                writer.send(self._log.topic, value=value, key=key, headers=[], partition=None, timestamp_ms=None,
                            on_done=delivered)
            writer.commit_transaction(30)
        except Exception as exc:
            log.warning("Failed to perform fencable send to config topic: %s", exc)
            self.relinquish_write_privileges()
            with self._writer_lock:
                self._fenced = True
            raise PrivilegedWriteError(f"Failed to write to config topic; this may be due to a transient error and "
                                       f"the request can be safely retried ({exc})") from exc
        if not offsets:
            return -1
        last, partition = max(offsets)
        # the broker answers the commit before it writes the commit marker: wait for it, so that the next write
        # (a plain target state, right after the empty task set of a stop) lands after it, as in Connect, where
        # the read to the end between them is slower than the broker's marker
        if not self._log.wait_stable_past(partition, last, 30, self._interrupt):
            log.warning("The commit marker of the transaction ending at offset %s of %s was not seen in 30 s",
                        last, self._log.topic)
        return last


class KafkaOffsetStore:
    """Source offsets on the offsets topic: key ``[connector, partition]``, value the offset map."""

    def __init__(self, topic: str, client_settings: Mapping[str, Any]) -> None:
        self._data: dict[bytes, bytes] = {}
        self._lock = threading.Lock()
        self._log = KafkaLog(topic, client_settings, self._on_record)

    def start(self) -> None:
        """Read the offsets topic to its end."""
        self._log.start()

    def refresh(self, timeout: float) -> None:
        """Read to the end of the topic (with ``read_committed``: to the end of what was committed)."""
        self._log.read_to_end().result(timeout)

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        """Stored values of ``keys``."""
        with self._lock:
            return {k: self._data.get(k) for k in keys}

    def set(self, values: Mapping[bytes, bytes | None]) -> Future[None]:
        """Write ``values``; the future resolves when Kafka has acknowledged all of them."""
        done: Future[None] = Future()
        futures = [self._log.send(k, v) for k, v in values.items()]
        remaining = [len(futures)]
        lock = threading.Lock()

        def on_done(sent: Future[None]) -> None:
            if sent.exception() is not None:
                if not done.done():
                    done.set_exception(sent.exception())
                return
            with lock:
                remaining[0] -= 1
                last = remaining[0] == 0
            if last and not done.done():
                with self._lock:
                    for key, value in values.items():
                        self._store(key, value)
                done.set_result(None)

        if not futures:
            done.set_result(None)
        for future in futures:
            future.add_done_callback(on_done)
        return done

    def items(self) -> list[tuple[bytes, bytes]]:
        """Every stored pair."""
        with self._lock:
            return list(self._data.items())

    def stop(self, timeout: float = 10.0) -> None:
        """Stop reading; idempotent."""
        self._log.stop(timeout)

    def _store(self, key: bytes, value: bytes | None) -> None:
        if value is None:
            self._data.pop(key, None)
        else:
            self._data[key] = value

    def _on_record(self, key: bytes | None, value: bytes | None, _partition: int, _offset: int) -> None:
        if key is not None:
            with self._lock:
                self._store(key, value)


class KafkaStatusStore(StatusStore):
    """Statuses on the status topic; the local cache is updated on write and on read-back."""

    def __init__(self, topic: str, client_settings: Mapping[str, Any]) -> None:
        super().__init__()
        self._log = KafkaLog(topic, client_settings, self._on_record)

    def start(self) -> None:
        """Read the status topic to its end."""
        self._log.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Flush pending writes and stop; idempotent."""
        self._log.flush(timeout)
        self._log.stop(timeout)

    def _put(self, key: str, status: Status | None) -> None:
        self._cache_put(key, status)
        self._log.send(key.encode(), None if status is None else status.to_json())

    def _write_raw(self, key: str, value: bytes | None) -> None:
        self._log.send(key.encode(), value)

    def _on_record(self, key: bytes | None, value: bytes | None, _partition: int, _offset: int) -> None:
        if key is not None and key.startswith(b"status-topic-"):
            self._topic_record(key.decode(), value)
            return
        if key is None or not key.startswith(b"status-"):
            return
        parsed = codec.loads(value)
        status = None if parsed is None else Status.from_json(parsed)
        if status is not None and self.superseded(key.decode(), status):
            return
        self._cache_put(key.decode(), status)
