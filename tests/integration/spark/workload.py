"""A reproducible mix of MongoDB writes (documents whose fields vary, nested, every common BSON type) and the
Kafka helpers the Spark integration tests share."""

from __future__ import annotations

import datetime as dt
import functools
import random
import re
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bson import Binary, Decimal128, Int64, ObjectId, Regex, Timestamp
from kafka import KafkaProducer
from pyspark.sql import functions as F

from spark_jobs.store import OutputStore
from tests.integration.support import Worker, create_connector, end_offsets, unique
from tests.unit.spark.support import table_documents


def _field_values(rng: random.Random) -> dict[str, Any]:
    """One candidate value per field name; each name keeps one BSON type across documents."""
    return {
        "name": rng.choice(["Anne", "Bob", "Zoë", "李", "O'Neil \"q\"", "tab\there"]) + str(rng.randint(0, 999)),
        "n": rng.randint(-1000, 1000),
        "big": Int64(rng.randint(2**33, 2**50)),
        "price": Decimal128(f"{rng.randint(0, 10**6)}.{rng.randint(0, 99):02d}"),
        "ratio": rng.random() * rng.choice([1.0, 1e-5, 1e9]),
        "when": dt.datetime(2020, 1, 1) + dt.timedelta(milliseconds=rng.randint(0, 10**11)),
        "flag": rng.random() < 0.5,
        "tags": [rng.choice("abcdef") * rng.randint(1, 3) for _ in range(rng.randint(0, 4))],
        "address": {"city": rng.choice(["Paris", "Oslo"]), "zip": str(rng.randint(10000, 99999)),
                    "geo": {"lat": rng.uniform(-90, 90), "lon": rng.uniform(-180, 180)}},
        "items": [{"sku": f"k{rng.randint(0, 50)}", "qty": rng.randint(1, 9)} for _ in range(rng.randint(1, 3))],
        "blob": Binary(rng.randbytes(rng.randint(0, 12))),
        "ref": ObjectId(),
        "pattern": Regex(rng.choice(["^a.*", "x+y"]), rng.choice([0, re.IGNORECASE])),
        "stamp": Timestamp(rng.randint(1, 2**31), rng.randint(0, 100)),
        "note": None,
    }


def document(rng: random.Random, _id: Any = None) -> dict[str, Any]:
    values = _field_values(rng)
    chosen = rng.sample(sorted(values), rng.randint(2, len(values)))
    doc: dict[str, Any] = {"_id": _id if _id is not None else ObjectId()}
    doc.update({name: values[name] for name in chosen})
    doc["v"] = 0
    return doc


def mixed_writes(collection: Any, count: int, seed: int, live: list[Any]) -> int:
    """``count`` inserts, updates, replaces and deletes on ``collection``; ``live`` holds the ids that exist and
    is updated. Returns the number of Kafka records the connector writes for them (a delete adds a tombstone)."""
    rng = random.Random(seed)
    records = 0
    for _ in range(count):
        roll = rng.random()
        if roll < 0.35 or len(live) < 5:
            doc = document(rng)
            collection.insert_one(doc)
            live.append(doc["_id"])
            records += 1
        elif roll < 0.70:
            _id = rng.choice(live)
            values = _field_values(rng)
            update: dict[str, Any] = {"$inc": {"v": 1}}
            sets = {name: values[name] for name in rng.sample(sorted(values), rng.randint(0, 3))}
            if sets:
                update["$set"] = sets
            unset = rng.choice(sorted(set(values) - set(sets))) if rng.random() < 0.3 else None
            if unset:
                update["$unset"] = {unset: ""}
            if rng.random() < 0.2 and "address" not in sets and unset != "address":
                update.setdefault("$set", {})["address.city"] = "Nested"
            collection.update_one({"_id": _id}, update)
            records += 1
        elif roll < 0.85:
            _id = rng.choice(live)
            collection.replace_one({"_id": _id}, {k: v for k, v in document(rng, _id).items() if k != "_id"})
            records += 1
        else:
            _id = live.pop(rng.randrange(len(live)))
            collection.delete_one({"_id": _id})
            records += 2
    return records


def wait_records(bootstrap: str, topic: str, count: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        seen = end_offsets(bootstrap, [topic])[topic]
        if seen >= count:
            assert seen == count, f"{topic}: {seen} records, expected {count}"
            return
        time.sleep(0.5)
    raise AssertionError(f"{topic}: {seen} records after {timeout:.0f} s, expected {count}")


def produce(bootstrap: str, topic: str, records: Iterable[tuple[bytes | None, bytes | None]]) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        for key, value in records:
            producer.send(topic, key=key, value=value)
        producer.flush(timeout=60)
    finally:
        producer.close(timeout=10)


def items_connector(worker: Worker, mongo_uri: str, db: str, prefix: str,
                    extra: Mapping[str, str] | None = None) -> str:
    """A running MongoDB connector capturing ``<db>.items`` under ``prefix``; returns the items topic."""
    name = unique("spark-")
    create_connector(worker, name, {
        "connector.class": "io.debezium.connector.mongodb.MongoDbConnector", "mongodb.connection.string": mongo_uri,
        "topic.prefix": prefix, "collection.include.list": f"{db}.items", **(extra or {})})
    return f"{prefix}.{db}.items"


def table_frame(spark: Any, output: Path | str, topic: str, table_format: str = "delta") -> Any:
    """The committed latest-state table of ``topic`` under ``output``, as Spark reads it."""
    if table_format == "parquet":
        return spark.read.parquet(str(OutputStore(Path(output)).table(topic)))
    return spark.read.format("delta").load(f"{output}/tables/{topic}")


def stored_table(spark: Any, output: Path | str, topic: str, table_format: str = "delta") -> dict[Any, dict[str, Any]]:
    """The committed materialized table of ``topic`` under ``output``, as documents by key."""
    return table_documents(table_frame(spark, output, topic, table_format))


def change_log(spark: Any, output: Path | str, topics: Iterable[str], table_format: str = "delta") -> Any:
    """The change log of ``topics`` under ``output`` as one DataFrame."""
    if table_format == "parquet":
        return spark.read.parquet(str(Path(output) / "changes")).where(F.col("topic").isin(*topics))
    frames = [spark.read.format("delta").load(f"{output}/changes/{topic}") for topic in topics]
    return functools.reduce(lambda a, b: a.unionByName(b), frames)


def rejects(spark: Any, output: Path | str, table_format: str = "delta") -> Any:
    if table_format == "parquet":
        return spark.read.parquet(str(Path(output) / "rejects"))
    return spark.read.format("delta").load(f"{output}/rejects")


def without(docs: dict[Any, dict[str, Any]], fields: Iterable[str]) -> dict[Any, dict[str, Any]]:
    drop = set(fields)
    return {k: {f: v for f, v in doc.items() if f not in drop} for k, doc in docs.items()}
