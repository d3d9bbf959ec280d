"""Record every configuration key of the real Debezium MongoDB connector (the one pinned in ``pom.xml``) into
``tests/unit/mongodb/golden/debezium_mongodb_keys.json``: the keys the real Kafka Connect reports for it
(``GET /connector-plugins/<class>/config``: Connect's own and the connector's definition), plus every key the
connector reads without defining it (the ``Field`` constants of the configuration classes it uses: TLS stores,
signal and notification channels, topic naming, ...), found by reflection in the connector's jars
(``DumpConfigFields.java``, compiled with the ``javac`` next to ``java``).

The recorded list is what ``connectors/mongodb/debezium_keys.py`` is checked against: every key Debezium knows is
either honoured here or has a stated status (ignored with a warning, or refused when it changes a guarantee).

    python -m compat.debezium.config_keys [--out PATH]
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import stack
from compat.debezium import harness
from compat.java_connect import connect_version, libs_dir
from compat.rest_side_by_side import http
from stack import procs
from stack.worker import distributed_properties

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "unit" / "mongodb" / "golden" / "debezium_mongodb_keys.json"


def fetch_keys() -> list[dict[str, Any]]:
    """The connector's config keys (name, type, default, importance, group, ...) from a running Java Connect."""
    with tempfile.TemporaryDirectory(prefix="debezium-keys-") as tmp:
        state = Path(tmp)
        kafka_port, rest_port = stack.free_ports(2)
        endpoints = stack.start(state / "stack", kafka_port=kafka_port, mongo=False)
        connect = harness.DebeziumConnect(state / "connect", rest_port,
                                          distributed_properties(endpoints.kafka_bootstrap, rest_port,
                                                                 group_id="debezium-keys"))
        try:
            connect.start()
            reply = http(connect.address, "GET", f"/connector-plugins/{harness.CONNECTOR_CLASS}/config")
            if reply.status != 200 or not isinstance(reply.body, list):
                raise RuntimeError(f"GET .../config answered {reply.status}: {reply.text[:500]}")
            return sorted(reply.body, key=lambda key: str(key["name"]))
        finally:
            connect.stop()
            stack.stop(state / "stack")


FIELD_CLASSES = (
    "io.debezium.connector.mongodb.MongoDbConnectorConfig",
    "io.debezium.connector.mongodb.shared.SharedMongoDbConnectorConfig",
    "io.debezium.config.CommonConnectorConfig",
    "io.debezium.heartbeat.Heartbeat",
    "io.debezium.schema.AbstractTopicNamingStrategy",
    "io.debezium.schema.AbstractRegexTopicNamingStrategy",
    "io.debezium.pipeline.signal.channels.KafkaSignalChannel",
    "io.debezium.pipeline.signal.channels.FileSignalChannel",
    "io.debezium.pipeline.notification.channels.SinkNotificationChannel",
)
"""The classes whose ``Field`` constants configure the MongoDB connector (relational, sink and SMT configs left out)."""


def fetch_fields() -> list[dict[str, Any]]:
    """``name``, ``type``, ``default_value``, ``declared_in`` of every ``Field`` constant of :data:`FIELD_CLASSES`."""
    source = Path(__file__).with_name("DumpConfigFields.java")
    classpath = f"{harness.plugin_path()}/debezium-connector-mongodb/*:{libs_dir()}/*"
    javac = str(Path(procs.java()).resolve().with_name("javac"))
    with tempfile.TemporaryDirectory(prefix="debezium-fields-") as tmp:
        subprocess.run([javac, "-d", tmp, "-cp", classpath, str(source)], check=True, timeout=120)
        listing = subprocess.run([procs.java(), "-cp", f"{classpath}:{tmp}", "DumpConfigFields", *FIELD_CLASSES],
                                 check=True, timeout=120, capture_output=True, text=True).stdout
    fields: dict[str, dict[str, Any]] = {}
    for line in listing.splitlines():
        name, type_, default, declared_in = line.split("\t")
        fields.setdefault(name, {"name": name, "type": type_, "default_value": default or None,
                                 "declared_in": declared_in})
    return list(fields.values())


def record(out: Path) -> int:
    keys = {key["name"]: {k: key.get(k) for k in ("name", "type", "default_value", "importance", "group")}
            | {"reported": True} for key in fetch_keys()}
    for found in fetch_fields():
        keys.setdefault(found["name"], {**found, "reported": False})
        keys[found["name"]]["declared_in"] = found["declared_in"]
    document = {"recorded_with": {"debezium": harness.debezium_version(), "kafka_connect": connect_version()},
                "keys": sorted(keys.values(), key=lambda key: str(key["name"]))}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return len(keys)


def main(argv: list[str] | None = None) -> int:
    return harness.record_main(argv, __doc__, GOLDEN, record, "keys", minimum=100)


if __name__ == "__main__":
    raise SystemExit(main())
