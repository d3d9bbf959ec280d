"""A source task's offsets under acknowledgements out of send order: librdkafka acknowledges each Kafka partition's
records in order, but the partitions of one source partition (the MongoDB connector's one offset spans every
collection's topic) in any order, so the committed offset is the last of the acknowledged prefix in send order."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from connect.api.records import SourceRecord
from connect.runtime.offsets import OffsetReader
from connect.runtime.task_contracts import DeliveryCallback, TaskStatusListener
from connect.runtime.worker_source_task import WorkerSourceTask
from connect.storage.config_state import ConnectorTaskId
from connect.storage.file import FileOffsetStore
from tests.unit.connect.support import IdleTask, QuietProducer, json_converters, offset_store

PARTITION = {"server_id": "prefix"}
TOPICS = ("prefix.db.a", "prefix.db.b", "prefix.db.c")


class _HoldingProducer(QuietProducer):
    """Keeps each record's callback, per topic (one Kafka partition each), until the test acknowledges it."""

    def __init__(self) -> None:
        self.held: dict[str, list[DeliveryCallback]] = {topic: [] for topic in TOPICS}

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: DeliveryCallback | None = None) -> None:
        assert on_done is not None
        self.held[topic].append(on_done)


def _runner(tmp_path: Path) -> tuple[WorkerSourceTask, _HoldingProducer, FileOffsetStore]:
    store = offset_store(tmp_path)
    producer = _HoldingProducer()
    runner = WorkerSourceTask(ConnectorTaskId("conn", 0), IdleTask(), {}, json_converters(), producer, store,
                              TaskStatusListener(), flush_interval_ms=60_000, flush_timeout_ms=5_000)
    return runner, producer, store


def _records(count: int, seed: int) -> list[SourceRecord]:
    topics = random.Random(seed).choices(TOPICS, k=count)
    return [SourceRecord(PARTITION, {"ord": n}, topic, None, None, None, None, f"v{n}")
            for n, topic in enumerate(topics)]


@pytest.mark.parametrize("seed", range(8))
def test_the_committed_offset_is_the_acknowledged_prefix_whatever_the_order_across_kafka_partitions(
        tmp_path: Path, seed: int) -> None:
    runner, producer, store = _runner(tmp_path)
    records = _records(60, seed)
    assert runner._send(records) == []
    order = {topic: [n for n, r in enumerate(records) if r.topic == topic] for topic in TOPICS}
    acked: set[int] = set()
    rng = random.Random(seed)
    committed: list[int] = []
    while any(producer.held.values()):
        # librdkafka's order: any partition next, each partition's records in send order, several at a time
        topic = rng.choice([t for t in TOPICS if producer.held[t]])
        for _ in range(rng.randint(1, 5)):
            if producer.held[topic]:
                producer.held[topic].pop(0)(None, None)
                acked.add(order[topic].pop(0))
        runner._commit_offsets()
        prefix = next((n for n in range(len(records)) if n not in acked), len(records)) - 1
        offset = OffsetReader("conn", store).offset(PARTITION)
        assert (offset or {}).get("ord", -1) == prefix, "never past an unacknowledged record, never behind"
        committed.append(prefix)
    assert committed == sorted(committed) and committed[-1] == len(records) - 1
    assert runner._submitted.in_flight() == 0
