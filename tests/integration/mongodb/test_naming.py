"""Topic naming (``topic.naming.strategy``, ``topic.delimiter``, heartbeat and transaction topics) and
``schema.name.adjustment.mode``: for collections whose names are not valid Avro or topic names, our connector
gives the same topics and key/envelope schema names as the real Debezium 3.6.1 connector did on Kafka Connect
against SecantusDB (``golden/naming.json``, recorded by ``python -m compat.debezium.naming``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compat.debezium import harness, naming
from tests.integration.mongodb.conftest import client
from tests.integration.support import Worker, create_connector

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden" / "naming.json"
CLASS = "io.debezium.connector.mongodb.MongoDbConnector"


def test_same_names_as_debezium(worker: Worker, stack: Any, secantus_factory: Any) -> None:
    expected = json.loads(GOLDEN.read_text())["names"]  # after "recorded_with": Debezium, Connect, SecantusDB
    server = secantus_factory()
    with client(server.uri) as mongo:
        start = mongo.admin.command("ping")["operationTime"]
        naming.run_operations(mongo)
    for prefix, extra in naming.CONNECTORS.items():
        config = {**naming.base_config(server.uri, prefix, harness.op_time(start)), **extra}
        create_connector(worker, f"naming-{prefix}", config, wait_running=False)
    records = naming.read_all(stack.kafka_bootstrap, naming.EXPECTED_TOPICS, quiet=5)
    assert naming.summarise(records) == expected


def test_bad_naming_config_is_a_400(worker: Worker, stack: Any) -> None:
    config = {"connector.class": CLASS, "mongodb.connection.string": stack.mongo_uri, "topic.prefix": "badnames",
              "topic.naming.strategy": "com.example.NoSuchStrategy", "schema.name.adjustment.mode": "avro2",
              "topic.delimiter": "/"}
    reply = worker.http.put(f"/connector-plugins/{CLASS}/config/validate", json=config)
    assert reply.status_code == 200
    errors = {c["value"]["name"]: c["value"]["errors"] for c in reply.json()["configs"] if c["value"]["errors"]}
    assert "Class com.example.NoSuchStrategy could not be found" in errors["topic.naming.strategy"][0]
    assert errors["schema.name.adjustment.mode"] == ["Value must be one of none, avro, avro_unicode"]
    assert errors["topic.delimiter"]
    reply = worker.http.post("/connectors", json={"name": "badnames", "config": config})
    assert reply.status_code == 400, reply.text
    message = reply.json()["message"]
    for key in ("topic.naming.strategy", "schema.name.adjustment.mode", "topic.delimiter"):
        assert key in message
    regex = {**config, "topic.naming.strategy": "io.debezium.schema.DefaultRegexTopicNamingStrategy",
             "schema.name.adjustment.mode": "avro", "topic.delimiter": "."}
    reply = worker.http.post("/connectors", json={"name": "badnames", "config": regex})
    assert reply.status_code == 400 and "topic.regex" in reply.json()["message"], reply.text
    assert worker.http.get("/connectors/badnames").status_code == 404
