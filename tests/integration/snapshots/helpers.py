"""Helpers of the snapshot tests: bulk loading, reading a whole topic, replaying events into a final state."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bson import json_util
from kafka import KafkaConsumer

from tests.integration.support import Worker, assign_from_beginning, end_offsets, payload

CONNECTOR = "io.debezium.connector.mongodb.MongoDbConnector"


def load(collection: Any, count: int, make: Callable[[int], dict[str, Any]], batch: int = 10_000) -> None:
    """Insert ``count`` documents built by ``make(i)`` in unordered bulk batches."""
    for start in range(0, count, batch):
        collection.insert_many([make(i) for i in range(start, min(start + batch, count))], ordered=False)


def create(worker: Worker, name: str, config: dict[str, str]) -> None:
    reply = worker.http.post("/connectors", json={"name": name, "config": {"connector.class": CONNECTOR, **config}})
    assert reply.status_code == 201, reply.text
    worker.wait_running(name)


def end_offset(bootstrap: str, topic: str) -> int:
    """How many records ``topic`` holds (0 before it exists)."""
    return end_offsets(bootstrap, [topic])[topic]


def read_all(bootstrap: str, topic: str, until: Callable[[list[Any]], bool], timeout: float) -> list[Any]:
    """Every record of ``topic`` from the beginning, read until ``until(new records)`` holds for a batch of newly
    read records (``until`` sees each record once; fails after ``timeout``)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             max_partition_fetch_bytes=8 << 20, fetch_max_bytes=64 << 20)
    try:
        deadline = time.monotonic() + timeout
        assign_from_beginning(consumer, topic, deadline)
        records: list[Any] = []
        while time.monotonic() < deadline:
            fresh = [r for batch in consumer.poll(timeout_ms=1000, max_records=50_000).values() for r in batch]
            if fresh:
                records.extend(fresh)
                if until(fresh):
                    return records
        raise AssertionError(f"{topic}: condition not met after {len(records)} records")
    finally:
        consumer.close()


def event(record: Any) -> tuple[Any, dict[str, Any] | None]:
    """``(_id, value payload)`` of a record (payload None for a tombstone)."""
    key = json_util.loads('{"v": ' + payload(record.key)["id"] + "}")["v"]
    return key, payload(record.value)


def replay(records: list[Any]) -> dict[Any, dict[str, Any]]:
    """The documents left after applying every event in order (per key): r/c/u set ``after``, d removes."""
    state: dict[Any, dict[str, Any]] = {}
    for record in records:
        doc_id, body = event(record)
        if body is None:
            continue
        if body["op"] == "d":
            state.pop(doc_id, None)
        elif body.get("after") is not None:
            state[doc_id] = json_util.loads(body["after"])
    return state


def snapshot_marks(records: list[Any]) -> list[str]:
    """``source.snapshot`` of every ``r`` record, in order."""
    return [body["source"]["snapshot"] for _, body in map(event, records) if body is not None and body["op"] == "r"]
