"""The config, offset and status topics hold Kafka Connect's records byte for byte, in compacted topics."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kafka import KafkaAdminClient

from connect.storage.kafka_log import cleanup_policy
from connectors.mongodb.connector import DEBEZIUM_VERSION
from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration


def _records(bootstrap: str, topic: str, count: int) -> dict[bytes, list[bytes | None]]:
    by_key: dict[bytes, list[bytes | None]] = {}
    for record in read_topic(bootstrap, topic, count):
        by_key.setdefault(record.key, []).append(record.value)
    return by_key


def _json(value: bytes | None) -> Any:
    assert value is not None, "a tombstone where a record was expected"
    return json.loads(value)


def test_internal_topics_use_connect_formats(worker: Worker, stack: Any, mongo: Any) -> None:
    group = worker.process.properties["group.id"]
    name, prefix, db = unique("fmt-"), unique("fmt"), unique("fmtdb_")
    config = {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
              "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
              "collection.include.list": f"{db}.c"}
    create_connector(worker, name, config)
    mongo[db].c.insert_one({"_id": 1})
    read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 1)

    configs = _records(stack.kafka_bootstrap, f"{group}-configs", 3)
    stored = _json(configs[f"connector-{name}".encode()][-1])
    assert list(stored) == ["properties"] and stored["properties"] == {**config, "name": name}
    task = configs[f"task-{name}-0".encode()][-1]
    assert task is not None and task.startswith(b'{"properties":{')
    assert task == json.dumps(json.loads(task), separators=(",", ":"), ensure_ascii=False).encode(), "compact JSON"
    assert json.loads(task)["properties"]["task.class"] == "io.debezium.connector.mongodb.MongoDbConnectorTask"
    assert configs[f"commit-{name}".encode()][-1] == b'{"tasks":1}'

    deadline = time.monotonic() + 30
    offsets: dict[bytes, list[bytes | None]] = {}
    key = json.dumps([name, {"server_id": prefix}], separators=(",", ":")).encode()
    while time.monotonic() < deadline and key not in offsets:
        offsets = _records(stack.kafka_bootstrap, f"{group}-offsets", 1)
        time.sleep(0.5)
    value = _json(offsets[key][-1])
    assert list(value) == ["sec", "ord", "resume_token"]
    assert isinstance(value["sec"], int) and isinstance(value["ord"], int)

    statuses = _records(stack.kafka_bootstrap, f"{group}-status", 2)
    connector_status = statuses[f"status-connector-{name}".encode()][-1]
    worker_id = worker.url.removeprefix("http://")
    generation = _json(connector_status)["generation"]
    assert isinstance(generation, int) and generation >= 1, "the group generation the status was written in"
    assert connector_status == (f'{{"state":"RUNNING","trace":null,"worker_id":"{worker_id}",'
                                f'"generation":{generation},"version":"{DEBEZIUM_VERSION}"}}').encode()
    assert _json(statuses[f"status-task-{name}-0".encode()][-1])["state"] == "RUNNING"

    admin = KafkaAdminClient(bootstrap_servers=stack.kafka_bootstrap)
    try:
        for suffix in ("configs", "offsets", "status"):
            assert cleanup_policy(admin, f"{group}-{suffix}") == "compact"
    finally:
        admin.close()


def test_worker_refuses_a_non_compacted_internal_topic(stack: Any, tmp_path: Any) -> None:
    from kafka.admin import NewTopic

    import stack as stack_mod
    from stack.procs import StackError
    from stack.worker import ConnectWorker, distributed_properties

    group = unique("noncompact-")
    admin = KafkaAdminClient(bootstrap_servers=stack.kafka_bootstrap)
    try:
        admin.create_topics([NewTopic(f"{group}-configs", 1, 1, topic_configs={"cleanup.policy": "delete"})])
    finally:
        admin.close()
    port = stack_mod.free_port()
    process = ConnectWorker(tmp_path / "w", port, distributed_properties(stack.kafka_bootstrap, port, group_id=group))
    with pytest.raises(StackError) as failure:
        process.start()
    assert "required to have 'cleanup.policy=compact'" in str(failure.value)
    process.stop()
