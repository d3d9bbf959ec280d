"""The worker's log lines through the real CLI: log4j level names and Connect's ``[name|task-0]`` context in the
default format, start-up levels from the Confluent image's variables, the JSON format, the REST access log."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

import stack as stack_mod
from stack.worker import distributed_properties
from tests.integration.support import read_topic, unique

pytestmark = pytest.mark.integration

LINE = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) .* \(\S+\) \[.+\]$")


def _run_worker(stack: Any, mongo: Any, tmp_path: Path, props: Mapping[str, str], env: Mapping[str, str]) \
        -> tuple[str, str, dict[str, Any]]:
    """Start a worker through ``python -m connect``, run a MongoDB connector until its records are in Kafka, stop
    the worker; returns (stdout, connector name, ``GET /admin/loggers`` while it ran)."""
    port = stack_mod.free_port()
    group, name, prefix, db = unique("logs-"), unique("logs-"), unique("lg"), unique("logdb_")
    worker_props = distributed_properties(stack.kafka_bootstrap, port, group_id=group, extra=props)
    path = tmp_path / "worker.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in worker_props.items()))
    out = open(tmp_path / "stdout.log", "wb")  # noqa: SIM115 - kept open by the child
    err = open(tmp_path / "stderr.log", "wb")  # noqa: SIM115 - kept open by the child
    proc = subprocess.Popen([sys.executable, "-m", "connect", "distributed", str(path)],
                            env={**os.environ, **env}, stdout=out, stderr=err)
    try:
        http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "stdout.log").read_text()
            try:
                if http.get("/connectors").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        config = {"connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
                  "topic.prefix": prefix, "collection.include.list": f"{db}.c"}
        assert http.post("/connectors", json={"name": name, "config": config}).status_code == 201
        mongo[db].c.insert_many([{"_id": n} for n in range(3)])
        read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 3)
        http.get("/connectors/nope")  # a 404, for the access log
        # a task whose librdkafka producer cannot reach its broker: librdkafka's own lines, through its logger
        dead = {**config, "topic.prefix": unique("dead"), "producer.override.bootstrap.servers":
                f"127.0.0.1:{stack_mod.free_port()}"}
        assert http.post("/connectors", json={"name": unique("dead-"), "config": dead}).status_code == 201
        mongo[db].c.insert_one({"_id": "late"})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "rdkafka_producer" not in (tmp_path / "stdout.log").read_text():
            time.sleep(0.5)
        levels = http.get("/admin/loggers").json()
    finally:
        proc.terminate()
        proc.wait(30)
    return (tmp_path / "stdout.log").read_text(), name, levels


def test_default_format_levels_and_task_context(stack: Any, mongo: Any, tmp_path: Path) -> None:
    env = {"CONNECT_LOG4J_ROOT_LOGLEVEL": "INFO", "CONNECT_LOG4J_LOGGERS": "io.debezium.connector.mongodb=DEBUG"}
    text, name, levels = _run_worker(stack, mongo, tmp_path, {}, env)
    lines = [line for line in text.splitlines() if line.startswith("[")]
    assert lines, text
    bad = [line for line in lines if not LINE.match(line)]
    assert not bad, bad[:5]
    assert " WARNING " not in text and " CRITICAL " not in text
    rdkafka = [line for line in lines if "(connect.runtime.rdkafka_producer)" in line]
    assert rdkafka, "no librdkafka line"  # librdkafka's own lines, in the same format (checked above)
    assert all(re.search(r"\] \w+ \[dead-\w+\|task-0\] ", line) for line in rdkafka), rdkafka[:3]
    task_lines = [line for line in lines if line.endswith(f"[task-{name}-0]")]
    assert task_lines and all(f"[{name}|task-0]" in line for line in task_lines), task_lines[:5]
    assert levels["root"]["level"] == "INFO"
    assert levels["io.debezium.connector.mongodb"]["level"] == "DEBUG"
    assert levels["connectors.mongodb"]["level"] == "DEBUG"  # the Java name stands for our module too
    assert not any(" DEBUG " in line and "(connect.runtime" in line for line in lines)  # root stays INFO
    assert "GET /connectors/nope" not in text  # the access log is off by default


def test_json_format_and_access_log(stack: Any, mongo: Any, tmp_path: Path) -> None:
    text, name, _levels = _run_worker(stack, mongo, tmp_path, {"rest.access.log.enable": "true"},
                                  {"CONNECT_LOG_FORMAT": "json"})
    documents = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert documents
    for document in documents:
        assert set(document) == {"time", "level", "logger", "thread", "connector", "task", "message", "exception"}
        assert document["level"] in ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
    assert any(d["connector"] == name and d["task"] == 0 for d in documents)
    access = [d for d in documents if d["logger"] == "uvicorn.access"]
    assert any("GET /connectors/nope" in d["message"] and "404" in d["message"] for d in access), access[-3:]


def test_a_malformed_level_stops_the_worker_naming_the_variable(tmp_path: Path) -> None:
    path = tmp_path / "worker.properties"
    path.write_text("bootstrap.servers=127.0.0.1:1\ngroup.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\n"
                    "status.storage.topic=s\n")
    result = subprocess.run([sys.executable, "-m", "connect", "distributed", str(path)], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "CONNECT_LOG4J_LOGGERS": "io.debezium=LOUD"})
    assert result.returncode == 1
    assert "CONNECT_LOG4J_LOGGERS" in result.stdout + result.stderr
