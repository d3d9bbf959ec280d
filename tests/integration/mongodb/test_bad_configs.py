"""Bad MongoDB connector configs are rejected by validate and by POST with every problem listed (400, never
500), and nothing is created."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.support import Worker, unique

pytestmark = pytest.mark.integration

CLASS = "io.debezium.connector.mongodb.MongoDbConnector"


def _bad(stack: Any) -> dict[str, str]:
    return {
        "connector.class": CLASS, "mongodb.connection.string": stack.mongo_uri, "topic.prefix": "bad",
        "database.include.list": "a", "database.exclude.list": "b",
        "collection.include.list": "a.(unclosed",
        "capture.mode": "change_streams_sometimes",
        "max.batch.size": "-5",
        "field.renames": "nodots:x",
        "cursor.pipeline": "[{not json",
        "cursor.oversize.handling.mode": "skip",
        "skipped.operations": "c,x",
        "custom.metric.tags": "team=cdc,broken",
        "notification.enabled.channels": "sink",
    }


EXPECTED = {
    "database.exclude.list": '"database.include.list" is already specified',
    "collection.include.list": "A comma-separated list of valid regular expressions is expected",
    "capture.mode": "Value must be one of change_streams",
    "max.batch.size": "A positive, non-zero integer value is expected",
    "field.renames": "nodots:x has invalid format",
    "cursor.pipeline": "Change stream pipeline JSON is invalid",
    "cursor.oversize.skip.threshold": "Invalid threshold value for skipped document size",
    "skipped.operations": "Value must be one of c, u, d, t, none",
    "custom.metric.tags": "A equivalent-separated map of valid key/value pairs is expected",
    "notification.sink.topic.name": "Notification topic name must be provided",
}


def test_validate_lists_every_problem(worker: Worker, stack: Any) -> None:
    reply = worker.http.put(f"/connector-plugins/{CLASS}/config/validate", json=_bad(stack))
    assert reply.status_code == 200
    body = reply.json()
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    for name, message in EXPECTED.items():
        assert any(message in e for e in errors.get(name, [])), (name, errors.get(name))
    assert body["error_count"] >= len(EXPECTED)


def test_post_rejects_with_every_problem(worker: Worker, stack: Any) -> None:
    name = unique("bad-")
    reply = worker.http.post("/connectors", json={"name": name, "config": _bad(stack)})
    assert reply.status_code == 400, reply.text
    message = reply.json()["message"]
    for key, text in EXPECTED.items():
        assert key in message and text in message, (key, message)
    assert worker.http.get(f"/connectors/{name}").status_code == 404
