"""Debezium's notifications from a running connector: the initial snapshot's on the sink topic, in order, with the
offsets committed as without them (a notification commits no offset: no ``[connector, null]`` entry, the snapshot
complete), and ``SKIPPED`` on a restart that needs no snapshot. The bytes are compared with the real Debezium's in
``tests/integration/mongodb/test_debezium_golden.py``."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.integration.snapshots.helpers import create, end_offset, snapshot_marks
from tests.integration.support import Worker, payload, read_topic, unique

pytestmark = pytest.mark.integration


def _types(records: list[Any]) -> list[tuple[str, dict[str, str]]]:
    return [(body["type"], body["additional_data"]) for body in (payload(r.value) for r in records)]


def test_snapshot_notifications_commit_no_offset_and_a_restart_is_skipped(worker: Worker, stack: Any,
                                                                         mongo: Any) -> None:
    db, prefix, name = unique("note_"), unique("note"), unique("note-")
    topic = f"{prefix}-notifications"
    mongo[db].a.insert_many([{"_id": i} for i in range(10)])
    mongo[db].create_collection("b")  # empty: IN_PROGRESS and TABLE_SCAN_COMPLETED all the same
    create(worker, name, {"mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
                          "database.include.list": db, "notification.enabled.channels": "sink,log,jmx",
                          "notification.sink.topic.name": topic, "custom.metric.tags": "team=cdc"})
    notes = read_topic(stack.kafka_bootstrap, topic, until=lambda fresh: any(
        payload(r.value)["type"] == "COMPLETED" for r in fresh), timeout=120)
    initial = {"connector_name": prefix}
    assert _types(notes) == [
        ("STARTED", initial),
        ("IN_PROGRESS", {"current_collection_in_progress": f"{db}.a", **initial}),
        ("TABLE_SCAN_COMPLETED", {**initial, "scanned_collection": f"{db}.a", "status": "SUCCEEDED"}),
        ("IN_PROGRESS", {"current_collection_in_progress": f"{db}.b", **initial}),
        ("TABLE_SCAN_COMPLETED", {**initial, "scanned_collection": f"{db}.b", "status": "SUCCEEDED"}),
        ("COMPLETED", initial)]
    assert len({payload(r.key)["id"] for r in notes}) == len(notes)
    assert all(payload(r.value)["aggregate_type"] == "Initial Snapshot" for r in notes)
    records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.a", 10)
    assert snapshot_marks(records)[-1] == "last"

    deadline = time.monotonic() + 60
    offsets: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        offsets = worker.http.get(f"/connectors/{name}/offsets").json()["offsets"]
        if offsets and "initsync" not in offsets[0]["offset"]:
            break
        time.sleep(0.3)
    assert [o["partition"] for o in offsets] == [{"server_id": prefix}], offsets
    assert "initsync" not in offsets[0]["offset"], "the snapshot is complete"
    metrics = worker.http.get("/metrics").text
    assert any('team="cdc"' in line for line in metrics.splitlines() if line.startswith("debezium_metrics_"))

    assert worker.http.post(f"/connectors/{name}/restart?includeTasks=true").status_code in (202, 204)
    notes = read_topic(stack.kafka_bootstrap, topic, until=lambda fresh: any(
        payload(r.value)["type"] == "SKIPPED" for r in fresh), timeout=120)
    assert _types(notes)[-1] == ("SKIPPED", initial)
    assert end_offset(stack.kafka_bootstrap, f"{prefix}.{db}.a") == 10, "no second snapshot"
