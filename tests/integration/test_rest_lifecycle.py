"""Connector lifecycle over REST as Kafka Connect 4.x answers it: pause/resume/stop, restarts, PATCH config,
health, offsets (KIP-875) and topic tracking, against a real worker, Kafka and SecantusDB."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from connect.runtime.offsets_admin import ALTERED, RESET
from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration


def _eventually(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"never happened: {what}")


def _mongo_connector(worker: Worker, stack: Any, initial_state: str | None = None) -> tuple[str, str, str]:
    name, prefix, db = unique("life-"), unique("life"), unique("lifedb_")
    config = {"connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
              "topic.prefix": prefix, "collection.include.list": f"{db}.c"}
    create_connector(worker, name, config, initial_state=initial_state, wait_running=False)
    return name, prefix, db


def _state(worker: Worker, name: str) -> tuple[str, list[str]]:
    status = worker.http.get(f"/connectors/{name}/status").json()
    return status["connector"]["state"], [t["state"] for t in status["tasks"]]


def test_pause_resume_keeps_every_event(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = _mongo_connector(worker, stack)
    worker.wait_running(name)
    assert worker.http.get("/health").json() == {
        "status": "healthy", "message": "Worker has completed startup and is ready to handle requests."}
    assert worker.http.put(f"/connectors/{name}/pause").status_code == 202
    _eventually(lambda: _state(worker, name) == ("PAUSED", ["PAUSED"]), "connector and task PAUSED")
    mongo[db].c.insert_one({"_id": 1})
    assert worker.http.put(f"/connectors/{name}/pause").status_code == 202, "pausing twice is fine"
    assert worker.http.put(f"/connectors/{name}/resume").status_code == 202
    _eventually(lambda: _state(worker, name) == ("RUNNING", ["RUNNING"]), "RUNNING again")
    records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1)
    assert len(records) == 1
    assert worker.http.put(f"/connectors/{unique('x')}/pause").json()["error_code"] == 404


def test_stop_offsets_and_resume(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = _mongo_connector(worker, stack)
    worker.wait_running(name)
    mongo[db].c.insert_one({"_id": 1})
    read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1)
    _eventually(lambda: worker.http.get(f"/connectors/{name}/offsets").json()["offsets"] != [], "offset committed")
    offsets = worker.http.get(f"/connectors/{name}/offsets").json()["offsets"]
    assert offsets[0]["partition"] == {"server_id": prefix}
    assert set(offsets[0]["offset"]) >= {"sec", "ord", "resume_token"}

    body = {"offsets": [{"partition": {"server_id": prefix}, "offset": offsets[0]["offset"]}]}
    running = worker.http.patch(f"/connectors/{name}/offsets", json=body)
    assert running.status_code == 400
    assert running.json()["message"].startswith("Connectors must be in the STOPPED state")

    assert worker.http.put(f"/connectors/{name}/stop").status_code == 204
    _eventually(lambda: _state(worker, name) == ("STOPPED", []), "STOPPED without tasks")
    assert worker.http.get(f"/connectors/{name}/tasks").json() == []
    assert worker.http.patch(f"/connectors/{name}/offsets", json={"offsets": []}).json()["message"] == \
        "Partitions / offsets need to be provided for an alter offsets request"
    bad = {"offsets": [{"partition": {"server_id": "other"}, "offset": None}]}
    assert worker.http.patch(f"/connectors/{name}/offsets", json=bad).status_code == 400
    altered = worker.http.patch(f"/connectors/{name}/offsets", json=body)
    assert altered.status_code == 200 and altered.json() == {"message": ALTERED}

    reset = worker.http.delete(f"/connectors/{name}/offsets")
    assert reset.status_code == 200 and reset.json() == {"message": RESET}
    assert worker.http.get(f"/connectors/{name}/offsets").json() == {"offsets": []}

    assert worker.http.put(f"/connectors/{name}/resume").status_code == 202
    worker.wait_running(name)
    mongo[db].c.insert_one({"_id": 2})
    records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 2)
    assert [r.key for r in records][-1].endswith(b'"payload":{"id":"2"}}')


def test_restarts(worker: Worker, stack: Any, tmp_path: Any) -> None:
    name, _, _ = _mongo_connector(worker, stack)
    worker.wait_running(name)
    assert worker.http.post(f"/connectors/{name}/restart").status_code == 204
    both = worker.http.post(f"/connectors/{name}/restart", params={"includeTasks": "true"})
    assert both.status_code == 202
    assert both.json()["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in both.json()["tasks"]] == ["RESTARTING"]
    worker.wait_running(name)
    assert worker.http.post(f"/connectors/{name}/tasks/0/restart").status_code == 204
    assert worker.http.post(f"/connectors/{name}/tasks/7/restart").json() == {
        "error_code": 404, "message": f"Unknown task: {name}-7"}
    assert worker.http.post("/connectors/nope/restart").json() == {
        "error_code": 404, "message": "Unknown connector: nope"}

    broken = unique("broken-")
    config = {"connector.class": "FileStreamSource", "topic": unique("t"), "file": ""}
    create_connector(worker, broken, config, wait_running=False)
    worker.wait_status(broken, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "FAILED")
    only_failed = worker.http.post(f"/connectors/{broken}/restart",
                                   params={"includeTasks": "true", "onlyFailed": "true"})
    assert only_failed.status_code == 202
    assert only_failed.json()["connector"]["state"] == "RUNNING", "a running connector is not restarted"
    assert only_failed.json()["tasks"][0]["state"] == "RESTARTING"
    worker.wait_status(broken, lambda s: s["tasks"][0]["state"] == "FAILED")


def test_patch_config_initial_state_and_topics(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = _mongo_connector(worker, stack, initial_state="PAUSED")
    _eventually(lambda: worker.http.get(f"/connectors/{name}/status").status_code == 200 and
                _state(worker, name)[0] == "PAUSED", "created PAUSED")
    patched = worker.http.patch(f"/connectors/{name}/config", json={"max.batch.size": 64, "tombstones.on.delete": None})
    assert patched.status_code == 200
    config = worker.http.get(f"/connectors/{name}/config").json()
    assert config["max.batch.size"] == "64" and "tombstones.on.delete" not in config
    assert worker.http.patch("/connectors/none/config", json={"a": "b"}).status_code == 404

    stopped = unique("stopped-")
    create_connector(worker, stopped, {"connector.class": "MongoDbConnector",
                                       "mongodb.connection.string": stack.mongo_uri, "topic.prefix": unique("s")},
                     initial_state="STOPPED", wait_running=False)
    _eventually(lambda: worker.http.get(f"/connectors/{stopped}/status").status_code == 200 and
                _state(worker, stopped) == ("STOPPED", []), "created STOPPED")

    assert worker.http.put(f"/connectors/{name}/resume").status_code == 202
    worker.wait_running(name)
    mongo[db].c.insert_one({"_id": 1})
    topic = f"{prefix}.{db}.c"
    read_topic(stack.kafka_bootstrap, topic, 1)
    _eventually(lambda: worker.http.get(f"/connectors/{name}/topics").json() == {name: {"topics": [topic]}},
                "topic tracked")
    assert worker.http.put(f"/connectors/{name}/topics/reset").status_code == 202
    assert worker.http.get(f"/connectors/{name}/topics").json() == {name: {"topics": []}}
    assert worker.http.get("/connectors/unknown/topics").json() == {"unknown": {"topics": []}}
