"""The chart's rendered pod, run here as Kubernetes would run it: the ConfigMap and Secret written where the
StatefulSet mounts them, its container command started as a process with the container's environment, then the
hook Job's command against it. Proves that the rendered environment (CONNECT_* variables, no properties file)
starts a real worker, that ${file:...} secrets resolve from the mounted files, and that the hook creates the
connector."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pymongo
import pytest

import stack as stack_mod
from stack import procs
from tests.helm.conftest import Helm, find
from tests.integration.support import payload, read_topic, unique

pytestmark = pytest.mark.integration


def _mount(root: Path, path: str, files: dict[str, str]) -> None:
    directory = root / path.lstrip("/")
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (directory / name).write_text(content)


def _rooted(text: str, root: Path) -> str:
    """Container paths moved under ``root`` (the pod's filesystem here)."""
    return text.replace("/etc/pyconnect", f"{root}/etc/pyconnect").replace("/tmp/pyconnect", f"{root}/tmp/pyconnect")


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def test_rendered_pod_runs_a_worker_and_the_hook_creates_the_connector(
        helm: Helm, stack: Any, tmp_path: Path, mongo: pymongo.MongoClient[dict[str, Any]]) -> None:
    pod_root = tmp_path / "pod"
    port = stack_mod.free_port()
    group, prefix = unique("helm-"), unique("helm")
    database = f"{prefix}db"
    sets = {
        "worker.bootstrapServers": stack.kafka_bootstrap, "worker.groupId": group, "worker.restPort": str(port),
        "worker.configStorage.replicationFactor": "1", "worker.offsetStorage.replicationFactor": "1",
        "worker.statusStorage.replicationFactor": "1", "worker.offsetStorage.partitions": "1",
        "worker.statusStorage.partitions": "1", "worker.offsetFlushIntervalMs": "1000",
        "secrets.mongodb.stringData.mongodb\\.properties": f"connection.string={stack.mongo_uri}",
        "connectors.inventory.config.connector\\.class": "io.debezium.connector.mongodb.MongoDbConnector",
        "connectors.inventory.config.mongodb\\.connection\\.string":
            "${file:/etc/pyconnect/secrets/mongodb/mongodb.properties:connection.string}",
        "connectors.inventory.config.topic\\.prefix": prefix,
        "connectors.inventory.config.collection\\.include\\.list": f"{database}.orders",
    }
    manifests = helm.template(sets=sets)
    configmap = find(manifests, "ConfigMap", "cdc-pyconnect")
    secret = find(manifests, "Secret", "cdc-pyconnect-mongodb")
    connectors = find(manifests, "ConfigMap", "cdc-pyconnect-connectors")
    pod = find(manifests, "StatefulSet")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    _mount(pod_root, mounts["config"], configmap["data"])
    _mount(pod_root, mounts["secret-mongodb"], {k: base64.b64decode(v).decode() for k, v in secret["data"].items()})
    (pod_root / "tmp").mkdir(exist_ok=True)

    assert container["command"] == ["connect-distributed"] and container["args"] == []
    # the container's environment as the kubelet builds it: envFrom the ConfigMap, then env with $(VAR) expanded
    env = {k: _rooted(v, pod_root) for k, v in configmap["data"].items()}
    for item in container["env"]:
        value = item.get("value")
        if "valueFrom" in item:
            value = {"metadata.name": "cdc-pyconnect-0", "metadata.namespace": "data"}[
                item["valueFrom"]["fieldRef"]["fieldPath"]]
        env[item["name"]] = re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], str(value))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    log = pod_root / "worker.log"
    pid = procs.spawn([*container["command"], *container["args"]], log_path=log, cwd=pod_root, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        procs.wait_until(lambda: _healthy(url), timeout=90, what="the chart's worker", log_path=log,
                         alive=lambda: procs.group_alive(pid))
        job = find(manifests, "Job")["spec"]["template"]["spec"]["containers"][0]
        # the connector's ${file:...} path moves under the pod's root like the mounts do
        _mount(pod_root, job["volumeMounts"][0]["mountPath"],
               {name: _rooted(text, pod_root) for name, text in connectors["data"].items()})
        command = [sys.executable if c == "python" else c for c in job["command"]]
        command[command.index("--url") + 1] = url
        command[-1] = _rooted(command[-1], pod_root)
        hook = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert hook.returncode == 0, hook.stdout + hook.stderr
        assert "inventory: created" in hook.stdout
        again = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        assert "inventory: unchanged" in again.stdout, again.stdout + again.stderr

        status = _wait_running(url, "inventory")
        assert status["tasks"][0]["worker_id"] == f"cdc-pyconnect-0.cdc-pyconnect-workers.data.svc:{port}"
        mongo[database]["orders"].insert_one({"_id": 1, "item": "helm"})
        records = read_topic(stack.kafka_bootstrap, f"{prefix}.{database}.orders", 1)
        assert payload(records[0].value)["op"] in ("r", "c")
        stored = _get_json(f"{url}/connectors/inventory/config")  # the secret stays a placeholder when stored
        assert stored["mongodb.connection.string"] == _rooted(
            "${file:/etc/pyconnect/secrets/mongodb/mongodb.properties:connection.string}", pod_root)

        # Kubernetes sends SIGTERM, then SIGKILL after terminationGracePeriodSeconds: the worker (the container's
        # process) stops its running task and exits well within that.
        grace = pod["terminationGracePeriodSeconds"]
        started = time.monotonic()
        assert procs.stop_group(pid, timeout=grace), f"still running {grace} s after SIGTERM:\n{procs.tail(log)}"
        assert time.monotonic() - started < grace
    finally:
        procs.stop_group(pid, timeout=30)


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def _wait_running(url: str, name: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = _get_json(f"{url}/connectors/{name}/status")
        except OSError:
            last = None
        if last and last["connector"]["state"] == "RUNNING" and last["tasks"] \
                and all(t["state"] == "RUNNING" for t in last["tasks"]):
            return dict(last)
        if last and any(t["state"] == "FAILED" for t in last["tasks"]):
            raise AssertionError(f"task FAILED: {last['tasks']}")
        time.sleep(0.5)
    raise AssertionError(f"{name} never ran; last status {last}")
