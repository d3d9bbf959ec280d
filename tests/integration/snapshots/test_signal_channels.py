"""``signal.enabled.channels`` turns the source channel off (inserts into the signal collection are then not
signals), and ``incremental.snapshot.watermarking.strategy=INSERT_DELETE`` closes each window by deleting its open
watermark: an incremental snapshot started from the Kafka signal topic reads every document and leaves no
watermark behind."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bson import ObjectId
from kafka import KafkaProducer

from tests.integration.snapshots.helpers import create, event, load, replay
from tests.integration.support import Worker, read_topic, unique

pytestmark = pytest.mark.integration

DOCS = 600


def _incremental_reads(records: list[Any]) -> set[Any]:
    return {doc_id for doc_id, body in map(event, records)
            if body is not None and body["op"] == "r" and body["source"]["snapshot"] == "incremental"}


def test_kafka_only_signals_and_insert_delete_watermarks(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("wmark_"), unique("wmark"), unique("wmark-")
    load(mongo[db].items, DOCS, lambda i: {"_id": i, "v": i})
    producer = KafkaProducer(bootstrap_servers=stack.kafka_bootstrap)
    signal_topic = f"{prefix}-signal"
    producer.send(signal_topic, key=b"nobody", value=b"{}").get(30)  # creates the topic; not for this connector
    create(worker, name, {
        "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
        "collection.include.list": f"{db}\\.items", "snapshot.mode": "no_data",
        "signal.data.collection": f"{db}.signals", "incremental.snapshot.chunk.size": "100",
        "signal.enabled.channels": "kafka", "signal.kafka.bootstrap.servers": stack.kafka_bootstrap,
        "signal.poll.interval.ms": "200", "incremental.snapshot.watermarking.strategy": "INSERT_DELETE"})
    topic = f"{prefix}.{db}.items"

    # A signal inserted into the collection is not a signal with the source channel off: once the stream has
    # passed it (the next insert's record is in Kafka), the log still does not have its message.
    mongo[db].signals.insert_one({"_id": ObjectId(), "type": "log", "data": json.dumps({"message": f"src {name}"})})
    mongo[db].items.insert_one({"_id": "passed"})
    read_topic(stack.kafka_bootstrap, topic, until=lambda fresh: any(event(r)[0] == "passed" for r in fresh),
               timeout=120)
    assert f"src {name}" not in worker.process.log_path.read_text(errors="replace")

    body = {"id": "w1", "type": "execute-snapshot",
            "data": {"data-collections": [f"{db}\\.items"], "type": "incremental"}}
    producer.send(signal_topic, key=prefix.encode(), value=json.dumps(body).encode()).get(30)
    producer.close()
    seen: set[Any] = set()

    def all_read(fresh: list[Any]) -> bool:
        seen.update(_incremental_reads(fresh))
        return set(range(DOCS)) <= seen
    records = read_topic(stack.kafka_bootstrap, topic, until=all_read, timeout=300)
    assert set(range(DOCS)) <= _incremental_reads(records)
    mongo[db].items.insert_one({"_id": "sentinel"})
    records = read_topic(stack.kafka_bootstrap, topic,
                         until=lambda fresh: any(event(r)[0] == "sentinel" for r in fresh), timeout=120)
    assert replay(records) == {doc["_id"]: doc for doc in mongo[db].items.find()}
    left = list(mongo[db].signals.find({"type": {"$in": ["snapshot-window-open", "snapshot-window-close"]}}))
    assert left == [], "INSERT_DELETE leaves no watermark in the signal collection"
