"""The fault matrix: Kafka, MongoDB and worker faults (and a leader killed in a rebalance) while the writer
writes; afterwards nothing is lost, the consumer's collection equals MongoDB's and the connector runs.

Cells marked ``chaos_full`` run with ``make chaos`` only; the others (one per fault kind) run in ``make test``.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest

from connectors.mongodb.snapshot.progress import SnapshotProgress
from stack.chaos import ChaosStack
from tests.integration.chaos.conftest import Cell, fault_window, leader_url
from tests.integration.support import end_offsets, wait_stored_offset

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]
full = pytest.mark.chaos_full


def _kafka_pid(services: ChaosStack) -> int:
    pid = services.kafka.pid
    assert pid is not None, "Kafka is not running"
    return pid


# -- Kafka --------------------------------------------------------------------------------------------------------

def test_kafka_sigkill_restart(cell: Cell, chaos_stack: ChaosStack) -> None:
    cell.start()
    healed = fault_window(2.0, chaos_stack.kafka.kill, chaos_stack.kafka.start)
    cell.finish(healed)


@full
def test_kafka_sigstop_past_request_timeout(cell: Cell, chaos_stack: ChaosStack) -> None:
    """SIGSTOP for 12 s, past the producers' request.timeout.ms of 5 s."""
    cell.start()
    pid = _kafka_pid(chaos_stack)
    healed = fault_window(12.0, lambda: os.killpg(pid, signal.SIGSTOP), lambda: os.killpg(pid, signal.SIGCONT))
    cell.finish(healed)


@full
def test_kafka_connection_reset(cell: Cell, chaos_stack: ChaosStack) -> None:
    """Every connection to the broker reset, and new ones too, for 2 s."""
    cell.start()
    proxy = chaos_stack.kafka_proxy
    healed = fault_window(2.0, lambda: proxy.add_toxic("reset_peer", {"timeout": 0}), proxy.heal)
    cell.finish(healed)


@full
def test_kafka_latency_2s(cell: Cell, chaos_stack: ChaosStack) -> None:
    """2 s more on every answer of the broker for 20 s."""
    cell.start()
    proxy = chaos_stack.kafka_proxy
    healed = fault_window(20.0, lambda: proxy.add_toxic("latency", {"latency": 2000}), proxy.heal)
    cell.finish(healed)


@full
def test_kafka_bandwidth_trickle(cell: Cell, chaos_stack: ChaosStack) -> None:
    """2 KB/s each way for 20 s."""
    cell.start()
    proxy = chaos_stack.kafka_proxy

    def trickle() -> None:
        for stream in ("upstream", "downstream"):
            proxy.add_toxic("bandwidth", {"rate": 2}, stream=stream)

    healed = fault_window(20.0, trickle, proxy.heal)
    cell.finish(healed)


@full
def test_kafka_partition_60s(cell: Cell, chaos_stack: ChaosStack) -> None:
    """Nothing between the worker and the broker for 60 s: past the group session (10 s) and every request
    timeout; the worker leaves the group and joins it again."""
    cell.start()
    proxy = chaos_stack.kafka_proxy
    healed = fault_window(60.0, proxy.partition, proxy.heal)
    cell.finish(healed)


# -- MongoDB ------------------------------------------------------------------------------------------------------

@full
def test_mongo_sigkill_restart(cell: Cell, chaos_stack: ChaosStack) -> None:
    cell.start()
    healed = fault_window(2.0, chaos_stack.mongo.kill, chaos_stack.mongo.start)
    cell.finish(healed)


@full
def test_mongo_connection_reset(cell: Cell, chaos_stack: ChaosStack) -> None:
    """The change stream's connections reset while batches flow, and new ones too, for 1 s."""
    cell.start()
    proxy = chaos_stack.mongo_proxy
    healed = fault_window(1.0, lambda: proxy.add_toxic("reset_peer", {"timeout": 0}), proxy.heal)
    cell.finish(healed)


@full
def test_mongo_latency(cell: Cell, chaos_stack: ChaosStack) -> None:
    """1 s more on every MongoDB answer for 15 s."""
    cell.start()
    proxy = chaos_stack.mongo_proxy
    healed = fault_window(15.0, lambda: proxy.add_toxic("latency", {"latency": 1000}), proxy.heal)
    cell.finish(healed)


def test_mongo_partition_past_timeouts(cell: Cell, chaos_stack: ChaosStack) -> None:
    """Nothing between the connector and MongoDB for 25 s, past its socket (10 s), selection and connect (5 s)
    timeouts: the task retries and resumes after its last token."""
    cell.start()
    proxy = chaos_stack.mongo_proxy
    healed = fault_window(25.0, proxy.partition, proxy.heal)
    cell.finish(healed)


# -- the worker ---------------------------------------------------------------------------------------------------

def test_worker_sigkill_during_offset_flush(cell: Cell) -> None:
    """Killed the moment a flush's record lands in the offsets topic (flushes every 500 ms under load)."""
    cell.start()
    offsets = f"{cell.group}-offsets"
    bootstrap = cell.services.observer_bootstrap
    before = end_offsets(bootstrap, [offsets])[offsets]
    deadline = time.monotonic() + 60
    while end_offsets(bootstrap, [offsets])[offsets] == before:
        assert time.monotonic() < deadline, "no offset flush in 60 s"
    cell.worker.process.kill()
    cell.worker.process.start()
    cell.finish(time.monotonic())


def _preload(cell: Cell, count: int = 20_000) -> None:
    """``count`` documents for the snapshot, each expected in a snapshot record."""
    collection = cell.writer.client[cell.db][cell.coll]
    for start in range(0, count, 2000):
        collection.insert_many([{"_id": 1_000_000 + i, "seq": "pre", "v": -1, "s": "y" * 100}
                                for i in range(start, start + 2000)])
    cell.expected_extra = [f"r{1_000_000 + i}" for i in range(count)]


def _emitted_some(offset: dict[str, Any], ns: str) -> bool:
    """Whether ``offset`` records part of the snapshot of ``ns`` as emitted (an offset with no range begun yet
    makes a restarted snapshot start over from a new position)."""
    progress = SnapshotProgress.decode(offset.get("snapshot_progress"))
    return progress.completed(ns) or any(r.done or r.after is not None for r in progress.ranges(ns) or [])


@full
def test_worker_sigkill_during_snapshot(cell: Cell) -> None:
    """20,000 documents to snapshot while the writer writes; killed once an offset with part of the snapshot
    emitted is stored: the snapshot resumes from it and from its first position, every document is in a
    snapshot record and every write streamed."""
    _preload(cell)
    cell.start(writer=False)
    cell.writer.start()
    wait_stored_offset(cell.services.observer_bootstrap, f"{cell.group}-offsets", cell.connector,
                       lambda offset: _emitted_some(offset, f"{cell.db}.{cell.coll}"), "with snapshot progress",
                       timeout=120)
    cell.worker.process.kill()
    cell.worker.process.start()
    cell.finish(time.monotonic())


@full
def test_worker_sigkill_before_the_snapshot_stored_an_offset(cell: Cell) -> None:
    """Killed at the first snapshot record, before any offset: the snapshot starts over from a new position;
    the writes made before it are carried by its reads (superseded), the later ones streamed."""
    _preload(cell)
    cell.snapshot_may_restart = True
    cell.start(writer=False)
    cell.writer.start()
    cell.wait_events(1)
    cell.worker.process.kill()
    cell.worker.process.start()
    cell.finish(time.monotonic())


@full
def test_worker_sigterm_with_records_in_flight(cell: Cell) -> None:
    cell.start()
    cell.worker.process.stop(timeout=30)
    cell.worker.process.start()
    cell.finish(time.monotonic())


# -- a group of workers -------------------------------------------------------------------------------------------

def test_leader_killed_during_rebalance(cell: Cell) -> None:
    """Two workers run the connector; a third joins, and the group's leader is killed while the group
    rebalances: the survivors run the connector again."""
    first = cell.new_worker()
    second = cell.new_worker()
    cell.start()
    cell.new_worker()  # the group rebalances to give it a share
    leader = leader_url(second) or first.url
    victim = next(w for w in cell.workers if w.url == leader.rstrip("/"))
    victim.process.kill()
    survivor = next(w for w in cell.workers if w is not victim)
    cell.finish(time.monotonic(), status_from=survivor)
