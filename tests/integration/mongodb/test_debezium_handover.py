"""Offset hand-over with the real Debezium 3.6.1 MongoDB connector on Apache Kafka Connect 4.3.1: Debezium
snapshots and streams, stops; ours starts on Debezium's offsets (same connector name, same offsets topic) and
streams what changed meanwhile without a new snapshot; then Debezium starts on our offsets and does the same."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import stack as stack_mod
from compat.debezium import harness
from stack.worker import distributed_properties
from tests.integration.mongodb.conftest import client
from tests.integration.support import read_topic, unique

pytestmark = pytest.mark.integration


def _request(base: str, method: str, path: str, body: Any = None) -> int:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{base}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def _wait_running(base: str, name: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/connectors/{name}/status", timeout=10) as reply:
                status = json.loads(reply.read())
            tasks = status.get("tasks", [])
            if tasks and tasks[0]["state"] == "FAILED":
                raise AssertionError(tasks[0].get("trace"))
            if status["connector"]["state"] == "RUNNING" and tasks and tasks[0]["state"] == "RUNNING":
                return
        except urllib.error.HTTPError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{name} never ran on {base}")


def _events(bootstrap: str, topic: str, count: int) -> list[tuple[str, Any]]:
    """(op, _id) of the data records of ``topic`` (tombstones left out)."""
    out = []
    for record in read_topic(bootstrap, topic, count, timeout=120):
        if record.value is not None:
            value = json.loads(record.value)["payload"]
            out.append((value["op"], json.loads(value["after"])["_id"] if value["after"] else None))
    return out


def test_offsets_hand_over_both_ways(worker_factory: Any, stack: Any, secantus_factory: Any,
                                     tmp_path: Path) -> None:
    server = secantus_factory()
    mongo = client(server.uri)
    db, prefix, name = unique("hand"), unique("h"), "handover"
    topic = f"{prefix}.{db}.c"
    group = unique("dbz-")
    config = {"connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": server.uri,
              "topic.prefix": prefix, "collection.include.list": f"{db}.c", "snapshot.mode": "initial",
              "tasks.max": "1"}
    mongo[db]["c"].insert_one({"_id": 0})

    def debezium() -> harness.DebeziumConnect:
        port = stack_mod.free_port()
        connect = harness.DebeziumConnect(tmp_path / f"debezium-{port}", port,
                                          distributed_properties(stack.kafka_bootstrap, port, group_id=group))
        connect.start()
        # 409 the second time: the connector is still in this group's config topic and starts by itself
        assert _request(connect.address, "POST", "/connectors", {"name": name, "config": config}) in (201, 409)
        _wait_running(connect.address, name)
        return connect

    # 1. Debezium snapshots _id 0 and streams 1..5
    java = debezium()
    try:
        assert _events(stack.kafka_bootstrap, topic, 1) == [("r", 0)]  # the snapshot is over
        mongo[db]["c"].insert_many([{"_id": i} for i in range(1, 6)])
        assert _events(stack.kafka_bootstrap, topic, 6) == [("r", 0)] + [("c", i) for i in range(1, 6)]
        time.sleep(3)  # an offset flush (offset.flush.interval.ms=1000) after the last record
    finally:
        java.stop()
    mongo[db]["c"].insert_many([{"_id": i} for i in range(6, 11)])

    # 2. ours, on Debezium's offsets: 6..10 streamed, no snapshot
    ours = worker_factory(extra={"offset.storage.topic": f"{group}-offsets"})
    assert ours.http.post("/connectors", json={"name": name, "config": config}).status_code == 201
    ours.wait_running(name)
    events = _events(stack.kafka_bootstrap, topic, 11)
    assert events[6:] == [("c", i) for i in range(6, 11)]
    mongo[db]["c"].insert_many([{"_id": i} for i in range(11, 16)])
    assert _events(stack.kafka_bootstrap, topic, 16)[11:] == [("c", i) for i in range(11, 16)]
    time.sleep(3)
    ours.process.stop(timeout=30)
    mongo[db]["c"].insert_many([{"_id": i} for i in range(16, 21)])

    # 3. Debezium again, on our offsets: 16..20 streamed, no snapshot, nothing lost
    java = debezium()
    try:
        events = _events(stack.kafka_bootstrap, topic, 21)
        assert events[16:] == [("c", i) for i in range(16, 21)], events
        assert [op for op, _ in events].count("r") == 1
    finally:
        java.stop()
    mongo.close()
