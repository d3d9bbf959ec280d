"""Our worker and the real Java Kafka Connect 4.3 (jars from Maven Central) share internal topics: each reads the
connectors, task configs and offsets the other wrote, and carries on from the other's offsets."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from compat.java_connect import JavaConnect
from stack import free_port
from stack.worker import ConnectWorker, distributed_properties
from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration


def _wait_json(base: str, path: str, predicate: Any, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            reply = httpx.get(base + path, timeout=10)
            last = (reply.status_code, reply.text)
            if reply.status_code == 200 and predicate(reply.json()):
                return reply.json()
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.5)
    raise AssertionError(f"{base}{path} never matched; last: {last}")


def _lines(records: list[Any]) -> list[str]:
    return [json.loads(r.value)["payload"] for r in records]


def _offsets_at(base: str, name: str, position: int) -> Any:
    return _wait_json(base, f"/connectors/{name}/offsets",
                      lambda body: [o["offset"] for o in body["offsets"]] == [{"position": position}])


@pytest.mark.parametrize("support", ["disabled", "enabled"])
def test_java_connect_and_ours_take_over_each_others_connectors_and_offsets(support: str, stack: Any,
                                                                           tmp_path: Path) -> None:
    """With ``exactly.once.source.support=enabled`` too: each side's transactional task fences the other's earlier
    producer and resumes from the offsets the other committed in its transactions."""
    extra = {"exactly.once.source.support": support}
    group, name, topic = unique("handover-"), unique("file-"), unique("handover-lines-")
    data = tmp_path / "lines.txt"
    data.write_text("".join(f"line {n}\n" for n in range(5)))
    config = {"connector.class": "FileStreamSource", "file": str(data), "topic": topic, "tasks.max": "1"}

    port = free_port()
    ours = ConnectWorker(tmp_path / "ours-1", port,
                         distributed_properties(stack.kafka_bootstrap, port, group_id=group, extra=extra))
    ours.start()
    try:
        create_connector(Worker(ours), name, config, wait_running=False)
        assert _lines(read_topic(stack.kafka_bootstrap, topic, 5)) == [f"line {n}" for n in range(5)]
        ours_offsets = _offsets_at(ours.address, name, data.stat().st_size)
    finally:
        ours.stop(timeout=30)

    java_port = free_port()
    java = JavaConnect(tmp_path / "java", java_port,
                       distributed_properties(stack.kafka_bootstrap, java_port, group_id=group, extra=extra))
    java.start()
    try:
        assert _wait_json(java.address, "/connectors", lambda body: body == [name]) == [name]
        assert _wait_json(java.address, f"/connectors/{name}/config", lambda body: True) == {**config, "name": name}
        assert _offsets_at(java.address, name, data.stat().st_size) == ours_offsets
        _wait_json(java.address, f"/connectors/{name}/status",
                   lambda s: s["tasks"] and s["tasks"][0]["state"] == "RUNNING")
        with data.open("a") as out:
            out.write("".join(f"line {n}\n" for n in range(5, 8)))
        assert _lines(read_topic(stack.kafka_bootstrap, topic, 8)) == [f"line {n}" for n in range(8)]
        java_offsets = _offsets_at(java.address, name, data.stat().st_size)
    finally:
        java.stop(timeout=30)

    port = free_port()
    props = distributed_properties(stack.kafka_bootstrap, port, group_id=group, extra=extra)
    again = ConnectWorker(tmp_path / "ours-2", port, props)
    again.start()
    try:
        assert _wait_json(again.address, "/connectors", lambda body: body == [name]) == [name]
        assert _offsets_at(again.address, name, data.stat().st_size) == java_offsets
        _wait_json(again.address, f"/connectors/{name}/status",
                   lambda s: s["tasks"] and s["tasks"][0]["state"] == "RUNNING")
        with data.open("a") as out:
            out.write("line 8\nline 9\n")
        records = read_topic(stack.kafka_bootstrap, topic, 10)
        assert _lines(records) == [f"line {n}" for n in range(10)], "no line lost or repeated across the hand-overs"
    finally:
        again.stop(timeout=30)
