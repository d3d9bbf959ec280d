"""Helpers of the snapshot tests: bulk loading, creating a connector, replaying events into a final state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bson import json_util

from tests.integration.support import Worker, create_connector, end_offsets, payload

CONNECTOR = "io.debezium.connector.mongodb.MongoDbConnector"


def load(collection: Any, count: int, make: Callable[[int], dict[str, Any]], batch: int = 10_000) -> None:
    """Insert ``count`` documents built by ``make(i)`` in unordered bulk batches."""
    for start in range(0, count, batch):
        collection.insert_many([make(i) for i in range(start, min(start + batch, count))], ordered=False)


def create(worker: Worker, name: str, config: dict[str, str]) -> None:
    """Create a MongoDB connector (``connector.class`` added to ``config``) and wait until it and its tasks run."""
    create_connector(worker, name, {"connector.class": CONNECTOR, **config})


def end_offset(bootstrap: str, topic: str) -> int:
    """How many records ``topic`` holds (0 before it exists)."""
    return end_offsets(bootstrap, [topic])[topic]


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
