"""Record what the real Debezium MongoDB connector names things: topics and key/envelope schema names for
collections whose names are not valid Avro names or Kafka topic names, under each ``topic.naming.strategy`` and
``schema.name.adjustment.mode``, plus the heartbeat and transaction topics with ``topic.delimiter``.

    python -m compat.debezium.naming [--out PATH]

Runs the pinned Debezium on the real Kafka Connect against SecantusDB and a real Kafka broker (temporary
directory, free ports, everything stopped afterwards; about 1-2 minutes). The test
``tests/integration/mongodb/test_naming.py`` runs the same connectors on our worker and compares.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pymongo

from compat.debezium import harness

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "integration" / "mongodb" / "golden" / "naming.json"
DB = "name_db"
COLLECTIONS = ("my-coll", "2024data", "café", "under_score", "emoji😀", "plain")
STRATEGY = "io.debezium.schema."

CONNECTORS: dict[str, dict[str, str]] = {
    "n_none": {},
    "n-avro": {"schema.name.adjustment.mode": "avro"},
    "n_uni": {"schema.name.adjustment.mode": "avro_unicode"},
    "1num": {"schema.name.adjustment.mode": "avro"},
    "1uni": {"schema.name.adjustment.mode": "avro_unicode"},
    "n_ustrat": {"topic.naming.strategy": STRATEGY + "DefaultUnicodeTopicNamingStrategy"},
    "n_schema": {"topic.naming.strategy": STRATEGY + "SchemaTopicNamingStrategy",
                 "schema.name.adjustment.mode": "avro"},
    "n_regex": {"topic.naming.strategy": STRATEGY + "DefaultRegexTopicNamingStrategy",
                "topic.regex": r"n_regex\.name_db\.(.*)", "topic.replacement": "rx.$1",
                "schema.name.adjustment.mode": "avro"},
    "n_delim": {"topic.delimiter": "-", "topic.transaction": "tx", "provide.transaction.metadata": "true",
                "heartbeat.interval.ms": "500", "topic.heartbeat.prefix": "hb"},
}
"""Connector (= topic prefix) -> the naming keys it gets on top of :func:`base_config`."""


def base_config(mongo_uri: str, prefix: str, start_op_time: int) -> dict[str, str]:
    """What every naming connector gets: capture ``name_db`` from ``start_op_time``, no snapshot."""
    return {"connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": mongo_uri,
            "topic.prefix": prefix, "database.include.list": DB, "snapshot.mode": "no_data",
            "capture.start.op.time": str(start_op_time), "tasks.max": "1"}


def run_operations(client: Any) -> None:
    """One insert per collection, then a transaction over two of them."""
    db = client[DB]
    for number, name in enumerate(COLLECTIONS):
        db[name].insert_one({"_id": number, "coll": name})
    with client.start_session() as session, session.start_transaction():
        db["plain"].insert_one({"_id": 100}, session=session)
        db["my-coll"].insert_one({"_id": 101}, session=session)


def summarise(records: list[Any]) -> list[dict[str, Any]]:
    """The distinct (topic, key schema name, value schema name) of ``records``, sorted."""
    seen = set()
    for record in records:
        key = json.loads(record.key) if record.key is not None else None
        value = json.loads(record.value) if record.value is not None else None
        seen.add((record.topic, (key or {}).get("schema", {}).get("name"),
                  (value or {}).get("schema", {}).get("name")))
    return [{"topic": t, "key_schema": k, "value_schema": v} for t, k, v in sorted(seen, key=str)]


TOPICS = r"^(n_|n-|1num|1uni|rx\.|hb-).*"
"""The topics the naming connectors write to."""


def read_all(bootstrap: str, expected_topics: int, timeout: float = 120.0, quiet: float = 8.0) -> list[Any]:
    """Every record of the naming topics (:data:`TOPICS`), once ``expected_topics`` topics have records and nothing new
    arrived for ``quiet`` seconds (heartbeats excepted)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest", metadata_max_age_ms=1000)
    try:
        consumer.subscribe(pattern=TOPICS)
        records: list[Any] = []
        deadline = time.monotonic() + timeout
        last_new = time.monotonic()
        while time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                fresh = [r for r in batch if not r.topic.startswith("hb-") or not any(x.topic == r.topic
                                                                                         for x in records)]
                records.extend(fresh)
                if any(not r.topic.startswith("hb-") for r in fresh):
                    last_new = time.monotonic()
            if len({r.topic for r in records}) >= expected_topics and time.monotonic() - last_new > quiet:
                break
        return records
    finally:
        consumer.close()


EXPECTED_TOPICS = len(COLLECTIONS) * (len(CONNECTORS) - 1) + 1 + 2
"""A topic per collection for every connector but n_schema (one topic), plus n_delim's heartbeat and transaction
topics: ``read_all`` waits for this many."""


def record(out: Path) -> int:
    """Run every naming connector on Debezium and write the summary to ``out``; returns its length."""
    with harness.running("naming") as (endpoints, connect):
        client: pymongo.MongoClient[dict[str, object]] = pymongo.MongoClient(endpoints.mongo_uri)
        start = client.admin.command("ping")["operationTime"]
        run_operations(client)
        client.close()
        for prefix, extra in CONNECTORS.items():
            config = {**base_config(endpoints.mongo_uri, prefix, harness.op_time(start)), **extra}
            harness.post_connector(connect.address, {"name": prefix, "config": config})
        records = read_all(endpoints.kafka_bootstrap, EXPECTED_TOPICS)
    summary = summarise(records)
    out.parent.mkdir(parents=True, exist_ok=True)
    golden = {**json.loads(harness.recorded_with()), "names": summary}
    out.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n")
    return len(summary)


def main(argv: list[str] | None = None) -> int:
    return harness.record_main(argv, __doc__, GOLDEN, record, "names")


if __name__ == "__main__":
    sys.exit(main())

