"""A third-party Kafka Connect client from PyPI (kafka-connect-py), used as a new user would, drives our worker
unchanged: create, status, pause, resume, restart, config update, topics and delete."""

from __future__ import annotations

import time
from typing import Any

import pytest
from kafka_connect import KafkaConnect

from tests.integration.support import Worker, read_topic, unique

pytestmark = pytest.mark.integration


def _wait(check: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:  # noqa: BLE001 - the client raises on 404 while the status is not there yet
            pass
        time.sleep(0.3)
    raise AssertionError(f"never happened: {what}")


def test_kafka_connect_py_drives_the_worker(worker: Worker, stack: Any, mongo: Any) -> None:
    client = KafkaConnect(url=worker.url)
    assert client.get_cluster_info()["version"].startswith("4.")
    assert any(p["class"] == "io.debezium.connector.mongodb.MongoDbConnector" for p in client.list_connector_plugins())
    name, prefix, db = unique("kc-"), unique("kc"), unique("kcdb_")
    config = {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
              "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
              "collection.include.list": f"{db}.c"}
    created = client.create_connector({"name": name, "config": config})
    assert created["name"] == name
    assert name in client.list_connectors()
    _wait(lambda: client.get_connector_status(name)["tasks"][0]["state"] == "RUNNING", "RUNNING")

    client.pause_connector(name)
    _wait(lambda: client.get_connector_status(name)["connector"]["state"] == "PAUSED", "PAUSED")
    client.resume_connector(name)
    _wait(lambda: client.get_connector_status(name)["connector"]["state"] == "RUNNING", "resumed")
    client.restart_connector(name)
    client.restart_connector(name, include_tasks=True, only_failed=False)
    client.restart_connector_task(name, 0)
    _wait(lambda: client.get_connector_task_status(name, 0)["state"] == "RUNNING", "task RUNNING after restart")

    client.update_connector(name, {**config, "max.batch.size": "100"})
    assert client.get_connector_config(name)["max.batch.size"] == "100"
    assert client.get_connector(name)["type"] == "source"
    _wait(lambda: client.list_connector_tasks(name)[0]["config"].get("max.batch.size") == "100", "task config")
    _wait(lambda: client.get_connector_status(name)["tasks"][0]["state"] == "RUNNING", "RUNNING after update")

    mongo[db].c.insert_one({"_id": 1})
    read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1)
    _wait(lambda: client.list_connector_topics(name)[name]["topics"] == [f"{prefix}.{db}.c"], "topic tracked")
    # this client has no offsets call: plain HTTP for that one
    _wait(lambda: worker.http.get(f"/connectors/{name}/offsets").json()["offsets"][0]["partition"] ==
          {"server_id": prefix}, "offset committed")
    client.reset_connector_topics(name)

    client.delete_connector(name)
    assert name not in client.list_connectors()
