"""``GET /metrics``: Kafka Connect's and Debezium's metrics under the names the Prometheus JMX exporter rules of
Strimzi's and Debezium's examples give them, plus the process metrics, after a real MongoDB connector ran."""

from __future__ import annotations

import time
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.support import Worker, create_connector, unique

pytestmark = pytest.mark.integration


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Sample name -> [(labels, value)], parsed by prometheus_client's own parser."""
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return found


def value(found: dict[str, list[tuple[dict[str, str], float]]], name: str, /, **labels: str) -> float | None:
    for have, number in found.get(name, []):
        if all(have.get(k) == v for k, v in labels.items()):
            return number
    return None


def test_metrics_name_connect_and_debezium_as_the_usual_dashboards_do(worker: Worker, stack: Any,
                                                                      mongo: Any) -> None:
    name, prefix, db = unique("metrics-"), unique("met"), unique("metdb_")
    config = {"connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
              "topic.prefix": prefix, "collection.include.list": f"{db}.c", "offset.flush.interval.ms": "500"}
    mongo[db].c.insert_many([{"_id": n} for n in range(5)])  # read by the initial snapshot
    create_connector(worker, name, config)
    worker.wait_running(name)
    # "running" comes before the snapshot's end: documents inserted while it reads would be read by it *and*
    # streamed from the position it took first (as Debezium does), so the streamed ones wait for its end.
    debezium = {"plugin": "mongodb", "name": prefix, "task": "0"}
    deadline = time.monotonic() + 60
    while value(samples(worker.http.get("/metrics").text), "debezium_metrics_SnapshotCompleted", **debezium,
                context="snapshot") != 1:
        assert time.monotonic() < deadline, "the snapshot did not complete"
        time.sleep(0.2)
    mongo[db].c.insert_many([{"_id": n} for n in range(5, 25)])  # streamed
    deadline = time.monotonic() + 60
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    task = {"connector": name, "task": "0"}
    while time.monotonic() < deadline:
        response = worker.http.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        found = samples(response.text)
        written = value(found, "kafka_connect_source_task_source_record_write_total", **task)
        commits = value(found, "kafka_connect_connector_task_offset_commit_success_percentage", **task)
        if written is not None and written >= 25 and commits:
            break
        time.sleep(0.3)
    assert value(found, "kafka_connect_source_task_source_record_write_total", **task) == 25
    assert value(found, "kafka_connect_source_task_source_record_poll_total", **task) == 25
    assert (value(found, "kafka_connect_source_task_source_record_write_rate", **task) or 0) > 0
    assert (value(found, "kafka_connect_source_task_poll_batch_max_time_ms", **task) or -1) >= 0
    assert (value(found, "kafka_connect_connector_task_offset_commit_max_time_ms", **task) or -1) >= 0
    assert value(found, "kafka_connect_connector_task_offset_commit_success_percentage", **task) == 1
    assert value(found, "kafka_connect_task_error_total_record_errors", **task) == 0
    assert value(found, "kafka_connect_connector_task_status", **task, status="running") == 1
    assert value(found, "kafka_connect_connector_status", connector=name, status="running") == 1
    assert value(found, "kafka_connect_connector_connector_class", connector=name,
                 connector_class="MongoDbConnector") == 1
    assert value(found, "kafka_connect_worker_connector_running_task_count", connector=name) == 1
    assert (value(found, "kafka_connect_worker_connector_count") or 0) >= 1
    assert (value(found, "kafka_connect_worker_task_count") or 0) >= 1
    assert (value(found, "kafka_connect_worker_task_startup_success_total") or 0) >= 1
    assert (value(found, "kafka_connect_worker_connector_startup_attempts_total") or 0) >= 1
    assert (value(found, "kafka_connect_worker_rebalance_completed_rebalances_total") or 0) >= 1
    assert value(found, "kafka_connect_worker_rebalance_connect_protocol", connect_protocol="sessioned") == 1
    assert found["kafka_connect_worker_rebalance_leader_name"][0][0]["leader_name"].startswith("http://")
    assert value(found, "debezium_metrics_TotalNumberOfEventsSeen", **debezium, context="streaming") == 20
    assert value(found, "debezium_metrics_SnapshotCompleted", **debezium, context="snapshot") == 1
    assert value(found, "debezium_metrics_RowsScanned", **debezium, context="snapshot", table=f"{db}.c") == 5
    assert value(found, "debezium_metrics_Connected", **debezium, context="streaming") == 1
    for family in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                   "process_start_time_seconds"):
        assert (value(found, family) or 0) > 0, family
