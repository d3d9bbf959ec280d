"""At-least-once across a crash: SIGKILL the worker in the middle of 10,000 writes, start it again, and every
write is in Kafka, in order per document, with the connector RUNNING again and no snapshot."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

import pytest

from tests.integration.support import (
    Worker,
    create_connector,
    last_source,
    payload,
    read_topic,
    unique,
    wait_offset_flushed,
)

pytestmark = pytest.mark.integration

BATCHES = 50
PER_BATCH = 100  # each batch: 100 inserts, then one update_many touching the same 100 documents


def _write(collection: Any, done: threading.Event) -> None:
    try:
        for batch in range(BATCHES):
            docs = [{"_id": batch * PER_BATCH + i, "batch": batch, "v": 0, "pad": "x" * 200} for i in range(PER_BATCH)]
            collection.insert_many(docs, ordered=True)
            collection.update_many({"batch": batch}, {"$inc": {"v": 1}})
    finally:
        done.set()


def test_sigkill_mid_stream_loses_nothing(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = unique("crash-"), unique("crash"), unique("crashdb_")
    config = {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
              "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
              "collection.include.list": f"{db}.items"}
    create_connector(worker, name, config)
    topic = f"{prefix}.{db}.items"

    done = threading.Event()
    writer = threading.Thread(target=_write, args=(mongo[db].items, done))
    writer.start()
    first = read_topic(stack.kafka_bootstrap, topic, 1500, timeout=120)
    # killed once an offset flush (offset.flush.interval.ms=1000) has stored a position mid-stream
    offsets = worker.process.properties["offset.storage.topic"]
    wait_offset_flushed(stack.kafka_bootstrap, offsets, name, last_source(first[:1500]))
    worker.process.kill()
    writer.join(timeout=300)
    assert done.is_set()

    worker.process.start()
    worker.wait_running(name)
    total = BATCHES * PER_BATCH * 2
    seen: dict[int, list[str]] = {}
    wanted = total
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        seen = defaultdict(list)
        records = read_topic(stack.kafka_bootstrap, topic, wanted, timeout=240)
        for record in records:
            body = payload(record.value)
            assert body["op"] in ("c", "u"), "no snapshot (r) events and no deletes were expected"
            seen[int(payload(record.key)["id"])].append(body["op"])
        if sum(len(set(ops)) for ops in seen.values()) >= total:
            break
        wanted = len(records) + 1
    assert len(seen) == BATCHES * PER_BATCH
    for doc_id, ops in seen.items():
        assert "c" in ops and "u" in ops, f"document {doc_id} is missing a write: {ops}"
        assert ops.index("c") < ops.index("u"), f"document {doc_id} out of order: {ops}"
    status = worker.http.get(f"/connectors/{name}/status").json()
    assert status["connector"]["state"] == "RUNNING" and status["tasks"][0]["state"] == "RUNNING"
