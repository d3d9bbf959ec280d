"""Our Kafka Connect worker as a detached process of the local stack (``connect-distributed``), used by the
demo, the tests that kill it, and the benchmarks."""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from stack import procs
from stack.service import Service


def distributed_properties(kafka_bootstrap: str, rest_port: int, *, group_id: str = "connect-local",
                           extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """Worker properties for a single-broker local cluster."""
    props = {
        "bootstrap.servers": kafka_bootstrap,
        "group.id": group_id,
        "listeners": f"http://127.0.0.1:{rest_port}",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "config.storage.topic": f"{group_id}-configs",
        "offset.storage.topic": f"{group_id}-offsets",
        "status.storage.topic": f"{group_id}-status",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "offset.storage.partitions": "1",
        "status.storage.partitions": "1",
        "offset.flush.interval.ms": "1000",
    }
    props.update(extra or {})
    return props


class ConnectWorker(Service):
    """``python -m connect distributed <state_dir>/worker.properties`` with its REST API on ``port``."""

    name = "worker"
    start_timeout = 90.0

    def __init__(self, state_dir: Path, port: int, properties: Mapping[str, str] | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        """``env``: extra environment variables of the process (tests: ``CONNECT_TEST_HOLD_DIR``)."""
        super().__init__(state_dir, port)
        self.properties = dict(properties or {})
        self.extra_env = dict(env or {})

    def env(self) -> dict[str, str]:
        return dict(self.extra_env)

    @property
    def properties_path(self) -> Path:
        return self.state_dir / "worker.properties"

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def prepare(self) -> None:
        if self.properties:
            text = "".join(f"{k}={v}\n" for k, v in self.properties.items())
            procs.write_atomic(self.properties_path, text)

    def command(self) -> list[str]:
        return [sys.executable, "-m", "connect", "distributed", str(self.properties_path)]

    def is_ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.address}/connectors", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False
