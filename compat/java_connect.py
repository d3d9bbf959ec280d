"""The reference Kafka Connect (Java, distributed mode) from the Maven Central jars pinned in ``compat/pom.xml``,
fetched once into the git-ignored ``.cache/connect-<version>/libs``: the other side of the REST side-by-side
check, of the Java hand-over tests and of the Debezium recorders."""

from __future__ import annotations

import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

from stack import maven, procs
from stack.procs import CACHE_DIR, StackError
from stack.service import Service

POM = Path(__file__).resolve().parent / "pom.xml"
JVM_OPTS = ["-Xms128m", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true"]


def _pom_property(name: str) -> str:
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    node = ET.parse(POM).getroot().find(f"m:properties/m:{name}", ns)
    if node is None or not (node.text or "").strip():
        raise StackError(f"{POM} has no <{name}> property")
    return (node.text or "").strip()


def connect_version() -> str:
    """The Kafka Connect version pinned in compat/pom.xml."""
    return _pom_property("kafka.version")


def libs_dir() -> Path:
    return CACHE_DIR / f"connect-{connect_version()}" / "libs"


def _libs_complete(libs: Path) -> bool:
    version = connect_version()
    wanted = [f"connect-runtime-{version}.jar", f"connect-file-{version}.jar", f"kafka-clients-{version}.jar",
              f"log4j-core-{_pom_property('log4j.version')}.jar"]
    return all((libs / name).is_file() for name in wanted)


def ensure_libs() -> Path:
    """Fetch the Kafka Connect jars with Maven on first use; return the dir."""
    return maven.ensure_libs(POM, libs_dir(), _libs_complete, f"Kafka Connect {connect_version()}")


_LOG4J2_PROPERTIES = """\
status = warn
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.reflections.name = org.reflections
logger.reflections.level = ERROR
"""


class JavaConnect(Service):
    """``ConnectDistributed <state_dir>/worker.properties`` of Apache Kafka, REST API on ``port``."""

    name = "java-connect"
    start_timeout = 180.0

    def __init__(self, state_dir: Path, port: int, properties: dict[str, str]) -> None:
        super().__init__(state_dir, port)
        self.properties = dict(properties)

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def properties_path(self) -> Path:
        return self.state_dir / "worker.properties"

    @property
    def log4j_path(self) -> Path:
        return self.state_dir / "log4j2.properties"

    def prepare(self) -> None:
        ensure_libs()
        procs.write_atomic(self.properties_path, "".join(f"{k}={v}\n" for k, v in self.properties.items()))
        procs.write_atomic(self.log4j_path, _LOG4J2_PROPERTIES)

    def command(self) -> list[str]:
        return [procs.java(), *JVM_OPTS, f"-Dlog4j2.configurationFile={self.log4j_path}", "-cp", f"{libs_dir()}/*",
                "org.apache.kafka.connect.cli.ConnectDistributed", str(self.properties_path)]

    def is_ready(self) -> bool:
        # The REST server answers before the herder has joined its group; /health says 200 only after that.
        try:
            with urllib.request.urlopen(f"{self.address}/health", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False
