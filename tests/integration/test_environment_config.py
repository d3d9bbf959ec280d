"""A worker configured by environment variables only, through the real CLI (``python -m connect distributed``
without a properties file), as the Confluent and Debezium images are configured."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from kafka.admin import KafkaAdminClient

import stack as stack_mod
from tests.integration.support import unique

pytestmark = pytest.mark.integration


def _start(tmp_path: Path, env: Mapping[str, str], args: list[str] | None = None) -> subprocess.Popen[bytes]:
    log = open(tmp_path / "worker.log", "wb")  # noqa: SIM115 - kept open by the child
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CONNECT_")}
    return subprocess.Popen([sys.executable, "-m", "connect", "distributed", *(args or [])],
                            env={**clean, **env}, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> httpx.Client:
    http = httpx.Client(base_url=url, timeout=30)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            if http.get("/connectors").status_code == 200:
                return http
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    raise AssertionError(log.read_text())


def _topics(bootstrap: str) -> set[str]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return set(admin.list_topics())
    finally:
        admin.close()


@pytest.mark.parametrize("style", ["confluent", "debezium"])
def test_worker_runs_from_the_environment_alone(style: str, stack: Any, tmp_path: Path) -> None:
    port = stack_mod.free_port()
    group = unique(f"env-{style}-")
    common = {"CONNECT_LISTENERS": f"http://127.0.0.1:{port}", "CONNECT_REST_ADVERTISED_HOST_NAME": "from-env.local",
              "CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR": "1", "CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR": "1",
              "CONNECT_STATUS_STORAGE_REPLICATION_FACTOR": "1", "CONNECT_OFFSET_STORAGE_PARTITIONS": "1",
              "CONNECT_STATUS_STORAGE_PARTITIONS": "1"}
    names = {"bootstrap.servers": stack.kafka_bootstrap, "group.id": group, "config.storage.topic": f"{group}-cfg",
             "offset.storage.topic": f"{group}-off", "status.storage.topic": f"{group}-st"}
    if style == "confluent":
        env = {**common, **{"CONNECT_" + k.upper().replace(".", "_"): v for k, v in names.items()}}
    else:
        env = {**common, **{k.upper().replace(".", "_"): v for k, v in names.items()}}
    proc = _start(tmp_path, env)
    try:
        http = _wait_ready(proc, f"http://127.0.0.1:{port}", tmp_path / "worker.log")
        config = {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                  "file": str(tmp_path / "in.txt"), "topic": unique("envtopic")}
        (tmp_path / "in.txt").write_text("a\n")
        assert http.post("/connectors", json={"name": "env-file", "config": config}).status_code == 201
        deadline, status = time.monotonic() + 60, {}
        while time.monotonic() < deadline:
            status = http.get("/connectors/env-file/status").json()
            if status.get("tasks"):
                break
            time.sleep(0.3)
        assert status["tasks"][0]["worker_id"] == f"from-env.local:{port}"
        assert {f"{group}-cfg", f"{group}-off", f"{group}-st"} <= _topics(stack.kafka_bootstrap)
        text = (tmp_path / "worker.log").read_text()
        assert "Worker properties set by the environment: bootstrap.servers" in text
    finally:
        proc.terminate()
        proc.wait(30)


def test_the_environment_overrides_the_file(stack: Any, tmp_path: Path) -> None:
    port = stack_mod.free_port()
    group = unique("envfile-")
    (tmp_path / "worker.properties").write_text(
        f"bootstrap.servers=127.0.0.1:1\ngroup.id={group}\nconfig.storage.topic={group}-c\n"
        f"offset.storage.topic={group}-o\nstatus.storage.topic={group}-s\nlisteners=http://127.0.0.1:{port}\n"
        "config.storage.replication.factor=1\noffset.storage.replication.factor=1\n"
        "status.storage.replication.factor=1\noffset.storage.partitions=1\nstatus.storage.partitions=1\n")
    proc = _start(tmp_path, {"CONNECT_BOOTSTRAP_SERVERS": stack.kafka_bootstrap},
                  [str(tmp_path / "worker.properties")])
    try:
        http = _wait_ready(proc, f"http://127.0.0.1:{port}", tmp_path / "worker.log")
        assert http.get("/").json()["kafka_cluster_id"]
    finally:
        proc.terminate()
        proc.wait(30)


def test_nothing_configured_is_an_error(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CONNECT_")}
    clean = {k: v for k, v in clean.items() if k not in ("BOOTSTRAP_SERVERS", "GROUP_ID")}
    result = subprocess.run([sys.executable, "-m", "connect", "distributed"], capture_output=True, text=True,
                            timeout=60, env=clean, cwd=tmp_path)
    assert result.returncode == 1
    assert "CONNECT_BOOTSTRAP_SERVERS" in result.stdout + result.stderr
