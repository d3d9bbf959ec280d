"""A MongoDB that is down when the connector starts leaves the task FAILED with a readable trace; the
worker keeps serving."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.support import Worker, create_connector, unique

pytestmark = pytest.mark.integration


def test_task_fails_readably_when_mongodb_is_down(worker: Worker, stack: Any, mongo_server: Any) -> None:
    mongo_server.stop()
    name = unique("down-")
    config = {"connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
              "topic.prefix": unique("down"), "mongodb.server.selection.timeout.ms": "2000"}
    create_connector(worker, name, config, wait_running=False)
    status = worker.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "FAILED")
    trace = status["tasks"][0]["trace"]
    assert "Unable to connect to MongoDB" in trace
    assert status["connector"]["state"] == "RUNNING"
    assert worker.http.get("/").status_code == 200
    assert worker.http.get("/connectors").json() == [name]
    assert worker.http.get(f"/connectors/{name}/tasks/0/status").json()["state"] == "FAILED"
