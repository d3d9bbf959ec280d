"""Connect's task and worker metrics under Strimzi's JMX exporter names (connect/runtime/task_metrics.py,
worker_metrics.py)."""

from __future__ import annotations

import math

from connect.runtime.task_metrics import TaskMetrics
from connect.runtime.worker_metrics import ConnectorView, WorkerMetrics


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _by_name(samples: list) -> dict[str, float]:  # type: ignore[type-arg]
    return {m.name: m.value for m in samples}


def test_task_metrics_count_rate_and_time() -> None:
    clock = _Clock()
    metrics = TaskMetrics("c", 0, clock)
    metrics.set_state("running")
    metrics.poll_batch(10, 0.004)
    metrics.poll_batch(30, 0.002)
    metrics.written += 35
    metrics.dropped += 1
    metrics.offset_commit(0.010, ok=True)
    metrics.offset_commit(0.030, ok=False)
    clock.now += 10
    samples = metrics.samples({"total_records_skipped": 1, "total_record_errors": 1})
    values = _by_name(samples)
    assert values["kafka_connect_source_task_source_record_poll_total"] == 40
    assert values["kafka_connect_source_task_source_record_write_total"] == 35
    assert values["kafka_connect_source_task_source_record_poll_rate"] == 4.0
    assert values["kafka_connect_source_task_source_record_write_rate"] == 3.5
    assert values["kafka_connect_source_task_source_record_active_count"] == 4
    assert math.isclose(values["kafka_connect_source_task_poll_batch_avg_time_ms"], 3.0)
    assert math.isclose(values["kafka_connect_source_task_poll_batch_max_time_ms"], 4.0)
    assert values["kafka_connect_connector_task_batch_size_avg"] == 20
    assert values["kafka_connect_connector_task_batch_size_max"] == 30
    assert math.isclose(values["kafka_connect_connector_task_offset_commit_avg_time_ms"], 20.0)
    assert math.isclose(values["kafka_connect_connector_task_offset_commit_max_time_ms"], 30.0)
    assert values["kafka_connect_connector_task_offset_commit_success_percentage"] == 0.5
    assert values["kafka_connect_connector_task_running_ratio"] == 1.0
    assert values["kafka_connect_task_error_total_records_skipped"] == 1
    status = [m for m in samples if m.name == "kafka_connect_connector_task_status"]
    assert [(m.labels, m.value) for m in status] == [({"connector": "c", "task": "0", "status": "running"}, 1.0)]
    assert all(m.labels["connector"] == "c" and m.labels["task"] == "0" for m in samples)


def test_windowed_values_expire() -> None:
    clock = _Clock()
    metrics = TaskMetrics("c", 1, clock)
    metrics.poll_batch(5, 0.001)
    clock.now += 120
    values = _by_name(metrics.samples({}))
    assert math.isnan(values["kafka_connect_source_task_poll_batch_max_time_ms"])
    assert values["kafka_connect_source_task_source_record_poll_total"] == 5


def test_pause_ratio() -> None:
    clock = _Clock()
    metrics = TaskMetrics("c", 0, clock)
    metrics.set_state("running")
    clock.now += 30
    metrics.set_state("paused")
    clock.now += 10
    values = _by_name(metrics.samples({}))
    assert values["kafka_connect_connector_task_running_ratio"] == 0.75
    assert values["kafka_connect_connector_task_pause_ratio"] == 0.25


def test_worker_metrics() -> None:
    worker = WorkerMetrics()
    worker.connector_startups.record(True)
    worker.task_startups.record(True)
    worker.task_startups.record(False)
    view = ConnectorView("running", "io.debezium.connector.mongodb.MongoDbConnector", "3.6.1",
                         ["running", "failed"])
    samples = worker.samples({"inv": view}, 2)
    values = _by_name([m for m in samples if "connector" not in m.labels])
    assert values["kafka_connect_worker_connector_count"] == 1
    assert values["kafka_connect_worker_task_count"] == 2
    assert values["kafka_connect_worker_task_startup_attempts_total"] == 2
    assert values["kafka_connect_worker_task_startup_failure_total"] == 1
    assert values["kafka_connect_worker_task_startup_success_percentage"] == 0.5
    per = {(m.name, tuple(sorted(m.labels.items()))): m.value for m in samples if "connector" in m.labels}
    assert per[("kafka_connect_connector_status", (("connector", "inv"), ("status", "running")))] == 1
    assert per[("kafka_connect_worker_connector_failed_task_count", (("connector", "inv"),))] == 1
    assert per[("kafka_connect_worker_connector_total_task_count", (("connector", "inv"),))] == 2
    assert not any(m.name.startswith("kafka_connect_worker_rebalance_") for m in samples)
    rebalance = worker.distributed()
    rebalance.started()
    rebalance.completed_with(3, "http://w1:8083/", "sessioned")
    later = {(m.name, tuple(sorted(m.labels.items()))): m.value for m in worker.samples({}, 0)}
    assert later[("kafka_connect_worker_rebalance_epoch", ())] == 3
    assert later[("kafka_connect_worker_rebalance_completed_rebalances_total", ())] == 1
    assert later[("kafka_connect_worker_rebalance_leader_name", (("leader_name", "http://w1:8083/"),))] == 1
    assert later[("kafka_connect_worker_rebalance_connect_protocol", (("connect_protocol", "sessioned"),))] == 1
