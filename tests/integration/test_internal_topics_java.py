"""The same REST operations against the real Java Kafka Connect 4.3 (jars from Maven Central) and against our
worker, each with its own internal topics: the config topic holds the same records in the same order, byte for
byte (task configs in Java's HashMap key order too), the offset topic the same records, and the status topic the
same set of records once worker ids, generations, plugin versions, timestamps and traces are set aside (the
order of status writes between a connector and its tasks is a race in both workers)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from kafka import KafkaConsumer, TopicPartition

from compat.java_connect import JavaConnect
from stack import free_port
from stack.worker import ConnectWorker, distributed_properties
from tests.integration.support import read_to_end, unique

pytestmark = pytest.mark.integration


def _wait(base: str, path: str, predicate: Any, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        reply = httpx.get(base + path, timeout=10)
        last = (reply.status_code, reply.text)
        if reply.status_code == 200 and predicate(reply.json()):
            return reply.json()
        time.sleep(0.3)
    raise AssertionError(f"{base}{path} never matched: {last}")


def _state(name: str, connector: str, tasks: str | None) -> Any:
    def check(status: Any) -> bool:
        return status["connector"]["state"] == connector and (
            not status["tasks"] if tasks is None else bool(status["tasks"])
            and all(t["state"] == tasks for t in status["tasks"]))
    return check


def _operate(base: str, name: str, config: dict[str, str], size: int) -> None:
    """Create, run, pause, resume, stop, rewind offsets, resume, update, delete — waiting for each step."""
    def ok(reply: httpx.Response) -> None:
        assert reply.status_code < 300, f"{reply.request.method} {reply.request.url}: {reply.status_code} {reply.text}"

    ok(httpx.post(f"{base}/connectors", json={"name": name, "config": config}))
    _wait(base, f"/connectors/{name}/status", _state(name, "RUNNING", "RUNNING"))
    _wait(base, f"/connectors/{name}/offsets", lambda b: b["offsets"] and b["offsets"][0]["offset"]["position"] == size)
    ok(httpx.put(f"{base}/connectors/{name}/pause"))
    _wait(base, f"/connectors/{name}/status", _state(name, "PAUSED", "PAUSED"))
    ok(httpx.put(f"{base}/connectors/{name}/resume"))
    _wait(base, f"/connectors/{name}/status", _state(name, "RUNNING", "RUNNING"))
    ok(httpx.put(f"{base}/connectors/{name}/stop"))
    _wait(base, f"/connectors/{name}/status", _state(name, "STOPPED", None))
    partition = {"filename": config["file"]}
    ok(httpx.patch(f"{base}/connectors/{name}/offsets",
                   json={"offsets": [{"partition": partition, "offset": {"position": 0}}]}))
    ok(httpx.put(f"{base}/connectors/{name}/resume"))
    _wait(base, f"/connectors/{name}/status", _state(name, "RUNNING", "RUNNING"))
    _wait(base, f"/connectors/{name}/offsets", lambda b: b["offsets"] and b["offsets"][0]["offset"]["position"] == size)
    ok(httpx.put(f"{base}/connectors/{name}/config", json={**config, "batch.size": "100"}))
    _wait(base, f"/connectors/{name}/tasks", lambda tasks: tasks and tasks[0]["config"].get("batch.size") == "100")
    _wait(base, f"/connectors/{name}/status", _state(name, "RUNNING", "RUNNING"))
    ok(httpx.delete(f"{base}/connectors/{name}"))
    _wait(base, "/connectors", lambda names: name not in names)


_VOLATILE = re.compile(rb'"(worker_id|generation|trace|discoverTimestamp|version|key|creation-timestamp)":'
                       rb'("[^"]*"|\d+|null)')


def _normal(value: bytes | None) -> bytes | None:
    return None if value is None else _VOLATILE.sub(rb'"\1":_', value)


def _run(service: Any, bootstrap: str, group: str, name: str, config: dict[str, str], size: int) -> dict[str, Any]:
    service.start()
    try:
        _operate(service.address, name, config, size)
        # the last status writes of the deleted connector: the tombstones of its and its task's statuses
        wanted = {f"status-connector-{name}".encode(), f"status-task-{name}-0".encode()}
        deadline = time.monotonic() + 60
        while not wanted <= {k for k, v in read_to_end(bootstrap, f"{group}-status") if v is None}:
            assert time.monotonic() < deadline, "no status tombstones of the deleted connector"
            time.sleep(0.3)
    finally:
        service.stop(timeout=30)
    topics: dict[str, Any] = {suffix: read_to_end(bootstrap, f"{group}-{suffix}")
                              for suffix in ("configs", "offsets", "status")}
    topics["config offsets"] = _offsets(bootstrap, f"{group}-configs")
    topics["offset offsets"] = _offsets(bootstrap, f"{group}-offsets")
    return topics


def _offsets(bootstrap: str, topic: str) -> list[tuple[int, bytes | None]]:
    """``(offset, key)`` of every record of a one-partition topic: the gaps are transaction markers, so equal lists
    mean the same records written in the same transactions."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        end = consumer.end_offsets([tp])[tp]
        out: list[tuple[int, bytes | None]] = []
        deadline = time.monotonic() + 60
        while consumer.position(tp) < end and time.monotonic() < deadline:
            out += [(r.offset, r.key) for batch in consumer.poll(timeout_ms=500).values() for r in batch]
        return out
    finally:
        consumer.close()


def _side_by_side(ours: list[tuple[int, bytes | None]], java: list[tuple[int, bytes | None]]) -> str:
    """Both sides' ``(offset, key)`` lists, a row each, the differing rows marked."""
    rows = ["ours | java"]
    for n in range(max(len(ours), len(java))):
        mine = ours[n] if n < len(ours) else None
        theirs = java[n] if n < len(java) else None
        rows.append(f"{'  ' if mine == theirs else '! '}{mine} | {theirs}")
    return "\n".join(rows)


@pytest.mark.parametrize("support", ["disabled", "preparing", "enabled"])
def test_internal_topics_match_java_connect_for_the_same_operations(support: str, stack: Any,
                                                                    tmp_path: Path) -> None:
    """With ``exactly.once.source.support=enabled`` too: the task count records (``tasks-fencing-<connector>``) of
    zombie fencing, written at the same points, and the offsets the tasks commit in their transactions and the PATCHed
    ones, in a transaction of their own, at the same offsets too (commit markers included). Under
    ``preparing`` and ``enabled`` the leader's config writes are transactions (``connect-cluster-<group.id>``): the
    records sit at the same offsets on both sides, transaction markers included."""
    lines = 3
    data = tmp_path / "lines.txt"
    data.write_text("".join(f"line {n}\n" for n in range(lines)))
    size = data.stat().st_size
    name = unique("same-")
    config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": str(data),
              "topic": unique("same-lines-"), "tasks.max": "1"}
    java_group, our_group = unique("java-"), unique("ours-")
    java_port, our_port = free_port(), free_port()
    extra = {"exactly.once.source.support": support}
    java = _run(JavaConnect(tmp_path / "java", java_port, distributed_properties(
        stack.kafka_bootstrap, java_port, group_id=java_group, extra=extra)), stack.kafka_bootstrap, java_group, name,
        config, size)
    ours = _run(ConnectWorker(tmp_path / "ours", our_port, distributed_properties(
        stack.kafka_bootstrap, our_port, group_id=our_group, extra=extra)), stack.kafka_bootstrap, our_group, name,
        config, size)

    def shown(records: list[tuple[bytes | None, bytes | None]]) -> list[str]:
        return [f"{k!r} -> {_normal(v)!r}" for k, v in records]

    assert shown(ours["configs"]) == shown(java["configs"])  # with the session key of the sessioned protocol
    # the same transactions (gaps: their commit markers)
    assert ours["config offsets"] == java["config offsets"], _side_by_side(ours["config offsets"],
                                                                          java["config offsets"])
    assert (ours["config offsets"][-1][0] + 1 > len(ours["configs"])) == (support != "disabled")
    fencing = [v for k, v in java["configs"] if k == f"tasks-fencing-{name}".encode()]
    assert bool(fencing) == (support == "enabled")  # zombie fencing rounds, recorded as above on both sides
    assert set(fencing) <= {b'{"task-count":0}', b'{"task-count":1}'}
    # record by record, in order: the PATCH's offset and the task's, one each time the task reads the file (its 3
    # lines come in one poll, so one offset per reading, whenever the flush or the transaction commit comes)
    assert ours["offsets"] == java["offsets"]
    # and at the same offsets: under enabled the tasks' transactions and the PATCHed offsets' (written in a
    # transaction of task 0's transactional id, after a fencing round) each leave a commit marker behind them
    assert ours["offset offsets"] == java["offset offsets"], _side_by_side(ours["offset offsets"],
                                                                          java["offset offsets"])
    assert (ours["offset offsets"][-1][0] + 1 > len(ours["offsets"])) == (support == "enabled")
    java_status = {(k, _normal(v)) for k, v in java["status"]}
    our_status = {(k, _normal(v)) for k, v in ours["status"]}
    assert sorted(our_status, key=repr) == sorted(java_status, key=repr)
