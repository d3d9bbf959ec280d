"""The cost of exactly-once delivery: the backlog drain of :mod:`benchmarks.backlog_drain` (documents inserted while
the worker is down, then drained from the stored resume token), with ``exactly.once.source.support`` disabled and
enabled (``transaction.boundary=poll``), taking turns on one stack.

A drain ends when a ``read_committed`` consumer has read every document, in both modes (with transactions the end
offset also counts commit markers). Prints events/s and worker CPU per event per mode and their ratio, and appends
them to ``benchmarks/results.md``.

    python -m benchmarks.exactly_once [--docs 20000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import time
from typing import Any

import httpx
import pymongo
from kafka import KafkaConsumer, TopicPartition

import stack
from benchmarks import report
from benchmarks.backlog_drain import STATE, _running, _wait, document, tree_cpu_seconds
from stack.worker import ConnectWorker, distributed_properties

MODES = ("disabled", "enabled")


class CommittedCounter:
    """Counts the records a ``read_committed`` consumer sees on a topic, from its beginning."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self._consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                                       isolation_level="read_committed", max_partition_fetch_bytes=8 << 20)
        self._topic = topic
        self.count = 0

    def reached(self, target: int) -> bool:
        if not self._consumer.assignment():
            partitions = self._consumer.partitions_for_topic(self._topic)
            if not partitions:
                return False
            tps = [TopicPartition(self._topic, p) for p in sorted(partitions)]
            self._consumer.assign(tps)
            self._consumer.seek_to_beginning(*tps)
        self.count += sum(len(b) for b in self._consumer.poll(timeout_ms=200, max_records=50_000).values())
        return self.count >= target

    def close(self) -> None:
        self._consumer.close()


def run(docs: int, rounds: int) -> list[dict[str, Any]]:
    """``rounds`` drains per mode, the modes taking turns, on one fresh stack."""
    kafka_port, mongo_port, rest_port = stack.free_ports(3)
    stack.stop(STATE)
    shutil.rmtree(STATE, ignore_errors=True)
    endpoints = stack.start(STATE, kafka_port=kafka_port, mongo_port=mongo_port)
    workers = {mode: ConnectWorker(STATE / f"worker-{mode}", rest_port, distributed_properties(
        endpoints.kafka_bootstrap, rest_port, group_id=f"bench-{mode}",
        extra={"offset.flush.interval.ms": "5000", "exactly.once.source.support": mode})) for mode in MODES}
    mongo: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(endpoints.mongo_uri)
    try:
        return [_round(n, mode, docs, workers[mode], mongo, endpoints)
                for n in range(rounds) for mode in MODES]
    finally:
        mongo.close()
        for worker in workers.values():
            worker.stop()
        stack.stop(STATE)


def _round(number: int, mode: str, docs: int, worker: ConnectWorker, mongo: Any,
           endpoints: stack.StackEndpoints) -> dict[str, Any]:
    worker.start()
    http = httpx.Client(base_url=worker.address, timeout=60)
    db_name, prefix = f"eos{int(time.time())}r{number}{mode[0]}", "bench"
    topic, name = f"{prefix}.{db_name}.docs", f"bench-{db_name}"
    for old in http.get("/connectors").json():
        http.delete(f"/connectors/{old}")
    config = {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
              "mongodb.connection.string": endpoints.mongo_uri, "topic.prefix": prefix,
              "collection.include.list": f"{db_name}.docs"}
    http.put(f"/connectors/{name}/config", json=config).raise_for_status()
    _wait(lambda: _running(http, name), 120, "connector running")
    counter = CommittedCounter(endpoints.kafka_bootstrap, topic)
    try:
        mongo[db_name].docs.insert_one({"_id": -1, "warmup": True})
        _wait(lambda: counter.reached(1), 60, "warm-up record")
        time.sleep(6)  # one offset flush (disabled); the warm-up's transaction is committed already (enabled)
        worker.stop()
        print(f"round {number + 1} ({mode}): inserting {docs} documents while the worker is down ...", flush=True)
        rng = random.Random(42)
        batch = [document(n, rng) for n in range(docs)]
        for i in range(0, docs, 1000):
            mongo[db_name].docs.insert_many(batch[i:i + 1000])
        worker.start()
        pid = worker.pid
        assert pid is not None
        _wait(lambda: _running(http, name), 120, "connector running")
        t0, c0 = time.monotonic(), tree_cpu_seconds(pid)
        _wait(lambda: counter.reached(docs + 1), 600, "backlog drained")
        t1, c1 = time.monotonic(), tree_cpu_seconds(pid)
    finally:
        counter.close()
    http.delete(f"/connectors/{name}")
    worker.stop()
    result = {"mode": mode, "docs": docs, "events_per_s": docs / (t1 - t0), "cpu_us": (c1 - c0) / docs * 1e6}
    print(f"round {number + 1} ({mode}): {result['events_per_s']:.0f} events/s, {result['cpu_us']:.0f} µs CPU/event",
          flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    load_before = os.getloadavg()
    results = run(args.docs, args.rounds)
    load_after = os.getloadavg()
    by_mode = {m: [r for r in results if r["mode"] == m] for m in MODES}
    rate = {m: statistics.median(r["events_per_s"] for r in rs) for m, rs in by_mode.items()}
    cpu = {m: statistics.median(r["cpu_us"] for r in rs) for m, rs in by_mode.items()}
    def listed(mode: str, key: str, fmt: str) -> str:
        return ", ".join(format(r[key], fmt) for r in by_mode[mode])

    rows = [f"| {m} | {rate[m]:,.0f} ({listed(m, 'events_per_s', ',.0f')}) | "
            f"{cpu[m]:.0f} ({listed(m, 'cpu_us', '.0f')}) |" for m in MODES]
    report.append([
        report.heading("exactly_once"),
        "",
        f"- {args.rounds} rounds of {args.docs} documents (about 1 KB) per mode, taking turns; JSON with schemas; "
        "drain counted by a read_committed consumer; transaction.boundary=poll",
        "",
        "| exactly.once.source.support | drain events/s (median; rounds) | worker CPU µs/event (median; rounds) |",
        "|---|---|---|",
        *rows,
        "",
        f"- exactly-once on / off: drain **{rate['enabled'] / rate['disabled']:.2f}x**, "
        f"CPU per event **{cpu['enabled'] / cpu['disabled']:.2f}x**",
        f"- load average (1/5/15 min) {'/'.join(f'{x:.1f}' for x in load_before)} at the start, "
        f"{'/'.join(f'{x:.1f}' for x in load_after)} at the end: on a machine shared with other work the absolute "
        "figures are depressed and noisy; the modes take turns round by round, so their ratio is the figure to read",
        "",
    ])


if __name__ == "__main__":
    main()
