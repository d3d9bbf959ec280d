"""Record ``tests/unit/mongodb/data/debezium_incremental_offsets.jsonl``: source offsets the real Debezium MongoDB
connector commits in the middle of incremental snapshots, one per ``_id`` type it supports.

    python -m compat.debezium.incremental_offsets [--release 3.6.1.Final] [--out PATH]

Seven collections of 3,000 documents in the database ``incr`` with ``_id``s of type int, long, string, ObjectId,
double, Decimal128 (odd ``i``: ``i.5``, even: ``-iE-3``) and UUID (binary subtype 4,
``c5a0f0c1-e4b0-4a1b-8000-<i as 12 hex digits>``); one connector per collection (``c<kind>``, its own signal and
probe collections, ``incremental.snapshot.chunk.size`` 20), the int one with an additional condition. Once its
change stream is open, an ``execute-snapshot`` signal with the id ``sig-<kind>``; the first offset committed with
the snapshot under way and a chunk done (``incremental_snapshot_primary_key`` set, and changed since the first such
offset, which holds no key yet) is the sample, as the offsets topic holds it.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pymongo
from bson import Binary, Decimal128, Int64, ObjectId

from compat.debezium import harness

OUT = Path(__file__).resolve().parents[2] / "tests" / "unit" / "mongodb" / "data" / "debezium_incremental_offsets.jsonl"
NAME = "incr-offsets"  # the Connect group is debezium-<NAME>, its offsets topic debezium-<NAME>-offsets
DOCS = 3000
DB = "incr"
KINDS: dict[str, Any] = {
    "ints": lambda i: i, "longs": lambda i: Int64(10**12 + i), "strings": lambda i: f"k{i:06d}",
    "oids": lambda i: ObjectId(f"65a0f0c1e4b0a1b2{i:08x}"), "doubles": lambda i: i + 0.5,
    "decimals": lambda i: Decimal128(f"{i}.5" if i % 2 else f"-{i}E-3"),
    "uuids": lambda i: Binary(uuid.UUID(f"c5a0f0c1-e4b0-4a1b-8000-{i:012x}").bytes, 4),
}
CONDITION = {"ints": '{"v": {"$gte": 5}}'}


def _config(mongo_uri: str, kind: str) -> dict[str, str]:
    return {"connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": mongo_uri,
            "topic.prefix": f"p{kind}", "tasks.max": "1", "snapshot.mode": "no_data",
            "collection.include.list": f"{DB}.{kind},{DB}.signals_{kind},{DB}.probe_{kind}",
            "signal.data.collection": f"{DB}.signals_{kind}", "incremental.snapshot.chunk.size": "20"}


def _stream_open(client: Any, bootstrap: str, kind: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    for n in range(100_000):
        client[DB][f"probe_{kind}"].insert_one({"_id": n})
        try:
            harness.first_record(bootstrap, f"p{kind}.{DB}.probe_{kind}", timeout=1.0)
            return
        except TimeoutError:
            if time.monotonic() > deadline:
                raise


def _mid_snapshot_offsets(bootstrap: str, topic: str, wanted: set[str], timeout: float = 300
                          ) -> dict[str, dict[str, Any]]:
    """The first offset of each connector in ``wanted`` with the incremental snapshot under way past a chunk."""
    from kafka import KafkaConsumer

    found: dict[str, dict[str, Any]] = {}
    first: dict[str, str] = {}  # the primary key of each connector's first offset with the snapshot on (none yet)
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest")
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and set(found) != wanted:
            for batch in consumer.poll(timeout_ms=500).values():
                for record in batch:
                    if record.key is None or record.value is None:
                        continue
                    connector = json.loads(record.key)[0]
                    offset = json.loads(record.value)
                    key = offset.get("incremental_snapshot_primary_key")
                    if connector not in wanted or connector in found or key is None:
                        continue
                    if first.setdefault(connector, key) != key:  # past the first chunk: a last key is set
                        found[connector] = offset
        return found
    finally:
        consumer.close()


def record(out: Path, release: str | None = None) -> int:
    with harness.running(NAME, release) as (endpoints, connect):
        client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(endpoints.mongo_uri)
        for kind, make in KINDS.items():
            client[DB][kind].insert_many([{"_id": make(i), "v": i} for i in range(DOCS)])
            client[DB].create_collection(f"signals_{kind}")
        for kind in KINDS:
            harness.post_connector(connect.address, {"name": f"c{kind}", "config": _config(endpoints.mongo_uri, kind)})
        for kind in KINDS:
            _stream_open(client, endpoints.kafka_bootstrap, kind)
            data: dict[str, Any] = {"data-collections": [f"{DB}.{kind}"], "type": "incremental"}
            if kind in CONDITION:
                data["additional-conditions"] = [{"data-collection": f"{DB}.{kind}", "filter": CONDITION[kind]}]
            client[DB][f"signals_{kind}"].insert_one({"_id": f"sig-{kind}", "type": "execute-snapshot",
                                                      "data": json.dumps(data)})
        found = _mid_snapshot_offsets(endpoints.kafka_bootstrap, f"debezium-{NAME}-offsets",
                                      {f"c{kind}" for kind in KINDS})
        client.close()
    lines = [json.dumps({"connector": f"c{kind}", "offset": found[f"c{kind}"]}) + "\n"
             for kind in KINDS if f"c{kind}" in found]
    out.write_text(harness.recorded_with(release) + "\n" + "".join(lines))
    return len(lines)


def main(argv: list[str] | None = None) -> int:
    return harness.release_record_main(argv, __doc__, OUT, record, "offsets", minimum=len(KINDS))


if __name__ == "__main__":
    sys.exit(main())
