"""spark_jobs.schema.fits (spark_jobs/java's SchemaFit): a document it says fits a stored parse schema leaves that
schema as it is when the schema Spark infers for it is merged into it, alone or with other fitting documents."""

from __future__ import annotations

import json
from itertools import combinations
from typing import Any

from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

from spark_jobs import schema as schemas
from spark_jobs.decode import jvm_functions

BASE = [
    '{"_id": 1, "name": "a", "n": 5, "ratio": 0.5, "flag": true, "text": "t", "tags": ["x"], '
    '"nested": {"x": 1, "y": [1, 2]}, "items": [{"sku": "k", "qty": 2}], "big": {"$numberLong": "7"}}',
    '{"_id": 2, "name": "b", "n": 6, "ratio": 2, "flag": false, "text": {"a": 1}, "tags": [], '
    '"nested": {"x": 2}, "items": [], "big": 8}',
]
# (document, whether fits says it fits the schema of BASE, whether Spark's inference of it merged into that schema
# changes it; None: not a JSON document)
CASES = [
    ('{"_id": 3, "name": "c", "n": 7, "ratio": 1.5, "flag": true, "tags": ["y", "z"], "nested": {"x": 3}}', True,
     False),
    ('{"_id": 4, "extra": null, "nested": {"x": 3, "w": null}}', True, False),  # new fields null: dropped
    ('{"_id": 5, "ratio": 3}', True, False),  # a whole number in a double field
    ('{"_id": 6, "ratio": -0.0}', True, False),
    ('{"_id": 7, "text": [1, {"b": 2}], "tags": [1]}', True, False),  # anything in a string field
    ('{"_id": 8, "tags": [], "items": [{"sku": "k2"}], "nested": {}}', True, False),
    ('{"_id": 9, "big": {"$numberLong": "9"}}', True, False),  # normalized into a bare number
    ('{"_id": 10, "n": 1.5}', False, True),  # a long widened to double
    ('{"_id": 11, "n": "five"}', False, True),  # a long field becomes a string
    ('{"_id": 12, "extra": 1}', False, True),  # a new field
    ('{"_id": 13, "nested": {"z": "new"}}', False, True),  # a new nested field
    ('{"_id": 14, "nested": {"y": ["a"]}}', False, True),  # an array's element type changes
    ('{"_id": 15, "items": [{"qty": 2.5}]}', False, True),
    ('{"_id": 16, "n": 123456789012345678901234567890}', False, True),  # a big integer: a decimal
    ('{"_id": 17, "nested": 5}', False, True),
    ('{"_id": 18, "tags": "x"}', False, True),
    ('{"_id": 19, "flag": 1}', False, True),
    ('{"_id": 20, "extra": []}', False, False),  # not known to be dropped (beside another type it is not)
    ('{"_id": 21, "n": ""}', False, False),  # not known to fit (Spark infers an empty string as null)
    ('{"_id": 22, "name": "d"', False, None),
    ('{"_id": 23} {"_id": 24}', False, None),  # text after the document
    ('[1, 2]', False, None),
]


def _truth(spark: Any, stored: StructType, docs: list[str]) -> bool:
    """Whether the schema Spark infers for ``docs`` merged into ``stored`` is ``stored`` (what the job compares)."""
    frame = spark.createDataFrame([(d,) for d in docs], "text string") \
        .select(schemas.normalize(F.col("text")).alias("_norm"))
    merged = schemas.merge(stored, schemas.infer(spark, frame, keep_all_null=False))
    return merged.json() == stored.json()


def _fits(spark: Any, stored: StructType, docs: list[str]) -> list[bool]:
    frame = spark.createDataFrame([(i, d) for i, d in enumerate(docs)], "i int, text string")
    rows = frame.select("i", schemas.fits(schemas.normalize(F.col("text")), stored.json()).alias("fits")) \
        .orderBy("i").collect()
    return [bool(row["fits"]) for row in rows]


def test_a_fitting_document_leaves_the_stored_schema_as_it_is(spark: Any) -> None:
    assert jvm_functions(spark), "the jar of spark_jobs/java is on the test session's class path"
    base = spark.createDataFrame([(d,) for d in BASE], "text string") \
        .select(schemas.normalize(F.col("text")).alias("_norm"))
    stored = schemas.merge(StructType(), schemas.infer(spark, base))  # as a new table's schema is kept
    assert isinstance(stored, StructType) and schemas.in_order(stored)
    docs = [doc for doc, _, _ in CASES]
    fits = _fits(spark, stored, docs)
    assert fits == [expected for _, expected, _ in CASES]
    for doc, _, changes in CASES:
        if changes is not None:
            assert _truth(spark, stored, [doc]) is not changes, doc
    fitting = [doc for doc, fit in zip(docs, fits, strict=True) if fit]
    for pair in combinations(fitting, 2):  # a batch of fitting documents: the schema inferred over all of them
        assert _truth(spark, stored, list(pair)), pair
    assert _truth(spark, stored, fitting)


def test_fits_is_null_for_a_null_text_and_refuses_a_schema_that_is_not_a_literal_struct(spark: Any) -> None:
    assert jvm_functions(spark)
    stored = StructType([StructField("n", LongType())])
    frame = spark.createDataFrame([(None,), ('{"n": 1}',)], "text string")
    assert [r[0] for r in frame.select(schemas.fits(F.col("text"), stored.json())).collect()] == [None, True]
    for bad in (F.col("text"), F.lit(json.dumps("string"))):
        try:
            frame.select(F.call_function(schemas.FITS_FUNCTION, F.col("text"), bad)).collect()
        except Exception as exc:  # noqa: BLE001 - py4j/pyspark wrap the JVM's IllegalArgumentException
            assert schemas.FITS_FUNCTION in str(exc)
        else:
            raise AssertionError("a schema that is not a literal struct type was taken")


def test_in_order_wants_merge_s_order_at_every_depth() -> None:
    inner = StructType([StructField("a", LongType()), StructField("b", StringType())])
    assert schemas.in_order(StructType([StructField("x", ArrayType(inner)), StructField("y", inner)]))
    assert not schemas.in_order(StructType([StructField("y", LongType()), StructField("x", LongType())]))
    assert not schemas.in_order(StructType([StructField("x", ArrayType(StructType(
        [StructField("b", LongType()), StructField("a", LongType())])))]))
    assert not schemas.in_order(StructType([StructField("x", ArrayType(LongType(), containsNull=False))]))
