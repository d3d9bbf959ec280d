"""The initial-snapshot phase of :mod:`benchmarks.side_by_side`: ``bench.snap`` holds the same documents on each
contender's SecantusDB; each round registers a new connector (``snapshot.mode=initial``, its own topic prefix, the
collection alone) and times it from the ``PUT`` of its config to the last snapshot record acknowledged in Kafka,
with the worker's CPU over that time; then deletes it. The systems take turns, as in the drain rounds (the JVM is
warm by then). The floor: the same collection read by a bare client, sorted by ``_id``, as raw BSON batches.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import pymongo
from bson.raw_bson import RawBSONDocument

from benchmarks.backlog_drain import document, end_offset, tree_cpu_seconds
from benchmarks.side_by_side_latency import create_topic, last_append_s

DATABASE, COLLECTION = "bench", "snap"


def fill(mongo: pymongo.MongoClient[dict[str, Any]], docs: int) -> None:
    """``docs`` documents in ``bench.snap`` (the same ones on every contender)."""
    rng = random.Random(11)
    for start in range(0, docs, 1000):
        mongo[DATABASE][COLLECTION].insert_many([document(n, rng) for n in range(start, min(start + 1000, docs))])


def snapshot_round(http: Any, consumer: Any, bootstrap: str, mongo_uri: str, pid: int, number: int, docs: int,
                   wait: Callable[[Callable[[], bool], float, str], None], extra: dict[str, str]) -> dict[str, float]:
    """One new connector's initial snapshot of ``bench.snap``: documents/s and worker CPU µs per document."""
    name, prefix = f"snap-{number}", f"snap{number}"
    topic = f"{prefix}.{DATABASE}.{COLLECTION}"
    config = {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector", "tasks.max": "1",
              "mongodb.connection.string": mongo_uri, "topic.prefix": prefix, "snapshot.mode": "initial",
              "collection.include.list": f"{DATABASE}\\.{COLLECTION}", **extra}
    create_topic(bootstrap, topic)
    t0, c0 = time.time(), tree_cpu_seconds(pid)
    http.put(f"/connectors/{name}/config", json=config).raise_for_status()
    wait(lambda: end_offset(consumer, topic) >= docs, 900, f"{name}: snapshot of {docs} documents")
    c1 = tree_cpu_seconds(pid)
    t1 = last_append_s(consumer, topic, docs - 1)
    http.delete(f"/connectors/{name}").raise_for_status()
    wait(lambda: http.get(f"/connectors/{name}").status_code == 404, 120, f"{name}: deleted")
    return {"docs_per_s": docs / (t1 - t0), "snapshot_cpu_us_per_doc": (c1 - c0) / docs * 1e6}


def sorted_read_floor(mongo_uri: str, docs: int) -> float:
    """Documents/s of a bare ``_id``-sorted read of ``bench.snap`` as raw BSON (no worker in the path)."""
    raw: pymongo.MongoClient[RawBSONDocument] = pymongo.MongoClient(mongo_uri, document_class=RawBSONDocument)
    try:
        started = time.monotonic()
        seen = sum(1 for _ in raw[DATABASE][COLLECTION].find().sort("_id", 1).batch_size(2000))
        assert seen >= docs, f"read {seen} of {docs} documents"
        return seen / (time.monotonic() - started)
    finally:
        raw.close()
