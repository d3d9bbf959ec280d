"""The local stack itself: a real Kafka broker and a real SecantusDB, no mocks."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType
from pymongo import MongoClient
from pymongo.errors import PyMongoError

import stack as stack_mod
from stack import MongoServer, StackEndpoints
from tests.integration.support import read_topic

pytestmark = pytest.mark.integration


def _port(endpoint: str) -> int:
    return int(endpoint.rsplit(":", 1)[1].split("/", 1)[0])


def _mongo_port(endpoints: StackEndpoints) -> int:
    return _port(endpoints.mongo_uri.split("?", 1)[0])


def _client(uri: str, timeout_ms: int = 10_000) -> MongoClient[dict[str, Any]]:
    return MongoClient(uri, serverSelectionTimeoutMS=timeout_ms)


def test_produce_and_consume(stack: StackEndpoints) -> None:
    topic = f"stack-test-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=stack.kafka_bootstrap, acks="all")
    try:
        meta = producer.send(topic, key=b"k1", value=b"hello").get(timeout=60)
    finally:
        producer.close(timeout=10)
    assert meta.topic == topic

    records = read_topic(stack.kafka_bootstrap, topic, 1, timeout=30)
    assert [(r.key, r.value) for r in records] == [(b"k1", b"hello")]


def test_create_compacted_topic(stack: StackEndpoints) -> None:
    topic = f"stack-compacted-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=stack.kafka_bootstrap)
    try:
        admin.create_topics(
            {topic: {"num_partitions": 1, "replication_factor": 1, "configs": {"cleanup.policy": "compact"}}},
            wait_for_metadata=True,
        )
        assert topic in admin.list_topics()
        result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)])
    finally:
        admin.close()
    assert result["topic"][topic]["cleanup.policy"]["value"] == "compact"


def test_change_stream_sees_insert(stack: StackEndpoints) -> None:
    client = _client(stack.mongo_uri)
    try:
        assert client.admin.command("hello")["setName"] == "secantus"
        marker = uuid.uuid4().hex
        with client.watch(max_await_time_ms=500) as stream:
            client["stacktest"]["things"].insert_one({"marker": marker})
            event = None
            deadline = time.monotonic() + 30
            while event is None and time.monotonic() < deadline:
                event = stream.try_next()
    finally:
        client.close()
    assert event is not None, "no change event within 30 s"
    assert event["operationType"] == "insert"
    assert event["ns"] == {"db": "stacktest", "coll": "things"}
    assert event["fullDocument"]["marker"] == marker


def test_start_is_idempotent(stack: StackEndpoints, stack_dir: Path) -> None:
    broker, server = stack_mod.services(stack_dir)
    pids = (broker.pid, server.pid)
    assert None not in pids
    again = stack_mod.start(stack_dir, kafka_port=_port(stack.kafka_bootstrap), mongo_port=_mongo_port(stack))
    assert again == stack
    broker, server = stack_mod.services(stack_dir)
    assert (broker.pid, server.pid) == pids


def test_start_on_other_port_while_running_fails(stack: StackEndpoints, stack_dir: Path) -> None:
    with pytest.raises(stack_mod.StackError, match="already runs on port"):
        stack_mod.start(stack_dir, mongo_port=stack_mod.free_port(), kafka=False)


def test_mongo_restart_keeps_data(stack: StackEndpoints, mongo_server: MongoServer) -> None:
    marker = uuid.uuid4().hex
    with _client(stack.mongo_uri) as client:
        client["stacktest"]["durable"].insert_one({"marker": marker})
    old_pid = mongo_server.pid

    mongo_server.stop()
    assert not mongo_server.is_running()
    assert not mongo_server.pid_file.exists()
    with _client(stack.mongo_uri, timeout_ms=500) as client, pytest.raises(PyMongoError):
        client.admin.command("ping")

    mongo_server.start()
    assert mongo_server.is_running()
    assert mongo_server.pid != old_pid
    with _client(stack.mongo_uri) as client:
        assert client["stacktest"]["durable"].find_one({"marker": marker}) is not None


def test_mongo_kill_and_restart(stack: StackEndpoints, mongo_server: MongoServer) -> None:
    mongo_server.kill()
    assert not mongo_server.is_running()
    mongo_server.restart()
    assert mongo_server.is_running()
    with _client(stack.mongo_uri) as client:
        assert client.admin.command("ping")["ok"] == 1


def test_full_stop_and_start_keeps_mongo_data(tmp_path: Path) -> None:
    """A separate, MongoDB-only stack: module-level stop() then start() on the same state dir."""
    port = stack_mod.free_port()
    try:
        endpoints = stack_mod.start(tmp_path, mongo_port=port, kafka=False)
        with _client(endpoints.mongo_uri) as client:
            client["stacktest"]["kept"].insert_one({"_id": 1, "v": "on disk"})
        stack_mod.stop(tmp_path)
        assert not (tmp_path / "mongo.pid").exists()
        assert not MongoServer(tmp_path, port).is_running()

        stack_mod.start(tmp_path, mongo_port=port, kafka=False)
        with _client(endpoints.mongo_uri) as client:
            assert client["stacktest"]["kept"].find_one({"_id": 1}) == {"_id": 1, "v": "on disk"}
    finally:
        stack_mod.stop(tmp_path)


def test_cli_status(stack: StackEndpoints, stack_dir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "stack", "status", "--state-dir", str(stack_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(stack_mod.__file__).resolve().parent.parent,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"KAFKA_BOOTSTRAP={stack.kafka_bootstrap}" in result.stdout
    assert f"MONGO_URI={stack.mongo_uri}" in result.stdout
