"""Heartbeats (``heartbeat.interval.ms``): records on ``__debezium-heartbeat.<prefix>`` in Debezium's shape, and
offsets that advance while every change is filtered out."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration


def _offset(worker: Worker, name: str) -> dict[str, Any] | None:
    offsets = worker.http.get(f"/connectors/{name}/offsets").json()["offsets"]
    return offsets[0]["offset"] if offsets else None


def test_heartbeats_advance_offsets_on_a_filtered_stream(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = unique("hb-"), unique("hb"), unique("hbdb_")
    config = {"connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
              "topic.prefix": prefix, "collection.include.list": f"{db}.wanted", "heartbeat.interval.ms": "300"}
    create_connector(worker, name, config)
    heartbeats = read_topic(stack.kafka_bootstrap, f"__debezium-heartbeat.{prefix}", 1)
    key = json.loads(heartbeats[0].key)
    assert key["schema"]["name"] == "io.debezium.connector.common.ServerNameKey"
    assert key["payload"] == {"serverName": prefix}
    value = json.loads(heartbeats[0].value)
    assert value["schema"]["name"] == "io.debezium.connector.common.Heartbeat"
    assert abs(value["payload"]["ts_ms"] - time.time() * 1000) < 120_000
    assert heartbeats[0].partition == 0

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _offset(worker, name) is None:
        time.sleep(0.3)
    before = _offset(worker, name)
    assert before is not None, "a heartbeat commits the position even before any data record"
    for n in range(5):
        mongo[db].ignored.insert_one({"_id": n})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _offset(worker, name) == before:
        time.sleep(0.3)
    after = _offset(worker, name)
    assert after is not None and after["resume_token"] != before["resume_token"], \
        "filtered changes move the committed position forward"
