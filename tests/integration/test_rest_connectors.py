"""Kafka Connect's REST API for connectors on a distributed worker: shapes, status codes and bad input."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import quote

import pytest

from tests.integration.support import Worker, create_connector, unique

pytestmark = pytest.mark.integration


def _mongo_config(mongo_uri: str, **extra: str) -> dict[str, str]:
    return {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
            "mongodb.connection.string": mongo_uri, "topic.prefix": unique("rest"),
            "collection.include.list": f"{unique('restdb_')}.c", **extra}


def test_root_and_plugins(worker: Worker) -> None:
    root = worker.http.get("/").json()
    assert list(root) == ["version", "commit", "kafka_cluster_id"]
    assert root["version"].startswith("4.") and len(root["commit"]) == 16 and root["kafka_cluster_id"]
    plugins = worker.http.get("/connector-plugins").json()
    assert {"class": "io.debezium.connector.mongodb.MongoDbConnector", "type": "source",
            "version": "3.6.1.Final"} in plugins
    assert worker.http.get("/connector-plugins/").status_code == 200


def test_create_read_update_delete(worker: Worker, stack: Any) -> None:
    name = unique("crud-")
    config = _mongo_config(stack.mongo_uri)
    create_connector(worker, name, config, wait_running=False)
    assert worker.http.get("/connectors").json() == [name]
    worker.wait_running(name)
    info = worker.http.get(f"/connectors/{name}").json()
    assert info["name"] == name and info["type"] == "source"
    assert info["tasks"] == [{"connector": name, "task": 0}]
    assert worker.http.get(f"/connectors/{name}/config").json() == {**config, "name": name}

    updated = worker.http.put(f"/connectors/{name}/config", json={**config, "max.batch.size": 100})
    assert updated.status_code == 200
    assert updated.json()["config"]["max.batch.size"] == "100"
    assert worker.http.get(f"/connectors/{name}/config").json()["max.batch.size"] == "100"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "max.batch.size" not in worker.http.get(
            f"/connectors/{name}/tasks").json()[0]["config"]:
        time.sleep(0.2)
    tasks = worker.http.get(f"/connectors/{name}/tasks").json()
    assert tasks[0]["config"]["max.batch.size"] == "100", "the task configs follow the connector config"
    worker.wait_running(name)

    expanded = worker.http.get("/connectors", params=[("expand", "status"), ("expand", "info")]).json()
    assert expanded[name]["status"]["connector"]["state"] == "RUNNING"
    assert expanded[name]["info"]["config"]["max.batch.size"] == "100"

    created_by_put = worker.http.put(f"/connectors/{name}-2/config", json=_mongo_config(stack.mongo_uri))
    assert created_by_put.status_code == 201

    assert worker.http.delete(f"/connectors/{name}").status_code == 204
    assert worker.http.delete(f"/connectors/{name}-2").status_code == 204
    assert worker.http.get("/connectors").json() == []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and worker.http.get(f"/connectors/{name}/tasks/0/status").status_code != 404:
        time.sleep(0.2)
    assert worker.http.get(f"/connectors/{name}/status").status_code == 404, "statuses are tombstoned on delete"
    assert worker.http.get(f"/connectors/{name}/tasks/0/status").status_code == 404
    missing = worker.http.get(f"/connectors/{name}")
    assert missing.status_code == 404
    assert missing.json() == {"error_code": 404, "message": f"Connector {name} not found"}


def test_bad_input_gets_connect_errors_and_loses_nothing(worker: Worker, stack: Any) -> None:
    keep = unique("keep-")
    create_connector(worker, keep, _mongo_config(stack.mongo_uri), wait_running=False)

    no_conn = _mongo_config(stack.mongo_uri)
    del no_conn["mongodb.connection.string"]
    reply = worker.http.post("/connectors", json={"name": unique("bad-"), "config": no_conn})
    assert reply.status_code == 400
    body = reply.json()
    assert body["error_code"] == 400
    assert body["message"].startswith("Connector configuration is invalid and contains the following 1 error(s):")
    assert "mongodb.connection.string" in body["message"]

    unknown = worker.http.post("/connectors", json={"name": unique("bad-"), "config": {
        "connector.class": "com.example.NoSuchConnector"}})
    assert unknown.status_code == 400
    assert unknown.json()["message"].startswith(
        "Failed to find any class that implements Connector and which name matches com.example.NoSuchConnector")

    no_class = worker.http.post("/connectors", json={"name": unique("bad-"), "config": {"tasks.max": "1"}})
    assert no_class.status_code == 400 and "contains no connector type" in no_class.json()["message"]

    malformed = worker.http.post("/connectors", content=b'{"name": "x", "config": {', headers={
        "Content-Type": "application/json"})
    assert malformed.status_code == 400 and malformed.json()["error_code"] == 400

    wrong_type = worker.http.post("/connectors", json={"name": "x", "config": ["not", "a", "map"]})
    assert wrong_type.status_code == 400 and "config" in wrong_type.json()["message"]

    bad_prefix = worker.http.post("/connectors", json={"name": unique("bad-"), "config": _mongo_config(
        stack.mongo_uri, **{"topic.prefix": "no spaces!"})})
    assert bad_prefix.status_code == 400 and "topic.prefix" in bad_prefix.json()["message"]

    duplicate = worker.http.post("/connectors", json={"name": keep, "config": _mongo_config(stack.mongo_uri)})
    assert duplicate.status_code == 409
    assert duplicate.json() == {"error_code": 409, "message": f"Connector {keep} already exists"}

    mismatch = worker.http.put(f"/connectors/{keep}/config", json={"name": "other", **_mongo_config(stack.mongo_uri)})
    assert mismatch.status_code == 400

    assert worker.http.get("/no/such/path").json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
    assert worker.http.get(f"/connectors/{unique('none-')}/status").status_code == 404

    assert worker.http.get("/connectors").json() == [keep]
    worker.wait_running(keep)


def test_connector_names_as_connect_allows_them(worker: Worker, stack: Any) -> None:
    name = f"team/{unique('a')} & co:?"
    reply = worker.http.post("/connectors", json={"name": f"  {name} ", "config": _mongo_config(stack.mongo_uri)})
    assert reply.status_code == 201 and reply.json()["name"] == name, "the name is trimmed"
    encoded = quote(name, safe="")
    assert reply.headers["location"].endswith(f"/connectors/{encoded}")
    assert worker.http.get(f"/connectors/{encoded}").json()["name"] == name
    worker.wait_running(encoded)
    assert worker.http.get(f"/connectors/{encoded}/tasks/0/status").json()["state"] == "RUNNING"
    assert worker.http.delete(f"/connectors/{encoded}").status_code == 204

    empty = worker.http.post("/connectors", json={"name": "  ", "config": _mongo_config(stack.mongo_uri)})
    assert empty.status_code == 400 and "String may not be empty" in empty.json()["message"]
    control = worker.http.post("/connectors", json={"name": "a\nb", "config": _mongo_config(stack.mongo_uri)})
    assert control.status_code == 400 and "control sequences" in control.json()["message"]


def test_create_reports_framework_errors_like_validate(worker: Worker, stack: Any) -> None:
    config = _mongo_config(stack.mongo_uri, **{"errors.tolerance": "some", "key.converter": "com.example.Nope",
                                               "tasks.max": "0"})
    name = unique("bad-")
    reply = worker.http.post("/connectors", json={"name": name, "config": config})
    assert reply.status_code == 400
    message = reply.json()["message"]
    assert message.startswith("Connector configuration is invalid and contains the following 3 error(s):")
    assert "errors.tolerance" in message and "key.converter" in message and "tasks.max" in message
    validated = worker.http.put("/connector-plugins/MongoDbConnector/config/validate",
                                json={**config, "name": name}).json()
    assert validated["error_count"] == 3


def test_racing_requests_get_connect_answers(worker: Worker, stack: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    name = unique("race-")
    body = {"name": name, "config": _mongo_config(stack.mongo_uri)}
    with ThreadPoolExecutor(4) as pool:
        codes = sorted(f.result().status_code for f in [pool.submit(worker.http.post, "/connectors", json=body)
                                                         for _ in range(4)])
    assert codes == [201, 409, 409, 409]
    with ThreadPoolExecutor(2) as pool:
        put = pool.submit(worker.http.put, f"/connectors/{name}/config", json=body["config"])
        delete = pool.submit(worker.http.delete, f"/connectors/{name}")
        assert delete.result().status_code in (204, 404)
        assert put.result().status_code in (200, 201)
    assert all(worker.http.get(f"/connectors/{name}{suffix}").status_code in (200, 404)
               for suffix in ("", "/config", "/status", "/tasks"))
