"""Kafka Connect's ``/admin/loggers`` (KIP-495 / KIP-976) on a running distributed worker."""

from __future__ import annotations

import time
from typing import Any

import pytest

import stack as stack_mod
from tests.integration.support import Worker, create_connector, unique

pytestmark = pytest.mark.integration


def test_list_and_get(worker: Worker) -> None:
    for path in ("/admin/loggers", "/admin/loggers/"):
        reply = worker.http.get(path, follow_redirects=False)
        assert reply.status_code == 200, reply.text
        listed = reply.json()
        assert "root" in listed and list(listed) == sorted(listed)
        assert set(listed["root"]) == {"level", "last_modified"}
    root = worker.http.get("/admin/loggers/root/", follow_redirects=False)
    assert root.status_code == 200 and root.json()["level"] in {"INFO", "DEBUG", "WARN", "ERROR", "TRACE"}
    missing = worker.http.get("/admin/loggers/no.such.logger")
    assert missing.status_code == 404
    assert missing.json() == {"error_code": 404, "message": "Logger no.such.logger not found."}


def test_set_worker_scope(worker: Worker) -> None:
    before = int(time.time() * 1000)
    reply = worker.http.put("/admin/loggers/connect", json={"level": "DEBUG"})
    assert reply.status_code == 200, reply.text
    affected = reply.json()
    assert affected == sorted(affected) and "connect" in affected
    assert all(name == "connect" or name.startswith("connect.") for name in affected)
    assert len(affected) > 1, "the worker's own connect.* loggers exist and are covered"
    level = worker.http.get("/admin/loggers/connect").json()
    assert level["level"] == "DEBUG" and before <= level["last_modified"] <= int(time.time() * 1000)
    listed = worker.http.get("/admin/loggers").json()
    assert all(listed[name]["level"] == "DEBUG" for name in affected)

    again = worker.http.put("/admin/loggers/connect/?scope=nonsense", json={"level": "debug"})
    assert again.status_code == 200 and "connect" in again.json()
    assert worker.http.get("/admin/loggers/connect").json()["last_modified"] == level["last_modified"]


def test_set_cluster_scope(worker: Worker) -> None:
    reply = worker.http.put("/admin/loggers/org.apache.kafka.connect?scope=cluster", json={"level": "TRACE"})
    assert reply.status_code == 204 and reply.content == b""
    deadline = time.monotonic() + 30
    level = worker.http.get("/admin/loggers/org.apache.kafka.connect")
    while time.monotonic() < deadline and level.status_code != 200:
        time.sleep(0.2)
        level = worker.http.get("/admin/loggers/org.apache.kafka.connect")
    assert level.status_code == 200 and level.json()["level"] == "TRACE"


def test_bad_requests(worker: Worker) -> None:
    missing = worker.http.put("/admin/loggers/connect", json={})
    assert missing.status_code == 400
    assert missing.json() == {"error_code": 400,
                              "message": "Desired 'level' parameter was not specified in request."}
    invalid = worker.http.put("/admin/loggers/connect", json={"level": "LOUD"})
    assert invalid.status_code == 404
    assert invalid.json() == {"error_code": 404, "message": "invalid log level 'LOUD'."}


def test_a_java_client_name_reaches_the_librdkafka_producer_logger_at_run_time(worker: Worker, stack: Any) -> None:
    """``org.apache.kafka.clients`` set through the REST API also sets the librdkafka producers' logger, as the
    same name does at start-up: a task producer that cannot reach its broker then logs its DEBUG lines."""
    name = unique("rdlog-")
    create_connector(worker, name, {
        "connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
        "topic.prefix": unique("rdlog"), "collection.include.list": f"{unique('rdlogdb_')}.c",
        "producer.override.bootstrap.servers": f"127.0.0.1:{stack_mod.free_port()}"})
    reply = worker.http.put("/admin/loggers/org.apache.kafka.clients", json={"level": "DEBUG"})
    try:
        assert reply.status_code == 200, reply.text
        assert "connect.runtime.rdkafka_producer" in reply.json() and "kafka" in reply.json()
        level = worker.http.get("/admin/loggers/connect.runtime.rdkafka_producer").json()
        assert level["level"] == "DEBUG"
        deadline, found = time.monotonic() + 60, False
        while time.monotonic() < deadline and not found:
            text = worker.process.log_path.read_text(errors="replace")
            found = any(" DEBUG " in line and f"[{name}|task-0]" in line and "(connect.runtime.rdkafka_producer)"
                        in line for line in text.splitlines())
            time.sleep(0.5)
        assert found, "no DEBUG line of the task's librdkafka producer"
    finally:
        worker.http.put("/admin/loggers/org.apache.kafka.clients", json={"level": "WARN"})
        worker.http.delete(f"/connectors/{name}")
