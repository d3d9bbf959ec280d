"""A source task's Kafka producer in a child process.

kafka-python builds every record batch in Python: about 80 µs of CPU per record, under the same GIL as the
task that converts the records. This producer runs kafka-python in a child process instead; the task's
process hands it records in batches over a pipe and gets acknowledgements back, so the two halves use two
cores. Delivery semantics are unchanged: a record is acknowledged only when Kafka acknowledged it, in the
order the producer reports, and a dead child fails every outstanding record.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from typing import Any

from connect.api.errors import ConnectError, RetriableError

log = logging.getLogger(__name__)

DISPATCH_RECORDS = 500
MAX_IN_FLIGHT_BYTES = 8 * 1024 * 1024  # back-pressure, like buffer.memory: send waits beyond this
Record = tuple[int, str, bytes | None, bytes | None, list[tuple[str, bytes]], int | None, int | None]


class SendHandle:
    """What :meth:`ProcessProducer.send` returns: register the completion callback with ``add_both``."""

    __slots__ = ("_owner", "_seq")

    def __init__(self, owner: ProcessProducer, seq: int) -> None:
        self._owner = owner
        self._seq = seq

    def add_both(self, fn: Callable[..., Any], *args: Any) -> None:
        """Call ``fn(*args, result)`` once: ``result`` is an exception on failure, else None."""
        self._owner._register(self._seq, fn, args)


class ThreadProducer:
    """kafka-python's producer in the task's own process (``producer.process.enable=false``)."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        from connect import clients

        self._producer = clients.producer(settings)

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None) -> Any:
        """Send a record; the returned future takes ``add_both(fn, *args)``."""
        try:
            return self._producer.send(topic, value=value, key=key, headers=headers, partition=partition,
                                       timestamp_ms=timestamp_ms)
        except Exception as exc:
            if getattr(exc, "retriable", False):
                raise RetriableError(str(exc)) from exc
            raise

    def dispatch(self) -> None:
        """Nothing to do: kafka-python batches by itself."""

    def flush(self, timeout: float | None = None) -> None:
        """Wait for every record sent so far."""
        self._producer.flush(timeout=timeout)

    def close(self, timeout: float | None = None) -> None:
        """Close the producer."""
        self._producer.close(timeout=timeout)


class ProcessProducer:
    """The subset of ``KafkaProducer`` a source task uses: ``send``, ``flush``, ``close``."""

    def __init__(self, settings: Mapping[str, Any], name: str, start_timeout: float = 60.0) -> None:
        parent_sock, child_sock = socket.socketpair()
        self._process = subprocess.Popen(  # a plain child: no multiprocessing resource tracker beside it
            [sys.executable, "-m", "connect.runtime.producer_process", str(child_sock.fileno())],
            pass_fds=(child_sock.fileno(),), stdin=subprocess.DEVNULL,
        )
        child_sock.close()
        self._conn = Connection(os.dup(parent_sock.fileno()))
        parent_sock.close()
        self._conn.send(("settings", dict(settings)))
        self.name = name
        self._buffer: list[Record] = []
        self._callbacks: dict[int, tuple[Callable[..., Any], tuple[Any, ...]]] = {}
        self._early: dict[int, BaseException | None] = {}
        self._lock = threading.Lock()
        self._seq = 0
        self._flushed = threading.Condition(self._lock)
        self._control: list[str] = []
        self._dead: BaseException | None = None
        self._sizes: dict[int, int] = {}
        self._in_flight = 0  # bytes queued here or in the child, not yet acknowledged
        self._buffered = 0  # of which queued here (not in the child yet)
        self._room = threading.Condition(self._lock)
        self._expect("ready", start_timeout)
        self._reader = threading.Thread(target=self._read, name=f"{name}-acks", daemon=True)
        self._reader.start()

    def _expect(self, kind: str, timeout: float) -> None:
        if not self._conn.poll(timeout):
            self._process.kill()
            self._process.wait(5)
            raise ConnectError(f"Producer process {self.name} did not start within {timeout:.0f} s")
        message = self._conn.recv()
        if message[0] != kind:
            raise ConnectError(f"Producer process {self.name} failed to start: {message[1]}")

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None) -> SendHandle:
        """Queue a record; it leaves for the child at the next :meth:`dispatch` (or every 500 records)."""
        if self._dead is not None:
            raise ConnectError(f"Producer process {self.name} is gone: {self._dead}")
        self._seq += 1
        size = 64 + (len(value) if value else 0) + (len(key) if key else 0)
        with self._lock:
            self._sizes[self._seq] = size
            self._in_flight += size
            self._buffered += size
        self._buffer.append((self._seq, topic, key, value, headers, partition, timestamp_ms))
        handle = SendHandle(self, self._seq)
        if len(self._buffer) >= DISPATCH_RECORDS:
            self.dispatch()
        return handle

    def dispatch(self) -> None:
        """Hand the queued records to the child; waits (bounded) while too much is in flight."""
        self._wait_for_room()
        if self._buffer:
            batch, self._buffer = self._buffer, []
            with self._lock:
                self._buffered = 0
            try:
                self._conn.send(("batch", batch))
            except OSError as exc:
                raise RetriableError(f"Producer process {self.name} is unreachable: {exc}") from exc

    def _wait_for_room(self, timeout: float = 60.0) -> None:
        """Wait while the child holds more than the limit; the records queued here do not count, so a batch
        larger than the limit (one record over 8 MiB, say) still leaves once the child has drained."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._in_flight - self._buffered > MAX_IN_FLIGHT_BYTES and self._dead is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RetriableError(f"Producer process {self.name}: {self._in_flight} bytes unacknowledged "
                                         f"for {timeout:.0f} s")
                self._room.wait(min(remaining, 1.0))

    def _register(self, seq: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        with self._lock:
            if seq in self._early:
                result = self._early.pop(seq)
            else:
                self._callbacks[seq] = (fn, args)
                return
        fn(*args, result)

    def _read(self) -> None:
        try:
            while True:
                kind, payload = self._conn.recv()
                if kind == "acks":
                    self._complete(payload)
                else:
                    with self._lock:
                        self._control.append(kind)
                        self._flushed.notify_all()
        except (EOFError, OSError) as exc:
            self._fail_all(ConnectError(f"Producer process {self.name} exited: {exc or 'connection closed'}"))

    def _complete(self, acks: list[tuple[int, str | None]]) -> None:
        with self._lock:
            for seq, _ in acks:
                self._in_flight -= self._sizes.pop(seq, 0)
            self._room.notify_all()
        for seq, error in acks:
            result: BaseException | None = None if error is None else ConnectError(error)
            with self._lock:
                entry = self._callbacks.pop(seq, None)
                if entry is None:
                    self._early[seq] = result
                    continue
            entry[0](*entry[1], result)

    def _fail_all(self, exc: BaseException) -> None:
        with self._lock:
            self._dead = exc
            pending, self._callbacks = self._callbacks, {}
            self._control.append("dead")
            self._flushed.notify_all()
            self._room.notify_all()
        for fn, args in pending.values():
            fn(*args, exc)

    def _request(self, kind: str, timeout: float) -> bool:
        self.dispatch()
        with self._lock:
            self._control.clear()
        try:
            self._conn.send((kind, timeout))
        except OSError:
            return False
        deadline = time.monotonic() + timeout + 5
        with self._lock:
            while not self._control:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._flushed.wait(remaining):
                    return False
            return self._control[-1] != "dead"

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every record sent so far is acknowledged (or failed)."""
        if self._dead is None and not self._request("flush", 30.0 if timeout is None else timeout):
            log.warning("Producer process %s did not confirm a flush in time", self.name)

    def close(self, timeout: float | None = None) -> None:
        """Flush, stop the child and reap it; idempotent."""
        budget = 30.0 if timeout is None else timeout
        if self._dead is None and self._process.poll() is None:
            self._request("close", budget)
        try:
            self._process.wait(budget)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(5)
        self._conn.close()


def describe(exc: BaseException) -> str:
    """A failed send for the task's trace: a broker error code without a message (``[Error 10]
    MessageSizeTooLargeError: None``) gets kafka-python's description of the code."""
    text = str(exc)
    description = getattr(exc, "description", None)
    if description and exc.args in ((), (None,)):
        text = f"{text.removesuffix(': None')}: {description}"
    return f"{type(exc).__name__}: {text}"


def _child_main(conn: Any) -> None:
    """The child: a kafka-python producer fed through ``conn``."""
    from connect import clients  # imported here: the child imports only what it needs

    kind, settings = conn.recv()
    try:
        producer = clients.producer(settings)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the task
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", None))
    acks: list[tuple[int, str | None]] = []
    lock = threading.Lock()
    outstanding = [0]

    def done(seq: int, result: Any) -> None:
        error = describe(result) if isinstance(result, BaseException) else None
        with lock:
            acks.append((seq, error))
            outstanding[0] -= 1

    def send_acks() -> None:
        nonlocal acks
        with lock:
            ready, acks = acks, []
        if ready:
            conn.send(("acks", ready))

    try:
        while True:
            if conn.poll(0.002 if outstanding[0] else 0.2):
                kind, payload = conn.recv()
                if kind == "batch":
                    for seq, topic, key, value, headers, partition, timestamp in payload:
                        with lock:
                            outstanding[0] += 1
                        try:
                            future = producer.send(topic, value=value, key=key, headers=headers,
                                                   partition=partition, timestamp_ms=timestamp)
                        except Exception as exc:  # noqa: BLE001 - becomes this record's failure
                            done(seq, exc)
                            continue
                        future.add_both(done, seq)
                elif kind in ("flush", "close"):
                    producer.flush(timeout=payload)
                    send_acks()
                    if kind == "close":
                        producer.close(timeout=payload)
                        conn.send(("closed", None))
                        return
                    conn.send(("flushed", None))
            send_acks()
    except (EOFError, OSError):
        producer.close(timeout=5)


if __name__ == "__main__":
    _child_main(Connection(int(sys.argv[1])))
