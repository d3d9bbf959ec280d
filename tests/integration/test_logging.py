"""The worker's log lines through the real CLI: log4j level names and Connect's ``[name|task-0]`` context in the
default format, start-up levels from the Confluent image's variables, the JSON format, the REST access log. The
worker runs with ``metrics.listener`` set (a second uvicorn server in the process, which must leave the logging as
the worker set it), and both servers are sent a request that is not HTTP, so uvicorn logs a warning of its own."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

import stack as stack_mod
from stack.worker import distributed_properties
from tests.integration.support import read_topic, unique

pytestmark = pytest.mark.integration

LINE = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) .* \(\S+\) \[.+\]$")


UVICORN_WARNING = "Invalid HTTP request received."


@dataclass
class Run:
    stdout: str
    stderr: str
    name: str  # the connector whose records reached Kafka
    levels: dict[str, Any]  # GET /admin/loggers while the worker ran


def _not_http(port: int) -> None:
    """Send bytes that are not an HTTP request to ``port``; uvicorn logs its warning before it answers 400."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"NOT HTTP\r\n\r\n")
        while sock.recv(4096):
            pass


def _run_worker(stack: Any, mongo: Any, tmp_path: Path, props: Mapping[str, str], env: Mapping[str, str]) -> Run:
    """Start a worker through ``python -m connect`` with ``metrics.listener`` set, scrape that listener, send
    both servers a request that is not HTTP, run a MongoDB connector until its records are in Kafka, stop the
    worker."""
    port, metrics_port = stack_mod.free_port(), stack_mod.free_port()
    group, name, prefix, db = unique("logs-"), unique("logs-"), unique("lg"), unique("logdb_")
    worker_props = distributed_properties(stack.kafka_bootstrap, port, group_id=group,
                                          extra={"metrics.listener": f"http://127.0.0.1:{metrics_port}", **props})
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
        assert httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).status_code == 200  # not logged
        _not_http(port)
        _not_http(metrics_port)
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
    return Run((tmp_path / "stdout.log").read_text(), (tmp_path / "stderr.log").read_text(), name, levels)


def _records(text: str, first: re.Pattern[str]) -> list[str]:
    """The lines of ``text`` that start a log record (match ``first``); fails on a line before the first record
    and on a line in another format (uvicorn's ``WARNING:  ...``, a bare line) that is not part of a traceback."""
    records: list[str] = []
    in_traceback = False
    for line in text.splitlines():
        if first.match(line):
            records.append(line)
            in_traceback = False
            continue
        in_traceback = in_traceback or line.startswith("Traceback (most recent call last):")
        assert records and in_traceback, f"a line not in the log format: {line!r}"
    return records


def test_default_format_levels_and_task_context(stack: Any, mongo: Any, tmp_path: Path) -> None:
    env = {"CONNECT_LOG4J_ROOT_LOGLEVEL": "INFO", "CONNECT_LOG4J_LOGGERS": "io.debezium.connector.mongodb=DEBUG"}
    run = _run_worker(stack, mongo, tmp_path, {}, env)
    text, name, levels = run.stdout, run.name, run.levels
    lines = _records(text, LINE)
    assert lines, text
    assert not run.stderr.strip(), run.stderr[:2000]  # every line is ours, on stdout
    assert " WARNING " not in text and " CRITICAL " not in text
    warned = [line for line in lines if UVICORN_WARNING in line]  # uvicorn's, from both servers, in our format
    assert len(warned) == 2 and all(" WARN " in line and "(uvicorn.error)" in line for line in warned), warned
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
    run = _run_worker(stack, mongo, tmp_path, {"rest.access.log.enable": "true"}, {"CONNECT_LOG_FORMAT": "json"})
    text, name = run.stdout, run.name
    documents = [json.loads(line) for line in text.splitlines()]  # every line a JSON object
    assert documents
    assert not run.stderr.strip(), run.stderr[:2000]
    for document in documents:
        assert set(document) == {"time", "level", "logger", "thread", "connector", "task", "message", "exception"}
        assert document["level"] in ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
    assert any(d["connector"] == name and d["task"] == 0 for d in documents)
    access = [d for d in documents if d["logger"] == "uvicorn.access"]
    assert any("GET /connectors/nope" in d["message"] and "404" in d["message"] for d in access), access[-3:]
    assert not any("/metrics" in d["message"] for d in access), access  # the scrapes stay out of the access log
    warned = [d for d in documents if d["message"] == UVICORN_WARNING]
    assert len(warned) == 2 and all(d["level"] == "WARN" and d["logger"] == "uvicorn.error" for d in warned), warned


def test_a_malformed_level_stops_the_worker_naming_the_variable(tmp_path: Path) -> None:
    path = tmp_path / "worker.properties"
    path.write_text("bootstrap.servers=127.0.0.1:1\ngroup.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\n"
                    "status.storage.topic=s\n")
    result = subprocess.run([sys.executable, "-m", "connect", "distributed", str(path)], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "CONNECT_LOG4J_LOGGERS": "io.debezium=LOUD"})
    assert result.returncode == 1
    assert "CONNECT_LOG4J_LOGGERS" in result.stdout + result.stderr
