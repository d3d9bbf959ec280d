"""An exactly-once task whose connector aborts a transaction with records still in flight: librdkafka purges them
and reports each as failed from inside ``abort_transaction``; those records belonged to the aborted transaction, so
their failure loses nothing and must not fail the task (Java's ``ExactlyOnceWorkerSourceTask`` ignores
asynchronous send failures: a real one resurfaces when the transaction commits)."""

from __future__ import annotations

from pathlib import Path

from connect.api.records import SourceRecord
from connect.runtime.exactly_once import ExactlyOnceWorkerSourceTask, TransactionBoundary
from connect.runtime.task_contracts import DeliveryCallback, TaskStatusListener
from connect.storage.config_state import ConnectorTaskId
from tests.unit.connect.support import IdleTask, QuietProducer, json_converters, offset_store


class _PurgedError(Exception):
    """What librdkafka reports for a record an abort purged (Local: Purged in queue)."""


class _TransactionalProducer(QuietProducer):
    """Holds records until the transaction ends: a commit acknowledges them, an abort fails them (purged)."""

    def __init__(self) -> None:
        self.held: list[DeliveryCallback] = []
        self.ended: list[str] = []
        self.offsets_written: list[bytes | None] = []  # the values sent to the offsets topic

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: DeliveryCallback | None = None) -> None:
        if topic == "offsets":
            self.offsets_written.append(value)
        if on_done is not None:
            self.held.append(on_done)

    def _end(self, how: str, error: BaseException | None) -> None:
        held, self.held = self.held, []
        for on_done in held:
            on_done(error, None)
        self.ended.append(how)

    def init_transactions(self, timeout: float) -> None:
        """Nothing to fence."""

    def begin_transaction(self) -> None:
        """Local."""

    def commit_transaction(self, timeout: float) -> None:
        self._end("commit", None)

    def abort_transaction(self, timeout: float) -> None:
        self._end("abort", _PurgedError("Local: Purged in queue"))


def _task(tmp_path: Path) -> tuple[ExactlyOnceWorkerSourceTask, _TransactionalProducer]:
    producer = _TransactionalProducer()
    task = ExactlyOnceWorkerSourceTask(
        ConnectorTaskId("conn", 0), IdleTask(), {}, json_converters(), producer, offset_store(tmp_path),
        TaskStatusListener(), flush_interval_ms=60_000, flush_timeout_ms=5_000, offsets_topic="offsets",
        boundary=TransactionBoundary.CONNECTOR, interval_ms=60_000, preflight=lambda: None, read_offsets=lambda: None)
    return task, producer


def _records(first: int, count: int) -> list[SourceRecord]:
    return [SourceRecord({"p": 0}, {"n": n}, "topic", None, None, None, None, f"v{n}")
            for n in range(first, first + count)]


def test_records_purged_by_an_abort_the_connector_asked_for_do_not_fail_the_task(tmp_path: Path) -> None:
    task, producer = _task(tmp_path)
    assert task._send(_records(0, 5)) == []
    task._abort("as requested by the connector")
    assert producer.ended == ["abort"] and task._send_error is None, "the aborted records' failure lost nothing"
    assert task._send(_records(5, 3)) == []
    task._commit_transaction()
    assert producer.ended == ["abort", "commit"] and task.transactions == 1 and task._send_error is None


def test_a_failure_outside_an_abort_still_fails_the_task(tmp_path: Path) -> None:
    task, producer = _task(tmp_path)
    assert task._send(_records(0, 2)) == []
    producer.held.pop(0)(_PurgedError("Broker: Message size too large"), None)
    assert isinstance(task._send_error, _PurgedError)


def test_an_abort_the_connector_asked_for_still_commits_the_offsets_of_the_dropped_records(tmp_path: Path) -> None:
    """As Connect's connector-defined boundary: the transaction is aborted, its records dropped, and the offsets they
    led to committed in a transaction of their own, so that the task does not read them again after a restart."""
    task, producer = _task(tmp_path)
    records = _records(0, 4)
    assert task._txn_context is not None
    task._txn_context.abort_transaction(records[2])
    assert task._send(records[:3]) == []
    assert producer.ended == ["abort", "commit"] and task.transactions == 1 and task._send_error is None
    assert producer.offsets_written == [b'{"n":2}'], "the offset of the last dropped record, committed"
    assert task._send(records[3:]) == []
    task._commit_transaction()
    assert producer.ended == ["abort", "commit", "commit"] and producer.offsets_written[-1] == b'{"n":3}'
