"""Record the golden fixtures of the converter and transform tests from the real Java classes.

    .venv/bin/python -m tests.tooling.java_golden.record          # re-record every fixture (about 20 s)

What it does: fetches the jars pinned in ``pom.xml`` next to this file (Kafka 4.3.1's connect-json,
connect-transforms and connect-runtime, Debezium 3.6.1.Final's MongoDB connector with its CloudEventsConverter and
ExtractNewDocumentState) once into ``.cache/java-golden/libs`` with Maven, writes the case corpus below to a
temporary file, runs ``Golden.java`` over it (``java -cp libs/* Golden.java``, no build step) and stores each case
with the Java result (key ``java``), under ``cases`` after a ``recorded_with`` object naming the Kafka and Debezium
versions and the JDK, in:

* ``tests/unit/converters/json_roundtrip_golden.json``: JsonConverter bytes, the data read back
  (``toConnectData``) and written again, per converter config;
* ``tests/unit/transforms/smt_golden.json``: Connect's SMTs, predicates and Debezium's ExtractNewDocumentState
  applied to records;
* ``tests/unit/converters/cloudevents_golden.json``: Debezium's CloudEventsConverter output.

The Java used is the one ``stack.procs.java()`` finds (17 on the recording machine): JDK 17 prints a few
floats and doubles with one digit more than JDK 19+ (``Float.toString``), whose output our JsonConverter
follows, so the corpus avoids such values. Inputs cross the boundary as JsonConverter envelopes. The MongoDB
records are the Debezium records of ``tests/unit/mongodb/data/debezium_records_golden.jsonl`` (recorded from
Debezium's own classes) plus records our ``ChangeEventConverter`` builds for heterogeneous documents, partial
updates, heartbeats and tombstones (that converter is itself checked against Debezium there). Re-record
after changing the corpus or the pinned versions; the tests never run Java.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path
from typing import Any

import bson
from bson import Decimal128, Int64, ObjectId, Regex, Timestamp
from bson.codec_options import CodecOptions, DatetimeConversion

from converters.json import JsonConverter
from stack import maven, procs
from stack.procs import CACHE_DIR

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
POM = HERE / "pom.xml"
LIBS = CACHE_DIR / "java-golden" / "libs"
TESTS = ROOT / "tests" / "unit"
MONGO_GOLDEN = TESTS / "mongodb" / "data" / "debezium_records_golden.jsonl"
SMT = "org.apache.kafka.connect.transforms"
EXTRACT = "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState"


def _complete(libs: Path) -> bool:
    return all((libs / name).is_file() for name in (
        "connect-json-4.3.1.jar", "connect-transforms-4.3.1.jar", "debezium-connector-mongodb-3.6.1.Final.jar"))


# --- JsonConverter corpus ------------------------------------------------------------------------------------
def _env(schema: Any, payload: Any) -> str:
    return json.dumps({"schema": schema, "payload": payload}, separators=(",", ":"))


def _t(kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "optional": False, **extra}


DEC = {"type": "bytes", "optional": False, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
       "parameters": {"scale": "2"}}
DATE = {"type": "int32", "optional": False, "name": "org.apache.kafka.connect.data.Date", "version": 1}
TIME = {"type": "int32", "optional": False, "name": "org.apache.kafka.connect.data.Time", "version": 1}
TS = {"type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp", "version": 1}
EVERYTHING = {
    "type": "struct", "optional": False, "name": "com.example.Everything", "version": 3, "doc": "all types",
    "parameters": {"p": "v"}, "fields": [
        {**_t("int8"), "field": "i8"}, {**_t("int16"), "field": "i16"}, {**_t("int32"), "field": "i32"},
        {**_t("int64"), "field": "i64"}, {**_t("float"), "field": "f32"}, {**_t("double"), "field": "f64"},
        {**_t("boolean"), "field": "b"}, {**_t("string"), "field": "s"}, {**_t("bytes"), "field": "raw"},
        {**DEC, "field": "dec"}, {**DATE, "field": "date"}, {**TIME, "field": "time"}, {**TS, "field": "ts"},
        {"type": "array", "optional": True, "items": _t("string"), "field": "tags"},
        {"type": "map", "optional": True, "keys": _t("string"), "values": {"type": "int64", "optional": True},
         "field": "counts"},
        {"type": "map", "optional": True, "keys": _t("int32"), "values": _t("string"), "field": "by_int"},
        {"type": "struct", "optional": True, "name": "com.example.Inner", "fields": [
            {"type": "string", "optional": True, "default": "dflt", "field": "with_default"},
            {"type": "int32", "optional": True, "field": "maybe"},
            {"type": "array", "optional": False, "items": {"type": "struct", "optional": False, "fields": [
                {**_t("double"), "field": "x"}]}, "field": "points"},
        ], "field": "inner"},
        {"type": "int64", "optional": True, "default": 42, "field": "answer"},
        {"type": "boolean", "optional": False, "default": True, "field": "flag"},
    ]}
EVERYTHING_VALUE = {
    "i8": -128, "i16": 32767, "i32": -2147483648, "i64": 9223372036854775807, "f32": 0.1, "f64": 1e-7,
    "b": True, "s": "h\u00e9llo \u2028 \ud83d\ude00 \"q\" \\ /", "raw": "AAEC/w==", "dec": "AN8=", "date": 19000,
    "time": 45296789, "ts": 1700000000123, "tags": ["a", "", "c"], "counts": {"x": 1, "y": None},
    "by_int": [[1, "one"], [-2, "minus two"]],
    "inner": {"with_default": None, "maybe": None, "points": [{"x": 1.5}, {"x": -0.0}]},
    "answer": None, "flag": False,
}
JSON_INPUTS: dict[str, str] = {
    "everything": _env(EVERYTHING, EVERYTHING_VALUE),
    "everything_nulls": _env(EVERYTHING, {**EVERYTHING_VALUE, "tags": None, "counts": None, "by_int": None,
                                          "inner": None}),
    "decimal_scales": _env({"type": "struct", "optional": False, "fields": [
        {**DEC, "parameters": {"scale": "0"}, "field": "s0"}, {**DEC, "parameters": {"scale": "5"}, "field": "s5"},
        {**DEC, "optional": True, "field": "opt"}]}, {"s0": "/w==", "s5": "AYagoA==", "opt": None}),
    "doubles": _env({"type": "array", "optional": False, "items": _t("double")},
                    [0.0, 1.0, 100.0, 1e7, 1.0e-3, 9.999e-4, 123456789.125, 1e21, 5e-324, 1.7976931348623157e308,
                     "NaN", "Infinity", "-Infinity"]),
    "floats": _env({"type": "array", "optional": False, "items": _t("float")},
                   [0.0, 1.1, 3.4028234663852886e38, 1.401298464324817e-45, 16777217.0, 1e-5]),
    "optional_default_top": _env({"type": "string", "optional": True, "default": "top"}, None),
    "named_primitive": _env({"type": "string", "optional": False, "name": "io.debezium.data.Json", "version": 1},
                            "{\"a\": 1}"),
    "schemaless_nested": _env(None, {"a": [1, 2.5, None, True, "x"], "b": {"c": {"d": []}}, "e": 12345678901}),
    "empty_struct": _env({"type": "struct", "optional": False, "fields": []}, {}),
    "map_struct_values": _env({"type": "map", "optional": False, "keys": _t("string"), "values": {
        "type": "struct", "optional": True, "fields": [{**_t("int32"), "field": "n"}]}}, {"k": {"n": 1}, "z": None}),
}
JSON_CONFIGS: dict[str, dict[str, str]] = {
    "default": {},
    "no_schemas": {"schemas.enable": "false"},
    "numeric": {"decimal.format": "NUMERIC"},
    "no_replace": {"replace.null.with.default": "false"},
    "no_schemas_numeric": {"schemas.enable": "false", "decimal.format": "NUMERIC"},
}


def json_cases() -> list[dict[str, Any]]:
    """Every input under every converter config."""
    return [{"name": f"{name}.{config_name}", "kind": "json", "config": config, "input": text}
            for name, text in JSON_INPUTS.items() for config_name, config in JSON_CONFIGS.items()]


# --- MongoDB records -----------------------------------------------------------------------------------------
def _mongo_records() -> list[dict[str, Any]]:
    """Debezium's records (golden) plus records of heterogeneous documents, deletes and tombstones."""
    from connect.api.data import STRING
    from connectors.mongodb.event_converter import ChangeEventConverter
    from connectors.mongodb.releases import RELEASES

    records = []
    for line in MONGO_GOLDEN.read_text().splitlines():
        golden = json.loads(line)
        if "recorded_with" in golden:
            continue
        records.append({"topic": golden["topic"], "key": golden["key"], "value": golden["value"],
                        "headers": [], "timestamp": 1800000000000})
    # the release of the Java classes pinned in pom.xml (the default is the newest, whose source.version differs)
    conv = ChangeEventConverter(topic_prefix="fulfillment", run_id="run-1", clock_ms=lambda: 1_800_000_000_000,
                                release=RELEASES["3.6.1.Final"])
    writer = JsonConverter()
    writer.configure({}, False)
    token = {"_data": "8263A1B2C3000000012B022C0100296E5A1004"}
    wall = datetime(2026, 11, 21, 12, 48, 4, 704000)
    docs: list[dict[str, Any]] = [
        {"_id": ObjectId("65a1b2c3d4e5f60718293a4b"), "name": "mixed", "n": 1, "big": Int64(2 ** 40),
         "price": Decimal128("12.50"), "when": datetime(2024, 1, 2, 3, 4, 5, 678000), "re": Regex("^a.*", "i"),
         "ts": Timestamp(1700000000, 3), "bin": bson.Binary(b"\x00\x01\x02"), "nested": {"a": {"b": [1, 2, 3]}},
         "objs": [{"x": 1}, {"x": 2, "y": "z"}], "empty": [], "nul": None, "f": 2.5, "ok": True},
        {"_id": 7, "name": 42, "nested": "now a string", "list": ["a", "b"]},
        {"_id": "str-id", "deep": {"l1": {"l2": {"l3": {"v": 1}}}}, "mixed_array": [1, "two", 3.0]},
        {"_id": 9, "bad-name": 1, "1st": "x", "ünï": True, "nested": {"a.b": 2, "$x": [], "ok": [1]}},
    ]
    events = []
    for i, doc in enumerate(docs):
        events.append({"_id": token, "operationType": "insert", "clusterTime": Timestamp(1795265284, i + 1),
                       "wallTime": wall, "ns": {"db": "inventory", "coll": "things"},
                       "documentKey": {"_id": doc["_id"]}, "fullDocument": doc})
    events.append({"_id": token, "operationType": "update", "clusterTime": Timestamp(1795265285, 1), "wallTime": wall,
                   "ns": {"db": "inventory", "coll": "things"}, "documentKey": {"_id": 7},
                   "updateDescription": {"updatedFields": {"name": "renamed", "nested.x": 1},
                                         "removedFields": ["list"], "truncatedArrays": []},
                   "fullDocument": {"_id": 7, "name": "renamed", "nested": {"x": 1}}})
    events.append({"_id": token, "operationType": "update", "clusterTime": Timestamp(1795265285, 2), "wallTime": wall,
                   "ns": {"db": "inventory", "coll": "things"}, "documentKey": {"_id": 8},
                   "updateDescription": {"updatedFields": {"name": "partial", "n": Int64(3), "deep.x": 1.5},
                                         "removedFields": ["gone"], "truncatedArrays": []}})
    events.append({"_id": token, "operationType": "delete", "clusterTime": Timestamp(1795265286, 1), "wallTime": wall,
                   "ns": {"db": "inventory", "coll": "things"}, "documentKey": {"_id": 7}})
    options: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)
    for change in events:
        change = bson.decode(bson.encode(change), codec_options=options)
        for rec in conv.to_records(change):
            records.append({
                "topic": rec.topic,
                "key": _text(writer.from_connect_data(rec.topic, rec.key_schema, rec.key)),
                "value": _text(writer.from_connect_data(rec.topic, rec.value_schema, rec.value)),
                "headers": [[h.key, _text(writer.from_connect_data(rec.topic, h.schema, h.value))]
                            for h in rec.headers if h.schema is STRING][:1],
                "timestamp": 1800000000000,
            })
    records.append(_heartbeat())
    return records


def _heartbeat() -> dict[str, Any]:
    key_schema = {"type": "struct", "optional": False, "name": "io.debezium.connector.common.ServerNameKey",
                  "fields": [{**_t("string"), "field": "serverName"}]}
    value_schema = {"type": "struct", "optional": False, "name": "io.debezium.connector.common.Heartbeat",
                    "fields": [{"type": "int64", "optional": False, "name": "org.apache.kafka.connect.data.Timestamp",
                                "version": 1, "field": "ts_ms"}]}
    return {"topic": "__debezium-heartbeat.fulfillment", "key": _env(key_schema, {"serverName": "fulfillment"}),
            "value": _env(value_schema, {"ts_ms": 1800000000000}), "headers": [], "timestamp": 1800000000000}


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8")


def _plain_records() -> list[dict[str, Any]]:
    """Small records with and without schemas for Connect's SMTs."""
    schema = {"type": "struct", "optional": False, "name": "com.example.Order", "version": 2, "fields": [
        {**_t("int64"), "field": "id"}, {"type": "string", "optional": True, "field": "email"},
        {"type": "int32", "optional": True, "default": 5, "field": "qty"},
        {"type": "string", "optional": True, "field": "created"},
        {"type": "int64", "optional": True, "field": "epoch"},
        {"type": "struct", "optional": True, "name": "com.example.Addr", "fields": [
            {"type": "string", "optional": True, "field": "city"},
            {"type": "struct", "optional": True, "fields": [{"type": "double", "optional": True, "field": "lat"}],
             "field": "geo"}], "field": "addr"},
        {**TS, "optional": True, "field": "at"},
        {"type": "array", "optional": True, "items": _t("string"), "field": "tags"}]}
    value = {"id": 12, "email": "a@b.c", "qty": None, "created": "2024-03-04 05:06:07", "epoch": 1700000000123,
             "addr": {"city": "Oslo", "geo": {"lat": 59.9}}, "at": 1700000000123, "tags": ["x"]}
    key = _env({"type": "struct", "optional": False, "fields": [{**_t("int64"), "field": "id"}]}, {"id": 12})
    schemaless = {"id": 12, "email": "a@b.c", "created": "2024-03-04 05:06:07", "epoch": 1700000000123,
                  "addr": {"city": "Oslo", "geo": {"lat": 59.9}}}
    return [
        {"topic": "shop.orders", "partition": 3, "timestamp": 1700000000123, "key": key, "value": _env(schema, value),
         "headers": [["h1", _env(_t("string"), "v1")]]},
        {"topic": "shop.orders", "partition": None, "timestamp": 1700000000123, "key": key,
         "value": _env(schema, {**value, "addr": None, "email": None}), "headers": []},
        {"topic": "shop.orders", "partition": 0, "timestamp": 1700000000123, "key": key, "value": None,
         "headers": []},
        {"topic": "other", "partition": 1, "timestamp": 86400000, "key": _env(None, "k"),
         "value": _env(None, schemaless), "headers": [["h1", _env(None, "v")], ["h2", _env(None, 1)]]},
    ]


def _timestamp_records() -> list[dict[str, Any]]:
    """Records whose whole value is a Connect Timestamp (and one whose value is null)."""
    ts = {**TS, "optional": True}
    return [{"topic": "clock", "partition": 0, "timestamp": 1, "key": None, "value": _env(ts, 1700000000123),
             "headers": []},
            {"topic": "clock", "partition": 0, "timestamp": 1, "key": None, "value": _env(ts, None), "headers": []}]


def _smt(name: str, cls: str, config: dict[str, str], records: list[dict[str, Any]], kind: str = "transform"
         ) -> dict[str, Any]:
    return {"name": name, "kind": kind, "class": cls, "config": config, "records": records}


def smt_cases() -> list[dict[str, Any]]:
    """Connect's SMTs and predicates on plain records; ExtractNewDocumentState on MongoDB records."""
    plain, mongo = _plain_records(), _mongo_records()
    v = "$Value"
    cases = [
        _smt("insert_field", f"{SMT}.InsertField{v}", {"topic.field": "t", "partition.field": "p!",
                                                       "timestamp.field": "ts?", "static.field": "s",
                                                       "static.value": "sv"}, plain),
        _smt("insert_field_key", f"{SMT}.InsertField$Key", {"topic.field": "t!"}, plain),
        _smt("replace_field", f"{SMT}.ReplaceField{v}", {"exclude": "email", "renames": "id:order_id,qty:q"},
             plain),
        _smt("replace_field_include", f"{SMT}.ReplaceField{v}", {"include": "id,addr,missing"}, plain),
        _smt("replace_field_no_default", f"{SMT}.ReplaceField{v}", {"exclude": "tags",
                                                                    "replace.null.with.default": "false"}, plain),
        _smt("mask_field", f"{SMT}.MaskField{v}", {"fields": "email,qty,tags"}, plain),
        _smt("mask_field_replacement", f"{SMT}.MaskField{v}", {"fields": "email", "replacement": "***"}, plain),
        _smt("value_to_key", f"{SMT}.ValueToKey", {"fields": "id,email"}, plain),
        _smt("extract_field", f"{SMT}.ExtractField{v}", {"field": "addr"}, plain),
        _smt("extract_field_v2", f"{SMT}.ExtractField{v}", {"field": "addr.geo.lat", "field.syntax.version": "V2"},
             plain),
        _smt("extract_field_key", f"{SMT}.ExtractField$Key", {"field": "id"}, plain),
        _smt("flatten", f"{SMT}.Flatten{v}", {}, plain),
        _smt("flatten_delim", f"{SMT}.Flatten{v}", {"delimiter": "_"}, plain),
        _smt("cast", f"{SMT}.Cast{v}", {"spec": "id:string,qty:float64,epoch:int32"}, plain),
        _smt("cast_whole_key", f"{SMT}.Cast$Key", {"spec": "string"}, plain[3:]),
        _smt("regex_router", f"{SMT}.RegexRouter", {"regex": "shop\\.(.*)", "replacement": "archive-$1"}, plain),
        _smt("timestamp_router", f"{SMT}.TimestampRouter", {"topic.format": "${topic}_${timestamp}",
                                                            "timestamp.format": "yyyy.MM.dd-HH"}, plain),
        _smt("timestamp_converter_string", f"{SMT}.TimestampConverter{v}",
             {"field": "at", "target.type": "string", "format": "yyyy-MM-dd'T'HH:mm:ss.SSS"}, plain),
        _smt("timestamp_converter_parse", f"{SMT}.TimestampConverter{v}",
             {"field": "created", "target.type": "Timestamp", "format": "yyyy-MM-dd HH:mm:ss"}, plain),
        _smt("timestamp_converter_unix", f"{SMT}.TimestampConverter{v}",
             {"field": "epoch", "target.type": "Date"}, plain),
        _smt("timestamp_converter_seconds", f"{SMT}.TimestampConverter{v}",
             {"field": "at", "target.type": "unix", "unix.precision": "seconds"}, plain),
        _smt("header_from_copy", f"{SMT}.HeaderFrom{v}", {"fields": "id,addr", "headers": "the_id,the_addr",
                                                          "operation": "copy"}, plain[:2] + plain[3:]),
        _smt("header_from_move", f"{SMT}.HeaderFrom{v}", {"fields": "email", "headers": "mail",
                                                          "operation": "move"}, plain[:2] + plain[3:]),
        _smt("insert_header", f"{SMT}.InsertHeader", {"header": "origin", "value.literal": "cdc"}, plain),
        _smt("insert_header_number", f"{SMT}.InsertHeader", {"header": "n", "value.literal": "42"}, plain),
        _smt("drop_headers", f"{SMT}.DropHeaders", {"headers": "h1"}, plain),
        _smt("filter", f"{SMT}.Filter", {}, plain),
        _smt("set_schema_metadata", f"{SMT}.SetSchemaMetadata{v}", {"schema.name": "renamed", "schema.version": "9"},
             plain[:2]),
        _smt("hoist_field", f"{SMT}.HoistField{v}", {"field": "wrapped"}, plain),
        _smt("topic_name_matches", f"{SMT}.predicates.TopicNameMatches", {"pattern": "shop\\..*"}, plain,
             "predicate"),
        _smt("has_header_key", f"{SMT}.predicates.HasHeaderKey", {"name": "h2"}, plain, "predicate"),
        _smt("record_is_tombstone", f"{SMT}.predicates.RecordIsTombstone", {}, plain, "predicate"),
        _smt("cast_more", f"{SMT}.Cast{v}", {"spec": "at:string,epoch:float64,id:int8,email:boolean,qty:int16"},
             plain),
        _smt("cast_whole_value", f"{SMT}.Cast{v}", {"spec": "string"}, _timestamp_records()),
        _smt("timestamp_converter_whole", f"{SMT}.TimestampConverter{v}",
             {"target.type": "string", "format": "yyyy-MM-dd HH:mm:ss.SSS"}, _timestamp_records()),
        _smt("timestamp_converter_time", f"{SMT}.TimestampConverter{v}", {"field": "at", "target.type": "Time"},
             plain),
        _smt("timestamp_converter_from_string_unix", f"{SMT}.TimestampConverter{v}",
             {"field": "created", "target.type": "unix", "format": "yyyy-MM-dd HH:mm:ss",
              "unix.precision": "microseconds"}, plain),
        _smt("regex_router_named", f"{SMT}.RegexRouter", {"regex": "(?<a>[a-z]+)\\.(?<b>.*)",
                                                          "replacement": "${b}_${a}"}, plain),
        _smt("flatten_key", f"{SMT}.Flatten$Key", {"delimiter": "-"}, plain),
        _smt("replace_field_key", f"{SMT}.ReplaceField$Key", {"renames": "id:key_id"}, plain),
        _smt("mask_field_key", f"{SMT}.MaskField$Key", {"fields": "id", "replacement": "7"}, plain[:2]),
        _smt("header_from_key", f"{SMT}.HeaderFrom$Key", {"fields": "id", "headers": "kid", "operation": "move"},
             plain[:2]),
        _smt("value_to_key_schemaless", f"{SMT}.ValueToKey", {"fields": "id,missing"}, plain[3:]),
        _smt("insert_field_schemaless", f"{SMT}.InsertField{v}", {"timestamp.field": "ts", "topic.field": "t!"},
             plain[3:]),
        _smt("extract_field_v2_missing", f"{SMT}.ExtractField{v}", {"field": "addr.nope.x",
                                                                     "field.syntax.version": "V2"}, plain[3:]),
        _smt("flatten_mongo", f"{SMT}.Flatten{v}", {}, mongo[:2]),
        _smt("header_from_mongo", f"{SMT}.HeaderFrom{v}", {"fields": "source,op,transaction",
                                                           "headers": "source,op,transaction", "operation": "copy"},
             mongo[:3] + mongo[-1:]),
    ]
    extract_configs: dict[str, dict[str, str]] = {
        "default": {},
        "flatten": {"flatten.struct": "true", "flatten.struct.delimiter": "__"},
        "array_document": {"array.encoding": "document"},
        "rewrite": {"delete.tombstone.handling.mode": "rewrite", "add.fields": "op,ts_ms,db,collection",
                    "add.headers": "op,db"},
        "rewrite_with_id": {"delete.tombstone.handling.mode": "rewrite",
                            "delete.tombstone.handling.mode.rewrite-with-id": "true"},
        "drop": {"delete.tombstone.handling.mode": "drop"},
        "rewrite_with_tombstone": {"delete.tombstone.handling.mode": "rewrite-with-tombstone",
                                   "add.fields": "source.ts_ms,op:OP", "add.fields.prefix": "meta_"},
        "rewrite_with_tombstone_headers": {"delete.tombstone.handling.mode": "rewrite-with-tombstone",
                                           "add.headers": "op,db,ts_ms", "add.fields": "txnNumber,lsid"},
        "flatten_document_arrays": {"flatten.struct": "true", "array.encoding": "document"},
        "avro_names": {"field.name.adjustment.mode": "avro"},
        "avro_unicode_names": {"field.name.adjustment.mode": "avro_unicode"},
        "delete_to_tombstone": {"delete.tombstone.handling.mode": "delete-to-tombstone",
                                "add.headers": "op,source.ord", "add.headers.prefix": "h_"},
    }
    for name, config in extract_configs.items():
        cases.append(_smt(f"extract_new_document_state.{name}", EXTRACT, config, mongo))
    return cases


def cloudevents_cases() -> list[dict[str, Any]]:
    """Debezium's CloudEventsConverter over the MongoDB records, per converter config."""
    mongo = _mongo_records()
    copy = {"fields": "source,op,transaction", "headers": "source,op,transaction", "operation": "copy"}
    configs: dict[str, dict[str, str]] = {
        "default": {},
        "no_data_schemas": {"json.schemas.enable": "false"},
        "no_extensions": {"extension.attributes.enable": "false", "json.schemas.enable": "false"},
        "schema_name": {"schema.cloudevents.name": "my.CloudEvents", "json.schemas.enable": "false"},
    }
    cases = [{"name": name, "kind": "cloudevents", "config": config, "records": mongo}
             for name, config in configs.items()]
    cases.append({"name": "header_source", "kind": "cloudevents", "config": {"metadata.source": "header"},
                  "header_from": copy, "records": mongo})
    ids = {"header": "id,type", "value.literal": "x"}
    cases.append({"name": "header_source_generated_id", "kind": "cloudevents",
                  "config": {"metadata.source": "header,id:generate,type:generate"}, "header_from": copy,
                  "records": mongo})
    cases.append({"name": "header_source_no_schemas", "kind": "cloudevents",
                  "config": {"metadata.source": "header,id:generate,type:generate", "json.schemas.enable": "false"},
                  "header_from": copy, "records": mongo})
    cases.append({"name": "value_id_from_header", "kind": "cloudevents",
                  "config": {"metadata.source": "value,id:header,type:header", "json.schemas.enable": "false"},
                  "insert_headers": ids, "records": mongo[:2]})
    return cases


def _with_header_from(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """CloudEvents cases with ``header_from``: first run HeaderFrom (in Java too) so headers carry the metadata."""
    prepared = []
    for case in cases:
        if "insert_headers" in case:
            records = case["records"]
            for header in case["insert_headers"]["header"].split(","):
                [added] = _run([_smt("prep", f"{SMT}.InsertHeader", {"header": header, "value.literal":
                                                                      f"{header}-{case['insert_headers']['value.literal']}"},
                                     records)])
                records = added["results"]
            case = {**case, "records": records}
        if "header_from" in case:
            [transformed] = _run([_smt("prep", f"{SMT}.HeaderFrom$Value", case["header_from"], case["records"])])
            case = {**case, "records": [r if "error" not in r and r is not None else original for r, original in
                                        zip(transformed["results"], case["records"], strict=True)]}
        prepared.append(case)
    return prepared


def _run(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    libs = maven.ensure_libs(POM, LIBS, _complete, "golden-test Java")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(cases, handle)
    result = subprocess.run([procs.java(), "-cp", f"{libs}/*", str(HERE / "Golden.java"), handle.name],
                            capture_output=True, text=True, timeout=600, check=False)
    Path(handle.name).unlink()
    if result.returncode != 0:
        sys.exit(f"Golden.java failed:\n{result.stderr[-4000:]}")
    output: list[dict[str, Any]] = json.loads(result.stdout)
    return output


def recorded_with() -> dict[str, str]:
    """The versions whose classes produce the fixtures: those pinned in ``pom.xml``, and the JDK that ran them."""
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    properties = ET.parse(POM).getroot().find("m:properties", ns)
    assert properties is not None

    def pinned(name: str) -> str:
        return (properties.findtext(f"m:{name}", "", ns)).strip()

    java = subprocess.run([procs.java(), "-version"], capture_output=True, text=True, timeout=60, check=False)
    return {"kafka_connect": pinned("kafka.version"), "debezium": pinned("debezium.version"),
            "java": (java.stderr.splitlines() or ["?"])[0]}


def _store(path: Path, cases: list[dict[str, Any]]) -> None:
    results = _run(cases)
    fixture = [{**case, "java": {k: v for k, v in result.items() if k != "name"}}
               for case, result in zip(cases, results, strict=True)]
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"recorded_with": recorded_with(), "cases": fixture}, indent=1, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")
    print(f"{path.relative_to(ROOT)}: {len(fixture)} cases")


def main() -> None:
    """Record every fixture."""
    _store(TESTS / "converters" / "json_roundtrip_golden.json", json_cases())
    _store(TESTS / "transforms" / "smt_golden.json", smt_cases())
    _store(TESTS / "converters" / "cloudevents_golden.json", _with_header_from(cloudevents_cases()))


if __name__ == "__main__":
    main()


__all__ = ["base64", "main"]
