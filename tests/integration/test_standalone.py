"""Standalone mode: connectors from properties and JSON files, offsets in ``offset.storage.file.filename``,
the same REST API, and a restart that resumes from the stored offsets."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import stack as stack_mod
from tests.integration.support import read_topic, unique

pytestmark = pytest.mark.integration


def _start(tmp_path: Path, port: int, files: list[Path]) -> subprocess.Popen[bytes]:
    log = open(tmp_path / "standalone.log", "ab")  # noqa: SIM115 - kept open by the child
    return subprocess.Popen([sys.executable, "-m", "connect", "standalone", str(tmp_path / "worker.properties"),
                             *map(str, files)], stdout=log, stderr=subprocess.STDOUT)


def _wait_ready(port: int, name: str, proc: subprocess.Popen[bytes], tmp_path: Path) -> httpx.Client:
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, (tmp_path / "standalone.log").read_text()
        try:
            status = client.get(f"/connectors/{name}/status")
            if status.status_code == 200 and status.json()["tasks"] and \
                    status.json()["tasks"][0]["state"] == "RUNNING":
                return client
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError((tmp_path / "standalone.log").read_text())


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def test_standalone_files_rest_and_resume(stack: Any, tmp_path: Path) -> None:
    port = stack_mod.free_port()
    offsets = tmp_path / "offsets.json"
    (tmp_path / "worker.properties").write_text(
        f"bootstrap.servers={stack.kafka_bootstrap}\nlisteners=http://127.0.0.1:{port}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"offset.storage.file.filename={offsets}\noffset.flush.interval.ms=500\n"
        "producer.client.library=kafka-python\n")  # the kafka-python producer path
    data, topic = tmp_path / "input.txt", unique("lines-")
    data.write_text("one\ntwo\n")
    props_file = tmp_path / "file-source.properties"
    props_file.write_text(f"name=file-source\nconnector.class=FileStreamSource\ntasks.max=1\nfile={data}\n"
                          f"topic={topic}\n")
    json_file = tmp_path / "json-source.json"
    other_topic = unique("json-lines-")
    json_file.write_text(json.dumps({"name": "json-source", "config": {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector", "file": str(data),
        "topic": other_topic}}))

    proc = _start(tmp_path, port, [props_file, json_file])
    try:
        client = _wait_ready(port, "file-source", proc, tmp_path)
        assert sorted(client.get("/connectors").json()) == ["file-source", "json-source"]
        assert [r.value for r in read_topic(stack.kafka_bootstrap, topic, 2)] == [b"one", b"two"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and b"file-source" not in (offsets.read_bytes() if offsets.exists()
                                                                     else b""):
            time.sleep(0.2)
    finally:
        _stop(proc)
    stored = dict(json.loads(offsets.read_text()))
    assert stored[json.dumps(["file-source", {"filename": str(data)}], separators=(",", ":"))] == \
        '{"position":8}'

    with data.open("a") as handle:
        handle.write("three\n")
    proc = _start(tmp_path, port, [props_file])
    try:
        _wait_ready(port, "file-source", proc, tmp_path)
        # a task that started over would send "one" and "two" again before "three"
        records = read_topic(stack.kafka_bootstrap, topic, until=lambda fresh: any(r.value == b"three" for r in fresh))
        assert [r.value for r in records] == [b"one", b"two", b"three"], "the restart resumes after the stored position"
    finally:
        _stop(proc)
