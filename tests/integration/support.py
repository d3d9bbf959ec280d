"""Helpers for tests against the real stack: a worker REST client, Kafka readers, names."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import httpx
from kafka import KafkaConsumer, TopicPartition

from stack.worker import ConnectWorker


class Worker:
    """A worker process and a REST client bound to it."""

    def __init__(self, process: ConnectWorker) -> None:
        self.process = process
        self.url = process.address
        self.http = httpx.Client(base_url=self.url, timeout=60)

    def wait_status(self, name: str, predicate: Callable[[dict[str, Any]], bool],
                    timeout: float = 60, fail_fast: bool = False) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            reply = self.http.get(f"/connectors/{name}/status")
            if reply.status_code == 200:
                last = reply.json()
                if predicate(last):
                    return dict(last)
                if fail_fast and any(t["state"] == "FAILED" for t in last["tasks"]):
                    raise AssertionError(f"task of {name} FAILED:\n{last['tasks'][0].get('trace')}")
            time.sleep(0.2)
        raise AssertionError(f"status of {name} never matched; last: {last}")

    def wait_running(self, name: str, timeout: float = 60) -> dict[str, Any]:
        return self.wait_status(
            name,
            lambda s: s["connector"]["state"] == "RUNNING" and bool(s["tasks"])
            and all(t["state"] == "RUNNING" for t in s["tasks"]),
            timeout,
            fail_fast=True,
        )


def create_connector(worker: Worker, name: str, config: Mapping[str, Any], *, initial_state: str | None = None,
                     wait_running: bool = True, timeout: float = 60) -> dict[str, Any]:
    """``POST /connectors`` with ``name`` and ``config`` (and ``initial_state`` if given), asserting Connect's 201;
    then, unless ``wait_running`` is False, wait until the connector and all its tasks are RUNNING (failing at once
    if a task FAILED). Returns the body of the 201 (the created connector's info)."""
    body: dict[str, Any] = {"name": name, "config": dict(config)}
    if initial_state is not None:
        body["initial_state"] = initial_state
    reply = worker.http.post("/connectors", json=body)
    assert reply.status_code == 201, f"POST /connectors {name}: {reply.status_code} {reply.text}"
    if wait_running:
        worker.wait_running(name, timeout)
    created: dict[str, Any] = reply.json()
    return created


def unique(prefix: str) -> str:
    """A name no other test uses."""
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def assign_from_beginning(consumer: KafkaConsumer, topic: str, deadline: float) -> None:
    """Assign every partition of ``topic`` to ``consumer`` at its first offset, waiting until ``deadline``
    (``time.monotonic()``) for the topic to appear."""
    partitions: set[int] | None = None
    while time.monotonic() < deadline and not partitions:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            time.sleep(0.2)
    assert partitions, f"topic {topic} never appeared"
    tps = [TopicPartition(topic, p) for p in sorted(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)


def read_topic(bootstrap: str, topic: str, count: int | None = None, *,
               until: Callable[[list[Any]], bool] | None = None, timeout: float = 60) -> list[Any]:
    """The records of ``topic`` (all partitions, from the beginning, waiting for the topic to appear), read until
    there are at least ``count`` of them, or until ``until(fresh)`` holds for a batch of newly read records
    (``until`` sees each record once); fails after ``timeout`` seconds. May return more than ``count``."""
    assert (count is None) != (until is None), "read until a count or until a condition"
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             max_partition_fetch_bytes=8 << 20, fetch_max_bytes=64 << 20)
    try:
        deadline = time.monotonic() + timeout
        assign_from_beginning(consumer, topic, deadline)
        records: list[Any] = []
        while (count is None or len(records) < count) and time.monotonic() < deadline:
            fresh = [r for batch in consumer.poll(timeout_ms=500, max_records=50_000).values() for r in batch]
            records.extend(fresh)
            if until is not None and fresh and until(fresh):
                return records
        if until is not None:
            raise AssertionError(f"{topic}: condition not met after {len(records)} records")
        assert count is not None and len(records) >= count, f"{topic}: {len(records)} records, expected {count}"
        return records
    finally:
        consumer.close()


def end_offsets(bootstrap: str, topics: Iterable[str]) -> dict[str, int]:
    """How many records each topic holds (the sum of its partitions' end offsets; 0 before it exists)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        totals = {}
        for topic in topics:
            tps = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
            totals[topic] = sum(consumer.end_offsets(tps).values()) if tps else 0
        return totals
    finally:
        consumer.close()


def read_to_end(bootstrap: str, topic: str, timeout: float = 120) -> list[tuple[bytes | None, bytes | None]]:
    """``(key, value)`` of every record ``topic`` holds now, in partition then offset order."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not tps:  # no such topic yet (seek_to_beginning() of nothing would mean every assigned partition)
            return []
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        out: list[tuple[bytes | None, bytes | None]] = []
        deadline = time.monotonic() + timeout
        while any(consumer.position(tp) < ends[tp] for tp in tps) and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                out.extend((r.key, r.value) for r in batch)
        return out
    finally:
        consumer.close()


def payload(data: bytes | None) -> Any:
    """The ``payload`` of a JSON-with-schema record (None for a tombstone)."""
    return None if data is None else json.loads(data)["payload"]


def stored_offset(bootstrap: str, offsets_topic: str, connector: str) -> dict[str, Any] | None:
    """The latest source offset the offsets topic holds for ``connector`` (any source partition), or None."""
    latest: dict[str, Any] | None = None
    for key, value in read_to_end(bootstrap, offsets_topic, timeout=30):
        if key is not None and json.loads(key)[0] == connector:
            latest = None if value is None else json.loads(value)
    return latest


def wait_stored_offset(bootstrap: str, offsets_topic: str, connector: str,
                       predicate: Callable[[dict[str, Any]], bool], what: str, timeout: float = 60) -> dict[str, Any]:
    """Wait until the offset stored for ``connector`` satisfies ``predicate``; returns it."""
    deadline = time.monotonic() + timeout
    while True:
        offset = stored_offset(bootstrap, offsets_topic, connector)
        if offset is not None and predicate(offset):
            return offset
        if time.monotonic() > deadline:
            raise AssertionError(f"no offset of {connector} {what} in {offsets_topic} after {timeout:.0f} s; "
                                 f"last: {offset}")
        time.sleep(0.3)


def wait_offset_flushed(bootstrap: str, offsets_topic: str, connector: str, source: Mapping[str, Any],
                        timeout: float = 60) -> dict[str, Any]:
    """Wait until the offset stored for ``connector`` (a MongoDB connector: ``sec``/``ord``) is at or past the
    event whose ``source`` block is given: an offset flush has covered that record. Returns the offset."""
    wanted = (int(source["ts_ms"]) // 1000, int(source["ord"]))
    return wait_stored_offset(bootstrap, offsets_topic, connector,
                              lambda offset: (offset.get("sec", -1), offset.get("ord", -1)) >= wanted,
                              f"at (sec, ord) {wanted}", timeout)


def last_source(records: Iterable[Any]) -> dict[str, Any]:
    """The ``source`` block of the last data record of ``records`` (tombstones left out)."""
    bodies = [payload(r.value) for r in records if r.value is not None]
    assert bodies, "no data record"
    source: dict[str, Any] = bodies[-1]["source"]
    return source
