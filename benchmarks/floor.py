"""What this machine's services can do with none of our code in the path: the floor under the capture and
snapshot benchmarks.

Measurements on a fresh stack (SecantusDB and the Kafka broker, no worker), 100,000 documents of about
1 KB (the snapshot and backlog benchmarks' documents):

* **write**: 10,000 inserts in batches of 10 (the latency benchmark's writes), unpaced: documents/s and
  SecantusDB's CPU per document;
* **read**: one client reads the whole collection sorted by ``_id`` (what a one-range snapshot asks) as raw BSON,
  never decoded: documents/s and SecantusDB's CPU microseconds per document;
* **read4**: the same as four ``_id`` ranges read at once by four client threads (a 4-thread snapshot);
* **stream**: one client drains the change stream of 20,000 inserts (the backlog benchmark's size) from a token
  taken before them, raw BSON: events/s and SecantusDB's CPU per event;
* **produce**: kafka-python sends 100,000 pre-encoded records of the size the JSON converter with schemas writes
  for such a document (acks=all, 1 MiB batches): records/s and the broker's CPU per record.

The CPU per item of each service is the cost any connector pays on this machine, whatever its own speed: at a
target rate R the two services alone need R x (server + broker) microseconds of the 2 cores.

    python -m benchmarks.floor [--docs 100000] [--events 20000]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pymongo
from bson.raw_bson import RawBSONDocument
from kafka import KafkaProducer

import stack
from benchmarks import report
from benchmarks.backlog_drain import cpu_seconds, document

STATE = Path(__file__).resolve().parent.parent / ".stack" / "bench-floor"
WRITES = 10_000
RECORD_BYTES = 3_700  # a ~1 KB document as a JSON-with-schemas Debezium value (see benchmarks/results.md)


def _timed(pid: int, work: Any) -> tuple[float, float]:
    """(wall seconds, CPU seconds of ``pid``) spent while ``work()`` runs."""
    cpu, started = cpu_seconds(pid), time.monotonic()
    work()
    return time.monotonic() - started, cpu_seconds(pid) - cpu


def run(docs: int, events: int) -> dict[str, tuple[float, float]]:
    kafka_port, mongo_port = stack.free_ports(2)
    stack.stop(STATE)
    shutil.rmtree(STATE, ignore_errors=True)
    endpoints = stack.start(STATE, kafka_port=kafka_port, mongo_port=mongo_port)
    broker, server = stack.services(STATE)
    server_pid, broker_pid = server.pid, broker.pid
    assert server_pid is not None and broker_pid is not None
    raw: pymongo.MongoClient[RawBSONDocument] = pymongo.MongoClient(endpoints.mongo_uri,
                                                                    document_class=RawBSONDocument)
    results: dict[str, tuple[float, float]] = {}
    try:
        rng = random.Random(42)
        writes = [document(n, rng) for n in range(WRITES)]

        def write() -> None:  # the latency benchmark's writes: batches of 10, here as fast as they are taken
            for start in range(0, WRITES, 10):
                raw.bench.writes.insert_many(writes[start:start + 10])  # type: ignore[arg-type]

        results["write"] = _timed(server_pid, write)
        for start in range(0, docs, 2000):
            raw.bench.docs.insert_many([document(n, rng) for n in range(start, min(start + 2000, docs))])  # type: ignore[misc]

        def read() -> None:
            count = sum(1 for _ in raw.bench.docs.find({}, batch_size=2000).sort("_id", 1))
            assert count == docs, count

        results["read"] = _timed(server_pid, read)

        def read_ranges(parts: int = 4) -> None:
            bounds = [docs * i // parts for i in range(parts)] + [docs]
            counts = [0] * parts

            def one(i: int) -> None:
                query = {"_id": {"$gte": bounds[i], "$lt": bounds[i + 1]}}
                counts[i] = sum(1 for _ in raw.bench.docs.find(query, batch_size=2000).sort("_id", 1))

            threads = [threading.Thread(target=one, args=(i,)) for i in range(parts)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(600)
            assert sum(counts) == docs, counts

        results["read4"] = _timed(server_pid, read_ranges)

        with raw.bench.stream.watch(max_await_time_ms=100) as stream:
            stream.try_next()
            token = stream.resume_token
        for start in range(0, events, 2000):
            raw.bench.stream.insert_many([document(n, rng) for n in range(start, min(start + 2000, events))])  # type: ignore[misc]

        def drain() -> None:
            seen, deadline = 0, time.monotonic() + 600
            with raw.bench.stream.watch(resume_after=token, batch_size=2000, max_await_time_ms=200) as changes:
                while seen < events and time.monotonic() < deadline:
                    if changes.try_next() is not None:
                        seen += 1
            assert seen >= events, seen

        results["stream"] = _timed(server_pid, drain)
        results["produce"] = _timed(broker_pid, lambda: _produce(endpoints.kafka_bootstrap, docs))
        return results
    finally:
        raw.close()
        stack.stop(STATE)


def _produce(bootstrap: str, count: int) -> None:
    value = os.urandom(RECORD_BYTES // 2).hex().encode()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, batch_size=1 << 20,
                             max_request_size=8 << 20)
    try:
        for n in range(count):
            producer.send("bench.floor", key=b'{"id":%d}' % n, value=value)
        producer.flush(timeout=600)
    finally:
        producer.close(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--events", type=int, default=20_000, help="change-stream backlog (SecantusDB's oplog "
                        "keeps a bounded number of entries: the backlog benchmark's 20,000)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    results = run(args.docs, args.events)
    lines = ["", report.heading("floor"), "",
             f"- {args.docs:,} documents of about 1 KB; the services alone (no worker); load average at the start "
             f"{load:.1f}, at the end {os.getloadavg()[0]:.1f}"]
    what = {"write": ("inserts in batches of 10, one client, unpaced", "documents", "SecantusDB"),
            "read": ("sorted raw read from SecantusDB", "documents", "SecantusDB"),
            "read4": ("four _id ranges read at once (4 client threads), raw", "documents", "SecantusDB"),
            "stream": ("raw change-stream drain from SecantusDB", "events", "SecantusDB"),
            "produce": (f"kafka-python sending {RECORD_BYTES:,}-byte records, acks=all", "records", "broker")}
    for name, (wall, cpu) in results.items():
        label, unit, service = what[name]
        count = {"stream": args.events, "write": WRITES}.get(name, args.docs)
        lines.append(f"- {label}: **{count / wall:,.0f} {unit}/s** ({count:,}); {service} "
                     f"{cpu * 1e6 / count:,.0f} µs CPU per item")
    report.append(lines)


if __name__ == "__main__":
    main()
