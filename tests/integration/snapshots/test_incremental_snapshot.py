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

from tests.integration.snapshots.helpers import create, end_offset, event, load, replay
from tests.integration.support import Worker, read_topic, unique

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


def _count_reads(stack: Any, topic: str) -> int:
    """The records ``topic`` holds now: only incremental reads here (``no_data``, no writes); 0 before a chunk.
    (Reading until a count was reached could stop after a partial poll and undercount.)"""
    return end_offset(stack.kafka_bootstrap, topic)


def _reads_at_least(count: int) -> Any:
    ids: set[Any] = set()

    def check(fresh: list[Any]) -> bool:
        ids.update(_incremental_reads(fresh))
        return len(ids) >= count
    return check


def test_pause_resume_and_stop_signals(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("psig_"), unique("psig"), unique("psig-")
    load(mongo[db].items, DOCS, lambda i: {"_id": i, "v": 0})
    create(worker, name, _config(stack, prefix, db, **{"incremental.snapshot.chunk.size": "100"}))
    topic = f"{prefix}.{db}.items"
    _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}\\.items"]})
    _signal(mongo, db, "pause-snapshot", {})
    assert _log_has(worker, "Incremental snapshot paused")
    time.sleep(3)
    paused_at = _count_reads(stack, topic)
    time.sleep(4)
    assert _count_reads(stack, topic) == paused_at < DOCS, "no chunk is read while paused"

    _signal(mongo, db, "resume-snapshot", {})
    records = read_topic(stack.kafka_bootstrap, topic, until=_reads_at_least(DOCS), timeout=300)
    assert set(_incremental_reads(records)) == set(range(DOCS))

    _signal(mongo, db, "execute-snapshot", {"data-collections": [f"{db}\\.items"]})
    _signal(mongo, db, "stop-snapshot", {"data-collections": [f"{db}\\.items"], "type": "incremental"})
    assert _log_has(worker, "Incremental snapshot stopped")
    time.sleep(3)
    stopped_at = _count_reads(stack, topic)
    time.sleep(4)
    assert _count_reads(stack, topic) == stopped_at < 2 * DOCS, "the stopped snapshot reads no more"


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
    time.sleep(2)
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

    def execute(signal_id: str, condition: str) -> None:
        body = {"id": signal_id, "type": "execute-snapshot",
                "data": {"data-collections": [f"{db}\\.items"], "type": "incremental",
                         "additional-conditions": [{"data-collection": f"{db}.items", "filter": condition}]}}
        producer.send(signal_topic, key=prefix.encode(), value=json.dumps(body).encode()).get(30)

    worker.wait_running(name)
    execute("before", '{"_id": {"$lt": 50}}')
    records = read_topic(stack.kafka_bootstrap, topic, until=_reads_at_least(50), timeout=120)
    assert sorted(_incremental_reads(records)) == list(range(50))
    time.sleep(2.5)  # an offset flush (offset.flush.interval.ms=1000) with the signal's position in it
    worker.process.kill()

    execute("while-down", '{"_id": {"$gte": 200}}')
    worker.process.start()
    worker.wait_running(name)
    records = read_topic(stack.kafka_bootstrap, topic, until=_reads_at_least(150), timeout=120)
    reads = _incremental_reads(records)
    assert sorted(set(reads)) == [*range(50), *range(200, 300)], "the signal sent while the worker was down ran"
    assert sorted(reads) == sorted(set(reads)), "the signal acted on before the kill was not acted on again"
    producer.close()
