"""Two workers with ``https`` REST listeners whose certificates a private CA signed: requests a follower must
forward to the leader, and the task configs a follower hands to the leader, go over https trusting the listener's
truststore (``listeners.https.ssl.truststore.location``), as Connect's RestClient does."""

from __future__ import annotations

import ssl
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import stack as stack_mod
from stack import StackEndpoints
from stack.pki import PASSWORD, Pki, make_pki
from stack.worker import ConnectWorker, distributed_properties
from tests.integration.support import unique

pytestmark = pytest.mark.integration


class HttpsWorker(ConnectWorker):
    def __init__(self, state_dir: Path, port: int, properties: dict[str, str], ca: Path) -> None:
        super().__init__(state_dir, port, properties)
        self.context = ssl.create_default_context(cafile=str(ca))

    @property
    def address(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def is_ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.address}/connectors", timeout=2, context=self.context) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    return make_pki(tmp_path / "pki")


@pytest.fixture
def https_workers(stack: StackEndpoints, pki: Pki, tmp_path: Path) -> Iterator[list[HttpsWorker]]:
    keystore = tmp_path / "rest-keystore.pem"
    keystore.write_text((pki.dir / "broker.pem").read_text() + (pki.dir / "broker.key").read_text())
    group = f"https-{uuid.uuid4().hex[:8]}"
    workers = []
    for i in range(2):
        port = stack_mod.free_port()
        # one worker's listener has a PEM keystore and truststore, the other's PKCS12 ones
        stores = {"listeners.https.ssl.keystore.type": "PEM", "listeners.https.ssl.keystore.location": str(keystore),
                  "listeners.https.ssl.truststore.type": "PEM",
                  "listeners.https.ssl.truststore.location": str(pki.ca_pem)} if i == 0 else {
            "listeners.https.ssl.keystore.type": "PKCS12", "listeners.https.ssl.keystore.location": str(pki.broker_p12),
            "listeners.https.ssl.keystore.password": PASSWORD, "listeners.https.ssl.truststore.type": "PKCS12",
            "listeners.https.ssl.truststore.location": str(pki.truststore_p12),
            "listeners.https.ssl.truststore.password": PASSWORD}
        props = distributed_properties(stack.kafka_bootstrap, port, group_id=group, extra={
            "listeners": f"https://127.0.0.1:{port}", "rest.advertised.listener": "https", **stores})
        workers.append(HttpsWorker(tmp_path / f"worker-{i}", port, props, pki.ca_pem))
    try:
        for worker in workers:
            worker.start()
        yield workers
    finally:
        for worker in workers:
            worker.stop(timeout=20)


def test_forwarding_between_https_workers(https_workers: list[HttpsWorker], stack: StackEndpoints) -> None:
    clients = [httpx.Client(base_url=w.address, verify=w.context, timeout=60) for w in https_workers]
    names = []
    for client in clients:  # one of the two is a follower: its create is forwarded to the leader
        name = unique("https-")
        reply = client.post("/connectors", json={"name": name, "config": {
            "connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
            "topic.prefix": unique("https"), "collection.include.list": f"{unique('httpsdb_')}.c"}})
        assert reply.status_code == 201, reply.text
        names.append(name)
    deadline = time.monotonic() + 90
    states: dict[str, Any] = {}
    while time.monotonic() < deadline:
        states = {n: clients[0].get(f"/connectors/{n}/status").json() for n in names}
        if all(s.get("tasks") and s["tasks"][0]["state"] == "RUNNING" for s in states.values()):
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"tasks never ran (task configs are forwarded to the leader over https): {states}")

    # the workers stop at once although idle https connections (these clients', the forwarding client's) are open:
    # a connection closed on shutdown waits for the peer's close_notify, which uvicorn waited its whole graceful
    # timeout for
    for worker in https_workers:
        worker.stop(timeout=20)
        log = worker.log_path.read_text()
        assert "Worker stopped" in log and "timeout graceful shutdown exceeded" not in log
    for client in clients:
        client.close()
