"""``GET /metrics`` beyond the common series: the source-task producer's client metrics (from librdkafka's
statistics), the group coordinator's assignment, Debezium's advanced per-collection counts, and the snapshot
context as Debezium's SnapshotMeter keeps it (skipped, paused and resumed by signals, completed), on a running
worker with real Kafka and SecantusDB."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from bson import ObjectId

from tests.integration.support import Worker, create_connector, read_topic, unique
from tests.integration.test_metrics import samples, value

pytestmark = pytest.mark.integration

Found = dict[str, list[tuple[dict[str, str], float]]]


def number(found: Found, family: str, /, **labels: str) -> float:
    """The sample's value, which must be there."""
    result = value(found, family, **labels)
    assert result is not None, f"{family}{labels} is missing"
    return result


def _scrape_until(worker: Worker, ready: Callable[[Found], bool], timeout: float = 60) -> Found:
    deadline, found = time.monotonic() + timeout, {}
    while time.monotonic() < deadline:
        found = samples(worker.http.get("/metrics").text)
        if ready(found):
            return found
        time.sleep(0.3)
    return found


def test_producer_coordinator_and_per_collection_metrics(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = unique("pmet-"), unique("pmet"), unique("pmetdb_")
    mongo[db].c.insert_many([{"_id": n} for n in range(4)])  # read by the initial snapshot
    create_connector(worker, name, {
        "connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
        "collection.include.list": f"{db}.c,{db}.d", "internal.advanced.metrics.enable": "true",
        "producer.override.metrics.sample.window.ms": "500"})
    streaming = {"plugin": "mongodb", "name": prefix, "task": "0", "context": "streaming"}
    snapshot = {**streaming, "context": "snapshot"}
    # the changes below come after the initial snapshot: made while it runs, it may read them too (and d)
    _scrape_until(worker, lambda found: value(found, "debezium_metrics_SnapshotCompleted", **snapshot) == 1)
    mongo[db].c.insert_many([{"_id": n} for n in range(4, 7)])
    mongo[db].c.update_one({"_id": 1}, {"$set": {"x": 1}})
    mongo[db].c.delete_one({"_id": 2})
    mongo[db].d.insert_many([{"_id": n} for n in range(2)])
    read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.d", 2)
    topic_c = f"{prefix}.{db}.c"
    client = {"clientid": f"connector-producer-{name}-0"}

    def ready(found: Found) -> bool:  # c: 4 read + 3 created + 1 updated + 1 deleted (+ its tombstone)
        sent = value(found, "kafka_producer_topic_record_send_total", **client, topic=topic_c)
        deletes = value(found, "debezium_metrics_NumberOfDeleteEventsSeen", **streaming, table=f"{db}.c")
        # librdkafka's totals may lag its topics' counts within one statistics document (its STATISTICS.md): the
        # producer's total, c's 10 and d's 2, is waited for too
        total = value(found, "kafka_producer_record_send_total", **client)
        return sent is not None and sent >= 10 and deletes == 1 and total is not None and total >= 12
    found = _scrape_until(worker, ready)

    # Debezium's advanced metrics: the maps per collection, the collection as the ``table`` label
    per = {"NumberOfCreateEventsSeen": (3, 2), "NumberOfUpdateEventsSeen": (1, None),
           "NumberOfDeleteEventsSeen": (1, None)}
    for family, (in_c, in_d) in per.items():
        assert value(found, f"debezium_metrics_{family}", **streaming, table=f"{db}.c") == in_c, family
        assert value(found, f"debezium_metrics_{family}", **streaming, table=f"{db}.d") == in_d, family
    assert value(found, "debezium_metrics_NumberOfUnchangedEventsSkipped", **streaming) == -1
    assert number(found, "debezium_metrics_LastSourceEventPollTime", **streaming) >= 0
    assert number(found, "debezium_metrics_LastEmptyPollTime", **streaming) >= 0
    p50, p99 = (number(found, f"debezium_metrics_MilliSecondsBehindSource{q}", **streaming) for q in ("P50", "P99"))
    assert 0 <= p50 <= p99 <= number(found, "debezium_metrics_MilliSecondsBehindSourceMaxValue", **streaming) * 1.02

    # the producer's client metrics, from librdkafka's statistics (every 500 ms here)
    assert value(found, "kafka_producer_topic_record_send_total", **client, topic=topic_c) == 10
    assert number(found, "kafka_producer_topic_byte_total", **client, topic=topic_c) > 0
    assert number(found, "kafka_producer_record_send_total", **client) >= 12
    assert number(found, "kafka_producer_request_total", **client) > 0
    assert number(found, "kafka_producer_outgoing_byte_total", **client) > 0
    assert number(found, "kafka_producer_buffer_total_bytes", **client) == 32 * 1024 * 1024
    assert number(found, "kafka_producer_connection_count", **client) >= 1
    assert number(found, "kafka_producer_start_time_seconds", **client) > time.time() - 600
    nodes = [labels for labels, _ in found["kafka_producer_node_request_total"] if labels["clientid"] == client[
        "clientid"]]
    assert nodes and all(labels["nodeid"].startswith("node-") for labels in nodes)
    assert any(number > 0 for labels, number in found["kafka_producer_node_outgoing_byte_total"]
               if labels["clientid"] == client["clientid"])

    # the group coordinator: this worker runs the connector and its task
    coordinator = found["kafka_connect_coordinator_assigned_connectors"]
    assert coordinator and coordinator[0][0]["clientid"].startswith("connect-") and coordinator[0][1] >= 1
    assert (found["kafka_connect_coordinator_assigned_tasks"][0][1]) >= 1
    member = coordinator[0][0]["clientid"]
    # the group member's client: Debezium's example rule (every connect-metrics attribute, ``client`` label) and
    # Strimzi's generic client-id rules (``clientid``)
    assert number(found, "kafka_connect_metrics_incoming_byte_rate", client=member) >= 0
    assert number(found, "kafka_connect_metrics_outgoing_byte_rate", client=member) >= 0
    assert number(found, "kafka_connect_connection_count", clientid=member) >= 1
    assert number(found, "kafka_connect_coordinator_join_time_avg", clientid=member) >= 0
    assert any(labels.get("clientid") == member and labels.get("nodeid", "").startswith("node-")
               for labels, _ in found.get("kafka_connect_node_request_latency_avg", []))

    # the snapshot context: the initial snapshot completed, the queue shown in both contexts
    # d did not exist yet: one collection
    for family, expected in (("SnapshotCompleted", 1), ("SnapshotRunning", 0), ("SnapshotSkipped", 0),
                             ("SnapshotPaused", 0), ("TotalTableCount", 1), ("RemainingTableCount", 0)):
        assert value(found, f"debezium_metrics_{family}", **snapshot) == expected, family
    assert value(found, "debezium_metrics_RowsScanned", **snapshot, table=f"{db}.c") == 4
    assert value(found, "debezium_metrics_QueueTotalCapacity", **snapshot) == \
        value(found, "debezium_metrics_QueueTotalCapacity", **streaming)


def _signal(mongo: Any, db: str, kind: str, data: dict[str, Any]) -> None:
    mongo[db].signals.insert_one({"_id": ObjectId(), "type": kind, "data": json.dumps(data)})


def test_snapshot_metrics_follow_skip_pause_resume_and_completion(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = unique("smet-"), unique("smet"), unique("smetdb_")
    mongo[db].items.insert_many([{"_id": n, "v": 0} for n in range(600)])
    create_connector(worker, name, {
        "connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
        "collection.include.list": f"{db}.items", "snapshot.mode": "no_data",
        "signal.data.collection": f"{db}.signals", "incremental.snapshot.chunk.size": "100"})
    snapshot = {"plugin": "mongodb", "name": prefix, "task": "0", "context": "snapshot"}

    def has(family: str, expected: float, **labels: str) -> Callable[[Found], bool]:
        return lambda found: value(found, f"debezium_metrics_{family}", **snapshot, **labels) == expected

    found = _scrape_until(worker, has("SnapshotSkipped", 1))  # no_data: the initial snapshot is skipped
    assert value(found, "debezium_metrics_SnapshotSkipped", **snapshot) == 1
    assert value(found, "debezium_metrics_SnapshotRunning", **snapshot) == 0
    assert value(found, "debezium_metrics_TotalTableCount", **snapshot) == 0

    _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}\\.items"]})
    _signal(mongo, db, "pause-snapshot", {})
    found = _scrape_until(worker, has("SnapshotPaused", 1))
    assert value(found, "debezium_metrics_SnapshotPaused", **snapshot) == 1
    assert value(found, "debezium_metrics_SnapshotRunning", **snapshot) == 0
    assert value(found, "debezium_metrics_SnapshotSkipped", **snapshot) == 0
    assert value(found, "debezium_metrics_TotalTableCount", **snapshot) == 1
    assert value(found, "debezium_metrics_RemainingTableCount", **snapshot) == 1

    _signal(mongo, db, "resume-snapshot", {})
    found = _scrape_until(worker, has("SnapshotCompleted", 1), timeout=120)
    assert value(found, "debezium_metrics_SnapshotCompleted", **snapshot) == 1
    assert value(found, "debezium_metrics_SnapshotPaused", **snapshot) == 0
    assert value(found, "debezium_metrics_RemainingTableCount", **snapshot) == 0
    assert value(found, "debezium_metrics_RowsScanned", **snapshot, table=f"{db}.items") == 600
    assert number(found, "debezium_metrics_SnapshotPausedDurationInSeconds", **snapshot) >= 0
    assert number(found, "debezium_metrics_MilliSecondsSinceLastEvent", **snapshot) >= 0


def test_kafka_python_producer_metrics_keep_the_java_names(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = unique("kpmet-"), unique("kpmet"), unique("kpmetdb_")
    create_connector(worker, name, {
        "connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
        "collection.include.list": f"{db}.c", "producer.override.client.library": "kafka-python"})
    mongo[db].c.insert_many([{"_id": n} for n in range(5)])
    topic = f"{prefix}.{db}.c"
    read_topic(stack.kafka_bootstrap, topic, 5)
    client = {"clientid": f"connector-producer-{name}-0"}
    found = _scrape_until(worker, lambda found: (value(found, "kafka_producer_topic_record_send_rate", **client,
                                                       topic=topic) or 0) > 0)
    # kafka-python keeps the Java names, with rates and averages but no totals: exported as Strimzi's rules do
    assert number(found, "kafka_producer_topic_record_send_rate", **client, topic=topic) > 0
    assert number(found, "kafka_producer_topic_byte_rate", **client, topic=topic) > 0
    assert number(found, "kafka_producer_record_queue_time_avg", **client) >= 0
    assert number(found, "kafka_producer_batch_size_avg", **client) > 0
    assert "kafka_producer_record_send_rate" not in found  # Strimzi's rules export no producer-metrics rate
    nodes = [labels["nodeid"] for labels, _ in found.get("kafka_producer_node_outgoing_byte_rate", [])
             if labels["clientid"] == client["clientid"]]
    assert nodes and all(node.startswith("node-") for node in nodes)
