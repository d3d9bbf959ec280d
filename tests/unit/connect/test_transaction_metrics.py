"""KIP-618's ``transaction-size-avg``/``-min``/``-max`` (source-task-metrics): records per committed transaction,
for an exactly-once task only, under Strimzi's JMX exporter names
(``kafka_connect_source_task_transaction_size_avg{connector,task}``)."""

from __future__ import annotations

import math
from pathlib import Path

from connect.api.records import SourceRecord
from connect.runtime.exactly_once import ExactlyOnceWorkerSourceTask, TransactionBoundary
from connect.runtime.task_contracts import DeliveryCallback, TaskStatusListener
from connect.runtime.task_metrics import WINDOW_S, TaskMetrics
from connect.storage.config_state import ConnectorTaskId
from rest.prometheus import render
from tests.unit.connect.support import IdleTask, QuietProducer, json_converters, offset_store

SIZES = ("kafka_connect_source_task_transaction_size_avg", "kafka_connect_source_task_transaction_size_min",
         "kafka_connect_source_task_transaction_size_max")


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _sizes(metrics: TaskMetrics) -> dict[str, float]:
    return {m.name: m.value for m in metrics.samples({}) if m.name in SIZES}


def test_only_a_task_that_commits_transactions_has_them() -> None:
    metrics = TaskMetrics("c", 0)
    metrics.transaction_committed(5)  # not tracked: an at-least-once task has no transactions
    assert _sizes(metrics) == {}


def test_average_minimum_and_maximum_over_the_window() -> None:
    clock = _Clock()
    metrics = TaskMetrics("c", 0, clock)
    metrics.track_transactions()
    assert all(math.isnan(v) for v in _sizes(metrics).values()) and len(_sizes(metrics)) == 3  # NaN, as Connect's
    for size in (4, 10, 1):
        metrics.transaction_committed(size)
    assert _sizes(metrics) == {SIZES[0]: 5.0, SIZES[1]: 1.0, SIZES[2]: 10.0}
    clock.now += WINDOW_S + 1
    metrics.transaction_committed(7)
    assert _sizes(metrics) == {SIZES[0]: 7.0, SIZES[1]: 7.0, SIZES[2]: 7.0}
    text = render(metrics.samples({}))
    assert 'kafka_connect_source_task_transaction_size_avg{connector="c",task="0"} 7.0' in text
    assert "# TYPE kafka_connect_source_task_transaction_size_max gauge" in text


class _TransactionalProducer(QuietProducer):
    """Acknowledges the records of a transaction when it commits, fails them (purged) when it aborts."""

    def __init__(self) -> None:
        self.held: list[DeliveryCallback] = []

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: DeliveryCallback | None = None) -> None:
        if on_done is not None and topic != "offsets":
            self.held.append(on_done)

    def _end(self, error: BaseException | None) -> None:
        held, self.held = self.held, []
        for on_done in held:
            on_done(error, None)

    def init_transactions(self, timeout: float) -> None:
        """Nothing to fence."""

    def begin_transaction(self) -> None:
        """Local."""

    def commit_transaction(self, timeout: float) -> None:
        self._end(None)

    def abort_transaction(self, timeout: float) -> None:
        self._end(RuntimeError("Local: Purged in queue"))


def _records(first: int, count: int) -> list[SourceRecord]:
    return [SourceRecord({"p": 0}, {"n": n}, "topic", None, None, None, None, f"v{n}")
            for n in range(first, first + count)]


def test_the_exactly_once_task_records_each_committed_transaction(tmp_path: Path) -> None:
    task = ExactlyOnceWorkerSourceTask(
        ConnectorTaskId("conn", 2), IdleTask(), {}, json_converters(), _TransactionalProducer(),
        offset_store(tmp_path), TaskStatusListener(), flush_interval_ms=60_000, flush_timeout_ms=5_000,
        offsets_topic="offsets", boundary=TransactionBoundary.CONNECTOR, interval_ms=60_000,
        preflight=lambda: None, read_offsets=lambda: None)
    samples = [m for m in task.metrics() if m.name in SIZES]
    assert [m.labels for m in samples] == [{"connector": "conn", "task": "2"}] * 3  # registered with the task
    assert task._send(_records(0, 5)) == []
    task._abort("as requested by the connector")  # an aborted transaction is not a committed one
    assert task._send(_records(5, 3)) == []
    task._dropped(_records(8, 1)[0])  # filtered by a transform: its offset is committed, it is not in the size
    task._commit_transaction()
    assert task._send(_records(9, 6)) == []
    task._commit_transaction()
    values = {m.name: m.value for m in task.metrics() if m.name in SIZES}
    assert values == {SIZES[0]: 4.5, SIZES[1]: 3.0, SIZES[2]: 6.0}
