"""The third golden scenario: an incremental snapshot asked for by a signal, in several chunks, over two collections,
and Debezium's notifications about it.

    python -m compat.debezium.golden --scenario incremental --release 3.6.3.Final

The connector starts without a snapshot (``snapshot.mode=no_data``: its ``SKIPPED`` notification); once its
change stream is open (a probe document is streamed), an ``execute-snapshot`` signal with a fixed id asks for both
collections, which are read two documents per chunk: ``r`` records with ``source.snapshot = incremental``, and the
``Incremental Snapshot`` notifications (``STARTED``, ``IN_PROGRESS`` per chunk, ``TABLE_SCAN_COMPLETED`` per
collection, ``COMPLETED``), whose id is the signal's.

Why the corpus is not the snapshot scenario's: Debezium's incremental snapshot of MongoDB reads a collection in
``_id`` ranges whose bounds are compared in one BSON type (a collection mixing numbers and ObjectIds reads only the
type of its largest ``_id``: the range ``$lte`` the maximum brackets by type), and it supports only double, int32,
int64, Decimal128, ObjectId, string and UUID ``_id``s (any other fails the chunk: "Unsupported type of document
id", and the collection is skipped with a WARN). Each collection here has one ``_id`` type; the documents carry
the BSON types in their fields. The signal and probe collections are captured (Debezium reads its watermarks and
signals from the change stream), but their records depend on timing and are left out.

Within a chunk Debezium emits in the order of a ``ConcurrentHashMap`` keyed by the key ``Struct``s, whose hash mixes
in the identity hash of Connect's ``Schema.Type``: that order changes from one JVM to the next, so the records of
each chunk are kept in the order of their bytes (:func:`chunk_order`; every byte of each record as written) and the
test compares each chunk's records without their order.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from bson import Int64, ObjectId

from compat.debezium import harness, snapshot_scenario

DB = "golden_inc"
SIGNAL_ID = "golden-incremental-1"
CHUNK = 2
INTS: list[dict[str, Any]] = [
    {"_id": 1, "name": "one", "n": Int64(2**40)}, {"_id": 2, "double": 1.5e300, "nan": float("nan")},
    {"_id": 3, "nested": {"a": [1, {"b": None}]}}, {"_id": 4, "empty": {}, "arr": []},
    {"_id": 5, "unicode": "Grüße, 😀"},
]
OIDS: list[dict[str, Any]] = [
    {**{k: v for k, v in harness.TYPES_DOC.items() if k != "_id"}, "_id": ObjectId("65a0f0c1e4b0a1b2c3d4e5f6")},
    {"_id": ObjectId("65a0f0c1e4b0a1b2c3d4e5f7"), "v": 1},
    {"_id": ObjectId("65a0f0c1e4b0a1b2c3d4e5f8"), "v": 2},
]
COLLECTIONS = ("ints", "oids")
READS = len(INTS) + len(OIDS)
NOTIFICATIONS = 1 + 1 + 3 + 2 + 2 + 1
"""SKIPPED (the initial snapshot), STARTED, IN_PROGRESS per chunk (3 of ints, 2 of oids), TABLE_SCAN_COMPLETED per
collection, COMPLETED."""
RECORDS = READS + NOTIFICATIONS


def load(client: Any) -> None:
    db = client[DB]
    db["ints"].insert_many(INTS)
    db["oids"].insert_many(OIDS)
    for name in ("signals", "probe"):
        db.create_collection(name)


def config(mongo_uri: str, prefix: str) -> dict[str, str]:
    """The connector config of the scenario (Debezium's and ours alike)."""
    return {
        "connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": mongo_uri, "topic.prefix": prefix,
        "collection.include.list": ",".join(f"{DB}.{c}" for c in (*COLLECTIONS, "signals", "probe")),
        "snapshot.mode": "no_data", "tasks.max": "1", "signal.data.collection": f"{DB}.signals",
        "incremental.snapshot.chunk.size": str(CHUNK),
        "notification.enabled.channels": "sink", "notification.sink.topic.name": notification_topic(prefix),
    }


def notification_topic(prefix: str) -> str:
    return snapshot_scenario.notification_topic(prefix)


def _stream_open(client: Any, bootstrap: str, prefix: str, timeout: float = 120) -> None:
    """Insert probe documents until one is streamed: the change stream is open, so the signal will be seen."""
    deadline = time.monotonic() + timeout
    for n in range(100_000):
        client[DB]["probe"].insert_one({"_id": n})
        try:
            harness.first_record(bootstrap, f"{prefix}.{DB}.probe", timeout=1.0)
            return
        except TimeoutError:
            if time.monotonic() > deadline:
                raise
    raise AssertionError("unreachable")


def capture(client: Any, bootstrap: str, prefix: str, create: Callable[[dict[str, str]], None],
            mongo_uri: str) -> list[dict[str, Any]]:
    """Run the scenario against a connector made by ``create(config)``: the snapshot's records of both collections
    (topic then offset order), then the notifications (ids and times replaced)."""
    load(client)
    create(config(mongo_uri, prefix))
    _stream_open(client, bootstrap, prefix)
    data = {"data-collections": [f"{DB}.{c}" for c in COLLECTIONS], "type": "incremental"}
    client[DB]["signals"].insert_one({"_id": SIGNAL_ID, "type": "execute-snapshot", "data": json.dumps(data)})
    topics = {f"{prefix}.{DB}.{c}" for c in COLLECTIONS}
    deadline = time.monotonic() + 180
    reads: list[dict[str, Any]] = []
    while time.monotonic() < deadline and len(reads) < READS:
        reads = [r for r in harness.read_records(bootstrap, prefix, 1, quiet=2) if r["topic"] in topics]
    notes = harness.read_records(bootstrap, notification_topic(prefix), NOTIFICATIONS, quiet=3, exact=True)
    return [*chunk_order(reads), *(snapshot_scenario.scrub_notification(note) for note in notes)]


def chunk_order(reads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reads (in topic then offset order) with each chunk's records (:data:`CHUNK` in a row per topic) in the
    order of their bytes: Debezium's order within a chunk changes from one JVM to the next (above), so the recorder
    writes them in this order and re-recording reproduces the golden."""
    ordered: list[dict[str, Any]] = []
    at = 0
    while at < len(reads):
        end = at
        while end < len(reads) and end - at < CHUNK and reads[end]["topic"] == reads[at]["topic"]:
            end += 1
        ordered += sorted(reads[at:end], key=lambda r: json.dumps(r, sort_keys=True))
        at = end
    return ordered
