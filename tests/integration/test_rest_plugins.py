"""``/connector-plugins`` on a distributed worker: listing, config keys and config validation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.support import Worker, unique
from tests.unit.connect.test_validation import GOLDEN_FILE_SOURCE_CONFIG, GOLDEN_VALIDATE

pytestmark = pytest.mark.integration

MONGO = "io.debezium.connector.mongodb.MongoDbConnector"
FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


def _without_docs(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in item.items() if k != "documentation"} for item in items]


def _errors(report: dict[str, Any]) -> dict[str, list[str]]:
    return {e["value"]["name"]: e["value"]["errors"] for e in report["configs"] if e["value"]["errors"]}


def test_listing_with_and_without_converters(worker: Worker) -> None:
    connectors = worker.http.get("/connector-plugins").json()
    assert [p["type"] for p in connectors] == ["source", "source"]
    everything = worker.http.get("/connector-plugins", params={"connectorsOnly": "false"}).json()
    assert everything[:2] == connectors
    assert {"class": "org.apache.kafka.connect.json.JsonConverter", "type": "converter", "version": "4.3.1"} \
        in everything
    types = [p["type"] for p in everything]
    assert types == sorted(types, key=["source", "transformation", "predicate", "converter",
                                       "header_converter"].index)  # Connect's order of the kinds
    for kind in ("transformation", "predicate", "converter", "header_converter"):
        classes = [p["class"] for p in everything if p["type"] == kind]
        assert classes == sorted(classes)
    for plugin in ({"class": "org.apache.kafka.connect.transforms.InsertField$Value", "type": "transformation",
                    "version": "4.3.1"},
                   {"class": "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState",
                    "type": "transformation", "version": "3.6.1.Final"},
                   {"class": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "type": "predicate",
                    "version": "4.3.1"},
                   {"class": "io.debezium.converters.CloudEventsConverter", "type": "converter",
                    "version": "3.6.1.Final"}):
        assert plugin in everything
    transform_keys = worker.http.get("/connector-plugins/HeaderFrom%24Value/config")
    assert transform_keys.status_code == 404  # a nested class has no alias: Connect needs the full name
    transform_keys = worker.http.get("/connector-plugins/org.apache.kafka.connect.transforms.HeaderFrom%24Value/config")
    assert [k["name"] for k in transform_keys.json()] == ["fields", "headers", "operation", "replace.null.with.default"]


def test_plugin_config_keys(worker: Worker) -> None:
    reply = worker.http.get(f"/connector-plugins/{FILE_SOURCE}/config")
    assert reply.status_code == 200
    assert _without_docs(reply.json()) == GOLDEN_FILE_SOURCE_CONFIG
    assert list(reply.json()[0]) == ["name", "type", "required", "default_value", "importance", "documentation",
                                     "group", "order_in_group", "width", "display_name", "dependents"]

    for alias in ("MongoDbConnector", "MongoDb", MONGO):
        keys = worker.http.get(f"/connector-plugins/{alias}/config").json()
        names = [k["name"] for k in keys]
        assert names[0] == "topic.prefix" and "errors.tolerance" in names and "offsets.storage.topic" in names
    json_keys = worker.http.get("/connector-plugins/JsonConverter/config/").json()
    assert [k["name"] for k in json_keys] == ["converter.type", "schemas.enable", "schemas.cache.size",
                                              "schema.content", "decimal.format", "replace.null.with.default"]

    missing = worker.http.get("/connector-plugins/com.example.Nope/config")
    assert missing.status_code == 404
    assert missing.json() == {"error_code": 404, "message": "Unknown plugin com.example.Nope."}


def test_validate_reports_every_error_with_200(worker: Worker) -> None:
    for case in ("minimal", "many_errors", "json_converters", "edge"):
        props, golden = GOLDEN_VALIDATE[case]
        reply = worker.http.put("/connector-plugins/FileStreamSource/config/validate", json=props)
        assert reply.status_code == 200, reply.text
        report = reply.json()
        for entry in report["configs"]:
            if entry["definition"] is not None:
                entry["definition"].pop("documentation")
        assert report == golden, case


def test_validate_mongodb(worker: Worker, stack: Any) -> None:
    good = {"connector.class": MONGO, "name": unique("v-"), "mongodb.connection.string": stack.mongo_uri,
            "topic.prefix": unique("p")}
    reply = worker.http.put("/connector-plugins/MongoDb/config/validate", json=good)
    assert reply.status_code == 200 and reply.json()["error_count"] == 0, _errors(reply.json())
    assert reply.json()["name"] == MONGO
    assert reply.json()["groups"][-4:] == ["MongoDB", "Connector", "Filters", "Events"]

    bad = {**good, "tasks.max": 0, "errors.tolerance": "some",
           "key.converter": "io.confluent.connect.avro.AvroConverter", "topic.prefix": "bad prefix!",
           "max.batch.size": "lots", "capture.scope": "database",
           "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "maybe"}
    reply = worker.http.put(f"/connector-plugins/{MONGO}/config/validate", json=bad)
    assert reply.status_code == 200
    errors = _errors(reply.json())
    assert set(errors) == {"tasks.max", "errors.tolerance", "key.converter", "topic.prefix", "max.batch.size",
                           "capture.target", "value.converter.schemas.enable"}
    assert reply.json()["error_count"] == 7
    assert errors["value.converter.schemas.enable"] == [
        "Invalid value maybe for configuration schemas.enable: Expected value to be either true or false"]
    assert worker.http.get("/connectors").json() == [], "validation creates nothing"


@pytest.mark.parametrize(("path", "body", "status", "message"), [
    ("FileStreamSource", {"connector.class": "FileStreamSink", "name": "x"}, 400,
     "Included connector type FileStreamSink does not match request type FileStreamSource"),
    ("FileStreamSource", {"name": "x"}, 400, "Connector config {name=x} contains no connector type"),
    ("Nope", {"connector.class": "com.example.Nope"}, 400,
     "Failed to find any class that implements Connector and which name matches com.example.Nope, available "
     f"connectors are: {MONGO}, {FILE_SOURCE}"),
])
def test_validate_rejections(worker: Worker, path: str, body: dict[str, str], status: int, message: str) -> None:
    reply = worker.http.put(f"/connector-plugins/{path}/config/validate", json=body)
    assert reply.status_code == status
    assert reply.json() == {"error_code": status, "message": message}


def test_validate_bad_bodies(worker: Worker) -> None:
    url = "/connector-plugins/FileStreamSource/config/validate"
    for content in (b"", b"{", b"[]", b'{"connector.class": "FileStreamSource", "x": {"y": 1}}'):
        reply = worker.http.put(url, content=content, headers={"Content-Type": "application/json"})
        assert reply.status_code == 400 and reply.json()["error_code"] == 400, content


def test_override_policy_none_rejects_producer_overrides(worker_factory: Any, stack: Any) -> None:
    strict = worker_factory({"connector.client.config.override.policy": "None"})
    config = {"connector.class": "FileStreamSource", "file": "/dev/null", "topic": "t",
              "producer.override.linger.ms": "5", "producer.override.acks": "1"}
    reply = strict.http.post("/connectors", json={"name": "override-none", "config": config})
    assert reply.status_code == 400
    message = reply.json()["message"]
    assert "contains the following 2 error(s)" in message
    assert "The 'None' policy does not allow 'linger.ms' to be overridden in the connector configuration." in message
    report = strict.http.put("/connector-plugins/FileStreamSource/config/validate",
                             json={**config, "name": "override-none"}).json()
    assert report["error_count"] == 2
    errors = {c["value"]["name"]: c["value"]["errors"] for c in report["configs"] if c["value"]["errors"]}
    assert set(errors) == {"producer.override.linger.ms", "producer.override.acks"}
