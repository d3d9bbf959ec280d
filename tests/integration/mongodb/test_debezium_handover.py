"""Offset hand-over with the real Debezium 3.6.1 MongoDB connector on Apache Kafka Connect 4.3.1: Debezium
snapshots and streams, stops; ours starts on Debezium's offsets (same connector name, same offsets topic) and
streams what changed meanwhile without a new snapshot; then Debezium starts on our offsets and does the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compat.debezium import harness
from tests.integration.mongodb.conftest import client
from tests.integration.support import create_connector, last_source, read_topic, unique, wait_offset_flushed

pytestmark = pytest.mark.integration






def _events(bootstrap: str, topic: str, count: int) -> list[tuple[str, Any]]:
    """(op, _id) of the data records of ``topic`` (tombstones left out)."""
    out = []
    for record in read_topic(bootstrap, topic, count, timeout=120):
        if record.value is not None:
            value = json.loads(record.value)["payload"]
            out.append((value["op"], json.loads(value["after"])["_id"] if value["after"] else None))
    return out


def _wait_flushed(bootstrap: str, group: str, name: str, topic: str, count: int) -> None:
    """Until an offset flush stored the position of the last of the ``count`` records of ``topic``."""
    wait_offset_flushed(bootstrap, f"{group}-offsets", name, last_source(read_topic(bootstrap, topic, count)))


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


    # 1. Debezium snapshots _id 0 and streams 1..5
    java = harness.join_group(tmp_path, stack.kafka_bootstrap, group, name, config)
    try:
        assert _events(stack.kafka_bootstrap, topic, 1) == [("r", 0)]  # the snapshot is over
        mongo[db]["c"].insert_many([{"_id": i} for i in range(1, 6)])
        assert _events(stack.kafka_bootstrap, topic, 6) == [("r", 0)] + [("c", i) for i in range(1, 6)]
        _wait_flushed(stack.kafka_bootstrap, group, name, topic, 6)
    finally:
        java.stop()
    mongo[db]["c"].insert_many([{"_id": i} for i in range(6, 11)])

    # 2. ours, on Debezium's offsets: 6..10 streamed, no snapshot
    ours = worker_factory(extra={"offset.storage.topic": f"{group}-offsets"})
    create_connector(ours, name, config)
    events = _events(stack.kafka_bootstrap, topic, 11)
    assert events[6:] == [("c", i) for i in range(6, 11)]
    mongo[db]["c"].insert_many([{"_id": i} for i in range(11, 16)])
    assert _events(stack.kafka_bootstrap, topic, 16)[11:] == [("c", i) for i in range(11, 16)]
    _wait_flushed(stack.kafka_bootstrap, group, name, topic, 16)
    ours.process.stop(timeout=30)
    mongo[db]["c"].insert_many([{"_id": i} for i in range(16, 21)])

    # 3. Debezium again, on our offsets: 16..20 streamed, no snapshot, nothing lost
    java = harness.join_group(tmp_path, stack.kafka_bootstrap, group, name, config)
    try:
        events = _events(stack.kafka_bootstrap, topic, 21)
        assert events[16:] == [("c", i) for i in range(16, 21)], events
        assert [op for op, _ in events].count("r") == 1
    finally:
        java.stop()
    mongo.close()
