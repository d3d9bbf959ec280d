"""The example configuration of Debezium's MongoDB documentation, POSTed unchanged, produces Debezium 3.x's
key and value JSON for every event type (reference/debezium-mongodb.md section 4)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.integration.support import Worker, payload, read_topic

pytestmark = pytest.mark.integration

SOURCE_FIELDS = [
    ("version", "string", False), ("connector", "string", False), ("name", "string", False),
    ("ts_ms", "int64", False), ("snapshot", "string", True), ("db", "string", False),
    ("sequence", "string", True), ("ts_us", "int64", True), ("ts_ns", "int64", True),
    ("collection", "string", False), ("ord", "int32", False), ("lsid", "string", True),
    ("txnNumber", "int64", True), ("wallTime", "int64", True),
]


def _connector(mongo_uri: str, db: str) -> dict[str, Any]:
    return {
        "name": "inventory-connector",
        "config": {
            "connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
            "mongodb.connection.string": mongo_uri,
            "topic.prefix": "fulfillment",
            "collection.include.list": f"{db}.customers",
        },
    }


def _check_key(record: Any, topic: str, expected_id: str) -> None:
    key_schema = {"type": "struct", "fields": [{"type": "string", "optional": False, "field": "id"}],
                  "optional": False, "name": f"{topic}.Key"}
    expected = json.dumps({"schema": key_schema, "payload": {"id": expected_id}}, separators=(",", ":"))
    assert record.key == expected.encode()


def _check_value_schema(schema: dict[str, Any], topic: str) -> None:
    assert schema["name"] == f"{topic}.Envelope"
    assert schema["optional"] is False
    assert "version" not in schema
    fields = schema["fields"]
    assert [f["field"] for f in fields] == ["before", "after", "updateDescription", "source", "op", "ts_ms",
                                            "transaction"]
    for json_field in fields[:2]:
        assert json_field == {"type": "string", "optional": True, "name": "io.debezium.data.Json", "version": 1,
                              "field": json_field["field"]}
    update = fields[2]
    assert update["name"] == "io.debezium.connector.mongodb.changestream.updatedescription"
    assert [f["field"] for f in update["fields"]] == ["removedFields", "updatedFields", "truncatedArrays"]
    source = fields[3]
    assert source["name"] == "io.debezium.connector.mongo.Source"
    assert [(f["field"], f["type"], f["optional"]) for f in source["fields"]] == SOURCE_FIELDS
    snapshot = source["fields"][4]
    assert snapshot["name"] == "io.debezium.data.Enum" and snapshot["default"] == "false"
    assert fields[4] == {"type": "string", "optional": True, "field": "op"}
    assert fields[5] == {"type": "int64", "optional": True, "field": "ts_ms"}
    assert fields[6]["name"] == "event.block"


def _check_source(source: dict[str, Any], db: str, *, in_txn: bool) -> None:
    assert source["connector"] == "mongodb"
    assert source["name"] == "fulfillment"
    assert source["db"] == db and source["collection"] == "customers"
    assert source["snapshot"] == "false"
    assert source["sequence"] is None
    assert source["ts_us"] == source["ts_ms"] * 1000 and source["ts_ns"] == source["ts_ms"] * 1_000_000
    assert isinstance(source["ord"], int) and source["ord"] >= 0
    assert source["wallTime"] == source["ts_ms"]
    assert abs(source["ts_ms"] - time.time() * 1000) < 300_000
    if in_txn:
        assert source["lsid"].startswith('{"id": {"$binary": "') and '"$type": "04"}' in source["lsid"]
        assert isinstance(source["txnNumber"], int)
    else:
        assert source["lsid"] is None and source["txnNumber"] is None


def test_documented_example_produces_debezium_events(worker: Worker, stack: Any, mongo: Any) -> None:
    db = f"inventory_{int(time.time() * 1000)}"
    reply = worker.http.post("/connectors", json=_connector(stack.mongo_uri, db))
    assert reply.status_code == 201, reply.text
    assert reply.headers["location"].endswith("/connectors/inventory-connector")
    assert reply.json() == {"name": "inventory-connector", "config": {**_connector(stack.mongo_uri, db)["config"],
                                                                     "name": "inventory-connector"},
                            "tasks": [], "type": "source"}
    worker.wait_running("inventory-connector")

    customers = mongo[db].customers
    customers.insert_one({"_id": 1004, "first_name": "Anne", "last_name": "Kretchmar",
                          "email": "annek@noanswer.org"})
    customers.update_one({"_id": 1004}, {"$set": {"first_name": "Anne Marie"}})
    customers.replace_one({"_id": 1004}, {"first_name": "Anne", "last_name": "Kretchmar"})
    mongo[db].other.insert_one({"_id": 1, "ignored": True})
    with mongo.start_session() as session, session.start_transaction():
        customers.insert_one({"_id": 1005, "first_name": "Bob"}, session=session)
    customers.delete_one({"_id": 1004})

    topic = f"fulfillment.{db}.customers"
    records = read_topic(stack.kafka_bootstrap, topic, 6)
    assert len(records) == 6
    create, update, replace, txn_insert, delete, tombstone = records
    for record, key_id in zip(records, ["1004", "1004", "1004", "1005", "1004", "1004"], strict=True):
        _check_key(record, topic, key_id)

    value = json.loads(create.value)
    _check_value_schema(value["schema"], topic)
    body = value["payload"]
    assert body["op"] == "c" and body["before"] is None and body["updateDescription"] is None
    assert body["after"] == ('{"_id": 1004,"first_name": "Anne","last_name": "Kretchmar",'
                             '"email": "annek@noanswer.org"}')
    assert body["transaction"] is None
    assert abs(body["ts_ms"] - time.time() * 1000) < 300_000
    _check_source(body["source"], db, in_txn=False)
    headers = dict(create.headers)
    assert headers["__debezium.context.connectorLogicalName"] == b"fulfillment"
    assert headers["__debezium.context.connectorName"] == b"mongodb"
    assert headers["__debezium.context.taskId"] == b"0"

    body = payload(update.value)
    assert body["op"] == "u"
    assert body["updateDescription"] == {"removedFields": None, "updatedFields": '{"first_name": "Anne Marie"}',
                                         "truncatedArrays": None}
    assert body["after"] is None or json.loads(body["after"])["_id"] == 1004
    _check_source(body["source"], db, in_txn=False)

    body = payload(replace.value)
    assert body["op"] == "u" and body["updateDescription"] is None
    assert body["after"] == '{"_id": 1004,"first_name": "Anne","last_name": "Kretchmar"}'

    body = payload(txn_insert.value)
    assert body["op"] == "c"
    _check_source(body["source"], db, in_txn=True)

    body = payload(delete.value)
    assert body["op"] == "d" and body["before"] is None and body["after"] is None
    assert body["updateDescription"] is None
    assert tombstone.value is None
    assert dict(tombstone.headers) == dict(delete.headers)

    status = worker.http.get("/connectors/inventory-connector/status").json()
    assert status["connector"]["state"] == "RUNNING"
    tasks = worker.http.get("/connectors/inventory-connector/tasks").json()
    assert tasks[0]["id"] == {"connector": "inventory-connector", "task": 0}
    assert tasks[0]["config"]["task.class"] == "io.debezium.connector.mongodb.MongoDbConnectorTask"
