"""Spark schemas for the documents of a collection, from the Extended JSON strings Debezium writes.

Three steps, all Spark SQL (no Python UDFs):

* :func:`normalize` rewrites ``{"$numberLong": "n"}`` into the bare number ``n`` so int32 and int64 values of
  one field widen to one ``long`` column;
* :func:`infer` lets Spark's JSON schema inference read every document (union of fields, widened types:
  long + double -> double, anything + a conflicting type -> string holding the JSON text); :func:`merge`
  evolves a stored schema with a newly inferred one the same way, so no field is ever dropped;
* :func:`typed_columns` turns the parsed structs into typed columns: Extended JSON wrappers become Spark types
  (``$oid`` -> string, ``$date`` -> timestamp, ``$numberDecimal`` -> decimal(38,10), ``$binary`` -> binary,
  ``$regex`` -> struct<pattern, options>, ``$timestamp`` -> struct<t, i>, ...), nested documents stay structs
  and arrays stay arrays.

A field marked with metadata ``{"epoch_millis": true}`` (ExtractNewDocumentState's Connect ``Timestamp``)
is a long holding epoch milliseconds and becomes a timestamp too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DecimalType,
    DoubleType,
    LongType,
    NullType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

__all__ = [
    "BASE64",
    "DECIMAL",
    "EPOCH_MILLIS",
    "FITS_FUNCTION",
    "SMT_PREFIX",
    "conform",
    "fits",
    "in_order",
    "infer",
    "mark_connect_types",
    "merge",
    "normalize",
    "only_additions",
    "parse",
    "schema_from_json",
    "typed_columns",
    "without_smt_fields",
]

DECIMAL = DecimalType(38, 10)
EPOCH_MILLIS = "epoch_millis"
BASE64 = "base64"
SMT_PREFIX = "__"  # ExtractNewDocumentState's ``add.fields.prefix`` default and its ``__deleted`` field
_NUMBER_LONG = r'\{"\$numberLong": ?"(-?[0-9]+)"\}'
_NUMBER_INT = r'\{"\$numberInt": ?"(-?[0-9]+)"\}'
# A '{"' can only start such a wrapper outside a JSON string: inside one every quote is escaped.

_WRAPPERS = {
    frozenset({"$oid"}), frozenset({"$date"}), frozenset({"$numberDecimal"}), frozenset({"$numberDouble"}),
    frozenset({"$binary", "$type"}), frozenset({"$binary"}), frozenset({"$regex", "$options"}),
    frozenset({"$regularExpression"}), frozenset({"$timestamp"}), frozenset({"$minKey"}), frozenset({"$maxKey"}),
    frozenset({"$code"}), frozenset({"$code", "$scope"}), frozenset({"$symbol"}), frozenset({"$undefined"}),
    frozenset({"$numberLong"}), frozenset({"$numberInt"}),
}
_JSON_OPTIONS = {"allowNonNumericNumbers": "true", "mode": "PERMISSIVE"}
# spark_jobs/java's SchemaFit, registered with spark_jobs.decode.jvm_functions
FITS_FUNCTION = "spark_jobs_fits_schema"


def normalize(text: Column) -> Column:
    """Extended JSON with ``$numberLong``/``$numberInt`` wrappers replaced by bare numbers (the regular expressions
    only run over the documents that have such a wrapper at all).

    The test for one is ``contains("$number")``, a superset of the documents with a wrapper (the regular expressions
    change nothing in the others): Spark's ``instr`` compares the searched text at every character position and
    counts characters, ``contains`` compares only where the first byte, a ``$`` (rare outside Extended JSON's
    wrappers), matches. 367,640 documents of the benchmark's table, 6 alternating passes in one JVM: 1.55-1.77 s of
    JVM CPU against 2.98-3.57 s, the same texts (benchmarks/results.md 2026-11-30)."""
    replaced = F.regexp_replace(F.regexp_replace(text, _NUMBER_LONG, "$1"), _NUMBER_INT, "$1")
    return F.when(text.contains("$number"), replaced).otherwise(text)


def infer(spark: SparkSession, docs: DataFrame, *, keep_all_null: bool = True) -> StructType:
    """The schema Spark's JSON inference gives the (normalized) JSON strings of ``docs``' single column.

    ``keep_all_null``: a field that is null in every document (and an empty array or document) is typed
    ``string``, as Spark's inference does; without it such a field is left out. A null carries no type: merged
    into a stored schema (:func:`merge`), a ``string`` from nulls alone would turn a stored column of another type
    into a ``string`` one (a batch whose documents all have ``"n": null`` made a ``long`` column ``string`` and
    rewrote the table), so a schema to be merged into a stored one is inferred without them."""
    jvm = spark._jvm  # the DataFrameReader.json(Dataset[String]) overload has no Python binding
    assert jvm is not None
    strings = getattr(docs._jdf, "as")(jvm.org.apache.spark.sql.Encoders.STRING())
    reader = spark._jsparkSession.read()
    for key, value in _JSON_OPTIONS.items():
        reader = reader.option(key, value)
    dropped = "false" if keep_all_null else "true"
    inferred = schema_from_json(reader.option("dropFieldIfAllNull", dropped).json(strings).schema().json())
    return StructType([f for f in inferred.fields if f.name != "_corrupt_record"])


def fits(text: Column, schema: str) -> Column:
    """Whether the (normalized) document ``text`` surely leaves the parse schema ``schema`` (its JSON) as it is: the
    schema :func:`infer` gives for it merged into ``schema`` (:func:`merge`) is ``schema`` (``spark_jobs/java``'s
    ``SchemaFit``, :data:`FITS_FUNCTION`: each value null, of its field's type, or in a string field; false when
    not sure). For a schema :func:`in_order`; needs the JVM functions (:func:`spark_jobs.decode.jvm_functions`)."""
    return F.call_function(FITS_FUNCTION, text, F.lit(schema))


def in_order(dtype: DataType) -> bool:
    """Whether every struct of ``dtype``, at any depth, has its fields in :func:`merge`'s order (by name) and
    nullable, and its arrays may hold nulls: as :func:`merge` leaves a schema, so that a batch whose documents
    :func:`fits` merges into it unchanged."""
    if isinstance(dtype, StructType):
        names = [f.name for f in dtype.fields]
        return names == sorted(names) and all(f.nullable and in_order(f.dataType) for f in dtype.fields)
    if isinstance(dtype, ArrayType):
        return dtype.containsNull and in_order(dtype.elementType)
    return True


def without_smt_fields(schema: StructType) -> StructType:
    """``schema`` without the top-level fields ExtractNewDocumentState adds (``__deleted`` and the ``add.fields``,
    all named with the ``__`` prefix): they describe the record, not the document."""
    return StructType([f for f in schema.fields if not f.name.startswith(SMT_PREFIX)])


def schema_from_json(text: str) -> StructType:
    return StructType.fromJson(json.loads(text))


def merge(old: DataType, new: DataType) -> DataType:
    """The widest of two inferred types, as Spark's inference widens (fields of structs are unioned)."""
    if isinstance(old, NullType):
        return new
    if isinstance(new, NullType) or old == new:
        return old
    if isinstance(old, StructType) and isinstance(new, StructType):
        fields = {f.name: f for f in old.fields}
        for field in new.fields:
            known = fields.get(field.name)
            fields[field.name] = field if known is None else StructField(
                field.name, merge(known.dataType, field.dataType), True, {**known.metadata, **field.metadata})
        return StructType(sorted(fields.values(), key=lambda f: f.name))
    if isinstance(old, ArrayType) and isinstance(new, ArrayType):
        return ArrayType(merge(old.elementType, new.elementType), True)
    numeric = (LongType, DoubleType, DecimalType)
    if isinstance(old, numeric) and isinstance(new, numeric):
        return DoubleType()
    return StringType()


def only_additions(old: DataType, new: DataType) -> bool:
    """Whether a table of type ``old`` becomes ``new`` by adding fields alone (to structs, at any depth, also
    inside arrays): what Delta's schema evolution does in a MERGE. Nullability is not compared."""
    if isinstance(old, StructType) and isinstance(new, StructType):
        fields = {f.name: f.dataType for f in new.fields}
        return all(f.name in fields and only_additions(f.dataType, fields[f.name]) for f in old.fields)
    if isinstance(old, ArrayType) and isinstance(new, ArrayType):
        return only_additions(old.elementType, new.elementType)
    return type(old) is type(new) and (not isinstance(old, DecimalType) or old == new)


def conform(value: Column, source: DataType, target: DataType) -> Column:
    """``value`` (of type ``source``) with the fields of its structs, at any depth, in ``target``'s order, a null
    struct staying null: a table whose schema Delta evolved has its added fields last, the batch has them sorted.
    A value whose type is already ``target`` is kept as it is (not rebuilt field by field, arrays of structs
    element by element)."""
    if source == target:
        return value
    if isinstance(source, StructType) and isinstance(target, StructType):
        types = {f.name: f.dataType for f in source.fields}
        fields = [conform(value[f.name], types[f.name], f.dataType).alias(f.name) for f in target.fields]
        return F.when(value.isNull(), F.lit(None)).otherwise(F.struct(*fields))
    if isinstance(source, ArrayType) and isinstance(target, ArrayType) and \
            isinstance(source.elementType, StructType | ArrayType):
        element, wanted = source.elementType, target.elementType
        return F.transform(value, lambda item: conform(item, element, wanted))
    return value


def parse(text: Column, schema: StructType) -> Column:
    """``text`` (normalized Extended JSON) parsed with ``schema``."""
    return F.from_json(text, schema, _JSON_OPTIONS)


def typed_columns(parsed: Column, schema: StructType) -> list[Column]:
    """One typed column per top-level field of ``schema`` from the struct column ``parsed``."""
    return [_convert(parsed[f.name], f.dataType, f.metadata).alias(f.name) for f in schema.fields]


def _needs_conversion(dtype: DataType, metadata: dict[str, Any] | None = None) -> bool:
    """Whether :func:`_convert` changes a value of ``dtype``: a marked field, an Extended JSON wrapper at any
    depth. Plain values, structs and arrays of them are kept as parsed (rebuilding them field by field, arrays
    element by element through a lambda, cost as much as parsing them and give the same value)."""
    if metadata and (metadata.get(EPOCH_MILLIS) or metadata.get(BASE64)):
        return True
    if isinstance(dtype, ArrayType):
        return _needs_conversion(dtype.elementType)
    if not isinstance(dtype, StructType):
        return False
    names = frozenset(dtype.fieldNames())
    if names in _WRAPPERS or (names and all(name.startswith("$") for name in names)):
        return True
    return any(_needs_conversion(f.dataType, f.metadata) for f in dtype.fields)


def _convert(value: Column, dtype: DataType, metadata: dict[str, Any] | None = None) -> Column:
    if not _needs_conversion(dtype, metadata):
        return value
    if metadata and metadata.get(EPOCH_MILLIS):
        return F.timestamp_millis(value.cast("long"))
    if metadata and metadata.get(BASE64):
        return F.unbase64(value.cast("string"))
    if isinstance(dtype, ArrayType):
        element = dtype.elementType
        return F.transform(value, lambda item: _convert(item, element))
    if not isinstance(dtype, StructType):
        return value
    names = frozenset(dtype.fieldNames())
    if names in _WRAPPERS:
        return _unwrap(value, dtype, names)
    if names and all(name.startswith("$") for name in names):
        return F.to_json(value)  # wrappers of different kinds merged by inference: keep the JSON text
    fields = [_convert(value[f.name], f.dataType, f.metadata).alias(f.name) for f in dtype.fields]
    return F.when(value.isNull(), F.lit(None)).otherwise(F.struct(*fields))


def _unwrap(value: Column, dtype: StructType, names: frozenset[str]) -> Column:
    """The Spark value of one Extended JSON wrapper."""
    if names == {"$oid"} or names == {"$symbol"} or "$code" in names:
        return value[next(iter(names - {"$scope"}))].cast(StringType())
    if names == {"$date"}:
        inner = dtype["$date"].dataType
        if isinstance(inner, LongType):
            return F.timestamp_millis(value["$date"])
        text = value["$date"].cast(StringType())  # relaxed ISO-8601 text (or a mix of forms)
        return F.coalesce(F.timestamp_millis(text.try_cast(LongType())), text.try_cast(TimestampType()))
    if names == {"$numberDecimal"}:
        return value["$numberDecimal"].cast(StringType()).try_cast(DECIMAL)
    if names == {"$numberDouble"}:
        return value["$numberDouble"].cast(DoubleType())
    if names in ({"$numberLong"}, {"$numberInt"}):
        return value[next(iter(names))].cast(LongType())
    if "$binary" in names:
        binary = value["$binary"]
        if isinstance(dtype["$binary"].dataType, StructType):
            return F.unbase64(binary["base64"])
        return F.unbase64(binary.cast(StringType())).cast(BinaryType())
    if names == {"$regex", "$options"}:
        return F.when(value.isNotNull(), F.struct(value["$regex"].alias("pattern"),
                                                  value["$options"].alias("options")))
    if names == {"$regularExpression"}:
        regex = value["$regularExpression"]
        return F.when(value.isNotNull(), F.struct(regex["pattern"].alias("pattern"),
                                                  regex["options"].alias("options")))
    if names == {"$timestamp"}:
        stamp = value["$timestamp"]
        return F.when(value.isNotNull(), F.struct(stamp["t"].cast(LongType()).alias("t"),
                                                  stamp["i"].cast(LongType()).alias("i")))
    if names == {"$minKey"}:
        return F.when(value.isNotNull(), F.lit("MinKey"))
    if names == {"$maxKey"}:
        return F.when(value.isNotNull(), F.lit("MaxKey"))
    return F.lit(None).cast(StringType())  # $undefined



def mark_connect_types(parse_schema: StructType, connect_schemas: Iterable[str]) -> StructType:
    """``parse_schema`` with the fields that Connect schemas (ExtractNewDocumentState with schemas) type as
    ``org.apache.kafka.connect.data.Timestamp`` or ``bytes`` marked to become timestamps and binary."""
    marks: dict[tuple[str, ...], str] = {}
    for text in connect_schemas:
        _connect_marks(json.loads(text), (), marks)
    return _marked(parse_schema, (), marks) if marks else parse_schema


def _connect_marks(node: Any, path: tuple[str, ...], marks: dict[tuple[str, ...], str]) -> None:
    if not isinstance(node, dict):
        return
    if node.get("name") == "org.apache.kafka.connect.data.Timestamp":
        marks[path] = EPOCH_MILLIS
    elif node.get("type") == "bytes":
        marks[path] = BASE64
    for field in node.get("fields") or ():
        _connect_marks(field, (*path, str(field.get("field"))), marks)


def _marked(dtype: StructType, path: tuple[str, ...], marks: dict[tuple[str, ...], str]) -> StructType:
    fields = []
    for f in dtype.fields:
        here = (*path, f.name)
        inner = _marked(f.dataType, here, marks) if isinstance(f.dataType, StructType) else f.dataType
        mark = marks.get(here)
        fields.append(StructField(f.name, inner, True, {**f.metadata, mark: True} if mark else f.metadata))
    return StructType(fields)
