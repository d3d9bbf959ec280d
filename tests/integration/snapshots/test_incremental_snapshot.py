"""Ad hoc snapshots driven by signals: incremental (Debezium's watermarks) under concurrent writes, bad signals
ignored with the reason logged, pause/resume/stop, the Kafka signal topic and a blocking snapshot."""

from __future__ import annotations

import json
import random
import threading
import time
from typing import Any

import pytest
from bson import ObjectId
from kafka import KafkaProducer

from tests.integration.snapshots.helpers import create, event, load, replay
from tests.integration.support import Worker, payload, read_topic, unique, wait_stored_offset

pytestmark = pytest.mark.integration

DOCS = 3000


def _config(stack: Any, prefix: str, db: str, **extra: str) -> dict[str, str]:
    return {"mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
            "collection.include.list": f"{db}\\.items", "snapshot.mode": "no_data",
            "signal.data.collection": f"{db}.signals", "incremental.snapshot.chunk.size": "250", **extra}


def _signal(mongo: Any, db: str, kind: str, data: dict[str, Any]) -> None:
    mongo[db].signals.insert_one({"_id": ObjectId(), "type": kind, "data": json.dumps(data)})


def _incremental_reads(records: list[Any]) -> list[Any]:
    return [doc_id for doc_id, body in map(event, records)
            if body is not None and body["op"] == "r" and body["source"]["snapshot"] == "incremental"]


def _log_has(worker: Worker, text: str, timeout: float = 30) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in worker.process.log_path.read_text(errors="replace"):
            return True
        time.sleep(0.5)
    return False


def _writes(collection: Any, stop: threading.Event) -> None:
    rng = random.Random(5)
    next_id = 1_000_000
    while not stop.is_set():
        op = rng.random()
        if op < 0.3:
            collection.insert_one({"_id": next_id, "v": 0})
            next_id += 1
        elif op < 0.8:
            collection.update_one({"_id": rng.randrange(DOCS)}, {"$inc": {"v": 1}})
        else:
            collection.delete_one({"_id": rng.randrange(DOCS)})
        time.sleep(0.002)


def test_incremental_snapshot_under_writes_and_bad_signals(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("isnap_"), unique("isnap"), unique("isnap-")
    load(mongo[db].items, DOCS, lambda i: {"_id": i, "v": 0})
    create(worker, name, _config(stack, prefix, db))
    topic = f"{prefix}.{db}.items"

    _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}.(unclosed"]})
    _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}\\.items"], "additional-conditions": [
        {"data-collection": f"{db}.items", "filter": "{not json"}]})
    _signal(mongo, db, "log", {"message": f"hello from {name}"})
    assert _log_has(worker, "invalid data-collections regular expression")
    assert _log_has(worker, "malformed additional condition")
    assert _log_has(worker, f"hello from {name}")

    stop = threading.Event()
    writer = threading.Thread(target=_writes, args=(mongo[db].items, stop))
    writer.start()
    try:
        _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}\\.items"], "type": "incremental"})
        assert _log_has(worker, f"Incremental snapshot of {db}.items completed", 300)
    finally:
        stop.set()
        writer.join(30)
    mongo[db].items.insert_one({"_id": "sentinel"})
    records = read_topic(stack.kafka_bootstrap, topic,
                         until=lambda fresh: any(event(r)[0] == "sentinel" for r in fresh), timeout=120)
    assert replay(records) == {doc["_id"]: doc for doc in mongo[db].items.find()}
    reads = _incremental_reads(records)
    assert len(reads) == len(set(reads)) > DOCS // 2, "each document read at most once, most of them read"
    assert worker.http.get(f"/connectors/{name}/status").json()["tasks"][0]["state"] == "RUNNING"


def _reads_at_least(count: int) -> Any:
    ids: set[Any] = set()

    def check(fresh: list[Any]) -> bool:
        ids.update(_incremental_reads(fresh))
        return len(ids) >= count
    return check


def _reads_before_marker(stack: Any, mongo: Any, db: str, topic: str, marker: int) -> int:
    """Insert document ``marker`` (past the snapshot's maximum key: never read by it) and read ``topic`` until its
    event: how many incremental reads came before it. The task handles the stream in order, so every chunk it
    read before that insert is in Kafka before the marker."""
    mongo[db].items.insert_one({"_id": marker, "v": 0})
    records = read_topic(stack.kafka_bootstrap, topic,
                         until=lambda fresh: any(event(r)[0] == marker for r in fresh), timeout=120)
    return len(_incremental_reads(records))


def _stays_still(stack: Any, mongo: Any, db: str, topic: str, first_marker: int) -> int:
    """The reads before each of five markers written one after another (each awaited): all equal while no chunk
    is read. Returns that count."""
    counts = [_reads_before_marker(stack, mongo, db, topic, first_marker + i) for i in range(5)]
    assert len(set(counts)) == 1, f"chunks read while none should be: {counts}"
    return counts[0]


def test_pause_resume_and_stop_signals(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("psig_"), unique("psig"), unique("psig-")
    load(mongo[db].items, DOCS, lambda i: {"_id": i, "v": 0})
    notes_topic = f"{prefix}-notifications"
    create(worker, name, _config(stack, prefix, db, **{"incremental.snapshot.chunk.size": "100",
                                                       "notification.enabled.channels": "sink",
                                                       "notification.sink.topic.name": notes_topic}))
    topic = f"{prefix}.{db}.items"
    _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}\\.items"]})
    _signal(mongo, db, "pause-snapshot", {})
    assert _log_has(worker, "Incremental snapshot paused")
    assert _stays_still(stack, mongo, db, topic, DOCS) < DOCS, "no chunk is read while paused"

    _signal(mongo, db, "resume-snapshot", {})
    records = read_topic(stack.kafka_bootstrap, topic, until=_reads_at_least(DOCS), timeout=300)
    assert set(_incremental_reads(records)) == set(range(DOCS))
    notes = [payload(r.value) for r in read_topic(stack.kafka_bootstrap, notes_topic, until=lambda fresh: any(
        payload(r.value)["type"] == "COMPLETED" for r in fresh), timeout=60)]
    assert (notes[0]["aggregate_type"], notes[0]["type"]) == ("Initial Snapshot", "SKIPPED"), "snapshot.mode=no_data"
    notes = notes[1:]
    types = [n["type"] for n in notes]
    assert types[0] == "STARTED" and types[-1] == "COMPLETED" and types.index("PAUSED") < types.index("RESUMED")
    assert types.count("IN_PROGRESS") == DOCS // 100, types
    assert {n["aggregate_type"] for n in notes} == {"Incremental Snapshot"}
    assert len({n["id"] for n in notes}) == 1, "every notification of the run has the signal's id"
    [done] = [n["additional_data"] for n in notes if n["type"] == "TABLE_SCAN_COMPLETED"]
    assert done == {"connector_name": prefix, "scanned_collection": f"{db}.items", "total_rows_scanned": str(DOCS),
                    "data_collections": f"{db}.items", "status": "SUCCEEDED"}
    last_chunk = [n["additional_data"] for n in notes if n["type"] == "IN_PROGRESS"][-1]
    assert (last_chunk["maximum_key"], last_chunk["last_processed_key"]) == (str(DOCS - 1), str(DOCS - 1))

    _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}\\.items"]})
    _signal(mongo, db, "stop-snapshot", {"data-collections": [f"{db}\\.items"], "type": "incremental"})
    assert _log_has(worker, "Incremental snapshot stopped")
    notes = [payload(r.value) for r in read_topic(stack.kafka_bootstrap, notes_topic, until=lambda fresh: any(
        payload(r.value)["type"] == "ABORTED" for r in fresh), timeout=60)]
    assert notes[-1]["additional_data"] == {"connector_name": prefix, "data_collections": f"{db}.items"}
    assert _stays_still(stack, mongo, db, topic, DOCS + 100) < 2 * DOCS + 5, "the stopped snapshot reads no more"


def test_kafka_signal_topic_and_blocking_snapshot(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("ksig_"), unique("ksig"), unique("ksig-")
    load(mongo[db].items, 500, lambda i: {"_id": i, "v": 0})
    producer = KafkaProducer(bootstrap_servers=stack.kafka_bootstrap)
    signal_topic = f"{prefix}-signal"
    producer.send(signal_topic, key=b"nobody", value=b"{}").get(30)  # creates the topic; not for this connector
    create(worker, name, _config(stack, prefix, db, **{
        "signal.enabled.channels": "source,kafka", "signal.kafka.bootstrap.servers": stack.kafka_bootstrap,
        "signal.poll.interval.ms": "200"}))
    topic = f"{prefix}.{db}.items"
    body = {"id": "k1", "type": "execute-snapshot",
            "data": {"data-collections": [f"{db}\\.items"], "type": "incremental",
                     "additional-conditions": [{"data-collection": f"{db}.items", "filter": '{"_id": {"$lt": 100}}'}]}}
    producer.send(signal_topic, key=prefix.encode(), value=json.dumps(body).encode()).get(30)
    records = read_topic(stack.kafka_bootstrap, topic, until=_reads_at_least(100), timeout=120)
    assert sorted(_incremental_reads(records)) == list(range(100)), "only the additional condition's documents"

    _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}\\.items"], "type": "blocking"})
    records = read_topic(stack.kafka_bootstrap, topic,
                         until=lambda fresh: any(body is not None and body["source"]["snapshot"] == "last"
                                                 for _, body in map(event, fresh)), timeout=120)
    blocking = [doc_id for doc_id, body in map(event, records)
                if body is not None and body["op"] == "r" and body["source"]["snapshot"] in ("true", "last")]
    assert sorted(blocking) == list(range(500))
    mongo[db].items.insert_one({"_id": "after"})
    read_topic(stack.kafka_bootstrap, topic, until=lambda fresh: any(event(r)[0] == "after" for r in fresh), timeout=60)
    producer.close()


def test_kafka_signal_sent_while_the_worker_was_down_runs_after_the_restart(
        worker: Worker, stack: Any, mongo: Any) -> None:
    """The position on the signal topic is in the connector's offsets: after a SIGKILL (no consumer-group commit)
    the signal sent meanwhile is acted on, and the one acted on before is not acted on again."""
    db, prefix, name = unique("krsig_"), unique("krsig"), unique("krsig-")
    load(mongo[db].items, 300, lambda i: {"_id": i, "v": 0})
    producer = KafkaProducer(bootstrap_servers=stack.kafka_bootstrap)
    signal_topic = f"{prefix}-signal"
    producer.send(signal_topic, key=b"nobody", value=b"{}").get(30)
    create(worker, name, _config(stack, prefix, db, **{
        "signal.enabled.channels": "kafka", "signal.kafka.bootstrap.servers": stack.kafka_bootstrap,
        "signal.poll.interval.ms": "200"}))
    topic = f"{prefix}.{db}.items"

    def execute(signal_id: str, condition: str) -> int:
        body = {"id": signal_id, "type": "execute-snapshot",
                "data": {"data-collections": [f"{db}\\.items"], "type": "incremental",
                         "additional-conditions": [{"data-collection": f"{db}.items", "filter": condition}]}}
        sent = producer.send(signal_topic, key=prefix.encode(), value=json.dumps(body).encode()).get(30)
        return int(sent.offset)

    worker.wait_running(name)
    before = execute("before", '{"_id": {"$lt": 50}}')
    records = read_topic(stack.kafka_bootstrap, topic, until=_reads_at_least(50), timeout=120)
    assert sorted(_incremental_reads(records)) == list(range(50))
    # killed once an offset flush stored the signal's position and the last chunk (at the snapshot's maximum key)
    wait_stored_offset(stack.kafka_bootstrap, worker.process.properties["offset.storage.topic"], name,
                       lambda offset: offset.get("incremental_snapshot_signal_offset", -1) >= before and
                       offset.get("incremental_snapshot_primary_key") == offset.get("incremental_snapshot_maximum_key"),
                       "with the signal acted on and its last chunk read")
    worker.process.kill()

    execute("while-down", '{"_id": {"$gte": 200}}')
    worker.process.start()
    worker.wait_running(name)
    records = read_topic(stack.kafka_bootstrap, topic, until=_reads_at_least(150), timeout=120)
    reads = _incremental_reads(records)
    assert sorted(set(reads)) == [*range(50), *range(200, 300)], "the signal sent while the worker was down ran"
    assert sorted(reads) == sorted(set(reads)), "the signal acted on before the kill was not acted on again"
    producer.close()
