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

from spark_jobs import batch as batches
from spark_jobs import schema as schemas
from spark_jobs import tables
from spark_jobs.batch import SMALL_BATCH_RECORDS, generated_code_pays, small_batch_settings
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
    if fmt == "new-document-state":
        parse_schema = schemas.without_smt_fields(parse_schema)
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


def test_one_partition_positions_are_the_two_aggregates_positions(spark: Any) -> None:
    """A batch of one partition per topic leaves the aggregate across partitions out: the same deciding rows, with
    the same source positions (a tombstone's taken from its delete), as with it."""
    changes = decode(kafka_frame(spark, json_records(_events())))

    def rows(one_partition: bool, carried: bool = False) -> list[Any]:
        latest = tables.latest_events(changes, one_partition=one_partition, carried=carried)
        return sorted(latest.collect(), key=lambda r: (r["topic"], r["key"]))

    both = rows(False)
    assert rows(True) == both and any(r["tombstone"] and r["source_ts_ms"] is not None for r in both)
    # a small batch's: each key's row carried along the aggregate, not joined to its position
    assert rows(True, carried=True) == both


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


# A key's records spread over several partitions of its topic (e.g. after the topic's partition count changed):
# (partition, event) in the order each partition holds them, events made with explicit oplog positions.
K = [ObjectId(f"65f0c0ffee00000000000a0{n}") for n in range(5)]


def _at(event: dict[str, Any], sec: int, inc: int) -> dict[str, Any]:
    """``event`` at the oplog position (sec, inc): ``source.ts_ms`` sec * 1000, ``source.ord`` inc."""
    event["clusterTime"] = Timestamp(sec, inc)
    event.pop("wallTime")
    return event


def _spread() -> tuple[list[tuple[int, dict[str, Any]]], list[dict[str, Any]]]:
    """The placed events and the documents they leave."""
    def doc(n: int, name: str) -> dict[str, Any]:
        return {"_id": K[n], "name": name}

    placed = [
        # K0 moved from partition 1 to partition 0: the newer update is in the lower partition
        (1, _at(change_event("insert", "db", "c", doc(0, "old")), 1_795_000_100, 1)),
        (0, _at(change_event("update", "db", "c", doc(0, "new"), updated={"name": "new"}), 1_795_000_200, 1)),
        # K1: two events of the same second, told apart by ord
        (1, _at(change_event("insert", "db", "c", doc(1, "first")), 1_795_000_300, 1)),
        (0, _at(change_event("update", "db", "c", doc(1, "second"), updated={"name": "second"}), 1_795_000_300, 2)),
        # K2: within one partition the offset decides, even when its source position is older (a re-sent record)
        (0, _at(change_event("update", "db", "c", doc(2, "earlier offset"), updated={"name": "x"}), 1_795_000_500, 1)),
        (0, _at(change_event("update", "db", "c", doc(2, "later offset"), updated={"name": "y"}), 1_795_000_400, 1)),
        # K3: deleted in partition 0 (the delete's tombstone has no source: the delete's position counts) after
        # its insert in partition 1
        (1, _at(change_event("insert", "db", "c", doc(3, "gone")), 1_795_000_600, 1)),
        (0, _at(change_event("delete", "db", "c", key=K[3]), 1_795_000_700, 1)),
        # K4: inserted in partition 0 after its delete in partition 1 (of an earlier life)
        (1, _at(change_event("insert", "db", "c", doc(4, "first life")), 1_795_000_800, 1)),
        (1, _at(change_event("delete", "db", "c", key=K[4]), 1_795_000_801, 1)),
        (0, _at(change_event("insert", "db", "c", doc(4, "second life")), 1_795_000_900, 1)),
    ]
    return placed, [doc(0, "new"), doc(1, "second"), doc(2, "later offset"), doc(4, "second life")]


def _spread_frame(spark: Any, shape: str, placed: list[tuple[int, dict[str, Any]]]) -> tuple[Any, str]:
    records, partitions = [], []
    for partition, event in placed:
        for topic, (key, value) in json_records([event], schemas=shape != "json-no-schemas"):
            record: tuple[bytes | None, bytes | None] | None = (key, value)
            if shape.startswith("cloudevents"):
                record = (key, cloud_event(value, shape == "cloudevents"))
            elif shape.startswith("new-document-state"):
                record = new_document_state(key, value, source_fields=shape == "new-document-state")
            if record is not None:
                records.append((topic, record))
                partitions.append(partition)
    return kafka_frame(spark, records, partitions), "new-document-state" if shape.startswith("new-") else "auto"


@pytest.mark.parametrize("shape", ["json", "json-no-schemas", "cloudevents", "cloudevents-no-data-schema",
                                   "new-document-state"])
def test_across_partitions_the_source_position_decides_the_last_change(spark: Any, shape: str) -> None:
    placed, expected = _spread()
    frame, fmt = _spread_frame(spark, shape, placed)
    changes = decode(frame, fmt)
    assert changes.where(F.col("source_ts_ms").isNull() & ~F.col("tombstone")).count() == 0
    assert changes.where(F.col("source_ord").isNull() & ~F.col("tombstone")).count() == 0
    for broadcast in (False, True):
        assert table_documents(_table(spark, frame, fmt, broadcast)) == mongo_documents(expected), broadcast


def test_without_a_source_position_partition_then_offset_decide(spark: Any) -> None:
    """ExtractNewDocumentState without ``add.fields`` (and deletes as tombstones): no source position; the last
    record of the highest partition wins, as far as Kafka order alone can tell."""
    placed, _ = _spread()
    frame, fmt = _spread_frame(spark, "new-document-state-no-source", placed)
    assert decode(frame, fmt).where(F.col("source_ts_ms").isNotNull()).count() == 0
    latest = {r["key"]: r["partition"] for r in tables.latest_events(decode(frame, fmt)).collect()}
    assert latest == {str(K[0]): 1, str(K[1]): 1, str(K[2]): 0, str(K[3]): 1, str(K[4]): 1}
    names = {d["_id"]: d["name"] for d in table_documents(_table(spark, frame, fmt)).values()}
    assert names == {str(K[0]): "old", str(K[1]): "first", str(K[2]): "later offset", str(K[3]): "gone"}


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


def test_normalize_unwraps_number_wrappers_and_leaves_other_texts(spark: Any) -> None:
    texts = ['{"a": {"$numberLong": "-9000000000"}, "b": {"$numberInt":"7"}}', '{"price": "costs $number 5"}',
             '{"s": "{\\"$numberLong\\": \\"1\\"}"}', '{"d": {"$date": "2026-01-01T00:00:00Z"}}', None]
    rows = spark.createDataFrame([(t,) for t in texts], "t string").select(schemas.normalize(F.col("t"))).collect()
    assert [r[0] for r in rows] == ['{"a": -9000000000, "b": 7}', texts[1], texts[2], texts[3], None]


def test_schema_evolution_widens_and_keeps_fields() -> None:
    from pyspark.sql.types import DoubleType, LongType, StringType, StructField, StructType

    old = StructType([StructField("a", LongType()), StructField("b", StringType())])
    new = StructType([StructField("a", DoubleType()), StructField("c", LongType())])
    merged = schemas.merge(old, new)
    assert isinstance(merged, StructType)
    assert [(f.name, f.dataType) for f in merged.fields] == [("a", DoubleType()), ("b", StringType()),
                                                             ("c", LongType())]


def test_fields_null_in_every_document_do_not_widen_a_stored_schema(spark: Any) -> None:
    from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

    from spark_jobs.batch import table_schema

    stored = StructType([StructField("a", LongType()), StructField("l", ArrayType(LongType())),
                         StructField("s", StructType([StructField("x", LongType())]))])
    texts = ['{"a": null, "l": [], "s": {"x": null}, "n": null}', '{"a": null, "l": null, "s": {}, "m": 5}']
    documents = spark.createDataFrame([(t,) for t in texts], "_norm string")
    merged, previous = table_schema(spark, documents, documents, stored.json(), "auto")
    assert previous == stored
    # nothing widened; "n" comes when it has a value; "m" is added
    assert merged == StructType([stored.fields[0], stored.fields[1], StructField("m", LongType()), stored.fields[2]])
    # a new table still gets every field, an all-null one as a string column
    new, none = table_schema(spark, documents, documents, None, "auto")
    assert none is None and new["n"].dataType == StringType() and new["a"].dataType == StringType()


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
    kept = F.col("l")  # already in the target's order: the column itself, not rebuilt
    assert schemas.conform(kept, frame.schema["l"].dataType, frame.schema["l"].dataType) is kept


def test_a_small_batch_runs_generated_code_once_its_jvm_has_run_a_batch_and_gives_the_session_back(
        spark: Any) -> None:
    key, adaptive = "spark.sql.codegen.wholeStage", "spark.sql.adaptive.enabled"
    before = (spark.conf.get(key), spark.conf.get(adaptive))
    jvm = spark.sparkContext._jvm
    compiled = jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
    jvm.java.lang.System.clearProperty(batches.RAN)  # as in a new JVM
    assert not generated_code_pays(spark)
    with small_batch_settings(spark, SMALL_BATCH_RECORDS):  # the JVM's first batch: interpreted
        assert (spark.conf.get(key), spark.conf.get(adaptive)) == ("false", "false")
        assert spark.conf.get("spark.sql.codegen.factoryMode") == "NO_CODEGEN"
        assert table_documents(_table(spark, kafka_frame(spark, json_records(_events())))) == mongo_documents(_final())
    assert (spark.conf.get(key), spark.conf.get(adaptive)) == before
    # the JVM has run a batch, and the session keeps enough generated classes (spark_jobs.session's setting)
    assert spark.conf.get(batches.CODEGEN_CACHE[0]) == batches.CODEGEN_CACHE[1] and generated_code_pays(spark)
    for turn in range(2):
        with small_batch_settings(spark, SMALL_BATCH_RECORDS):  # generated code, without adaptive execution
            assert (spark.conf.get(key), spark.conf.get(adaptive)) == (before[0], "false")
            assert spark.conf.get("spark.sql.codegen.factoryMode", "FALLBACK") != "NO_CODEGEN"
            classes = compiled.getCount()
            frame = kafka_frame(spark, json_records(_events()))
            assert table_documents(_table(spark, frame)) == mongo_documents(_final())
            if turn:  # the same plans again: their classes are Spark's, kept from the first turn
                assert compiled.getCount() == classes
    with small_batch_settings(spark, SMALL_BATCH_RECORDS + 1):
        assert (spark.conf.get(key), spark.conf.get(adaptive)) == before


def test_schema_prefix_of_json_with_schemas_values() -> None:
    from spark_jobs.decode import schema_prefix

    value = '{"schema":{"type":"struct","fields":[{"field":"op"}],"name":"x,y}"},"payload":{"op":"c"}}'
    assert schema_prefix(value) == '{"schema":{"type":"struct","fields":[{"field":"op"}],"name":"x,y}"},'
    assert schema_prefix('{"payload":{"op":"c"}}') is None
    assert schema_prefix('{"schema":{"type":"struct"') is None
    assert schema_prefix('{"schema":{}}') is None
    assert schema_prefix(None) is None


def test_values_with_their_topic_schema_prefix_decode_to_the_same_rows(spark: Any) -> None:
    from spark_jobs.decode import CHANGE_COLUMNS, schema_prefix

    events = [*_events(), change_event("insert", "db", "d", {"_id": OIDS[0], "a": 1})]
    records = json_records(events)
    topic, (key, insert) = records[0]
    assert insert is not None
    prefix = schema_prefix(insert.decode())
    assert prefix is not None
    other_schema = insert.replace(b'"optional":false', b'"optional":true', 1)
    bad = prefix.encode() + b'"payload":{"op":"c",'
    schemaless = json_records(events[:1], schemas=False)[0][1][1]
    records += [(topic, (key, other_schema)), (topic, (key, bad)), (topic, (key, schemaless)),
                (topic, (key, None)), (topic, (key, prefix.encode() + b'"payload":{"op":"x"}}'))]
    frame = kafka_frame(spark, records)
    whole = decode(frame).select(*CHANGE_COLUMNS)
    stripped = decode(frame, prefixes={topic: prefix, "t.db.d": "{\"schema\":{},"}).select(*CHANGE_COLUMNS)
    assert "StartsWith" in stripped._jdf.queryExecution().optimizedPlan().toString()  # the prefix is used
    assert whole.exceptAll(stripped).count() == 0 and stripped.exceptAll(whole).count() == 0
    assert whole.count() == len(records)
    rejected = {r.value: r.reason for r in tables.rejects(stripped, 1).collect()}
    assert rejected == {bad.decode(): "value is not valid JSON", prefix + '"payload":{"op":"x"}}': "unknown op 'x'"}
