"""The keys golden scenario: documents whose ``_id`` is a double edge value (or a document of them), their record
keys (the key ``id``: the ``_id`` as the MongoDB Java driver's compact RELAXED Extended JSON) and values written by
Kafka Connect's JsonConverter with and without schemas, from streaming (insert, update, delete and its tombstone:
the key from the change event's ``documentKey``) and from an initial snapshot (the key from the document read).

    python -m compat.debezium.golden --scenario keys --release 3.6.3.Final

Four connectors on one worker, each with its own ``topic.prefix`` (:data:`CONNECTORS`): streaming from the cluster
time before the operations, and an initial snapshot of the final state, each with JsonConverter keys and values
``schemas.enable`` true and false. The snapshot reads the documents in natural order (Debezium) or ``_id`` order
(ours): the test compares those records as a set.

SecantusDB's ``_id`` index takes some doubles for one another (1e-300, 5e-324, 2.2250738585072014e-308,
2.225073858507201e-308 and 1.7976931348623157e308 are duplicate keys of 1e300, of 0.0 or of each other; real
MongoDB tells them apart), so each of those has a collection of its own; -0.0 too (equal to 0.0 in every MongoDB).
The doubles are those the JDK 17 that runs Debezium here spells as JDK 19+ does (``Double.toString``; the digits
ours follows, see ``tests/unit/mongodb/test_driver_doubles.py``): not 1e23, not 17-digit values near 1e17.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from compat.debezium import harness

DB = "golden_keys"
SHARED: list[Any] = [
    1e300, -1.5e300, 1e21, 1e22, 1e16, 2.0 ** 53, 2.0 ** 63, 123456789012.0, 1e7, 9999999.0, 1.0, -1.0, 0.0, 12.5,
    0.1, 1e-3, 9.99e-4, 1e-7, 3e-5, float("nan"), float("inf"), float("-inf"),
    {"d": 1e300, "z": -0.0, "n": float("nan"), "i": float("-inf"), "s": 5e-324, "w": 1e21, "t": 0.1},
    {"nested": {"e": 1e-300, "m": 1.7976931348623157e308}, "whole": 2.0},
]
"""The ``_id``s of the collection ``shared``, in insertion order."""
SINGLE: dict[str, Any] = {
    "tiny": 1e-300, "min_subnormal": 5e-324, "min_normal": 2.2250738585072014e-308,
    "max_subnormal": 2.225073858507201e-308, "max": 1.7976931348623157e308, "neg_zero": -0.0,
}
"""Collections of one document each, and its ``_id`` (values SecantusDB's ``_id`` index confuses)."""
UPDATED = 1e300
DELETED = float("nan")
SCHEMALESS = {"key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
              "value.converter": "org.apache.kafka.connect.json.JsonConverter",
              "value.converter.schemas.enable": "false"}
CONNECTORS: dict[str, dict[str, str]] = {
    "": {"snapshot.mode": "no_data"},
    "-nos": {"snapshot.mode": "no_data", **SCHEMALESS},
    "-snap": {"snapshot.mode": "initial"},
    "-snapnos": {"snapshot.mode": "initial", **SCHEMALESS},
}
"""``topic.prefix`` suffix and the keys besides :func:`config`'s: streaming (``no_data`` from before the operations)
and an initial snapshot, JsonConverter with and without schemas."""
DOCUMENTS = len(SHARED) + len(SINGLE)
STREAMED = DOCUMENTS + 3  # the inserts, an update, a delete and its tombstone
SNAPSHOT = DOCUMENTS - 1  # the final state
RECORDS = 2 * STREAMED + 2 * SNAPSHOT


def snapshot_connector(suffix: str) -> bool:
    return CONNECTORS[suffix]["snapshot.mode"] == "initial"


def run_operations(client: Any) -> None:
    """Insert every document, update the one of :data:`UPDATED`, delete the one of :data:`DELETED`."""
    db = client[DB]
    shared = db["shared"]
    for index, key in enumerate(SHARED):
        shared.insert_one({"_id": key, "n": index})
    for name, key in SINGLE.items():
        db[name].insert_one({"_id": key, "n": name})
    shared.update_one({"_id": UPDATED}, {"$set": {"updated": True}})
    assert shared.delete_one({"_id": DELETED}).deleted_count == 1


def config(mongo_uri: str, prefix: str, start_op_time: int, suffix: str) -> dict[str, str]:
    """The config of the connector ``<prefix><suffix>`` (:data:`CONNECTORS`)."""
    started = {} if snapshot_connector(suffix) else {"capture.start.op.time": str(start_op_time)}
    return {
        "connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": mongo_uri,
        "topic.prefix": prefix + suffix, "database.include.list": DB, "tasks.max": "1", **started,
        **CONNECTORS[suffix],
    }


def capture(client: Any, bootstrap: str, prefix: str, create: Callable[[dict[str, str]], None],
            mongo_uri: str) -> list[dict[str, Any]]:
    """Run the operations, then the connectors made by ``create(config)``; their records, one connector after the
    other (each in topic then offset order)."""
    start = client.admin.command("ping")["operationTime"]
    run_operations(client)
    for suffix in CONNECTORS:
        create(config(mongo_uri, prefix, harness.op_time(start), suffix))
    records: list[dict[str, Any]] = []
    for suffix in CONNECTORS:
        expected = SNAPSHOT if snapshot_connector(suffix) else STREAMED
        records += harness.read_records(bootstrap, prefix + suffix, expected, quiet=3)
    return records
