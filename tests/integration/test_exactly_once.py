"""Exactly-once source delivery (KIP-618) against real Kafka and SecantusDB.

With ``exactly.once.source.support=enabled`` the worker is SIGKILLed three times while a writer applies 20,000
changes, once inside a transaction commit: a ``read_committed`` consumer sees every change exactly once, in order
per document. The same crash,
placed where at-least-once delivery must repeat itself (records acknowledged, their offsets not yet flushed), gives
duplicates with ``disabled`` and none with ``enabled``: the test shows the difference, not just the absence of a
symptom.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import random
import signal
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition

from connect.api.errors import ConnectError
from connect.runtime import exactly_once
from connect.runtime.rdkafka_producer import RdKafkaProducer, fence_producers
from connect.test_hooks import ENV
from tests.integration.support import (
    Worker,
    assign_from_beginning,
    create_connector,
    end_offsets,
    payload,
    read_to_end,
    unique,
)
from tests.integration.test_metrics import samples, value

pytestmark = pytest.mark.integration

PER_BATCH = 100  # each batch: 100 inserts, then one update_many touching the same 100 documents
SLOW_FLUSH = {"offset.flush.interval.ms": "600000"}  # at-least-once offsets reach Kafka only when a task stops


def _connector(stack: Any, prefix: str, db: str) -> dict[str, str]:
    return {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
            "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
            "collection.include.list": f"{db}.items", "exactly.once.support": "requested"}


def _write(collection: Any, batches: range, done: threading.Event | None = None) -> None:
    try:
        for batch in batches:
            docs = [{"_id": batch * PER_BATCH + i, "batch": batch, "v": 0, "pad": "x" * 100} for i in range(PER_BATCH)]
            collection.insert_many(docs, ordered=True)
            collection.update_many({"batch": batch}, {"$inc": {"v": 1}})
    finally:
        if done is not None:
            done.set()


def _committed(bootstrap: str, topic: str, until: Callable[[dict[int, list[str]]], bool],
               timeout: float = 180) -> dict[int, list[str]]:
    """The operations a ``read_committed`` consumer sees per document id, read until ``until`` holds."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             isolation_level="read_committed", max_partition_fetch_bytes=8 << 20)
    seen: dict[int, list[str]] = defaultdict(list)
    try:
        deadline = time.monotonic() + timeout
        assign_from_beginning(consumer, topic, deadline)
        while time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500, max_records=20_000).values():
                for record in batch:
                    seen[int(payload(record.key)["id"])].append(payload(record.value)["op"])
            if until(seen):
                return dict(seen)
        raise AssertionError(f"{topic}: condition not met; {sum(map(len, seen.values()))} records read")
    finally:
        consumer.close()


def _changes(expected: int) -> Callable[[dict[int, list[str]]], bool]:
    return lambda seen: sum(len(ops) for ops in seen.values()) >= expected


def _hold_in_commit(holds: Path, bootstrap: str, topic: str) -> None:
    """Hold the task right before its next transaction commit, once its records are written: the topic then holds
    records past the last stable offset (what ``read_committed`` consumers may read)."""
    (holds / "transaction-commit.hold").touch()
    deadline = time.monotonic() + 120
    while not (holds / "transaction-commit.reached").exists():
        assert time.monotonic() < deadline, "the task never reached a transaction commit"
        time.sleep(0.05)
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             isolation_level="read_committed")
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
        stable = sum(consumer.end_offsets(tps).values())
    finally:
        consumer.close()
    assert end_offsets(bootstrap, [topic])[topic] > stable, "no uncommitted records while the commit is held"


def _restart(worker: Worker, name: str) -> None:
    worker.process.start()
    worker.wait_running(name, timeout=120)


def test_sigkill_three_times_every_change_exactly_once(worker_factory: Callable[..., Worker], stack: Any,
                                                      mongo: Any, tmp_path: Path) -> None:
    """The second kill lands inside a transaction commit, deterministically: a test hook holds the task right
    before ``commitTransaction``, its records and offsets written to Kafka, and the worker is SIGKILLed there."""
    holds = tmp_path / "holds"
    holds.mkdir()
    worker = worker_factory({"exactly.once.source.support": "enabled"}, env={ENV: str(holds)})
    name, prefix, db = unique("eos-"), unique("eos"), unique("eosdb_")
    create_connector(worker, name, {**_connector(stack, prefix, db), "exactly.once.support": "required"})
    topic = f"{prefix}.{db}.items"
    batches = 100  # 20,000 changes (100 inserts and 100 updates per batch), as issue 17 asks
    total = batches * PER_BATCH * 2
    done = threading.Event()
    writer = threading.Thread(target=_write, args=(mongo[db].items, range(batches), done))
    writer.start()
    rng = random.Random()
    try:
        for kill in range(3):  # at random points of the stream: records in flight, transactions open or committing
            threshold = int(total * (kill + rng.uniform(0.3, 0.8)) / 4)
            deadline = time.monotonic() + 180
            while end_offsets(stack.kafka_bootstrap, [topic])[topic] < threshold and time.monotonic() < deadline:
                time.sleep(0.05)
            if kill == 1:
                _hold_in_commit(holds, stack.kafka_bootstrap, topic)
            worker.process.kill()
            for leftover in holds.iterdir():
                leftover.unlink()
            _restart(worker, name)
    finally:
        writer.join(timeout=300)
    assert done.is_set()
    seen = _committed(stack.kafka_bootstrap, topic, _changes(total))
    assert len(seen) == batches * PER_BATCH
    wrong = {doc: ops for doc, ops in seen.items() if ops != ["c", "u"]}
    assert not wrong, f"{len(wrong)} documents not seen exactly once in order, e.g. {list(wrong.items())[:5]}"
    status = worker.http.get(f"/connectors/{name}/status").json()
    assert status["tasks"][0]["state"] == "RUNNING"


@pytest.mark.parametrize("support", ["disabled", "enabled"])
def test_a_crash_after_acknowledgement_repeats_changes_only_without_exactly_once(
        support: str, worker_factory: Callable[..., Worker], stack: Any, mongo: Any) -> None:
    worker = worker_factory({"exactly.once.source.support": support, **SLOW_FLUSH})
    name, prefix, db = unique("eosdiff-"), unique("eosdiff"), unique("eosdiffdb_")
    create_connector(worker, name, _connector(stack, prefix, db))
    topic = f"{prefix}.{db}.items"
    collection = mongo[db].items
    _write(collection, range(5))
    _committed(stack.kafka_bootstrap, topic, _changes(1000))
    # stopping the connector commits its offsets (the only flush before the crash: the interval is 10 minutes)
    assert worker.http.put(f"/connectors/{name}/stop").status_code == 204
    worker.wait_status(name, lambda s: s["connector"]["state"] == "STOPPED")
    assert worker.http.put(f"/connectors/{name}/resume").status_code == 202
    worker.wait_running(name)
    _write(collection, range(5, 10))
    _committed(stack.kafka_bootstrap, topic, _changes(2000))  # acknowledged (and, enabled, committed)
    worker.process.kill()  # before at-least-once offsets of the last 1,000 changes could be flushed
    _restart(worker, name)
    _write(collection, range(10, 11))  # a last change after the restart: once it is read, everything before was
    seen = _committed(stack.kafka_bootstrap, topic, lambda s: len(s.get(10 * PER_BATCH + PER_BATCH - 1, [])) == 2)
    repeated = {doc: ops for doc, ops in seen.items() if ops != ["c", "u"]}
    if support == "enabled":
        assert not repeated, f"{len(repeated)} documents seen more than once: {list(repeated.items())[:5]}"
        assert len(seen) == 11 * PER_BATCH
        markers = end_offsets(stack.kafka_bootstrap, [topic])[topic] - 11 * PER_BATCH * 2
        assert markers > 0, "records were written in transactions (their commit markers take offsets)"
    else:
        assert len(repeated) == 5 * PER_BATCH, "at-least-once delivery should repeat the unflushed changes"
        assert all(ops == ["c", "u", "c", "u"] for ops in repeated.values())


def _zombie(bootstrap: str, txn_id: str, topic: str) -> RdKafkaProducer:
    """A transactional producer left with an open transaction holding one record, as a crashed or paused task's."""
    producer = RdKafkaProducer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                                "enable.idempotence": "true", "acks": "all"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.send(topic, value=b"zombie", key=None, headers=[], partition=None, timestamp_ms=None)
    producer.flush(30)  # in the log, not committed
    return producer


def test_an_old_task_producer_cannot_commit_after_its_task_moved(worker_factory: Callable[..., Worker], stack: Any,
                                                                 tmp_path: Any) -> None:
    worker = worker_factory({"exactly.once.source.support": "enabled"})
    group = worker.process.properties["group.id"]
    name, topic = unique("fence-"), unique("fence-topic-")
    source = tmp_path / "lines.txt"
    source.write_text("".join(f"line {i}\n" for i in range(100)))
    # the task's previous incarnation (same transactional id), stuck in the middle of a transaction
    zombie = _zombie(stack.kafka_bootstrap, exactly_once.transactional_id(group, name, 0), topic)
    create_connector(worker, name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
                                    "exactly.once.support": "required",
                                    "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    consumer = KafkaConsumer(bootstrap_servers=stack.kafka_bootstrap, group_id=None, enable_auto_commit=False,
                             isolation_level="read_committed")
    try:
        assign_from_beginning(consumer, topic, time.monotonic() + 60)
        values: list[bytes] = []
        deadline = time.monotonic() + 60
        while len(values) < 100 and time.monotonic() < deadline:
            values += [r.value for batch in consumer.poll(timeout_ms=500).values() for r in batch]
    finally:
        consumer.close()
    assert values == [f"line {i}".encode() for i in range(100)]  # the zombie's open transaction was aborted
    with pytest.raises(ConnectError, match="fenced"):
        zombie.commit_transaction(30)
    zombie.close(1)
    configs = dict(read_to_end(stack.kafka_bootstrap, worker.process.properties["config.storage.topic"]))
    assert configs[f"tasks-fencing-{name}".encode()] == b'{"task-count":1}'  # as KafkaConfigBackingStore writes it


def test_leader_fencing_fences_every_producer_of_the_previous_generation(stack: Any) -> None:
    """Fewer tasks in the new generation: the leader fences the old task count's transactional ids (InitProducerId),
    so the producers of tasks that no longer exist cannot commit either."""
    topic, prefix = unique("fence-gen-"), unique("grp-conn")
    zombies = [_zombie(stack.kafka_bootstrap, f"{prefix}-{task}", topic) for task in range(3)]
    fence_producers({"bootstrap.servers": stack.kafka_bootstrap}, [f"{prefix}-{task}" for task in range(3)], 60)
    for zombie in zombies:
        with pytest.raises(ConnectError, match="fenced"):
            zombie.commit_transaction(30)
        zombie.close(1)


FAST_GROUP = {"exactly.once.source.support": "enabled", "session.timeout.ms": "6000", "heartbeat.interval.ms": "1000",
              "scheduled.rebalance.max.delay.ms": "0"}


def _committed_lines(bootstrap: str, topic: str, count: int, timeout: float = 120) -> list[bytes]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             isolation_level="read_committed")
    values: list[bytes] = []
    try:
        deadline = time.monotonic() + timeout
        assign_from_beginning(consumer, topic, deadline)
        while len(values) < count and time.monotonic() < deadline:
            values += [r.value for batch in consumer.poll(timeout_ms=500).values() for r in batch]
        ends = consumer.end_offsets(list(consumer.assignment()))  # read_committed: the last stable offsets
        while any(consumer.position(tp) < end for tp, end in ends.items()) and time.monotonic() < deadline:
            values += [r.value for batch in consumer.poll(timeout_ms=500).values() for r in batch]
    finally:
        consumer.close()
    return values


def test_a_paused_worker_resumed_after_its_task_moved_writes_nothing(worker_factory: Callable[..., Worker],
                                                                     stack: Any, tmp_path: Any) -> None:
    first = worker_factory(FAST_GROUP)
    name, topic = unique("zombie-"), unique("zombie-topic-")
    source = tmp_path / "lines.txt"
    source.write_text("".join(f"line {i}\n" for i in range(100)))
    create_connector(first, name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
                                   "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    assert len(_committed_lines(stack.kafka_bootstrap, topic, 100)) == 100
    second = worker_factory(FAST_GROUP)
    workers = {w.process.address.removeprefix("http://"): w for w in (first, second)}
    status = second.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "RUNNING"
                                and s["tasks"][0]["worker_id"] in workers)
    owner = workers[status["tasks"][0]["worker_id"]]
    other = second if owner is first else first
    pid = owner.process.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # the owner freezes with its task's producer initialized: a zombie to be
    try:
        with source.open("a") as out:
            out.write("".join(f"line {i}\n" for i in range(100, 200)))
        other_id = other.process.address.removeprefix("http://")
        other.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "RUNNING"
                          and s["tasks"][0]["worker_id"] == other_id, timeout=120)
        assert len(_committed_lines(stack.kafka_bootstrap, topic, 200)) >= 200
    finally:
        os.kill(pid, signal.SIGCONT)  # the zombie resumes where it was, with lines 100-199 still to send
    with source.open("a") as out:
        out.write("".join(f"line {i}\n" for i in range(200, 300)))
    owner.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "RUNNING", timeout=120)
    values = _committed_lines(stack.kafka_bootstrap, topic, 300)
    assert values == [f"line {i}".encode() for i in range(300)]


@pytest.mark.parametrize("support", ["disabled", "enabled"])
def test_a_connector_offsets_topic_of_its_own(support: str, worker_factory: Callable[..., Worker], stack: Any,
                                             tmp_path: Any) -> None:
    """``offsets.storage.topic``: offsets go to the connector's topic (in the tasks' transactions when enabled) and
    are copied to the worker's; the offsets API and a restarted task read them from there."""
    worker = worker_factory({"exactly.once.source.support": support, "offset.flush.interval.ms": "500"})
    name, topic, own = unique("own-"), unique("own-topic-"), unique("own-offsets-")
    source = tmp_path / "lines.txt"
    source.write_text("".join(f"line {i}\n" for i in range(50)))
    create_connector(worker, name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
                                    "offsets.storage.topic": own,
                                    "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    assert len(_committed_lines(stack.kafka_bootstrap, topic, 50)) == 50
    key = f'["{name}",{{"filename":"{source}"}}]'.encode()
    end = f'{{"position":{source.stat().st_size}}}'.encode()
    worker_topic = worker.process.properties["offset.storage.topic"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        stored = {t: dict(read_to_end(stack.kafka_bootstrap, t)).get(key) for t in (own, worker_topic)}
        if stored == {own: end, worker_topic: end}:
            break
        time.sleep(0.2)
    assert stored == {own: end, worker_topic: end}
    offsets = worker.http.get(f"/connectors/{name}/offsets").json()
    assert offsets == {"offsets": [{"partition": {"filename": str(source)},
                                    "offset": {"position": source.stat().st_size}}]}
    assert worker.http.post(f"/connectors/{name}/tasks/0/restart").status_code == 204
    with source.open("a") as out:
        out.write("line 50\n")
    assert _committed_lines(stack.kafka_bootstrap, topic, 51) == [f"line {i}".encode() for i in range(51)]


def _records_after(bootstrap: str, topic: str, start: int) -> tuple[list[tuple[int, bytes | None, bytes | None]], int]:
    """``(offset, key, value)`` of the records of one-partition ``topic`` from offset ``start`` (uncommitted ones
    too), and the partition's end: a gap before it is a transaction marker."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, 0)
        assert consumer.partitions_for_topic(topic) == {0}
        consumer.assign([tp])
        consumer.seek(tp, start)
        end = consumer.end_offsets([tp])[tp]
        out: list[tuple[int, bytes | None, bytes | None]] = []
        deadline = time.monotonic() + 60
        while consumer.position(tp) < end and time.monotonic() < deadline:
            out += [(r.offset, r.key, r.value) for batch in consumer.poll(timeout_ms=500).values() for r in batch]
        return out, end
    finally:
        consumer.close()


@pytest.mark.parametrize("own_topic", [False, True], ids=["worker-topic", "own-topic"])
def test_altered_and_reset_offsets_are_written_in_a_transaction(own_topic: bool, worker_factory: Callable[..., Worker],
                                                                stack: Any, tmp_path: Any) -> None:
    """Under ``enabled``, offsets altered (``PATCH``) or reset (``DELETE``) through the REST API are written in a
    transaction of task 0's transactional id, after a fencing round, as Connect's
    ``Worker.modifySourceConnectorOffsets`` writes them: a commit marker follows them in the connector's offsets
    topic. The offsets API shows them once the request returned, and the resumed task reads from them. With a topic
    of the connector's own, a reset's tombstones reach the worker's topic too."""
    worker = worker_factory({"exactly.once.source.support": "enabled"})
    name, topic, own = unique("alter-"), unique("alter-topic-"), unique("alter-offsets-")
    lines = 10
    source = tmp_path / "lines.txt"
    source.write_text("".join(f"line {i}\n" for i in range(lines)))
    config = {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
              "value.converter": "org.apache.kafka.connect.storage.StringConverter",
              **({"offsets.storage.topic": own} if own_topic else {})}
    create_connector(worker, name, config)
    expected = [f"line {i}".encode() for i in range(lines)]
    assert _committed_lines(stack.kafka_bootstrap, topic, lines) == expected
    worker_topic = worker.process.properties["offset.storage.topic"]
    offsets_topic = own if own_topic else worker_topic
    key = f'["{name}",{{"filename":"{source}"}}]'.encode()

    def stop() -> None:
        assert worker.http.put(f"/connectors/{name}/stop").status_code == 204
        worker.wait_status(name, lambda s: s["connector"]["state"] == "STOPPED" and not s["tasks"])

    def written(method: str, body: Any = None) -> tuple[list[tuple[int, bytes | None, bytes | None]], int]:
        """What the request wrote to the connector's offsets topic, and the topic's end after it."""
        _, start = _records_after(stack.kafka_bootstrap, offsets_topic, 0)
        reply = worker.http.request(method, f"/connectors/{name}/offsets", json=body)
        assert reply.status_code == 200, reply.text
        records, end = _records_after(stack.kafka_bootstrap, offsets_topic, start)
        return [(offset - start, k, v) for offset, k, v in records], end - start

    stop()
    patch = {"offsets": [{"partition": {"filename": str(source)}, "offset": {"position": 0}}]}
    assert written("PATCH", patch) == ([(0, key, b'{"position":0}')], 2)  # the record, then its commit marker
    assert worker.http.get(f"/connectors/{name}/offsets").json() == patch
    assert worker.http.put(f"/connectors/{name}/resume").status_code == 202
    assert _committed_lines(stack.kafka_bootstrap, topic, 2 * lines) == expected * 2  # read again from byte 0

    stop()
    assert written("DELETE") == ([(0, key, None)], 2)
    assert worker.http.get(f"/connectors/{name}/offsets").json() == {"offsets": []}
    if own_topic:  # tombstoned in the worker's topic too (before the connector's: no read falls back to it)
        assert [v for k, v in read_to_end(stack.kafka_bootstrap, worker_topic) if k == key][-1] is None


def test_poll_boundaries_commit_each_batch(worker_factory: Callable[..., Worker], stack: Any, tmp_path: Any) -> None:
    """``transaction.boundary=poll`` (the default): one transaction per batch the task returns, here one line each.
    Each transaction leaves one commit marker in the topic, so the markers count the transactions. The task's
    ``transaction-size-*`` metrics say the same."""
    worker = worker_factory({"exactly.once.source.support": "enabled"})
    name, topic = unique("boundary-"), unique("boundary-topic-")
    lines = 200
    source = tmp_path / "lines.txt"
    source.write_text("".join(f"line {i}\n" for i in range(lines)))
    create_connector(worker, name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
                                    "batch.size": "1", "transaction.boundary": "poll",
                                    "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    assert _committed_lines(stack.kafka_bootstrap, topic, lines) == [f"line {i}".encode() for i in range(lines)]
    assert end_offsets(stack.kafka_bootstrap, [topic])[topic] - lines == lines
    smallest, average, largest = _transaction_sizes(worker, name)
    assert average == smallest == largest == 1.0  # one line per batch, one batch per transaction


def _transaction_sizes(worker: Worker, name: str) -> tuple[float, float, float]:
    """The task's ``transaction-size-min``/``-avg``/``-max`` metrics (records per committed transaction), once some
    transaction is recorded."""
    families = [f"kafka_connect_source_task_transaction_size_{stat}" for stat in ("min", "avg", "max")]
    deadline = time.monotonic() + 30  # recorded once commit_transaction returned, just after consumers see it
    while True:
        found = samples(worker.http.get("/metrics").text)
        smallest, average, largest = (value(found, family, connector=name, task="0") for family in families)
        if (average is not None and average > 0) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert smallest is not None and average is not None and largest is not None, families
    return smallest, average, largest


def _transactions(bootstrap: str, topic: str, count: int, timeout: float = 120) -> list[list[int]]:
    """The timestamps (ms) of the records of each transaction committed to ``topic`` (one partition), in order, read
    ``read_committed`` until ``count`` transactions are seen. A commit marker takes an offset of its own, so a gap
    between two records' offsets is where one transaction ends and the next begins."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             isolation_level="read_committed")
    transactions: list[list[int]] = []
    last = -2
    try:
        deadline = time.monotonic() + timeout
        assign_from_beginning(consumer, topic, deadline)
        assert len(consumer.assignment()) == 1
        while len(transactions) < count:
            assert time.monotonic() < deadline, f"{len(transactions)} transactions after {timeout:.0f} s"
            for batch in consumer.poll(timeout_ms=500).values():
                for record in batch:
                    if record.offset != last + 1:
                        transactions.append([])
                    transactions[-1].append(record.timestamp)
                    last = record.offset
    finally:
        consumer.close()
    return transactions


def test_interval_boundaries_commit_once_per_interval(worker_factory: Callable[..., Worker], stack: Any,
                                                      tmp_path: Any) -> None:
    """``transaction.boundary=interval``: while a file grows a line at a time (read one line per poll:
    ``batch.size=1``), the task commits once ``transaction.boundary.interval.ms`` has passed since its last commit,
    however many polls that took. Record timestamps are taken when the task hands a record to the producer, so the
    commit between transactions k-1 and k lies between the last record of k-1 and the first of k: from the last
    record before one commit to the first after the next spans at least the interval (exactly: the task waits that
    long between two commits); a transaction's own records span at most the interval plus one poll (allowed 10 s
    here, for a loaded machine). The task's ``transaction-size-*`` metrics count many records per transaction."""
    interval_ms = 2000
    # the worker's offset.flush.interval.ms is the interval's default: 10 minutes, so that only the connector's
    # setting can give the transactions waited for below
    worker = worker_factory({"exactly.once.source.support": "enabled", "offset.flush.interval.ms": "600000"})
    name, topic = unique("interval-"), unique("interval-topic-")
    source = tmp_path / "lines.txt"
    source.touch()
    create_connector(worker, name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
                                    "batch.size": "1", "transaction.boundary": "interval",
                                    "transaction.boundary.interval.ms": str(interval_ms),
                                    "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    stop = threading.Event()

    def grow() -> None:
        with source.open("a", buffering=1) as out:  # line-buffered: each line reaches the file whole
            line = 0
            while not stop.wait(0.005):  # the writer's pace (about 200 lines a second), not a wait for anything
                out.write(f"line {line}\n")
                line += 1

    writer = threading.Thread(target=grow)
    writer.start()
    try:  # the first transaction starts with the task and the last may be cut short: the middle ones are measured
        transactions = _transactions(stack.kafka_bootstrap, topic, 6)
    finally:
        stop.set()
        writer.join(timeout=30)
    shown = [(t[0], t[-1], len(t)) for t in transactions]
    for k in range(1, len(transactions) - 1):
        outer = transactions[k + 1][0] - transactions[k - 1][-1]
        inner = transactions[k][-1] - transactions[k][0]
        assert outer >= interval_ms, f"transaction {k}: commits {outer} ms apart at most; (first, last, count): {shown}"
        assert inner <= interval_ms + 10_000, f"transaction {k} spans {inner} ms; (first, last, count): {shown}"
    smallest, average, largest = _transaction_sizes(worker, name)
    assert 1.0 <= smallest <= average <= largest and largest >= 10, (smallest, average, largest)


def test_the_fence_endpoint_requires_a_signature_and_fences_the_task_producers(
        worker_factory: Callable[..., Worker], stack: Any, tmp_path: Any) -> None:
    """Connect's internal ``PUT /connectors/{name}/fence`` (what a follower sends the leader before an exactly-once
    task starts): under the ``sessioned`` protocol an unsigned request is Connect's 400 and a wrongly signed one its
    403, and neither fences anything; signed with the session key (HMAC of the empty body), the leader fences the
    previous generation's transactional ids and records the new task count. Stopping the connector makes a
    generation of no tasks that nothing has fenced for yet: the request below is what fences it."""
    worker = worker_factory({"exactly.once.source.support": "enabled"})
    props = worker.process.properties
    name, topic = unique("fence-api-"), unique("fence-api-topic-")
    source = tmp_path / "lines.txt"
    source.write_text("line 0\n")
    create_connector(worker, name, {"connector.class": "FileStreamSource", "file": str(source), "topic": topic,
                                    "exactly.once.support": "required"})
    assert worker.http.put(f"/connectors/{name}/stop").status_code == 204
    worker.wait_status(name, lambda s: s["connector"]["state"] == "STOPPED" and not s["tasks"])
    zombie = _zombie(stack.kafka_bootstrap, exactly_once.transactional_id(props["group.id"], name, 0), topic)
    path = f"/connectors/{name}/fence"
    unsigned = worker.http.put(path)
    assert (unsigned.status_code, unsigned.json()["message"]) == (400, "Internal request missing required signature")
    forged = worker.http.put(path, headers={"X-Connect-Authorization": base64.b64encode(bytes(32)).decode(),
                                            "X-Connect-Request-Signature-Algorithm": "HmacSHA256"})
    assert (forged.status_code, forged.json()["message"]) == (403, "Internal request contained invalid signature.")
    zombie.commit_transaction(30)  # the refused requests fenced nothing
    zombie.begin_transaction()
    zombie.send(topic, value=b"zombie", key=None, headers=[], partition=None, timestamp_ms=None)
    zombie.flush(30)
    configs = read_to_end(stack.kafka_bootstrap, props["config.storage.topic"])
    session_key = json.loads(next(v for k, v in reversed(configs) if k == b"session-key" and v is not None))
    signature = hmac.new(base64.b64decode(session_key["key"]), b"", hashlib.sha256).digest()
    signed = worker.http.put(path, headers={"X-Connect-Authorization": base64.b64encode(signature).decode(),
                                            "X-Connect-Request-Signature-Algorithm": session_key["algorithm"]})
    assert signed.status_code == 204, signed.text
    with pytest.raises(ConnectError, match="fenced"):
        zombie.commit_transaction(30)
    zombie.close(1)
    counts = [v for k, v in read_to_end(stack.kafka_bootstrap, props["config.storage.topic"])
              if k == f"tasks-fencing-{name}".encode()]
    assert counts == [b'{"task-count":1}', b'{"task-count":0}']
