"""The second golden scenario: an initial snapshot (``r`` records with ``source.snapshot`` ``first``/``true``/
``last``, every BSON type and key type in ``after``), then streaming with pre-images
(``change_streams_update_full_with_pre_image``: ``before`` filled on updates, replaces and deletes), and heartbeats
(the first heartbeat record, bytes and all, follows the records: how many follow depends on timing), and Debezium's
notifications (``notification.enabled.channels=sink,log``) on ``<prefix>-notifications``, last: the initial
snapshot's ``STARTED``, ``IN_PROGRESS`` and ``TABLE_SCAN_COMPLETED`` per collection, ``COMPLETED``, their random
ids and their timestamps replaced by placeholders (:func:`scrub_notification`).

    python -m compat.debezium.golden --scenario snapshot --release 3.6.3.Final

The same steps run the real Debezium (the recorder) and our connector (``test_debezium_golden.py``): load the
documents, create the connector, wait until the snapshot's records are in Kafka, apply the changes, read all.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from typing import Any

from bson import Int64

from compat.debezium import harness

DB = "golden_snap"
DOCS: list[dict[str, Any]] = [
    harness.TYPES_DOC,
    *({"_id": key, "kind": "key", "n": Int64(index)} for index, key in enumerate(harness.KEY_IDS)),
    {"_id": 100, "items": [1, 2, 3], "name": "hundred", "drop": "me"},
    {"_id": 101, "when": datetime.datetime(1969, 7, 20, 20, 17, 40, tzinfo=datetime.UTC), "empty": {}},
    {"_id": 102, "doomed": True},
]
"""The documents of the snapshot, in ``_id`` order of insertion (one collection per kind keeps the order simple)."""
CHANGES = 4  # records the changes below produce: update, replace, delete (+ its tombstone)
NOTIFICATIONS = 6  # STARTED, IN_PROGRESS and TABLE_SCAN_COMPLETED per collection, COMPLETED
RECORDS = len(DOCS) + CHANGES + 1 + NOTIFICATIONS  # and the first heartbeat
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TIMESTAMP = re.compile(r'(\\?"timestamp\\?": ?)\d+')


def load(client: Any) -> None:
    """Two collections with pre-images on: ``types`` (the BSON types document and two more) and ``keys``."""
    db = client[DB]
    for name in ("types", "keys"):
        db.create_collection(name, changeStreamPreAndPostImages={"enabled": True})
    for doc in DOCS:
        db["keys" if doc.get("kind") == "key" else "types"].insert_one(doc)


def config(mongo_uri: str, prefix: str) -> dict[str, str]:
    """The connector config of the scenario (Debezium's and ours alike)."""
    return {
        "connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": mongo_uri, "topic.prefix": prefix,
        "database.include.list": DB, "snapshot.mode": "initial", "tasks.max": "1",
        "capture.mode": "change_streams_update_full_with_pre_image", "heartbeat.interval.ms": "500",
        "notification.enabled.channels": "sink,log", "notification.sink.topic.name": notification_topic(prefix),
    }


def notification_topic(prefix: str) -> str:
    """The scenario's notification topic (outside ``<prefix>.*``, so that the change records are read apart)."""
    return f"{prefix}-notifications"


def scrub_notification(record: dict[str, Any]) -> dict[str, Any]:
    """A notification record with its run-specific values replaced, in the parsed JSON and in the bytes: the id
    (a random UUID) by ``<uuid>``, the timestamp by 0."""
    text = _TIMESTAMP.sub(r"\g<1>0", _UUID.sub("<uuid>", json.dumps(record, ensure_ascii=False)))
    scrubbed: dict[str, Any] = json.loads(text)
    return scrubbed


def change(client: Any) -> None:
    """After the snapshot: an update ($set and $unset), a replace and a delete, each with its pre-image (each on
    its own document: the update's looked-up ``after`` must not depend on how soon the connector reads it)."""
    types = client[DB]["types"]
    types.update_one({"_id": 100}, {"$set": {"name": "HUNDRED", "extra": 1.5e300}, "$unset": {"drop": ""}})
    types.replace_one({"_id": 101}, {"replaced": True})
    types.delete_one({"_id": 102})


def capture(client: Any, bootstrap: str, prefix: str, create: Callable[[dict[str, str]], None],
            mongo_uri: str) -> list[dict[str, Any]]:
    """Run the scenario against a connector made by ``create(config)``; the normalised records."""
    load(client)
    create(config(mongo_uri, prefix))
    harness.read_records(bootstrap, prefix, len(DOCS), quiet=3)
    change(client)
    records = harness.read_records(bootstrap, prefix, len(DOCS) + CHANGES, quiet=5)
    heartbeat = harness.first_record(bootstrap, f"__debezium-heartbeat.{prefix}")
    notes = harness.read_records(bootstrap, notification_topic(prefix), NOTIFICATIONS, quiet=2, exact=True)
    return [*records, heartbeat, *(scrub_notification(note) for note in notes)]
