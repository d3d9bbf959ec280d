"""Latency at a steady write rate: documents are inserted at 1,000 writes/s (batches of 10 every 10 ms) for
``--seconds``; every change event's latency is Kafka's append time (the topic uses ``LogAppendTime``) minus the
event's MongoDB commit time (``source.wallTime``). Prints p50/p90/p99/max and appends them to
``benchmarks/results.md``. Also samples the load average, since a shared machine inflates the tail.

    python -m benchmarks.latency [--rate 1000] [--seconds 30]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import threading
import time
from datetime import UTC, datetime
from typing import Any

import httpx
import pymongo
from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

import stack
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


def _percentile(values: list[int], fraction: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(int(len(ordered) * fraction), len(ordered) - 1)])


def run(rate: int, seconds: float) -> dict[str, Any]:
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
                  "collection.include.list": "latency.docs", "snapshot.mode": "no_data"}
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
        written = _write(mongo["latency"]["docs"], rate, seconds, stop)
        stop.set()
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        latencies: list[int] = []
        deadline = time.monotonic() + 120
        while len(latencies) < written and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                for record in batch:
                    if record.value is not None:
                        source = json.loads(record.value)["payload"]["source"]
                        latencies.append(record.timestamp - source["wallTime"])
        return {"rate": rate, "seconds": seconds, "written": written, "captured": len(latencies),
                "p50": _percentile(latencies, 0.5), "p90": _percentile(latencies, 0.9),
                "p99": _percentile(latencies, 0.99), "max": float(max(latencies)),
                "load": sum(load) / max(len(load), 1)}
    finally:
        consumer.close()
        mongo.close()
        worker.stop()
        stack.stop(STATE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    result = run(args.rate, args.seconds)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    lines = [
        f"## latency — {datetime.now(UTC):%Y-%m-%d %H:%M} UTC — {machine}",
        "",
        f"- {result['written']} documents (about 1 KB) in {result['seconds']:.0f} s: target {result['rate']} writes/s, "
        f"achieved {result['written'] / result['seconds']:.0f}/s; {result['captured']} events captured",
        f"- MongoDB commit (wallTime) → Kafka append time: p50 **{result['p50']:.0f} ms**, p90 {result['p90']:.0f} ms, "
        f"p99 **{result['p99']:.0f} ms**, max {result['max']:.0f} ms",
        f"- 1-minute load average during the run: {result['load']:.2f} on {os.cpu_count()} cores"
        + (" (machine shared with other jobs: figures are pessimistic)" if result["load"] > (os.cpu_count() or 1)
           else ""),
        "",
    ]
    print("\n".join(lines))
    with open(ROOT / "results.md", "a", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
