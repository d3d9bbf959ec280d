"""A single-node KRaft Apache Kafka broker run straight from the Maven Central jars (no distribution tarball)."""

from __future__ import annotations

import base64
import contextlib
import subprocess
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Collection
from pathlib import Path
from typing import Any

from stack import maven, procs
from stack.procs import CACHE_DIR, StackError
from stack.service import Service

POM = Path(__file__).resolve().parent / "pom.xml"
FORMAT_TIMEOUT = 120.0
JVM_OPTS = ["-Xms128m", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]


def kafka_version() -> str:
    """The Kafka version pinned in stack/pom.xml."""
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    node = ET.parse(POM).getroot().find("m:properties/m:kafka.version", ns)
    if node is None or not (node.text or "").strip():
        raise StackError(f"{POM} has no <kafka.version> property")
    return (node.text or "").strip()


def libs_dir() -> Path:
    return CACHE_DIR / f"kafka-{kafka_version()}" / "libs"


def ensure_libs() -> Path:
    """Download the broker jars with Maven on first use; return the libs dir."""
    return maven.ensure_libs(POM, libs_dir(), _libs_complete, f"Kafka {kafka_version()} broker")


def _libs_complete(libs: Path) -> bool:
    version = kafka_version()
    return (libs / f"kafka_2.13-{version}.jar").is_file() and (libs / f"kafka-clients-{version}.jar").is_file()


def _cluster_id() -> str:
    """A random Kafka cluster id: 22 chars of URL-safe base64 of a UUID (never starting with '-', like Kafka)."""
    for _ in range(100):
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid
    raise StackError("could not generate a Kafka cluster id")


class KafkaBroker(Service):
    """Kafka 4.x in combined broker+controller KRaft mode, listening on 127.0.0.1 only."""

    name = "kafka"

    def __init__(
        self, state_dir: Path, port: int = 9092, controller_port: int | None = None, *, avoid: Collection[int] = (),
        advertised: str | None = None,
    ) -> None:
        """``controller_port`` None: the one recorded in the state dir if still usable, else a free port not in
        ``avoid`` (ports other services are about to bind). ``advertised``: the ``host:port`` clients are told to
        connect to (a proxy in front of the broker), by default the listener's own address."""
        super().__init__(state_dir, port)
        self.advertised = advertised or f"127.0.0.1:{port}"
        if controller_port is None:
            controller_port = self._pick_controller_port({port, *avoid})
        self.controller_port = controller_port

    def _pick_controller_port(self, taken: set[int]) -> int:
        recorded = procs.read_state(self.state_dir).get(self.name, {}).get("controller_port")
        if isinstance(recorded, int) and recorded not in taken and (self.is_running() or procs.port_is_free(recorded)):
            return recorded  # keep the quorum address stable across restarts of the same data
        return next(p for p in procs.free_ports(len(taken) + 1) if p not in taken)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def bootstrap(self) -> str:
        return self.address

    @property
    def config_path(self) -> Path:
        return self.state_dir / "kafka" / "server.properties"

    @property
    def data_dir(self) -> Path:
        return self.state_dir / "kafka" / "data"

    def state(self) -> dict[str, Any]:
        return {"port": self.port, "controller_port": self.controller_port}

    def server_properties(self) -> str:
        props = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://{self.advertised}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(self.data_dir),
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            "num.network.threads": "2",
            "num.io.threads": "2",
            "auto.create.topics.enable": "true",
            "num.partitions": "1",
        }
        props.update(self.extra_properties())
        return "".join(f"{k}={v}\n" for k, v in props.items())

    def extra_properties(self) -> dict[str, str]:
        """Settings a subclass adds or replaces (listeners of a secured broker)."""
        return {}

    def format_arguments(self) -> list[str]:
        """Extra ``kafka-storage format`` arguments (``--add-scram`` of a secured broker)."""
        return []

    def command(self) -> list[str]:
        return [procs.java(), *JVM_OPTS, "-cp", f"{libs_dir()}/*", "kafka.Kafka", str(self.config_path)]

    def prepare(self) -> None:
        libs = ensure_libs()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        procs.write_atomic(self.config_path, self.server_properties())
        if (self.data_dir / "meta.properties").is_file():
            return  # formatted before; keep the data
        cmd = [
            procs.java(), "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", f"{libs}/*", "kafka.tools.StorageTool",
            "format", "-t", _cluster_id(), "-c", str(self.config_path), *self.format_arguments(),
        ]  # fmt: skip
        try:
            result = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=FORMAT_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise StackError(f"Kafka storage format did not finish within {FORMAT_TIMEOUT:.0f} s") from exc
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("a", encoding="utf-8") as log:
            log.write(f"\n===== storage format: {' '.join(cmd)}\n{result.stdout}{result.stderr}")
        if result.returncode != 0:
            raise StackError(
                f"Kafka storage format failed (exit {result.returncode}); see {self.log_path}:\n"
                f"{(result.stdout + result.stderr)[-4000:]}"
            )

    def is_ready(self) -> bool:
        from kafka import KafkaAdminClient

        admin = None
        try:
            admin = KafkaAdminClient(
                bootstrap_servers=self.bootstrap,
                client_id="stack-probe",
                request_timeout_ms=5000,
                bootstrap_timeout_ms=2000,
                reconnect_backoff_max_ms=500,
            )
            cluster = admin.describe_cluster()
            return bool(cluster.get("brokers"))
        except Exception:  # noqa: BLE001 - any failure of the probe just means "not ready yet"
            return False
        finally:
            if admin is not None:
                with contextlib.suppress(Exception):
                    admin.close()
