"""The fault matrix: Kafka, MongoDB and worker faults (and a leader killed in a rebalance) while the writer
writes; afterwards nothing is lost, the consumer's collection equals MongoDB's and the connector runs.

Cells marked ``chaos_full`` run with ``make chaos`` only; the others (one per fault kind) run in ``make test``.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from bson import ObjectId

from connectors.mongodb.snapshot.progress import SnapshotProgress
from stack.chaos import ChaosStack, ProxiedMongo
from tests.integration.chaos.conftest import WARM_UP_EVENTS as WARM_UP
from tests.integration.chaos.conftest import Cell, fault_window, leader_url
from tests.integration.support import Worker, end_offsets, wait_stored_offset

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


OPLOG_ENTRIES = 1000
LOST_POSITION = "no longer available on the server. Reconfigure the connector to use a snapshot mode when needed."


def _count_in_log(worker: Worker, text: str) -> int:
    return worker.process.log_path.read_text(errors="replace").count(text)


@pytest.mark.parametrize("mode", [pytest.param("when_needed", marks=full), "initial",  # initial in make test
                                  pytest.param("no_data", marks=full), pytest.param("always", marks=full)])
def test_mongo_oplog_lost_while_partitioned(cell: Cell, chaos_stack: ChaosStack, tmp_path: Path, mode: str) -> None:
    """A SecantusDB keeping 1,000 oplog entries; the connector is cut from it for 15 s (past its socket timeout)
    while 3,000 other writes roll the oplog over: its resume token is gone. As Debezium 3.x: ``when_needed``
    takes a new snapshot and runs on; ``initial``, ``no_data`` and ``always`` fail the task with Debezium's
    message, once (no retry storm), and every change acknowledged before the partition is in Kafka. The
    operator then does what the message says (``snapshot.mode=when_needed``): the new snapshot carries what the
    lost oplog held, nothing is lost."""
    small = chaos_stack.small_oplog_mongo(tmp_path / "small-oplog", OPLOG_ENTRIES)
    try:
        _oplog_lost(cell, small, mode)
    finally:
        small.server.stop()


def _oplog_lost(cell: Cell, small: ProxiedMongo, mode: str) -> None:
    cell.name = f"mongo_oplog_lost_while_partitioned[{mode}]"
    cell.use_mongo(small.server.uri, small.worker_uri)
    cell.start(config={"snapshot.mode": mode})
    before = list(cell.writer.written.copy())  # copy(): atomic while the writer adds to it
    noise = cell.writer.client[cell.db]["noise"]

    def lose_window() -> None:
        small.proxy.partition()
        for start in range(0, 3 * OPLOG_ENTRIES, 500):
            noise.insert_many([{"_id": i, "pad": "z" * 50} for i in range(start, start + 500)])

    healed = fault_window(15.0, lose_window, small.proxy.heal)
    cell.snapshot_may_restart = True  # the changes the lost oplog held reach Kafka as a new snapshot's reads
    worker, tag = cell.worker, f"[{cell.connector}|task-0]"
    if mode != "when_needed":
        status = worker.wait_status(cell.connector, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "FAILED",
                                    timeout=180)
        trace = status["tasks"][0]["trace"]
        assert "The connector is trying to read change stream starting at {sec=" in trace and LOST_POSITION in trace
        assert cell.observer.wait_for(before, timeout=60), "a change acknowledged before the partition is missing"
        # the operator's fix, as the message says: the reconfigured task takes a new snapshot
        reply = worker.http.put(f"/connectors/{cell.connector}/config",
                                json=cell.connector_config(**{"snapshot.mode": "when_needed"}))
        assert reply.status_code == 200, reply.text
        cell.outcome_before = "FAILED, reconfigured when_needed: "
    cell.finish(healed)
    retries = _count_in_log(worker, f"{tag} Change stream failed, resuming")
    failures = _count_in_log(worker, f"{tag} The connector is trying to read change stream")
    assert retries <= 20, f"{retries} retries of the change stream: a retry storm"
    assert failures <= (0 if mode == "when_needed" else 2), f"the lost position was reported {failures} times"
    assert _count_in_log(worker, f"{tag} The change stream position is no longer available") \
        + _count_in_log(worker, f"{tag} The stored change stream position is no longer available") >= 1
    cell.note(f"{retries} change-stream retries logged during the partition; the lost position reported "
              f"{failures} time(s)" + ("" if mode == "when_needed" else
                                       ", the task FAILED with Debezium's message until reconfigured"))


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
    cell.kill_and_restart()
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
    cell.kill_and_restart()
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
    cell.kill_and_restart()
    cell.finish(time.monotonic())


def _signal(cell: Cell, kind: str, data: dict[str, Any]) -> None:
    cell.writer.client[cell.db]["signals"].insert_one({"_id": ObjectId(), "type": kind, "data": json.dumps(data)})


@full
def test_worker_sigkill_during_incremental_snapshot(cell: Cell) -> None:
    """An ``execute-snapshot`` signal starts an incremental snapshot of 10,000 documents while the writer
    writes; the worker is killed once an offset with the snapshot's progress is stored. After the restart the
    snapshot resumes from that offset and finishes: every document is in a snapshot read, every change
    streamed."""
    _preload(cell, 10_000)
    cell.start(writer=False, config={"snapshot.mode": "no_data", "signal.data.collection": f"{cell.db}.signals",
                                     "incremental.snapshot.chunk.size": "500"})
    cell.writer.start()
    cell.wait_events(WARM_UP)
    _signal(cell, "execute-snapshot", {"data-collections": [f"{cell.db}\\.{cell.coll}"], "type": "incremental"})
    wait_stored_offset(cell.services.observer_bootstrap, f"{cell.group}-offsets", cell.connector,
                       lambda offset: any(key.startswith("incremental_snapshot") for key in offset),
                       "with an incremental snapshot in progress", timeout=180)
    cell.kill_and_restart()
    cell.finish(time.monotonic())
    log = cell.worker.process.log_path.read_text(errors="replace")
    assert f"Incremental snapshot of {cell.db}.{cell.coll} completed" in log


@full
def test_worker_sigterm_with_records_in_flight(cell: Cell) -> None:
    cell.start()
    cell.worker.process.stop(timeout=30)
    cell.worker.process.start()
    cell.finish(time.monotonic())


# -- a group of workers -------------------------------------------------------------------------------------------

def _call(worker: Worker, method: str, path: str, body: dict[str, str] | None = None) -> tuple[str, str]:
    """``worker``'s answer to one REST call: a short summary (status code, or the client's error) and its text."""
    try:
        reply = worker.http.request(method, path, json=body, timeout=90)
    except httpx.HTTPError as exc:
        return f"{method} {path.split('/')[-1] or '/'} {type(exc).__name__}", ""
    detail = reply.json().get("connector", {}).get("state", "") if path.endswith("/status") \
        and reply.status_code == 200 else ""
    return f"{method} {path.split('/')[-1] or '/'} {reply.status_code}{' ' + detail if detail else ''}", reply.text


def _answers(worker: Worker, cell: Cell) -> str:
    """What ``worker``'s REST API answers now to reads: each call's status code (or the client's error)."""
    return "; ".join(_call(worker, "GET", path)[0]
                     for path in ("/", "/connectors", f"/connectors/{cell.connector}/status"))


def _wait_log(worker: Worker, text: str, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while text not in worker.process.log_path.read_text(errors="replace"):
        assert time.monotonic() < deadline, what
        time.sleep(0.5)


@full
def test_worker_partitioned_from_kafka_serves_rest(cell: Cell, chaos_stack: ChaosStack) -> None:
    """Two workers; the first, alone when the connector is created (so the group's leader), reaches Kafka through
    a proxy of its own and is cut from it for 40 s (past the group's session timeout and
    scheduled.rebalance.max.delay.ms). A config update sent to it as the partition begins holds its herder
    thread in a config-topic write; as Connect (KAFKA-9184) it still stops its connectors and tasks once the
    coordinator has been unreachable for heartbeat.interval.ms: the write gives up then (a 500 saying so)
    instead of holding the revocation for its 30 s bound. The other worker takes the work over; the cut-off
    worker's REST API still answers reads (status from its last view); after the heal the connector runs with
    nothing lost."""
    isolated = cell.new_worker(bootstrap=chaos_stack.isolated_worker_bootstrap)
    cell.start()
    other = cell.new_worker()
    other.wait_running(cell.connector, timeout=120)
    assert (leader_url(other) or "").rstrip("/") == isolated.url, "the first worker should lead the group"
    proxy = chaos_stack.isolated_kafka_proxy
    mine = urlsplit(other.url).netloc
    written: list[tuple[str, str]] = []
    update = threading.Thread(target=lambda: written.append(_call(
        isolated, "PUT", f"/connectors/{cell.connector}/config", cell.connector_config(**{"max.batch.size": "1000"}))))
    cut_at = time.monotonic()
    proxy.partition()
    try:
        update.start()  # the leader's herder thread takes it into a config-topic write that cannot complete
        # the group gives the partitioned worker's share to the other one; then ask the partitioned worker
        other.wait_status(cell.connector, lambda s: s["connector"]["worker_id"] == mine and bool(s["tasks"])
                          and all(t["worker_id"] == mine and t["state"] == "RUNNING" for t in s["tasks"]),
                          timeout=180)
        _wait_log(isolated, "revoking this worker's connectors", "the partitioned worker never stopped its work")
        update.join(timeout=120)
        assert not update.is_alive(), "the config update to the partitioned worker never answered"
        answers = _answers(isolated, cell)
        time.sleep(max(0.0, cut_at + 40.0 - time.monotonic()))  # the partition's length, not a synchronisation
    finally:
        proxy.heal()
    healed = time.monotonic()
    cell.position_aware = True
    cell.finish(healed, status_from=other)
    (summary, text), = written
    cell.note(f"the partitioned worker's REST answers once it stopped its work: {answers}; the config update "
              f"sent as the partition began: {summary}, given up when the worker was cut off (its herder thread "
              "was free to revoke its work); its producer's request in flight when cut off reaches Kafka after the "
              "heal, after the new owner's records: the consumer's collection is compared applying each document's "
              "changes in source-position order")
    assert answers.startswith("GET / 200; GET connectors 200; GET status 200"), answers
    assert summary.endswith(" 500") and "was given up: the group coordinator was unreachable" in text, (summary, text)
    isolated.wait_running(cell.connector, timeout=120)


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
