"""Transforms, predicates and converters on the real worker, Kafka and MongoDB.

* The seed's CloudEvents example (HeaderFrom gated by a negated TopicNameMatches predicate, CloudEventsConverter with
  ``metadata.source`` from headers, JsonConverter header converter with schemas), minus the outbox router it
  names. That router is what adds the ``id`` and ``type`` headers a bare ``metadata.source=header`` needs, so the
  converter generates those two here (``header,id:generate,type:generate``).
* ExtractNewDocumentState + RegexRouter: typed documents on a renamed topic, documents whose shapes vary included.
* ``errors.tolerance``: a record the converter cannot serialize fails the task with ``none`` (clear trace) and is
  skipped and logged with ``all``, the task running on and offsets moving.
* Bad SMT configs are refused at creation with the key and the reason.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from cloudevents.v1.kafka import KafkaMessage, from_structured

from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration

MONGO_CONNECTOR = "io.debezium.connector.mongodb.MongoDbConnector"


def _base(stack: Any, db: str, prefix: str) -> dict[str, str]:
    return {"connector.class": MONGO_CONNECTOR, "mongodb.connection.string": stack.mongo_uri,
            "topic.prefix": prefix, "collection.include.list": f"{db}.orders", "tasks.max": "1"}


def test_seed_cloudevents_example_with_header_metadata(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("ce_"), unique("ce"), unique("ce-conn-")
    config = {
        **_base(stack, db, prefix),
        "tombstones.on.delete": "false",
        "heartbeat.interval.ms": "500",
        "transforms": "addMetadataHeaders",
        "transforms.addMetadataHeaders.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
        "transforms.addMetadataHeaders.fields": "source,op,transaction",
        "transforms.addMetadataHeaders.headers": "source,op,transaction",
        "transforms.addMetadataHeaders.operation": "copy",
        "transforms.addMetadataHeaders.predicate": "isHeartbeat",
        "transforms.addMetadataHeaders.negate": "true",
        "predicates": "isHeartbeat",
        "predicates.isHeartbeat.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
        "predicates.isHeartbeat.pattern": "__debezium-heartbeat.*",
        "value.converter": "io.debezium.converters.CloudEventsConverter",
        "value.converter.metadata.source": "header,id:generate,type:generate",
        "header.converter": "org.apache.kafka.connect.json.JsonConverter",
        "header.converter.schemas.enable": "true",
    }
    create_connector(worker, name, config)
    orders = mongo[db].orders
    orders.insert_one({"_id": 1, "item": "book", "qty": 2})
    orders.update_one({"_id": 1}, {"$set": {"qty": 3}})
    orders.delete_one({"_id": 1})

    records = read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.orders", 3)
    ops = []
    for record in records:
        headers = dict(record.headers)
        source = json.loads(headers["source"])
        assert source["schema"]["name"] == "io.debezium.connector.mongo.Source"
        assert source["payload"]["db"] == db and source["payload"]["collection"] == "orders"
        assert json.loads(headers["op"]) == {"schema": {"type": "string", "optional": True}, "payload": ANY_OP}
        assert json.loads(headers["transaction"])["payload"] is None
        event = from_structured(KafkaMessage(headers={}, key=None, value=record.value))
        attributes = event.get_attributes()
        assert attributes["source"] == f"/debezium/mongodb/{prefix}"
        assert attributes["type"] == "io.debezium.connector.mongodb.DataChangeEvent"
        assert attributes["iodebeziumcollection"] == "orders"
        assert attributes["iodebeziumtsms"] == str(source["payload"]["ts_ms"])
        data = event.get_data()
        assert data is not None
        assert data["schema"]["name"] == "io.debezium.connector.mongodb.Data"
        assert set(data["payload"]) >= {"before", "after", "updateDescription", "source", "op"}
        ops.append(attributes["iodebeziumop"])
    assert ops == ["c", "u", "d"]

    heartbeats = read_topic(stack.kafka_bootstrap, f"__debezium-heartbeat.{prefix}", 1)
    assert heartbeats[0].value is None  # not a change event: Debezium's converter writes null
    assert "source" not in dict(heartbeats[0].headers)  # the negated predicate kept HeaderFrom away


class _AnyOp:
    def __eq__(self, other: object) -> bool:
        return other in ("c", "u", "d")


ANY_OP = _AnyOp()


def test_extract_new_document_state_and_router(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("unwrap_"), unique("uw"), unique("unwrap-conn-")
    config = {
        **_base(stack, db, prefix),
        "transforms": "unwrap,route",
        "transforms.unwrap.type": "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState",
        "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
        "transforms.unwrap.add.fields": "op,collection",
        "transforms.route.type": "RegexRouter",
        "transforms.route.regex": "([^.]+)\\.([^.]+)\\.([^.]+)",
        "transforms.route.replacement": "flat-$3-$1",
    }
    create_connector(worker, name, config)
    orders = mongo[db].orders
    orders.insert_one({"_id": 1, "tags": ["a", "b"], "price": 1.5})
    orders.insert_one({"_id": 2, "tags": [1, "mixed"], "price": "free", "extra": {"nested": True}})
    orders.delete_one({"_id": 1})
    records = read_topic(stack.kafka_bootstrap, f"flat-orders-{prefix}", 3)
    values = [json.loads(r.value) for r in records]
    first, second, deleted = (v["payload"] for v in values)
    assert first == {"_id": 1, "tags": ["a", "b"], "price": 1.5, "__deleted": False, "__op": "c",
                     "__collection": "orders"}
    assert second["tags"] == {"_0": 1, "_1": "mixed"} and second["extra"] == {"nested": True}
    assert deleted["__deleted"] is True and deleted["__op"] == "d"
    assert values[0]["schema"]["name"] == f"{prefix}.{db}.orders"
    assert json.loads(records[0].key) == {"schema": {"type": "struct", "fields": [
        {"type": "int32", "optional": True, "field": "id"}], "optional": False}, "payload": {"id": 1}}


def _failing_config(stack: Any, db: str, prefix: str, tolerance: str) -> dict[str, str]:
    # metadata.source=header wants an "id" header nobody sets: every change event is one the converter refuses
    return {
        **_base(stack, db, prefix),
        "transforms": "meta",
        "transforms.meta.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value",
        "transforms.meta.fields": "source,op",
        "transforms.meta.headers": "source,op",
        "transforms.meta.operation": "copy",
        "value.converter": "io.debezium.converters.CloudEventsConverter",
        "value.converter.metadata.source": "header",
        "errors.tolerance": tolerance,
        "errors.log.enable": "true",
        "errors.log.include.messages": "true",
    }


def test_converter_failure_fails_the_task_with_tolerance_none(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("tolnone_"), unique("tn"), unique("tol-none-")
    create_connector(worker, name, _failing_config(stack, db, prefix, "none"))
    mongo[db].orders.insert_one({"_id": 1})
    status = worker.wait_status(name, lambda s: bool(s["tasks"]) and s["tasks"][0]["state"] == "FAILED")
    trace = status["tasks"][0]["trace"]
    assert "Tolerance exceeded in error handler" in trace
    assert "Header `id` was not provided" in trace


def test_converter_failure_is_skipped_with_tolerance_all(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix, name = unique("tolall_"), unique("ta"), unique("tol-all-")
    create_connector(worker, name, _failing_config(stack, db, prefix, "all"))
    for n in range(3):
        mongo[db].orders.insert_one({"_id": n})
    deadline = time.monotonic() + 60
    offsets: list[Any] = []
    while time.monotonic() < deadline and not offsets:
        offsets = worker.http.get(f"/connectors/{name}/offsets").json().get("offsets", [])
        time.sleep(0.5)
    assert offsets, "the offsets of the skipped records were never committed"
    status = worker.http.get(f"/connectors/{name}/status").json()
    assert status["tasks"][0]["state"] == "RUNNING"
    log = worker.process.log_path.read_text(errors="replace")
    assert "Executing stage 'VALUE_CONVERTER' with class 'converters.cloudevents.CloudEventsConverter'" in log
    assert "where source record is = SourceRecord{" in log


@pytest.mark.parametrize(("extra", "key", "reason"), [
    ({"transforms": "r", "transforms.r.type": "RegexRouter", "transforms.r.regex": "a(",
      "transforms.r.replacement": "b"}, "transforms.r.regex", "Invalid regex"),
    ({"transforms": "x", "transforms.x.type": "org.apache.kafka.connect.transforms.ExtractField$Value"},
     "transforms.x.field", "Missing required configuration"),
    ({"transforms": "x", "transforms.x.type": "com.example.Nope"}, "transforms.x.type", "could not be found"),
    ({"predicates": "p", "predicates.p.type": "TopicNameMatches"}, "predicates.p.pattern", "Missing required"),
    ({"value.converter": "CloudEventsConverter", "value.converter.metadata.source": "body"},
     "value.converter.metadata.source", "must be 'value' or 'header'"),
])
def test_bad_smt_configs_are_refused(worker: Worker, stack: Any, extra: dict[str, str], key: str,
                                     reason: str) -> None:
    config = {**_base(stack, "db", "p"), **extra}
    reply = worker.http.post("/connectors", json={"name": unique("bad-"), "config": config})
    assert reply.status_code == 400, reply.text
    assert key in reply.json()["message"] and reason in reply.json()["message"]
    report = worker.http.put(f"/connector-plugins/{MONGO_CONNECTOR}/config/validate",
                             json={**config, "name": "x"}).json()
    errors = {e["value"]["name"]: e["value"]["errors"] for e in report["configs"] if e["value"]["errors"]}
    assert key in errors and any(reason in e for e in errors[key])
