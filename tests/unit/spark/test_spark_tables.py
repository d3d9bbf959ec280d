"""The Spark job logic on records made by the product's own converters (no Kafka): decoding every format,
Extended JSON typing, latest state, change log and rejects."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

import pytest
from bson import Binary, Decimal128, Int64, ObjectId, Regex, Timestamp
from pyspark.sql import functions as F

from spark_jobs import schema as schemas
from spark_jobs import tables
from spark_jobs.batch import SMALL_BATCH_RECORDS, small_batch_settings
from spark_jobs.decode import decode
from tests.unit.spark.support import (
    change_event,
    cloud_event,
    json_records,
    kafka_frame,
    mongo_documents,
    new_document_state,
    table_documents,
)

OIDS = [ObjectId(f"65f0c0ffee0000000000000{n}") for n in range(3)]
DOCS = [
    {"_id": OIDS[0], "name": "Anne", "n": 5, "big": Int64(2**40), "price": Decimal128("12.3400"),
     "when": dt.datetime(2026, 1, 2, 3, 4, 5, 678000), "tags": ["a", "b"], "nested": {"x": 1.5, "y": [1, 2]}},
    {"_id": OIDS[1], "name": "Bob", "price": Decimal128("12.3400"), "big": Int64(2**40),
     "when": dt.datetime(2026, 1, 2, 3, 4, 5, 678000), "blob": Binary(b"\x00\x01\xff"), "flag": True, "ratio": 0.25,
     "items": [{"sku": "k1", "qty": 2}, {"sku": "k2", "qty": 3, "note": "gift"}]},
    {"_id": OIDS[2], "name": "Cy", "pattern": Regex("^a.*", re.IGNORECASE), "ts": Timestamp(1700000000, 3),
     "nested": {"x": 2, "z": "new"}, "nothing": None},
]


def _events() -> list[dict[str, Any]]:
    first, second, third = DOCS
    updated = {**second, "name": "Bobby", "added": dt.datetime(2026, 5, 6)}
    return [
        change_event("insert", "db", "c", first), change_event("insert", "db", "c", second),
        change_event("insert", "db", "c", third), change_event("update", "db", "c", updated, updated={"name": "Bobby"}),
        change_event("replace", "db", "c", {"_id": OIDS[0], "name": "Anne 2", "n": 7}),
        change_event("delete", "db", "c", key=OIDS[2]),
    ]


def _final() -> list[dict[str, Any]]:
    return [{"_id": OIDS[0], "name": "Anne 2", "n": 7}, {**DOCS[1], "name": "Bobby", "added": dt.datetime(2026, 5, 6)}]


def _table(spark: Any, frame: Any, fmt: str = "auto", broadcast: bool = False) -> Any:
    changes = decode(frame, fmt)
    latest = tables.latest_events(changes, broadcast=broadcast)
    documents = tables.live_documents(latest)
    parse_schema = schemas.infer(spark, documents.select("_norm"))
    connect = [r[0] for r in latest.select("connect_schema").where("connect_schema is not null").distinct().collect()]
    if connect:
        parse_schema = schemas.mark_connect_types(parse_schema, connect)
    return tables.materialized(documents, parse_schema)


def test_json_with_schemas_gives_the_collection(spark: Any) -> None:
    frame = kafka_frame(spark, json_records(_events()))
    table = _table(spark, frame)
    assert table_documents(table) == mongo_documents(_final())
    types = dict(table.dtypes)
    assert types["when"] == "timestamp" and types["price"] == "decimal(38,10)" and types["big"] == "bigint"
    assert types["blob"] == "binary" and types["items"] == "array<struct<note:string,qty:bigint,sku:string>>"


def test_broadcast_positions_give_the_same_table(spark: Any) -> None:
    frame = kafka_frame(spark, json_records(_events()))
    assert table_documents(_table(spark, frame, broadcast=True)) == table_documents(_table(spark, frame))


def test_change_log_has_one_row_per_event(spark: Any) -> None:
    changes = decode(kafka_frame(spark, json_records(_events())))
    log = tables.change_log(changes)
    assert changes.count() == 7  # 6 events + the tombstone after the delete
    assert [r.op for r in log.orderBy("offset").collect()] == ["c", "c", "c", "u", "u", "d"]
    row = log.where(F.col("op") == "d").first()
    assert row is not None and row.key == '{"$oid": "65f0c0ffee00000000000002"}'
    assert row.collection == "c" and row.date == dt.date(2026, 11, 21)


@pytest.mark.parametrize("shape", ["json-no-schemas", "cloudevents", "cloudevents-no-data-schema",
                                   "new-document-state", "new-document-state-no-schemas"])
def test_every_format_gives_the_same_table(spark: Any, shape: str) -> None:
    reference = table_documents(_table(spark, kafka_frame(spark, json_records(_events()))))
    if shape == "json-no-schemas":
        records, fmt = json_records(_events(), schemas=False), "auto"
    elif shape.startswith("cloudevents"):
        with_schema = shape == "cloudevents"
        records = [(t, (k, cloud_event(v, with_schema))) for t, (k, v) in json_records(_events())]
        fmt = "auto"
    else:
        with_schema = shape == "new-document-state"
        shaped = [(t, new_document_state(k, v, with_schema)) for t, (k, v) in json_records(_events())]
        records, fmt = [(t, r) for t, r in shaped if r is not None], "new-document-state"
    table = table_documents(_table(spark, kafka_frame(spark, records), fmt))
    if shape == "new-document-state-no-schemas":  # without a schema a date is just its epoch milliseconds
        reference = {k: {f: v for f, v in doc.items() if f not in ("when", "added", "blob")}
                     for k, doc in reference.items()}
        table = {k: {f: v for f, v in doc.items() if f not in ("when", "added", "blob")} for k, doc in table.items()}
    if shape.startswith("new-document-state"):  # the SMT writes ObjectId as hex, Decimal128 as text: so do we
        reference = {k: {**doc, "price": Decimal(str(doc["price"])).normalize()} if "price" in doc else doc
                     for k, doc in reference.items()}
        table = {k: {**doc, "price": Decimal(str(doc["price"])).normalize()} if "price" in doc else doc
                 for k, doc in table.items()}
    assert {json_id(k) for k in table} == {json_id(k) for k in reference}
    assert sorted(table.values(), key=str) == sorted(reference.values(), key=str)


def json_id(key: str) -> str:
    return key.strip('"')


def test_bad_records_are_rejected_with_reason_and_coordinates(spark: Any) -> None:
    good = json_records([change_event("insert", "db", "c", {"_id": OIDS[0], "a": 1})])
    topic = good[0][0]
    key = good[0][1][0]
    insert = good[0][1][1]
    assert insert is not None
    bad_op = insert.replace(b'"op":"c"', b'"op":"x"')
    records = [*good, (topic, (key, b"{not json")), (topic, (key, b'{"foo": 1}')), (topic, (key, bad_op)),
               (topic, (None, good[0][1][1]))]
    changes = decode(kafka_frame(spark, records))
    rejected = {r.offset: r.reason for r in tables.rejects(changes, 1).collect()}
    assert rejected == {
        1: "value is not valid JSON",
        2: "not a Debezium change event (no op, payload or CloudEvents envelope)",
        3: "unknown op 'x'",
        4: "record has no key",
    }
    assert tables.usable(changes).count() == 1


def test_schema_evolution_widens_and_keeps_fields() -> None:
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    old = StructType([StructField("a", LongType()), StructField("b", StringType())])
    new = StructType([StructField("a", DoubleType()), StructField("c", LongType())])
    merged = schemas.merge(old, new)
    assert isinstance(merged, StructType)
    assert [(f.name, f.dataType) for f in merged.fields] == [("a", DoubleType()), ("b", StringType()),
                                                             ("c", LongType())]


def test_only_additions_tells_a_merge_evolution_from_a_rewrite() -> None:
    from pyspark.sql.types import ArrayType, DoubleType, LongType, StringType, StructField, StructType

    def struct(*fields: tuple[str, Any]) -> StructType:
        return StructType([StructField(name, dtype) for name, dtype in fields])

    table = struct(("a", LongType()), ("s", struct(("x", LongType()))), ("l", ArrayType(struct(("y", LongType())))))
    added = struct(("a", LongType()), ("b", StringType()), ("s", struct(("w", StringType()), ("x", LongType()))),
                   ("l", ArrayType(struct(("y", LongType()), ("z", LongType())))))
    assert schemas.only_additions(table, added) and not schemas.only_additions(added, table)
    widened = struct(("a", DoubleType()), ("s", struct(("x", LongType()))), ("l", ArrayType(struct(("y", LongType())))))
    assert not schemas.only_additions(table, widened)


def test_conform_reorders_nested_fields_and_keeps_null_structs(spark: Any) -> None:
    from pyspark.sql import functions as F

    frame = spark.createDataFrame([({"a": 1, "b": 2}, [{"a": 3, "b": 4}]), (None, None)],
                                  "s struct<a: long, b: long>, l array<struct<a: long, b: long>>")
    target = spark.createDataFrame([], "s struct<b: long, a: long>, l array<struct<b: long, a: long>>").schema
    out = frame.select(*(schemas.conform(F.col(f.name), frame.schema[f.name].dataType, f.dataType).alias(f.name)
                         for f in target.fields))
    assert out.schema.simpleString() == target.simpleString()
    rows = out.collect()
    assert rows[0]["s"].asDict() == {"b": 2, "a": 1} and list(rows[0]["s"]) == [2, 1]
    assert list(rows[0]["l"][0]) == [4, 3]
    assert rows[1]["s"] is None and rows[1]["l"] is None


def test_a_small_batch_runs_without_code_generation_and_gives_the_session_back(spark: Any) -> None:
    key = "spark.sql.codegen.wholeStage"
    before = spark.conf.get(key)
    with small_batch_settings(spark, SMALL_BATCH_RECORDS):
        assert spark.conf.get(key) == "false"
        assert spark.conf.get("spark.sql.codegen.factoryMode") == "NO_CODEGEN"
        assert table_documents(_table(spark, kafka_frame(spark, json_records(_events())))) == mongo_documents(_final())
    assert spark.conf.get(key) == before
    with small_batch_settings(spark, SMALL_BATCH_RECORDS + 1):
        assert spark.conf.get(key) == before
