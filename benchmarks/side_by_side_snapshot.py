"""The initial-snapshot phase of :mod:`benchmarks.side_by_side`: ``bench.snap`` holds the same documents on each
contender's SecantusDB; each round registers a new connector (``snapshot.mode=initial``, its own topic prefix, the
collection alone) and times it from the ``PUT`` of its config to the last snapshot record acknowledged in Kafka,
with the worker's CPU over that time; then deletes it. The systems take turns, as in the drain rounds (the JVM is
warm by then). The floor: the same collection read by a bare client, sorted by ``_id``, as raw BSON batches.
Every turn, a system's or the floor's, starts once the stacks are quiet (:func:`settle`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import pymongo
from bson.raw_bson import RawBSONDocument

from benchmarks.backlog_drain import document, end_offset, tree_cpu_seconds
from benchmarks.side_by_side_latency import create_topic, last_append_s

DATABASE, COLLECTION = "bench", "snap"
# A turn starts when every process of the stacks together used less than this share of a core over SETTLE_WINDOW_S
# (an idle stack uses ~0.05: the JVM's housekeeping, the brokers' timers). After the fill, Debezium's SecantusDB was
# still busy for ~5 s (0.1-0.2 of a core: its change stream's $match on the fill's 30,000 inserts) when the first
# turn began; that turn was ours, and our first round came out lower than our second in each of the five runs of
# 2026-11-29 18:09-18:30 at the same CPU per document (82/98 % of the floor, 70/81, 95/101, 94/103, 92/103).
SETTLE_CORES, SETTLE_WINDOW_S, SETTLE_TIMEOUT_S = 0.15, 0.5, 30.0


def fill(mongo: pymongo.MongoClient[dict[str, Any]], docs: int) -> None:
    """``docs`` documents in ``bench.snap`` (the same ones on every contender)."""
    rng = random.Random(11)
    for start in range(0, docs, 1000):
        mongo[DATABASE][COLLECTION].insert_many([document(n, rng) for n in range(start, min(start + 1000, docs))])


def settle(pids: Sequence[int]) -> float:
    """Wait until ``pids`` (with their children) are quiet together (:data:`SETTLE_CORES`), at most
    :data:`SETTLE_TIMEOUT_S`; the seconds waited."""
    started = time.monotonic()
    before = sum(tree_cpu_seconds(pid) for pid in pids)
    while time.monotonic() - started < SETTLE_TIMEOUT_S:
        time.sleep(SETTLE_WINDOW_S)
        now = sum(tree_cpu_seconds(pid) for pid in pids)
        if now - before < SETTLE_CORES * SETTLE_WINDOW_S:
            break
        before = now
    return time.monotonic() - started


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
