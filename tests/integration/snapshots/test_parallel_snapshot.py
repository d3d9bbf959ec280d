"""The parallel initial snapshot against the real stack: DOCS documents read by 4 threads while another process
writes, a SIGKILL in the middle of the copy, every ``_id`` type, the snapshot metrics. DOCS is 60,000 in ``make
test`` and 200,000 in ``make test-long`` (loading and snapshotting 200,000 took over 4 minutes of the suite)."""

from __future__ import annotations

import datetime
import json
import multiprocessing
import os
import random
import time
import uuid
from typing import Any

import pymongo
import pytest
from bson import Decimal128, Int64, MaxKey, MinKey, ObjectId, Timestamp
from bson.binary import Binary

from connectors.mongodb.position import SNAPSHOT_PROGRESS_KEY
from connectors.mongodb.snapshot.bson_order import sort_key
from connectors.mongodb.snapshot.progress import SnapshotProgress
from tests.integration.snapshots.helpers import create, end_offset, event, load, replay, snapshot_marks
from tests.integration.support import Worker, read_topic, unique

pytestmark = pytest.mark.integration

DOCS = int(os.environ.get("PARALLEL_SNAPSHOT_DOCS", "60000"))
THREADS = 4
CHUNK = 2048  # snapshot.fetch.size: documents per chunk


def _small(i: int) -> dict[str, Any]:
    return {"_id": i, "v": 0, "s": f"doc-{i}"}


def _churn(uri: str, db: str, coll: str, go: Any, stop: Any, started: Any) -> None:
    """Another process: once ``go`` is set, inserts, updates and deletes at random until ``stop`` is set."""
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(uri)
    collection = client[db][coll]
    rng = random.Random(11)
    next_id = 10_000_000
    started.set()
    go.wait(600)
    while not stop.is_set():
        op = rng.random()
        if op < 0.4:
            collection.insert_one({"_id": next_id, "v": 0, "s": "new"})
            next_id += 1
        elif op < 0.8:
            collection.update_one({"_id": rng.randrange(DOCS)}, {"$inc": {"v": 1}, "$set": {"s": "changed"}})
        else:
            collection.delete_one({"_id": rng.randrange(DOCS)})
    collection.insert_one({"_id": "sentinel"})
    client.close()


def _has(doc_id: Any) -> Any:
    return lambda fresh: any(event(r)[0] == doc_id for r in fresh)


def _config(stack: Any, prefix: str, db: str, **extra: str) -> dict[str, str]:
    return {"mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
            "collection.include.list": f"{db}\\..*", "snapshot.max.threads": str(THREADS),
            "snapshot.fetch.size": str(CHUNK), "snapshot.split.mode": "always", **extra}


@pytest.mark.timeout(1500)
def test_parallel_snapshot_under_concurrent_writes_ends_in_the_collection_state(
        worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("psnap_"), unique("psnap"), unique("psnap-")
    load(mongo[db].items, DOCS, _small)
    context = multiprocessing.get_context("spawn")
    go, stop, started = context.Event(), context.Event(), context.Event()
    writer = context.Process(target=_churn, args=(stack.mongo_uri, db, "items", go, stop, started))
    writer.start()
    topic = f"{prefix}.{db}.items"
    try:
        assert started.wait(60)
        create(worker, name, _config(stack, prefix, db))
        deadline = time.monotonic() + 300
        while end_offset(stack.kafka_bootstrap, topic) == 0:  # the position is taken before the first record
            assert time.monotonic() < deadline, "the snapshot never started"
            time.sleep(0.2)
        go.set()
        read_topic(stack.kafka_bootstrap, topic, until=lambda fresh: "last" in snapshot_marks(fresh), timeout=600)
    finally:
        go.set()
        stop.set()
        writer.join(60)
    assert writer.exitcode == 0
    records = read_topic(stack.kafka_bootstrap, topic, until=_has("sentinel"), timeout=300)

    marks = snapshot_marks(records)
    assert marks.count("last") == 1 and marks[-1] == "last" and set(marks[:-1]) == {"true"}
    final = {doc["_id"]: doc for doc in mongo[db].items.find()}
    assert replay(records) == final, "replaying the events in order must give the collection's content"
    seen = {event(r)[0] for r in records}
    missing = [i for i in range(DOCS) if i not in seen]
    assert not missing, f"{len(missing)} documents of the snapshot start have no event, e.g. {missing[:5]}"


@pytest.mark.timeout(1500)
def test_sigkill_mid_snapshot_resumes_the_unfinished_ranges(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("ksnap_"), unique("ksnap"), unique("ksnap-")
    load(mongo[db].items, DOCS, _small)
    create(worker, name, _config(stack, prefix, db))
    topic = f"{prefix}.{db}.items"
    offsets_topic = worker.process.properties["offset.storage.topic"]
    deadline = time.monotonic() + 600
    # killed once an offset flush stored part of the snapshot's progress (or, on a machine fast enough, the
    # snapshot is over: the restart then has nothing to resume)
    while (_committed_documents(stack, offsets_topic, name, f"{db}.items") == 0
           and end_offset(stack.kafka_bootstrap, topic) < DOCS):
        assert time.monotonic() < deadline, "no snapshot progress was stored"
        time.sleep(0.3)
    worker.process.kill()
    at_kill = end_offset(stack.kafka_bootstrap, topic)  # counted after the kill: records land fast until it
    covered = _committed_documents(stack, offsets_topic, name, f"{db}.items")
    # what SIGKILL may repeat, as in Kafka Connect: every record after the last committed offset (here: the
    # documents its snapshot progress does not cover), plus the chunk each thread had in flight
    allowed = (at_kill - covered) + THREADS * CHUNK
    worker.process.start()
    worker.wait_running(name)
    records = read_topic(stack.kafka_bootstrap, topic, until=lambda fresh: "last" in snapshot_marks(fresh), timeout=600)
    reads = [doc_id for doc_id, body in map(event, records) if body is not None and body["op"] == "r"]
    assert set(reads) == set(range(DOCS)), "every document is in the snapshot"
    duplicates = len(reads) - DOCS
    assert duplicates <= allowed, f"{duplicates} documents read twice: more than one chunk per thread (+ unflushed)"
    assert replay(records) == {i: _small(i) for i in range(DOCS)}


def _committed_documents(stack: Any, offsets_topic: str, connector: str, ns: str) -> int:
    """How many documents of ``ns`` (``_id`` 0 .. DOCS-1) the connector's last committed offset says were emitted."""
    offset: dict[str, Any] = {}
    records = read_topic(stack.kafka_bootstrap, offsets_topic, end_offset(stack.kafka_bootstrap, offsets_topic))
    for record in sorted(records, key=lambda r: (r.timestamp, r.offset)):
        if record.key and json.loads(record.key)[0] == connector and record.value:
            offset = json.loads(record.value)
    ranges = SnapshotProgress.decode(offset.get(SNAPSHOT_PROGRESS_KEY)).ranges(ns) or []
    covered = 0
    for state in ranges:
        low, high = state.low if state.low is not None else 0, state.high if state.high is not None else DOCS
        covered += high - low if state.done else (state.after - low + 1 if state.after is not None else 0)
    return covered


MIXED_IDS: list[Any] = [
    MinKey(), None, float("nan"), float("-inf"), -7, Int64(2**40), 2.5, Decimal128("12.5"), float("inf"),
    "", "alpha", "omega", "é", {"a": 1}, {"a": 1, "b": [1, 2]}, {"b": "x"}, b"\x00\x01",
    Binary.from_uuid(uuid.UUID(int=99)), ObjectId(), False, True, datetime.datetime(1950, 1, 1),
    datetime.datetime(2090, 5, 5), Timestamp(5, 1),
    MaxKey(),
]


def test_every_id_type_is_split_and_read_once(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("msnap_"), unique("msnap"), unique("msnap-")
    docs = [{"_id": value, "n": i} for i, value in enumerate(MIXED_IDS)]
    docs += [{"_id": i, "n": i} for i in range(200)] + [{"_id": f"s{i:03}", "n": i} for i in range(200)]
    docs += [{"_id": ObjectId(), "n": i} for i in range(200)]
    mongo[db].mixed.insert_many(docs)
    config = _config(stack, prefix, db, **{"snapshot.fetch.size": "10"})
    create(worker, name, config)
    records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.mixed",
                         until=lambda fresh: "last" in snapshot_marks(fresh), timeout=300)
    read = [event(r)[0] for r in records]
    assert len(read) == len(docs)
    assert sorted(map(sort_key, read)) == sorted(sort_key(d["_id"]) for d in docs)

    metrics = worker.http.get("/metrics").text
    labels = f'context="snapshot",name="{prefix}",plugin="mongodb",task="0"'
    assert f"debezium_metrics_SnapshotCompleted{{{labels}}} 1" in metrics.replace(".0\n", "\n"), metrics
    rows = (f'debezium_metrics_RowsScanned{{context="snapshot",name="{prefix}",plugin="mongodb",'
            f'table="{db}.mixed",task="0"}} {len(docs)}')
    assert rows in metrics.replace(".0\n", "\n"), metrics
