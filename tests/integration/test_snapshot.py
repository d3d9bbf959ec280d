"""Debezium's initial snapshot: documents written before the connector existed arrive as ``r`` records (the last
one marked ``last``), then streaming continues from the position taken before the copy; ``no_data`` skips it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.support import Worker, create_connector, payload, read_topic, unique

pytestmark = pytest.mark.integration


def _create(worker: Worker, stack: Any, db: str, prefix: str, **extra: str) -> str:
    name = unique("snap-")
    config = {"connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
              "topic.prefix": prefix, "collection.include.list": f"{db}\\.(a|b)", **extra}
    create_connector(worker, name, config)
    return name


def test_initial_snapshot_then_streaming(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix = unique("snapdb_"), unique("snap")
    mongo[db].a.insert_many([{"_id": i, "v": i} for i in range(5)])
    mongo[db].b.insert_one({"_id": "only"})
    mongo[db].ignored.insert_one({"_id": 1})
    _create(worker, stack, db, prefix)
    b_records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.b", 1)
    # once the snapshot is over (a write during the copy may be read by it too, as in Debezium)
    mongo[db].a.insert_one({"_id": 99})

    a_records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.a", 6)
    snapshot_a = [payload(r.value) for r in a_records[:5]]
    assert [p["op"] for p in snapshot_a] == ["r"] * 5
    assert [json.loads(p["after"])["_id"] for p in snapshot_a] == [0, 1, 2, 3, 4]
    assert all(p["source"]["snapshot"] == "true" and p["source"]["ord"] == -1 for p in snapshot_a)
    assert all(p["before"] is None and p["updateDescription"] is None for p in snapshot_a)
    last = payload(b_records[0].value)
    assert last["op"] == "r" and last["source"]["snapshot"] == "last", "collection b sorts after a: last record"
    streamed = payload(a_records[5].value)
    assert streamed["op"] == "c" and json.loads(streamed["after"])["_id"] == 99
    assert streamed["source"]["snapshot"] == "false"


def test_no_data_skips_the_snapshot(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix = unique("nosnapdb_"), unique("nosnap")
    mongo[db].a.insert_one({"_id": "before"})
    _create(worker, stack, db, prefix, **{"snapshot.mode": "no_data"})
    mongo[db].a.insert_one({"_id": "after"})
    records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.a", 1)
    assert [json.loads(payload(r.value)["after"])["_id"] for r in records] == ["after"]
