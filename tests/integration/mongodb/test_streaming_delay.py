"""``streaming.delay.ms`` as Debezium honours it: after an initial snapshot the task waits that long before it
opens the change stream (from the snapshot's position, so nothing written meanwhile is lost), and a task that
starts without a snapshot (``no_data``, or stored offsets) streams at once (Debezium's coordinator delays only
after a snapshot it completed)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.mongodb.conftest import create_mongodb_connector, values
from tests.integration.support import Worker, unique

pytestmark = pytest.mark.integration

DELAY_MS = 3000


def test_streaming_starts_the_delay_after_the_snapshot(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix = unique("delay"), unique("d")
    coll = mongo[db]["c"]
    coll.insert_one({"_id": 1})
    create_mongodb_connector(worker, unique("delay-"), {
        "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix, "collection.include.list": f"{db}.c",
        "snapshot.mode": "initial", "streaming.delay.ms": str(DELAY_MS)})
    topic = f"{prefix}.{db}.c"
    [read] = values(stack.kafka_bootstrap, topic, 1)
    assert read["op"] == "r"
    coll.insert_one({"_id": 2})  # during the delay: streamed once it ends
    snapshot, streamed = values(stack.kafka_bootstrap, topic, 2)
    assert streamed["op"] == "c"
    # ts_ms is when the connector wrote each record: the change stream was read only once the delay had passed
    assert streamed["ts_ms"] - snapshot["ts_ms"] >= DELAY_MS


def test_no_delay_when_the_task_starts_without_a_snapshot(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix = unique("nodelay"), unique("n")
    create_mongodb_connector(worker, unique("nodelay-"), {
        "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix, "collection.include.list": f"{db}.c",
        "snapshot.mode": "no_data", "streaming.delay.ms": "600000"})
    mongo[db]["c"].insert_one({"_id": 1})
    [streamed] = values(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1, timeout=60)  # well before the 10 minutes
    assert streamed["op"] == "c"
