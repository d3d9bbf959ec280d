"""Every input format the worker writes gives the same table: one collection captured at the same time by several
of our worker's MongoDB connectors (JSON with and without schemas, CloudEventsConverter, ExtractNewDocumentState
with rewritten deletes and with tombstones), each to its own topic prefix, materialized by the Spark job; the
tables must equal each other and the MongoDB collection document by document."""

from __future__ import annotations

import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from spark_jobs.materialize import MaterializeOptions, run
from tests.integration.spark.workload import (
    change_log,
    document,
    items_connector,
    mixed_writes,
    stored_table,
    table_frame,
    wait_records,
    without,
)
from tests.integration.support import Worker, unique
from tests.unit.spark.support import mongo_documents

pytestmark = pytest.mark.integration

JSON = "org.apache.kafka.connect.json.JsonConverter"
UNWRAP = {"transforms": "unwrap",
          "transforms.unwrap.type": "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState"}
CONNECTORS: dict[str, dict[str, str]] = {
    "json": {},
    "schemaless": {"key.converter": JSON, "key.converter.schemas.enable": "false",
                   "value.converter": JSON, "value.converter.schemas.enable": "false"},
    "cloudevents": {"value.converter": "io.debezium.converters.CloudEventsConverter"},
    "cloudevents-plain-data": {"value.converter": "io.debezium.converters.CloudEventsConverter",
                               "value.converter.json.schemas.enable": "false"},
    # deletes rewritten as {"_id": ..., "__deleted": true}, with the op and source time added to every record
    "flat-rewrite": {**UNWRAP, "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
                     "transforms.unwrap.delete.tombstone.handling.mode.rewrite-with-id": "true",
                     "transforms.unwrap.add.fields": "op,source.ts_ms"},
    # deletes become tombstones (the SMT's default), no schemas
    "flat-tombstone": {**UNWRAP, "key.converter": JSON, "key.converter.schemas.enable": "false",
                       "value.converter": JSON, "value.converter.schemas.enable": "false"},
}
ENVELOPES = ("json", "schemaless", "cloudevents", "cloudevents-plain-data")
FLAT = ("flat-rewrite", "flat-tombstone")
# What ExtractNewDocumentState cannot carry: Decimal128 is written as text, a regex as {regex, options}, a BSON
# timestamp as a date (its increment is lost); without schemas, dates and binaries are plain numbers and text.
FLAT_LOSSY = ("price", "pattern", "stamp")
SCHEMALESS_LOSSY = ("when", "blob")








def test_every_connector_format_materializes_the_same_table(spark: Any, worker: Worker, stack: Any, mongo: Any,
                                                            tmp_path: Path) -> None:
    db = unique("spark_formats_")
    items = mongo[db]["items"]
    rng = random.Random(21)
    snapshot = [document(rng) for _ in range(100)]
    items.insert_many(snapshot)
    live = [doc["_id"] for doc in snapshot]
    topics = {shape: items_connector(worker, stack.mongo_uri, db, unique(shape.replace("-", "")), extra)
              for shape, extra in CONNECTORS.items()}
    for topic in topics.values():  # the snapshots are done: every later write is exactly one event
        wait_records(stack.kafka_bootstrap, topic, len(snapshot))
    writes = 400
    records = mixed_writes(items, writes, seed=22, live=live)
    deletes = records - writes
    # the envelopes keep the tombstone after each delete; the SMT turns the pair into one record
    for shape, topic in topics.items():
        wait_records(stack.kafka_bootstrap, topic, len(snapshot) + (records if shape in ENVELOPES else writes))

    expected = mongo_documents(items.find())
    assert len(expected) == len(live) and deletes > 10
    envelopes, flat = tmp_path / "envelopes", tmp_path / "flat"
    summary = run(spark, MaterializeOptions(stack.kafka_bootstrap, str(envelopes),
                                            topics=tuple(topics[s] for s in ENVELOPES)))
    assert summary.rejects == 0
    assert summary.events == len(ENVELOPES) * (len(snapshot) + writes)
    assert summary.tombstones == len(ENVELOPES) * deletes
    for shape in ENVELOPES:
        assert stored_table(spark, envelopes, topics[shape]) == expected, shape
    log = change_log(spark, envelopes, [topics[s] for s in ENVELOPES])
    counts = {(r["topic"], r["op"]): r["count"] for r in log.groupBy("topic", "op").count().collect()}
    for shape in ENVELOPES:  # the change log has the same events whatever the format
        assert {op: counts.get((topics[shape], op)) for op in "rd"} == {"r": len(snapshot), "d": deletes}, shape
    assert log.where(F.col("source_ts").isNull() | F.col("collection").isNull()).count() == 0

    summary = run(spark, MaterializeOptions(stack.kafka_bootstrap, str(flat), topics=tuple(topics[s] for s in FLAT),
                                            fmt="new-document-state"))
    assert summary.rejects == 0 and summary.tombstones == 0
    assert summary.events == len(FLAT) * (len(snapshot) + writes)
    rewritten = stored_table(spark, flat, topics["flat-rewrite"])
    # no __deleted / __op / __source_ts_ms columns: they are the SMT's metadata, not document fields
    assert not any(f.startswith("__") for f in table_frame(spark, flat, topics["flat-rewrite"]).columns)
    assert without(rewritten, FLAT_LOSSY) == without(expected, FLAT_LOSSY)
    assert {k: Decimal(d["price"]).normalize() for k, d in rewritten.items() if "price" in d} == \
        {k: d["price"] for k, d in expected.items() if "price" in d}
    assert {k: (d["pattern"]["regex"], d["pattern"]["options"]) for k, d in rewritten.items() if "pattern" in d} \
        == {k: (d["pattern"]["pattern"], d["pattern"]["options"]) for k, d in expected.items() if "pattern" in d}
    assert {k: d["stamp"] for k, d in rewritten.items() if "stamp" in d} == \
        {k: d["stamp"]["t"] * 1000 for k, d in expected.items() if "stamp" in d}
    tombstoned = stored_table(spark, flat, topics["flat-tombstone"])
    assert without(tombstoned, FLAT_LOSSY + SCHEMALESS_LOSSY) == without(expected, FLAT_LOSSY + SCHEMALESS_LOSSY)
    assert {k: d["when"] for k, d in tombstoned.items() if "when" in d} == \
        {k: d["when"] for k, d in expected.items() if "when" in d}  # epoch milliseconds, as numbers
    flat_log = change_log(spark, flat, [topics["flat-rewrite"]])
    flat_ops = {r["op"]: r["count"] for r in flat_log.groupBy("op").count().collect()}
    assert flat_ops["r"] == len(snapshot) and flat_ops["d"] == deletes
