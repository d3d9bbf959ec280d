"""Initial snapshot: 100,000 one-kilobyte documents in one collection, copied by a new connector with
``snapshot.max.threads`` 1 and 4, JSON converter with schemas, timed to Kafka-acknowledged records.

Prints documents/s per thread count, the speed-up, the time to the first record in Kafka, the worker's resident
memory (sampled during the copy) and the CPU seconds each process spent (the worker's process tree,
SecantusDB, the Kafka broker: where the time went on a shared machine), and appends the figures to
``benchmarks/results.md``.

    python -m benchmarks.snapshot [--docs 100000] [--threads 1,4] [--split auto|always|never]
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

import httpx
import pymongo
from kafka import KafkaConsumer

import stack
from benchmarks import report, thread_cpu
from benchmarks.backlog_drain import _running, _wait, document, end_offset, memory_kib, tree_cpu_seconds
from stack.worker import ConnectWorker, distributed_properties

ROOT = Path(__file__).resolve().parent
STATE = ROOT.parent / ".stack" / "bench-snapshot"


def run(docs: int, thread_counts: list[int], split: str = "auto") -> tuple[list[dict[str, Any]], float]:
    """One snapshot per thread count of the same collection, on one fresh stack; also the machine's load."""
    kafka_port, mongo_port, rest_port = stack.free_ports(3)
    stack.stop(STATE)
    shutil.rmtree(STATE, ignore_errors=True)
    endpoints = stack.start(STATE, kafka_port=kafka_port, mongo_port=mongo_port)
    props = distributed_properties(endpoints.kafka_bootstrap, rest_port, group_id="bench-snapshot",
                                   extra={"offset.flush.interval.ms": "5000"})
    worker = ConnectWorker(STATE / "worker", rest_port, props)
    mongo: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(endpoints.mongo_uri)
    consumer = KafkaConsumer(bootstrap_servers=endpoints.kafka_bootstrap, group_id=None)
    try:
        rng = random.Random(42)
        print(f"inserting {docs} documents ...", flush=True)
        for start in range(0, docs, 2000):
            mongo.bench.docs.insert_many([document(n, rng) for n in range(start, min(start + 2000, docs))])
        worker.start()
        load = os.getloadavg()[0]
        broker, server = stack.services(STATE)
        pids = {"secantusdb": server.pid, "kafka": broker.pid}
        return [_round(threads, docs, worker, consumer, endpoints, pids, split) for threads in thread_counts], load
    finally:
        consumer.close()
        mongo.close()
        worker.stop()
        stack.stop(STATE)


def _round(threads: int, docs: int, worker: ConnectWorker, consumer: KafkaConsumer,
           endpoints: stack.StackEndpoints, pids: dict[str, int | None], split: str) -> dict[str, Any]:
    http = httpx.Client(base_url=worker.address, timeout=60)
    prefix = f"snap{threads}t{int(time.time())}"
    name, topic = f"bench-{prefix}", f"{prefix}.bench.docs"
    config = {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
              "mongodb.connection.string": endpoints.mongo_uri, "topic.prefix": prefix,
              "collection.include.list": "bench.docs", "snapshot.max.threads": str(threads),
              "snapshot.split.mode": split}
    pid = worker.pid
    assert pid is not None
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            try:
                peak[0] = max(peak[0], memory_kib(pid)[0])
            except OSError:  # a child process ended while it was being read
                continue

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    others = {role: other for role, other in pids.items() if other is not None}
    t0, c0 = time.monotonic(), tree_cpu_seconds(pid)
    o0 = {role: tree_cpu_seconds(other) for role, other in others.items()}
    tracker = thread_cpu.Tracker(pid)
    _wait(lambda: http.put(f"/connectors/{name}/config", json=config).status_code in (200, 201), 60,
          "connector created (409 while the group rebalances)")
    _wait(lambda: _running(http, name), 60, "connector running")
    first: list[float] = []

    def copied() -> bool:
        count = end_offset(consumer, topic)
        if count and not first:
            first.append(time.monotonic() - t0)
        return count >= docs

    _wait(copied, 1800, "snapshot in Kafka")
    t1, c1 = time.monotonic(), tree_cpu_seconds(pid)
    cpu = {"worker": c1 - c0, **{role: tree_cpu_seconds(other) - o0[role] for role, other in others.items()}}
    by_thread = tracker.stop()
    done.set()
    sampler.join()
    http.delete(f"/connectors/{name}")
    result = {"threads": threads, "seconds": t1 - t0, "docs_per_s": docs / (t1 - t0),
              "worker_cores": (c1 - c0) / (t1 - t0), "peak_rss_mib": peak[0] / 1024,
              "first_s": first[0] if first else t1 - t0, "cpu": cpu, "load": os.getloadavg()[0],
              "by_thread": thread_cpu.line(by_thread, docs)}
    print(f"{threads} thread(s): {result['docs_per_s']:.0f} documents/s, first record after "
          f"{result['first_s']:.1f} s, peak RSS {result['peak_rss_mib']:.0f} MiB, CPU seconds "
          + ", ".join(f"{role} {seconds:.1f}" for role, seconds in cpu.items())
          + f"; worker µs per document by thread: {result['by_thread']}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--threads", default="1,4")
    parser.add_argument("--split", default="auto", choices=("auto", "always", "never"), help="snapshot.split.mode")
    args = parser.parse_args()
    results, load = run(args.docs, [int(t) for t in args.threads.split(",")], args.split)
    base = results[0]["docs_per_s"]
    lines = ["", report.heading("snapshot"), "",
             f"- initial snapshot of {args.docs} documents (about 1 KB each) in one collection, JSON converter with "
             f"schemas, snapshot.split.mode={args.split}, connector creation to Kafka-acknowledged records; "
             f"load average at the start {load:.1f} "
             "(the machine is shared with other sessions)"]
    for r in results:
        lines.append(f"- snapshot.max.threads={r['threads']}: {r['seconds']:.1f} s → **{r['docs_per_s']:.0f} "
                     f"documents/s** ({r['docs_per_s'] / base:.2f} times the first run), "
                     f"first record in Kafka after {r['first_s']:.1f} s, peak RSS {r['peak_rss_mib']:.0f} MiB "
                     "(the worker's process tree); CPU seconds (µs per document): "
                     + ", ".join(f"{role} {sec:.1f} ({sec / args.docs * 1e6:.0f})" for role, sec in r["cpu"].items())
                     + f"; load average at the end {r['load']:.1f}")
    report.append(lines)


if __name__ == "__main__":
    main()
