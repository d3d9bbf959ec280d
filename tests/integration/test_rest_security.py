"""HTTPS on the REST listener (PEM keystore) and HTTP basic auth as Connect's BasicAuthSecurityRestExtension."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

import stack as stack_mod
from tests.integration.support import unique

pytestmark = pytest.mark.integration


def _self_signed(tmp_path: Path) -> Path:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
    keystore = tmp_path / "keystore.pem"
    keystore.write_text(cert.read_text() + key.read_text())
    return keystore


def test_https_and_basic_auth(stack: Any, tmp_path: Path) -> None:
    keystore = _self_signed(tmp_path)
    proc, port = _basic_auth_worker(stack, tmp_path, {
        "listeners.https.ssl.keystore.type": "PEM", "listeners.https.ssl.keystore.location": str(keystore)},
        scheme="https")
    try:
        client = httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=False, timeout=10,
                              auth=("alice", "wonderland"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "worker.log").read_text()
            try:
                if client.get("/connectors").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        assert client.get("/").json()["version"].startswith("4.")
        anonymous = httpx.get(f"https://127.0.0.1:{port}/connectors", verify=False, timeout=10)
        assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"].startswith("Basic")
        wrong = httpx.get(f"https://127.0.0.1:{port}/connectors", verify=False, timeout=10, auth=("alice", "nope"))
        assert wrong.status_code == 401
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/connectors", timeout=5)
    finally:
        proc.terminate()
        proc.wait(30)


def _basic_auth_worker(stack: Any, tmp_path: Path, extra: dict[str, str], scheme: str = "http"
                       ) -> tuple[subprocess.Popen[bytes], int]:
    """A worker process with Connect's basic-auth extension (user alice) on a ``scheme`` listener."""
    port = stack_mod.free_port()
    group = unique("secure-")
    (tmp_path / "users.properties").write_text("alice: wonderland,admin\n")
    jaas = tmp_path / "jaas.conf"
    jaas.write_text('KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule '
                    f'required\n  file="{tmp_path / "users.properties"}";\n}};\n')
    props = {
        "bootstrap.servers": stack.kafka_bootstrap, "group.id": group,
        "config.storage.topic": f"{group}-c", "offset.storage.topic": f"{group}-o",
        "status.storage.topic": f"{group}-s",
        "config.storage.replication.factor": "1", "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1", "offset.storage.partitions": "1", "status.storage.partitions": "1",
        "listeners": f"{scheme}://127.0.0.1:{port}",
        "rest.extension.classes": "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
        **extra,
    }
    (tmp_path / "worker.properties").write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    env = {**os.environ, "KAFKA_OPTS": f"-Djava.security.auth.login.config={jaas}"}
    log = open(tmp_path / "worker.log", "wb")  # noqa: SIM115 - kept open by the child
    proc = subprocess.Popen([sys.executable, "-m", "connect", "distributed", str(tmp_path / "worker.properties")],
                            env=env, stdout=log, stderr=subprocess.STDOUT)
    return proc, port


def test_metrics_listener_serves_metrics_without_the_rest_credentials(stack: Any, tmp_path: Path) -> None:
    metrics_port = stack_mod.free_port()
    proc, port = _basic_auth_worker(stack, tmp_path, {"metrics.listener": f"http://127.0.0.1:{metrics_port}"})
    try:
        rest = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10, auth=("alice", "wonderland"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "worker.log").read_text()
            try:
                if rest.get("/connectors").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        assert httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).status_code == 401
        assert "kafka_connect_worker_connector_count" in rest.get("/metrics").text
        scraped = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10)
        assert scraped.status_code == 200
        assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
        assert "\nkafka_connect_worker_connector_count " in scraped.text
        assert "\nprocess_resident_memory_bytes " in scraped.text
        assert httpx.get(f"http://127.0.0.1:{metrics_port}/connectors", timeout=10).status_code == 404
    finally:
        proc.terminate()
        assert proc.wait(30) == 0 or proc.returncode == -15
    with pytest.raises(httpx.TransportError):
        httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5)


def test_a_bad_metrics_listener_stops_the_worker_naming_the_key(stack: Any, tmp_path: Path) -> None:
    proc, _port = _basic_auth_worker(stack, tmp_path, {"metrics.listener": "https://0.0.0.0:9404"})
    assert proc.wait(60) == 1
    text = (tmp_path / "worker.log").read_text()
    assert "metrics.listener" in text and "http://host:port" in text, text
