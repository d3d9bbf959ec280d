"""Snapshot modes and snapshot keys: ``no_data`` after an interrupted snapshot fails with Debezium's message,
``initial_only`` does not stream, ``snapshot.include.collection.list`` and ``snapshot.collection.filter.overrides``
choose what is copied, ``snapshot.delay.ms`` waits."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.integration.snapshots.helpers import create, end_offset, event, snapshot_marks
from tests.integration.support import Worker, read_topic, unique

pytestmark = pytest.mark.integration


def _eventually(check: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"never happened: {what}")


def test_no_data_after_an_interrupted_snapshot_fails_with_debeziums_message(
        worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("mode_"), unique("mode"), unique("mode-")
    mongo[db].a.insert_many([{"_id": i} for i in range(10)])
    config = {"mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
              "collection.include.list": f"{db}\\.a"}
    create(worker, name, config)
    read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.a", until=lambda fresh: "last" in snapshot_marks(fresh),
               timeout=120)
    _eventually(lambda: worker.http.get(f"/connectors/{name}/offsets").json()["offsets"] != [], "offset committed")
    stored = worker.http.get(f"/connectors/{name}/offsets").json()["offsets"][0]["offset"]
    assert "initsync" not in stored and "snapshot_progress" not in stored, "a completed snapshot leaves no marks"

    assert worker.http.put(f"/connectors/{name}/stop").status_code == 204
    _eventually(lambda: worker.http.get(f"/connectors/{name}/status").json()["connector"]["state"] == "STOPPED",
                "stopped")
    interrupted = {"offsets": [{"partition": {"server_id": prefix},
                                "offset": {**stored, "initsync": True}}]}
    assert worker.http.patch(f"/connectors/{name}/offsets", json=interrupted).status_code == 200
    reply = worker.http.put(f"/connectors/{name}/config",
                            json={"connector.class": "MongoDbConnector", **config, "snapshot.mode": "no_data"})
    assert reply.status_code == 200, reply.text
    assert worker.http.put(f"/connectors/{name}/resume").status_code == 202
    status = worker.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "FAILED", 60)
    assert "The connector previously stopped while taking a snapshot, but now the connector is configured to " \
           "never allow snapshots. Reconfigure the connector to use snapshots initially or when needed." \
           in status["tasks"][0]["trace"]


def test_initial_only_include_list_filter_overrides_and_delay(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("incl_"), unique("incl"), unique("incl-")
    mongo[db].a.insert_many([{"_id": i, "v": i} for i in range(10)])
    mongo[db].b.insert_many([{"_id": i} for i in range(5)])
    config = {"mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
              "collection.include.list": f"{db}\\.(a|b)", "snapshot.mode": "initial_only",
              "snapshot.include.collection.list": f"{db}\\.a", "snapshot.delay.ms": "1500",
              "snapshot.collection.filter.overrides": f"{db}.a",
              f"snapshot.collection.filter.overrides.{db}.a": '{"v": {"$gte": 6}}'}
    started = time.monotonic()
    create(worker, name, config)
    records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.a",
                         until=lambda fresh: "last" in snapshot_marks(fresh), timeout=120)
    assert time.monotonic() - started >= 1.5
    assert sorted(event(r)[0] for r in records) == [6, 7, 8, 9]
    bodies = [event(r)[1] for r in records]
    assert all(body is not None and json.loads(body["after"])["v"] >= 6 for body in bodies)
    deadline = time.monotonic() + 60  # the task's decision, logged once the copy is over: no change stream
    while "; not streaming" not in worker.process.log_path.read_text(errors="replace"):
        assert time.monotonic() < deadline, "initial_only: no 'not streaming' after the snapshot"
        time.sleep(0.2)
    mongo[db].a.insert_one({"_id": "later", "v": 100})
    assert end_offset(stack.kafka_bootstrap, f"{prefix}.{db}.a") == 4, "initial_only does not stream"
    assert end_offset(stack.kafka_bootstrap, f"{prefix}.{db}.b") == 0, "b is not in the snapshot list"
