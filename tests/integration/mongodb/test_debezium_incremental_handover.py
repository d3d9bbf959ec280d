"""An in-flight incremental snapshot handed over with the real Debezium 3.6.1 MongoDB connector on Apache Kafka
Connect 4.3.1, both ways, on the same offsets topic: Debezium snapshots part of a collection of integer ``_id``s
and is stopped; ours continues after Debezium's last key (no completed chunk read again) and streams on. Then ours
snapshots part of a collection of ObjectId ``_id``s and is stopped; Debezium continues after ours."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bson import ObjectId

from compat.debezium import harness
from tests.integration.mongodb.conftest import client
from tests.integration.snapshots.helpers import end_offset, event
from tests.integration.support import create_connector, payload, read_to_end, read_topic, wait_offset_flushed

pytestmark = pytest.mark.integration

DOCS = 1500
CHUNK = 50
PAUSE_AFTER = 400  # incremental reads before the snapshot is paused and the connector stopped


def _signal(mongo: Any, db: str, kind: str, data: dict[str, Any] | None = None) -> None:
    mongo[db].signals.insert_one({"_id": str(ObjectId()), "type": kind, "data": json.dumps(data or {})})


def _reads(records: list[Any]) -> list[Any]:
    """``_id``s of the incremental snapshot reads, in order."""
    return [doc_id for doc_id, body in map(event, records)
            if body is not None and body["op"] == "r" and body["source"]["snapshot"] == "incremental"]


def _wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def _read_until_complete(bootstrap: str, topic: str, expected: set[Any]) -> list[Any]:
    """Every record of ``topic`` once every ``_id`` of ``expected`` has been read by the incremental snapshot."""
    seen: set[Any] = set()

    def complete(fresh: list[Any]) -> bool:
        seen.update(_reads(fresh))
        return expected <= seen
    return read_topic(bootstrap, topic, until=complete, timeout=300)


def _read_until(bootstrap: str, topic: str, done: Callable[[list[tuple[str, Any]]], bool]) -> list[tuple[str, Any]]:
    """(op, _id) of every record of ``topic``, once ``done`` holds for them."""
    ops: list[tuple[str, Any]] = []

    def check(fresh: list[Any]) -> bool:
        ops.extend((body["op"], doc_id) for doc_id, body in map(event, fresh) if body is not None)
        return done(ops)
    read_topic(bootstrap, topic, until=check, timeout=120)
    return ops


def _probe(mongo: Any, db: str, bootstrap: str, prefix: str, tag: str, timeout: float = 120) -> dict[str, Any]:
    """Insert probe documents into ``<db>.probe``, one every half second, until one is streamed; the ``source``
    block of its record. Once it is streamed, so is everything written before it."""
    topic, deadline = f"{prefix}.{db}.probe", time.monotonic() + timeout
    for n in range(10_000):
        mongo[db].probe.insert_one({"_id": f"{tag}-{n}"})
        time.sleep(0.5)
        for _key, value in read_to_end(bootstrap, topic):
            body = payload(value)
            if body is not None and json.loads(body["after"])["_id"].startswith(f"{tag}-"):
                return dict(body["source"])
        assert time.monotonic() < deadline, f"no probe {tag} streamed on {topic}"
    raise AssertionError("unreachable")


def _pause_mid_way(mongo: Any, db: str, bootstrap: str, topic: str, prefix: str, group: str, name: str) -> int:
    """Pause the running snapshot once PAUSE_AFTER documents are read; how many were read when it settled: the
    chunk in flight is in Kafka, and its offset stored, once a probe written after the pause signal is streamed
    and an offset flush covered it."""
    _wait_until(lambda: end_offset(bootstrap, topic) >= PAUSE_AFTER, 300, f"{PAUSE_AFTER} reads on {topic}")
    _signal(mongo, db, "pause-snapshot")
    source = _probe(mongo, db, bootstrap, prefix, f"paused-{topic}")
    wait_offset_flushed(bootstrap, f"{group}-offsets", name, source)
    return end_offset(bootstrap, topic)


def test_incremental_snapshot_continues_across_debezium_and_ours(worker_factory: Any, stack: Any,
                                                                  secantus_factory: Any, tmp_path: Path) -> None:
    server = secantus_factory()
    mongo = client(server.uri)
    db, prefix, name, group = "inc", "ih", "inc-handover", "dbz-inc"
    ints, oids = f"{prefix}.{db}.ints", f"{prefix}.{db}.oids"
    config = {"connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": server.uri,
              "topic.prefix": prefix, "collection.include.list": f"{db}.ints,{db}.oids,{db}.signals,{db}.probe",
              "snapshot.mode": "no_data", "tasks.max": "1", "signal.data.collection": f"{db}.signals",
              "incremental.snapshot.chunk.size": str(CHUNK)}
    mongo[db]["ints"].insert_many([{"_id": i, "v": i} for i in range(DOCS)])
    oid_ids = [ObjectId(f"65a0f0c1e4b0a1b2{i:08x}") for i in range(DOCS)]
    mongo[db]["oids"].insert_many([{"_id": oid, "v": i} for i, oid in enumerate(oid_ids)])
    mongo[db].create_collection("signals")


    # 1. Debezium snapshots part of `ints` (with an additional condition), paused and stopped mid-way
    java = harness.join_group(tmp_path, stack.kafka_bootstrap, group, name, config)
    try:
        _probe(mongo, db, stack.kafka_bootstrap, prefix, "open")  # the change stream is open
        _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}.ints"], "type": "incremental",
                                                "additional-conditions": [{"data-collection": f"{db}.ints",
                                                                           "filter": '{"v": {"$gte": 10}}'}]})
        by_debezium = _pause_mid_way(mongo, db, stack.kafka_bootstrap, ints, prefix, group, name)
    finally:
        java.stop()
    assert by_debezium >= PAUSE_AFTER
    mongo[db]["ints"].insert_many([{"_id": DOCS + i, "v": 0} for i in range(5)])  # after the maximum: streamed

    # 2. ours, on Debezium's offsets: the rest of `ints`, no completed chunk again, then streaming
    ours = worker_factory(extra={"offset.storage.topic": f"{group}-offsets"})
    create_connector(ours, name, config)
    expected = set(range(10, DOCS))
    records = _read_until_complete(stack.kafka_bootstrap, ints, expected)
    reads = _reads(records)
    assert set(reads) == expected, "a document was never read or one outside the condition was"
    repeated = [k for k, n in Counter(reads).items() if n > 1]
    assert len(repeated) <= CHUNK, f"{len(repeated)} documents read twice: more than one chunk"
    assert len(reads) <= DOCS - 10 + CHUNK
    mongo[db]["ints"].insert_one({"_id": DOCS + 100, "v": 1})
    streamed = _read_until(stack.kafka_bootstrap, ints, lambda ops: ("c", DOCS + 100) in ops)
    assert [("c", DOCS + i) for i in range(5)] == [op for op in streamed if op[0] == "c"][:5]

    # 3. ours snapshots part of `oids`, paused and stopped; Debezium continues after our last key
    _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}.oids"], "type": "incremental"})
    by_ours = _pause_mid_way(mongo, db, stack.kafka_bootstrap, oids, prefix, group, name)
    ours.process.stop(timeout=30)
    assert by_ours >= PAUSE_AFTER
    java = harness.join_group(tmp_path, stack.kafka_bootstrap, group, name, config)
    try:
        records = _read_until_complete(stack.kafka_bootstrap, oids, set(oid_ids))
    finally:
        java.stop()
    reads = _reads(records)
    assert set(reads) == set(oid_ids)
    repeated = [k for k, n in Counter(reads).items() if n > 1]
    assert len(repeated) <= CHUNK, f"{len(repeated)} documents read twice: more than one chunk"
    assert len(reads) <= DOCS + CHUNK
    mongo.close()
