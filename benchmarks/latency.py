"""Latency at a steady write rate: documents are inserted at 1,000 writes/s (batches of 10 every 10 ms) for
``--seconds``; every change event's latency is Kafka's append time (the topic uses ``LogAppendTime``) minus the
event's MongoDB commit time (``source.wallTime``). Prints p50/p90/p99/max and appends them to
``benchmarks/results.md``. Also samples the load average, since a shared machine inflates the tail, and splits
the latency at the moment a plain pymongo change stream beside the connector receives each event (the server's
share before it, the worker's after it).

    python -m benchmarks.latency [--rate 1000] [--seconds 30] [--set producer.override.linger.ms=5 ...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import threading
import time
from typing import Any

import httpx
import pymongo
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

import stack
from benchmarks import report
from benchmarks.backlog_drain import ROOT, _running, _wait, document
from stack.worker import ConnectWorker, distributed_properties

STATE = ROOT.parent / ".stack" / "latency"
BATCH = 10


def _write(collection: Any, rate: int, seconds: float, stop: threading.Event) -> int:
    """Insert ``rate`` documents per second, in batches of ``BATCH`` on a fixed schedule; returns the count."""
    rng = random.Random(7)
    start = time.monotonic()
    written = 0
    while not stop.is_set() and time.monotonic() - start < seconds:
        collection.insert_many([document(written + i, rng) for i in range(BATCH)])
        written += BATCH
        delay = start + written / rate - time.monotonic()
        if delay > 0:
            stop.wait(delay)
    return written


def _watch(uri: str, seen: dict[Any, float], ready: threading.Event, stop: threading.Event) -> None:
    """A plain pymongo change stream beside the connector: when each event reaches a client (wall clock, ms).
    Kafka append time minus this is the worker's own share of the latency; this minus wallTime is the server's."""
    client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(uri)
    try:
        with client["latency"]["docs"].watch(max_await_time_ms=500) as stream:
            ready.set()
            while not stop.is_set():
                event = stream.try_next()
                if event is not None and event.get("operationType") == "insert":
                    seen[event["documentKey"]["_id"]] = time.time() * 1000
    finally:
        client.close()


def _percentile(values: list[int] | list[float], fraction: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(int(len(ordered) * fraction), len(ordered) - 1)])


def run(rate: int, seconds: float, overrides: dict[str, str] | None = None) -> dict[str, Any]:
    kafka_port, mongo_port, rest_port = stack.free_ports(3)
    stack.stop(STATE)
    shutil.rmtree(STATE, ignore_errors=True)
    endpoints = stack.start(STATE, kafka_port=kafka_port, mongo_port=mongo_port)
    worker = ConnectWorker(STATE / "worker", rest_port,
                           distributed_properties(endpoints.kafka_bootstrap, rest_port, group_id="latency"))
    mongo: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(endpoints.mongo_uri)
    topic, name = "lat.latency.docs", "latency"
    admin = KafkaAdminClient(bootstrap_servers=endpoints.kafka_bootstrap)
    admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"message.timestamp.type": "LogAppendTime"})])
    admin.close()
    consumer = KafkaConsumer(bootstrap_servers=endpoints.kafka_bootstrap, group_id=None)
    try:
        worker.start()
        http = httpx.Client(base_url=worker.address, timeout=60)
        config = {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
                  "mongodb.connection.string": endpoints.mongo_uri, "topic.prefix": "lat",
                  "collection.include.list": "latency.docs", "snapshot.mode": "no_data", **(overrides or {})}
        http.put(f"/connectors/{name}/config", json=config).raise_for_status()
        _wait(lambda: _running(http, name), 60, "connector running")
        time.sleep(2)
        stop = threading.Event()
        load: list[float] = []

        def sample() -> None:
            while not stop.wait(1.0):
                load.append(os.getloadavg()[0])
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        seen: dict[Any, float] = {}
        ready, watch_stop = threading.Event(), threading.Event()
        watcher = threading.Thread(target=_watch, args=(endpoints.mongo_uri, seen, ready, watch_stop), daemon=True)
        watcher.start()
        ready.wait(30)
        written = _write(mongo["latency"]["docs"], rate, seconds, stop)
        stop.set()
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        latencies: list[int] = []
        server: list[float] = []
        worker_share: list[float] = []
        deadline = time.monotonic() + 120
        while len(latencies) < written and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                for record in batch:
                    if record.value is not None:
                        payload = json.loads(record.value)["payload"]
                        source = payload["source"]
                        latencies.append(record.timestamp - source["wallTime"])
                        received = seen.get(json.loads(payload["after"])["_id"])
                        if received is not None:
                            server.append(received - source["wallTime"])
                            worker_share.append(record.timestamp - received)
        watch_stop.set()
        return {"rate": rate, "seconds": seconds, "written": written, "captured": len(latencies),
                "p50": _percentile(latencies, 0.5), "p90": _percentile(latencies, 0.9),
                "p99": _percentile(latencies, 0.99), "max": float(max(latencies)),
                "load": sum(load) / max(len(load), 1),
                "server": {q: _percentile(server, f) for q, f in (("p50", .5), ("p99", .99))} if server else {},
                "worker": {q: _percentile(worker_share, f) for q, f in (("p50", .5), ("p99", .99))}
                if worker_share else {}}
    finally:
        consumer.close()
        mongo.close()
        worker.stop()
        stack.stop(STATE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="extra connector config, e.g. producer.override.linger.ms=0 (repeatable)")
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.set)
    result = run(args.rate, args.seconds, overrides)
    lines = [
        report.heading("latency"),
        "",
        f"- {result['written']} documents (about 1 KB) in {result['seconds']:.0f} s: target {result['rate']} writes/s, "
        f"achieved {result['written'] / result['seconds']:.0f}/s; {result['captured']} events captured",
        f"- MongoDB commit (wallTime) → Kafka append time: p50 **{result['p50']:.0f} ms**, p90 {result['p90']:.0f} ms, "
        f"p99 **{result['p99']:.0f} ms**, max {result['max']:.0f} ms",
        *([f"- split (a plain pymongo change stream beside the connector receives each event too): wallTime → "
            f"client p50 {result['server']['p50']:.0f} ms, p99 {result['server']['p99']:.0f} ms (SecantusDB and the "
            f"driver); client → Kafka append p50 {result['worker']['p50']:.0f} ms, p99 {result['worker']['p99']:.0f} "
            "ms (the worker's own share, approximately)"] if result["server"] else []),
        *([f"- connector overrides: {', '.join(f'{k}={v}' for k, v in overrides.items())}"] if overrides else []),
        f"- 1-minute load average during the run: {result['load']:.2f} on {os.cpu_count()} cores"
        + (" (machine shared with other jobs: figures are pessimistic)" if result["load"] > (os.cpu_count() or 1)
           else ""),
        "",
    ]
    report.append(lines)


if __name__ == "__main__":
    main()
