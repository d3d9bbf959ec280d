"""Backlog drain: 20,000 one-kilobyte documents (nested fields, arrays) are inserted while the worker is
down; the worker then starts and drains them from the stored resume token into Kafka, JSON with schemas.

Prints events/s (MongoDB -> Kafka-acknowledged records), CPU seconds per 10,000 events and the worker's
resident memory, and appends the figures to ``benchmarks/results.md``.

    python -m benchmarks.backlog_drain [--docs 20000]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import string
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pymongo
from kafka import KafkaConsumer, TopicPartition

import stack
from benchmarks import report, thread_cpu
from stack.worker import ConnectWorker, distributed_properties

ROOT = Path(__file__).resolve().parent
STATE = ROOT.parent / ".stack" / "bench"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def document(n: int, rng: random.Random) -> dict[str, Any]:
    """About 1 KB of BSON: nested documents, arrays, numbers, strings, a date."""
    words = ["".join(rng.choices(string.ascii_lowercase, k=8)) for _ in range(12)]
    return {
        "_id": n,
        "name": f"customer {n}",
        "email": f"user{n}@example.com",
        "active": n % 3 != 0,
        "score": rng.random() * 100,
        "created": datetime(2024, 1, 1, tzinfo=UTC),
        "address": {"street": " ".join(words[:3]), "city": words[3], "zip": f"{n % 100000:05d}",
                    "geo": {"lat": rng.uniform(-90, 90), "lon": rng.uniform(-180, 180)}},
        "tags": words[4:10],
        "orders": [{"sku": f"SKU-{n}-{i}", "qty": i + 1, "price": round(rng.uniform(1, 500), 2)} for i in range(6)],
        "notes": " ".join(words) * 2,
    }


def cpu_seconds(pid: int) -> float:
    """user + system CPU of a process, children included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / CLK_TCK


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:  # the thread ended while the tree was walked
            continue
        for child in children:
            found.extend(descendants(int(child)))
    return found


def memory_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in KiB of a process and its children, summed."""
    rss = hwm = 0
    for member in descendants(pid):
        for line in Path(f"/proc/{member}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss += int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm += int(line.split()[1])
    return rss, hwm


def tree_cpu_seconds(pid: int) -> float:
    """CPU of a process and of its living children."""
    return sum(cpu_seconds(member) for member in descendants(pid))


def end_offset(consumer: KafkaConsumer, topic: str) -> int:
    partitions = consumer.partitions_for_topic(topic) or set()
    tps = [TopicPartition(topic, p) for p in partitions]
    return sum(consumer.end_offsets(tps).values()) if tps else 0


def run(docs: int, rounds: int) -> list[dict[str, Any]]:
    """``rounds`` drains of ``docs`` documents each, on one fresh stack."""
    kafka_port, mongo_port, rest_port = stack.free_ports(3)
    stack.stop(STATE)
    shutil.rmtree(STATE, ignore_errors=True)
    endpoints = stack.start(STATE, kafka_port=kafka_port, mongo_port=mongo_port)
    props = distributed_properties(endpoints.kafka_bootstrap, rest_port, group_id="bench", extra={
        "offset.flush.interval.ms": "5000"})
    worker = ConnectWorker(STATE / "worker", rest_port, props)
    mongo: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(endpoints.mongo_uri)
    consumer = KafkaConsumer(bootstrap_servers=endpoints.kafka_bootstrap, group_id=None)
    try:
        worker.start()
        return [_round(n, docs, worker, mongo, consumer, endpoints) for n in range(rounds)]
    finally:
        consumer.close()
        mongo.close()
        worker.stop()
        stack.stop(STATE)


def _round(number: int, docs: int, worker: ConnectWorker, mongo: Any, consumer: KafkaConsumer,
           endpoints: stack.StackEndpoints) -> dict[str, Any]:
    """Register a connector on a new database, stop the worker, insert, start it and time the drain."""
    http = httpx.Client(base_url=worker.address, timeout=60)
    db_name, prefix = f"bench{int(time.time())}r{number}", "bench"
    topic, name = f"{prefix}.{db_name}.docs", f"bench-{db_name}"
    for old in http.get("/connectors").json():
        http.delete(f"/connectors/{old}")
    config = {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
              "mongodb.connection.string": endpoints.mongo_uri, "topic.prefix": prefix,
              "collection.include.list": f"{db_name}.docs"}
    http.put(f"/connectors/{name}/config", json=config).raise_for_status()
    _wait(lambda: _running(http, name), 60, "connector running")
    mongo[db_name].docs.insert_one({"_id": -1, "warmup": True})
    _wait(lambda: end_offset(consumer, topic) >= 1, 60, "warm-up record")
    time.sleep(6)  # one offset flush
    worker.stop()
    rng = random.Random(42)
    print(f"round {number + 1}: inserting {docs} documents while the worker is down ...", flush=True)
    batch = [document(n, rng) for n in range(docs)]
    for i in range(0, docs, 1000):
        mongo[db_name].docs.insert_many(batch[i:i + 1000])
    started = time.monotonic()
    worker.start()
    pid = worker.pid
    assert pid is not None
    others = {k: service.pid for k, service in zip(("kafka", "mongo"), stack.services(STATE), strict=True)}
    _wait(lambda: _running(http, name), 60, "connector running")
    t0, c0 = time.monotonic(), tree_cpu_seconds(pid)
    o0 = {k: cpu_seconds(p) for k, p in others.items() if p}
    tracker = thread_cpu.Tracker(pid)
    _wait(lambda: end_offset(consumer, topic) >= docs + 1, 600, "backlog drained")
    t1, c1 = time.monotonic(), tree_cpu_seconds(pid)
    by_thread = tracker.stop()
    o1 = {k: cpu_seconds(p) for k, p in others.items() if p}
    rss, hwm = memory_kib(pid)
    result = {"docs": docs, "seconds": t1 - t0, "events_per_s": docs / (t1 - t0),
              "cpu_s_per_10k": (c1 - c0) / docs * 10_000, "rss_mib": rss / 1024, "peak_rss_mib": hwm / 1024,
              "startup_s": t0 - started, "by_thread": thread_cpu.line(by_thread, docs),
              "cores": {"worker": (c1 - c0) / (t1 - t0), **{k: (o1[k] - o0[k]) / (t1 - t0) for k in o0}}}
    print(f"round {number + 1}: {result['events_per_s']:.0f} events/s, "
          f"{result['cpu_s_per_10k']:.2f} CPU-s/10k, RSS {result['rss_mib']:.0f} MiB; µs per event by thread: "
          f"{result['by_thread']}", flush=True)
    return result


def _running(http: httpx.Client, name: str) -> bool:
    reply = http.get(f"/connectors/{name}/status")
    return reply.status_code == 200 and bool(reply.json()["tasks"]) and \
        reply.json()["tasks"][0]["state"] == "RUNNING"


def _wait(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = run(args.docs, args.rounds)
    best = sorted(results, key=lambda r: r["events_per_s"])
    median = best[len(best) // 2]
    rates = ", ".join(f"{r['events_per_s']:.0f}" for r in results)
    lines = [
        report.heading("backlog_drain"),
        "",
        f"- {args.rounds} rounds of {args.docs} documents (about 1 KB each), JSON converter with schemas; "
        f"events/s per round: {rates}",
        f"- median round: {median['seconds']:.2f} s → **{median['events_per_s']:.0f} events/s**",
        f"- worker CPU (its whole process tree): **{median['cpu_s_per_10k']:.2f} CPU-s per 10,000 events**",
        f"- worker memory (its whole process tree): RSS {median['rss_mib']:.0f} MiB at the end, "
        f"peak {max(r['peak_rss_mib'] for r in results):.0f} MiB over all rounds",
        f"- worker start to task RUNNING: {median['startup_s']:.2f} s",
        "- cores busy during the drain: " + ", ".join(f"{k} {v:.2f}" for k, v in median["cores"].items()),
        "",
    ]
    report.append(lines)


if __name__ == "__main__":
    main()
