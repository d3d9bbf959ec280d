"""The latency phase of :mod:`benchmarks.side_by_side`: documents inserted at a steady rate into ``bench.lat``
(batches of 10 on a fixed schedule), each change event's latency = Kafka's append time (the topic is created with
``message.timestamp.type=LogAppendTime`` before the connector writes to it) minus the event's MongoDB commit time
(``source.wallTime``). The systems take turns, as in the drain rounds.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

from kafka import KafkaConsumer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from benchmarks.backlog_drain import document

COLLECTION = "lat"
BATCH = 10


def create_topic(bootstrap: str, topic: str) -> None:
    """The latency topic, stamped by the broker (its append time is the end of the measured path)."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, 1, 1, topic_configs={"message.timestamp.type": "LogAppendTime"})])
    finally:
        admin.close()


def last_append_s(consumer: KafkaConsumer, topic: str, offset: int, timeout: float = 60.0) -> float:
    """When the broker appended the record at ``offset`` of ``topic`` (partition 0, created by :func:`create_topic`),
    as a wall-clock time in seconds: the end of a drain or snapshot without the watcher's polling interval in it."""
    partition = TopicPartition(topic, 0)
    consumer.assign([partition])
    consumer.seek(partition, offset)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500, max_records=1).values():
            for record in batch:
                if record.offset == offset:
                    if record.timestamp_type != 1:
                        raise ValueError(f"{topic} is not stamped with the broker's append time")
                    return float(record.timestamp) / 1000
    raise TimeoutError(f"no record at offset {offset} of {topic}")


def _write(collection: Any, first: int, rate: int, seconds: float) -> int:
    rng = random.Random(first)
    start = time.monotonic()
    written = 0
    while time.monotonic() - start < seconds:
        collection.insert_many([document(first + written + i, rng) for i in range(BATCH)])
        written += BATCH
        delay = start + written / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return written


def _percentile(values: list[int], fraction: float) -> float:
    ordered = sorted(values)
    return float(ordered[min(int(len(ordered) * fraction), len(ordered) - 1)])


def latency_round(mongo: Any, bootstrap: str, topic: str, first: int, rate: int, seconds: float
                  ) -> dict[str, float]:
    """Write at ``rate``/s for ``seconds`` (ids from ``first``); p50/p99 of the round's events, in ms."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
    partition = TopicPartition(topic, 0)
    consumer.assign([partition])
    consumer.seek_to_end(partition)
    consumer.position(partition)
    try:
        written = _write(mongo.bench[COLLECTION], first, rate, seconds)
        latencies: list[int] = []
        deadline = time.monotonic() + 300
        while len(latencies) < written and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                for record in batch:
                    if record.value is not None:
                        source = json.loads(record.value)["payload"]["source"]
                        latencies.append(record.timestamp - source["wallTime"])
        if len(latencies) < written:
            raise TimeoutError(f"{len(latencies)} of {written} latency events reached {topic}")
        return {"p50_ms": _percentile(latencies, 0.5), "p99_ms": _percentile(latencies, 0.99)}
    finally:
        consumer.close()
