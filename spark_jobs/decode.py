"""Kafka records of the connector's topics -> one row per change event, whatever format the worker wrote.

:func:`decode` reads the ``key``/``value`` bytes of ``spark.read.format("kafka")`` rows with one ``from_json``
per record and gives the columns of :data:`CHANGE_COLUMNS`. Formats:

* ``auto`` (default): the Debezium envelope written by JsonConverter with schemas (``{"schema", "payload"}``),
  without schemas (the envelope itself), or by Debezium's CloudEventsConverter as structured JSON (``op`` and
  ``source`` fields from the ``iodebezium*`` extension attributes, ``before``/``after``/``updateDescription``
  from ``data``, with or without its own schema). Tombstones (null values) are deletes.
* ``new-document-state``: records flattened by ExtractNewDocumentState: the value is the document itself (with
  or without a Connect schema); a null value or ``__deleted: true`` is a delete; dates typed as Connect
  ``Timestamp`` become timestamps (see :func:`spark_jobs.schema.mark_connect_types`). The SMT's
  ``add.fields=source.ts_ms,source.ord`` (``__source_ts_ms``, ``__source_ord``) give the ``source`` position.

A record that cannot be decoded keeps its coordinates, its value text and gets a ``reason``; nothing is dropped
silently (``value_text`` is null on the rows that can be used).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from spark_jobs.columns import built

__all__ = ["CHANGE_COLUMNS", "FORMATS", "KEY_FUNCTION", "PAYLOAD_FUNCTION", "SCHEMA_MEMBER", "decode",
           "jvm_functions", "plain_key_id", "schema_prefix"]

log = logging.getLogger(__name__)

FORMATS = ("auto", "new-document-state")
OPS = ("c", "u", "d", "r")

_SOURCE = ("struct<ts_ms: bigint, snapshot: string, db: string, collection: string, ord: bigint, lsid: string, "
           "txnNumber: bigint>")
_UPDATE = "struct<removedFields: array<string>, updatedFields: string, truncatedArrays: string>"
_ENVELOPE = f"before: string, after: string, updateDescription: {_UPDATE}, source: {_SOURCE}, op: string, ts_ms: bigint"
_DATA = f"before: string, after: string, updateDescription: {_UPDATE}"
_CE = ("specversion: string, iodebeziumop: string, iodebeziumtsms: string, iodebeziumsnapshot: string, "
       "iodebeziumdb: string, iodebeziumcollection: string, iodebeziumord: bigint, iodebeziumlsid: string, "
       "iodebeziumtxnNumber: string, time: string")
# Top-level "source" is a string: a struct in the schemaless envelope, a URI in CloudEvents.
_TOP = _ENVELOPE.replace(f"source: {_SOURCE}", "source: string")
VALUE_SCHEMA = (f"struct<{_TOP}, payload: struct<{_ENVELOPE}>, {_CE}, "
                f"data: struct<{_DATA}, payload: struct<{_DATA}>>, _corrupt_record: string>")
DOCUMENT_SCHEMA = "struct<schema: string, payload: string, _corrupt_record: string>"
KEY_SCHEMA = "struct<id: string, payload: struct<id: string>>"

CHANGE_COLUMNS = (
    "topic", "partition", "offset", "kafka_ts", "key", "op", "ts_ms", "source_ts_ms", "source_ord",
    "source_snapshot", "source_db", "source_collection", "source_lsid", "source_txn_number", "before", "after",
    "updated_fields", "removed_fields", "connect_schema", "tombstone", "reason", "value_text",
)
_CARRIED = ("topic", "partition", "offset", "kafka_ts", "key", "value_text")  # the record's columns kept as they are
_OPTIONS = {"allowNonNumericNumbers": "true", "mode": "PERMISSIVE"}
SCHEMA_MEMBER = '{"schema":'  # how JsonConverter with schemas begins every value
_REST = 2**31 - 1  # a substring's length reaching the end of any value
_PAYLOAD_ID = ',"payload":{"id":"'
_ID_MEMBER = '{"id":"'
_QUOTE = '\\"'  # an escaped quote inside a JSON string
# The JVM functions reading the payload of a JsonConverter value and the id of its key (see decode)
PAYLOAD_FUNCTION = "spark_jobs_debezium_payload"
KEY_FUNCTION = "spark_jobs_debezium_key"
_MISSING: list[bool] = []  # the function was found missing once (said once per process)


def schema_prefix(value: str | None) -> str | None:
    """The text ``{"schema":<S>,`` that ``value`` (JsonConverter with schemas, compact) begins with, ``<S>`` being
    its whole Connect schema; None when it does not begin so."""
    if value is None or not value.startswith(SCHEMA_MEMBER):
        return None
    try:
        end = json.JSONDecoder().raw_decode(value, len(SCHEMA_MEMBER))[1]
    except ValueError:
        return None
    return value[:end + 1] if value[end:end + 1] == "," else None


def decode(records: DataFrame, fmt: str = "auto", prefixes: Mapping[str, str] | None = None,
           functions: bool | None = None) -> DataFrame:
    """Change rows (:data:`CHANGE_COLUMNS`) from Kafka source rows (key, value, topic, partition, offset,
    timestamp). ``prefixes``: per topic, the :func:`schema_prefix` its records' values are expected to begin with
    (the ``auto`` format only): a value that does begin with it is parsed without its ``schema`` member.
    ``functions``: whether the caller registered the JVM functions (:func:`jvm_functions`); None: registered here.

    The Connect schema of JsonConverter's values is the same for every record of a topic and is two thirds of each
    value (2,304 of 3,665 bytes in the benchmark's records); the parse, though it keeps nothing of it, tokenizes
    it. The value whose first bytes are exactly the topic's ``{"schema":<S>,`` (compared byte for byte) is parsed
    as ``{`` and the bytes after them: the same members but ``schema``, which the parse schema does not read, so
    the same row (decoding and caching 513,172 records, the same rows to the last: 9.6 s of JVM CPU against
    11.6 s, medians of 3 interleaved passes in one JVM; benchmarks/results.md 2026-11-29). Any other value (a
    tombstone, another schema, another format) is parsed whole as before.

    In the ``auto`` format the payload of a JsonConverter value is read by :data:`PAYLOAD_FUNCTION` when the
    session has it (:func:`jvm_functions`), ``from_json`` parsing only the values it gives no row for (anything
    but a plain ``{"schema", "payload"}`` or ``{"payload"}`` envelope, see ``spark_jobs/java``). The function is
    given the whole value and passes over the schema member itself: it keeps the ``{"schema":<S>,`` the last
    value began with and reads a value beginning with exactly those bytes from the member after them (so
    ``prefixes`` only serve ``from_json``: without the function). Full runs of 508,090 records alternating in one
    JVM: 9.24 s against 9.52 s, JVM CPU 15.0 against 15.7 s (medians of the last 6 of 7 rounds; no sample job
    for the prefix, no copy of each value without it; benchmarks/results.md 2026-11-30 23:29). Spark's
    ``from_json`` builds a JSON parser over an ``InputStreamReader`` for each value, decodes every string into
    Java's UTF-16 and encodes it again into UTF-8 (the ``after`` document of ~1 KB among them); the function reads
    the value's bytes once and copies each string's bytes. Full runs of 508,090 records alternating in one JVM:
    13.75 s against 15.0 s, 21.4 s of JVM CPU against 23.9 s (medians of the last 5 of 6 rounds, lower in 4 of 5
    pairs; decoding alone 9.1 against 11.5 s of JVM CPU, the same rows; benchmarks/results.md 2026-11-30). In
    every format a record key's id is read by :data:`KEY_FUNCTION` likewise, :func:`plain_key_id` and the key's
    ``from_json`` only where it gives none (decoding alone 5.75 against 6.05 s, JVM CPU 8.5 against 8.8 s, medians
    of the last 5 of 6 rounds, lower in 4 of 5 pairs)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    functions = jvm_functions(records.sparkSession) if functions is None else functions
    chosen = tuple(sorted((prefixes or {}).items())) if fmt == "auto" else ()
    frame = records
    for step in _steps(fmt, chosen, functions):
        frame = frame.select(*step[1]) if step[0] == "select" else frame.withColumn(step[1], step[2])
    return frame


# A step of decode's plan: ("select", columns) or ("with", name, column)
_Step = tuple[Any, ...]


def _steps(fmt: str, prefixes: tuple[tuple[str, str], ...], functions: bool) -> tuple[_Step, ...]:
    """The steps of :func:`decode`'s plan, their columns built once per JVM (:func:`spark_jobs.columns.built`): the
    same expressions every run, ~400 py4j calls to build."""
    return built(("decode", fmt, prefixes, functions), lambda: _build_steps(fmt, prefixes, functions))


def _build_steps(fmt: str, prefixes: tuple[tuple[str, str], ...], functions: bool) -> tuple[_Step, ...]:
    value_text = F.col("value").cast("string")
    parse_text = value_text
    for topic, prefix in prefixes:
        stripped = F.concat(F.lit(bytearray(b"{")), F.substring(F.col("value"), len(prefix.encode()) + 1, _REST))
        parse_text = F.when((F.col("topic") == topic) & value_text.startswith(prefix), stripped.cast("string")) \
            .otherwise(parse_text)
    text: _Step = ("select", [
        F.col("topic"), F.col("partition"), F.col("offset"), F.col("timestamp").alias("kafka_ts"),
        F.col("key").cast("string").alias("key_text"), value_text.alias("value_text"),
        *([parse_text.alias("parse_text")] if prefixes else [])])
    key = F.from_json("key_text", KEY_SCHEMA, _OPTIONS)
    parsed_key = F.coalesce(key["payload"]["id"], key["id"], F.col("key_text"))
    fast_key = [F.call_function(KEY_FUNCTION, F.col("key_text"))] if functions else []
    keyed: _Step = ("with", "key", F.coalesce(*fast_key, plain_key_id(F.col("key_text")), parsed_key))
    parse_name = "parse_text" if prefixes else "value_text"
    changes = _envelopes(parse_name, fast=functions) if fmt == "auto" else _documents()
    reason = _reason()
    # the value text is only kept for the rejects table: the change rows are cached and it is the largest column
    last = {"reason": reason.alias("reason"),
            "value_text": F.when(reason.isNotNull(), F.col("value_text")).alias("value_text")}
    return (text, keyed, *changes, ("select", [last.get(name, F.col(name)) for name in CHANGE_COLUMNS]))


def plain_key_id(text: Column) -> Column:
    """The ``id`` of a key as JsonConverter writes Debezium's MongoDB keys (with schemas: ``{"schema":{...},
    "payload":{"id":"<id>"}}``, without: ``{"id":"<id>"}``) found by byte comparisons instead of a JSON parse,
    when ``<id>`` holds no escape but ``\\"`` and no control character; null otherwise (the caller then parses
    the key). An ObjectId's ``{\\"$oid\\": \\"...\\"}`` is such an id.

    Spark 4.0 builds a JSON parser per value over an ``InputStreamReader`` (an 8 KB buffer each): parsing the
    benchmark's 1,021,262 keys cost 4.7 s of JVM CPU on top of reading them (15.1 against 10.4 s), and decoding its
    1,026,344 records took 18.0 s instead of 19.0 s, 27.6 s of JVM CPU instead of 29.5 s, the same keys (medians
    of 4 alternating passes in one JVM; benchmarks/results.md 2026-11-30)."""
    # without the payload member substring_index gives the whole key back, whose quotes fail the test below
    with_schema = F.substring_index(text, _PAYLOAD_ID, -1)
    body = F.when(text.startswith(SCHEMA_MEMBER) & with_schema.endswith('"}}'),
                  with_schema.substr(F.lit(1), F.length(with_schema) - 3)) \
        .when(text.startswith(_ID_MEMBER) & text.endswith('"}'),
              text.substr(F.lit(len(_ID_MEMBER) + 1), F.length(text) - len(_ID_MEMBER) - 2))
    rest = F.replace(body, F.lit(_QUOTE), F.lit(""))
    plain = ~rest.contains('"') & ~rest.contains("\\") & ~rest.rlike("[\\x00-\\x1f]")
    return F.when(plain, F.replace(body, F.lit(_QUOTE), F.lit('"')))


def jvm_functions(spark: SparkSession) -> bool:
    """Whether :data:`PAYLOAD_FUNCTION` and :data:`KEY_FUNCTION` (and :data:`spark_jobs.schema.FITS_FUNCTION`) are
    (now) registered in ``spark``'s session: the
    JVM class ``spark_jobs.decode.DebeziumFunction`` (``spark_jobs/java``, compiled into a jar by
    ``stack.spark_java``) is on the driver's class path. Registered again at each call (a session's temporary
    functions can be dropped)."""
    jvm = spark._jvm
    if jvm is None:
        return False
    try:
        jvm.spark_jobs.decode.DebeziumFunction.register(spark._jsparkSession, f"struct<{_ENVELOPE}>")
    except Exception as exc:  # noqa: BLE001 - py4j: the class is not there (a JavaPackage, not callable) or fails
        if not _MISSING:
            log.info("spark_jobs' JVM functions are not on the class path (%s): values are parsed with from_json "
                     "alone", str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        _MISSING.append(True)
        return False
    return True


def _envelopes(parse_text: str, fast: bool = False) -> list[_Step]:
    # The value's text is parsed whole unless :func:`decode` was given its topic's schema prefix: cutting
    # ``payload`` out by searching the text (instr/substring, character positions) cost three times the parse
    # itself (100,000 records: 10.7 s against 2.7 s); a known prefix is a byte comparison and a byte offset.
    if fast:  # the payload read by the JVM function; from_json only where it gives none (see decode)
        # the whole value: the function passes over the schema member itself (a prefix it learns, see spark_jobs/java)
        steps: list[_Step] = [
            ("with", "_payload", F.call_function(PAYLOAD_FUNCTION, F.col("value_text"))),
            ("with", "v", F.when(F.col("_payload").isNull(), F.from_json(parse_text, VALUE_SCHEMA, _OPTIONS)))]
        p = F.coalesce(F.col("_payload"), F.col("v.payload"))
    else:
        steps = [("with", "v", F.from_json(parse_text, VALUE_SCHEMA, _OPTIONS))]
        p = F.col("v.payload")
    env, data = F.col("v"), F.col("v.data")
    top_source = F.when(env["specversion"].isNull(), F.from_json(env["source"], _SOURCE, _OPTIONS))

    def pick(field: str) -> Column:
        return F.coalesce(p[field], env[field], data["payload"][field], data[field])

    def source(field: str, attribute: str, kind: str) -> Column:
        return F.coalesce(p["source"][field], top_source[field], env[attribute].cast(kind))

    update = pick("updateDescription")
    return [*steps, ("select", [
        *(F.col(name) for name in _CARRIED),
        F.coalesce(p["op"], env["op"], env["iodebeziumop"]).alias("op"),
        F.coalesce(p["ts_ms"], env["ts_ms"], F.unix_millis(env["time"].try_cast("timestamp"))).alias("ts_ms"),
        source("ts_ms", "iodebeziumtsms", "bigint").alias("source_ts_ms"),
        source("ord", "iodebeziumord", "bigint").alias("source_ord"),
        source("snapshot", "iodebeziumsnapshot", "string").alias("source_snapshot"),
        source("db", "iodebeziumdb", "string").alias("source_db"),
        source("collection", "iodebeziumcollection", "string").alias("source_collection"),
        source("lsid", "iodebeziumlsid", "string").alias("source_lsid"),
        source("txnNumber", "iodebeziumtxnNumber", "bigint").alias("source_txn_number"),
        pick("before").alias("before"), pick("after").alias("after"),
        update["updatedFields"].alias("updated_fields"), update["removedFields"].alias("removed_fields"),
        F.lit(None).cast("string").alias("connect_schema"),
        F.col("value_text").isNull().alias("tombstone"),
        F.col("v._corrupt_record").alias("corrupt"),
        (F.col("value_text").isNotNull() & p.isNull() & env["op"].isNull() & env["specversion"].isNull())
        .alias("foreign"),
    ])]


def _documents() -> list[_Step]:
    """ExtractNewDocumentState: the value is the new document; deletes are tombstones or ``__deleted``."""
    v = F.from_json("value_text", DOCUMENT_SCHEMA, _OPTIONS)
    wrapped = F.col("v.schema").isNotNull() & F.col("v.payload").isNotNull()
    doc = F.when(wrapped, F.col("v.payload")).otherwise(F.col("value_text"))
    # add.fields=op,source.ts_ms,source.ord (or ord) add the op and the source position (see tables.last_positions)
    meta = F.from_json(doc, "struct<__deleted: string, __op: string, __source_ts_ms: bigint, __source_ord: bigint, "
                            "__ord: bigint, __ts_ms: bigint>", _OPTIONS)
    deleted = F.lower(meta["__deleted"]) == "true"
    null = F.lit(None).cast("string")
    return [("with", "v", v), ("select", [
        *(F.col(name) for name in _CARRIED),
        F.when(F.col("value_text").isNull() | deleted, F.lit("d"))
        .otherwise(F.coalesce(meta["__op"], F.lit("u"))).alias("op"),
        meta["__ts_ms"].alias("ts_ms"), meta["__source_ts_ms"].alias("source_ts_ms"),
        F.coalesce(meta["__source_ord"], meta["__ord"]).alias("source_ord"), null.alias("source_snapshot"),
        null.alias("source_db"),
        null.alias("source_collection"), null.alias("source_lsid"),
        F.lit(None).cast("bigint").alias("source_txn_number"),
        null.alias("before"), F.when(~F.coalesce(deleted, F.lit(False)), doc).alias("after"),
        null.alias("updated_fields"), F.lit(None).cast("array<string>").alias("removed_fields"),
        F.when(wrapped, F.col("v.schema")).alias("connect_schema"),
        F.lit(False).alias("tombstone"),  # a null value is this format's delete event, not an extra record
        F.col("v._corrupt_record").alias("corrupt"),
        F.lit(False).alias("foreign"),
    ])]


def _reason() -> Column:
    """Why a change row cannot be used (null when it can)."""
    op = F.col("op")
    return (
        F.when(F.col("key").isNull(), F.lit("record has no key"))
        .when(F.col("tombstone"), F.lit(None))
        .when(F.col("corrupt").isNotNull(), F.lit("value is not valid JSON"))
        .when(F.col("foreign"), F.lit("not a Debezium change event (no op, payload or CloudEvents envelope)"))
        .when(op.isNull(), F.lit("change event without op"))
        .when(~op.isin(*OPS), F.concat(F.lit("unknown op '"), op, F.lit("'")))
        .when(op.isin("c", "r") & F.col("after").isNull(), F.concat(F.lit("op '"), op, F.lit("' without after")))
    )
