"""The wider-corpus golden scenario: BSON edge values, collection drop and rename, a database drop, every capture
mode and ``ExtractNewDocumentState`` with its main options, captured by several connectors of one Connect worker
from before the same operations.

    python -m compat.debezium.golden --scenario corpus --release 3.6.3.Final

The operations run first (as in the streaming scenario), then one connector per entry of :data:`CONNECTORS`, each
with its own ``topic.prefix`` (``<prefix>``, ``<prefix>-cs``...) and started at the cluster time before them: the
records of each connector's topics are compared in topic then offset order, every byte as written (run-specific
values replaced by :func:`compat.debezium.harness.raw_text`).

What SecantusDB does not accept is left out: dates after 9999-12-31 and before 0001-01-01 (its BSON decoder turns
dates into Python ``datetime``s). Symbols, undefined and DBPointers are inserted as raw BSON. The values Debezium's
``ExtractNewDocumentState`` cannot convert (:data:`EXOTIC`) are in a collection the SMT connectors do not capture.
"""

from __future__ import annotations

import datetime
import struct
from collections.abc import Callable
from typing import Any

from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.datetime_ms import DatetimeMS
from bson.raw_bson import RawBSONDocument

from compat.debezium import harness

DB = "golden_corpus"
DROPPED_DB = "golden_corpus_dropped"
UTC = datetime.UTC


def _deep(levels: int) -> dict[str, Any]:
    doc: dict[str, Any] = {"leaf": True}
    for level in range(levels):
        doc = {f"l{level}": doc}
    return doc


WIDE: list[dict[str, Any]] = [
    {"_id": 1, "i32_min": -2**31, "i32_max": 2**31 - 1, "i64_min": Int64(-2**63), "i64_max": Int64(2**63 - 1),
     "i64_small": Int64(5), "i64_over_i32": Int64(2**31), "minus_one": -1, "zero": 0},
    {"_id": 2, "dec_nan": Decimal128("NaN"), "dec_inf": Decimal128("Infinity"), "dec_neg_inf": Decimal128("-Infinity"),
     "dec_neg_zero": Decimal128("-0"), "dec_max": Decimal128("9.999999999999999999999999999999999E+6144"),
     "dec_min_exp": Decimal128("1E-6176"), "dec_zero_exp": Decimal128("0E-6176"), "dec_trailing": Decimal128("1.000"),
     "dec_small": Decimal128("-1.5E-10"), "dec_int": Decimal128("42")},
    {"_id": 3, "epoch": datetime.datetime(1970, 1, 1, tzinfo=UTC),
     "before_epoch": datetime.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
     "year_1": DatetimeMS(-62135596800000), "year_1900": datetime.datetime(1900, 1, 1, tzinfo=UTC),
     "last_ms": DatetimeMS(253402300799999), "leap": datetime.datetime(2000, 2, 29, tzinfo=UTC)},
    {"_id": 4, **{f"bin{subtype}": Binary(b"\x00\x01\xfe\xff", subtype) for subtype in (0, 1, 2, 5, 6, 7, 8)},
     "uuid_legacy": Binary(bytes(range(16)), 3), "uuid": Binary(bytes(range(16, 32)), 4),
     "vector": Binary(b"\x03\x00\x01\x02", 9), "user128": Binary(b"\x80", 0x80), "user255": Binary(b"", 0xFF),
     "empty_bin": Binary(b"", 0)},
    {"_id": 5, "re_flags": Regex("^a.c$", "ilmsux"), "re_none": Regex("a/b\"c\\d", ""), "re_u": Regex("\\w+", "u"),
     "code_quote": Code('var s = "q\\n";'), "ts_max": Timestamp(4294967295, 4294967295),
     "oid_zero": ObjectId("000000000000000000000000"), "oid_ff": ObjectId("ffffffffffffffffffffffff"),
     "dbref": {"$ref": "other", "$id": 7, "$db": "golden_corpus"}},
    {"_id": 6, "a.b": 1, "$dollar": 2, 'q"uote': 3, "back\\slash": 4, "ü": 5,
     "nested": {"x.y": {"$z": 1}, "$": [{"a.b": None}]}},
    {"_id": 7, "seps": "\u2028\u2029", "astral": "\U0001d11e\U0001f600\U0010fffd", "controls": "\x00\x01\x1f\x7f",
     "html": "</script><&>'", "bom": "\ufeff", "combining": "e\u0301", "rtl": "\u05e9\u05dc\u05d5\u05dd"},
    {"_id": 8, "deep": _deep(40), "nested_arrays": [[1, 2], [3]], "empty_doc": {}, "empty_array": [],
     "doc_array": [{"a": 1}, {"a": 2, "b": [{"c": None}]}], "docs_of_other_fields": [{"a": 1}, {"b": "x"}]},
    {"_id": 9, "min_subnormal": 5e-324, "min_normal": 2.2250738585072014e-308, "max": 1.7976931348623157e308,
     "e21": 1e21, "e22": 1e22, "e16": 1e16, "e7": 1e7, "below_e7": 9999999.0, "e_minus3": 1e-3, "e_minus4": 1e-4,
     "tenth": 0.1, "third": 1 / 3, "big_int": 9007199254740993.0, "neg_tiny": -1e-300, "neg_whole": -2.0,
     "neg_nan_zero": -0.0, "pi": 3.141592653589793},
]
EXOTIC: list[dict[str, Any]] = [
    {"_id": 1, "code_scope": Code("function(x) { return x + y; }", {"y": 1, "nested": {"z": [1, "s"]}})},
    {"_id": 2, "": "empty name", "nested": {"": 1}},
    {"_id": 3, "deep_array": [[[[[]]]]], "array_of_empty": [{}, [], {}]},
    {"_id": 4, "mixed": [1, "two", 3.5, None, {"four": 4}, [5], True, Int64(6)], "numbers": [1, 2.5, Int64(3)]},
    {"_id": 5, "min": MinKey(), "max": MaxKey(), "regexes": [Regex("a", "i")], "empty_docs": [{}, {}]},
]
"""Values Debezium's ``ExtractNewDocumentState`` rejects (README, where we differ): captured by the connector without
the SMT only."""
RAW_ID = 10
"""The document of the types pymongo cannot write as values: a symbol, undefined and a DBPointer (raw BSON)."""


def _raw_document() -> RawBSONDocument:
    def cstring(text: str) -> bytes:
        return text.encode() + b"\0"

    def string(text: str) -> bytes:
        return struct.pack("<i", len(text.encode()) + 1) + cstring(text)
    body = (b"\x10" + cstring("_id") + struct.pack("<i", RAW_ID) + b"\x0e" + cstring("symbol") + string("sym")
            + b"\x06" + cstring("undefined") + b"\x0c" + cstring("pointer") + string("golden_corpus.other")
            + bytes(range(12)) + b"\x02" + cstring("after") + string("raw"))
    return RawBSONDocument(struct.pack("<i", len(body) + 5) + body + b"\0")


CONNECTORS: dict[str, dict[str, str]] = {
    "": {"database.include.list": f"{DB},{DROPPED_DB}"},
    "-cs": {"collection.include.list": f"{DB}.ops", "capture.mode": "change_streams"},
    "-cspre": {"collection.include.list": f"{DB}.ops", "capture.mode": "change_streams_with_pre_image"},
    "-fullpre": {"collection.include.list": f"{DB}.ops", "capture.mode": "change_streams_update_full_with_pre_image"},
    "-unwrap": {"collection.include.list": f"{DB}.ops,{DB}.wide", "errors.tolerance": "all",
                "transforms": "unwrap",
                "transforms.unwrap.type": "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState"},
    "-unwrap2": {"collection.include.list": f"{DB}.ops,{DB}.wide", "errors.tolerance": "all",
                 "transforms": "unwrap",
                 "transforms.unwrap.type": "io.debezium.connector.mongodb.transforms.ExtractNewDocumentState",
                 "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
                 "transforms.unwrap.add.fields": "op,db,collection,source.snapshot",
                 "transforms.unwrap.add.headers": "op,collection", "transforms.unwrap.array.encoding": "document",
                 "transforms.unwrap.flatten.struct": "true", "transforms.unwrap.flatten.struct.delimiter": "__"},
}
"""The connectors: ``topic.prefix`` suffix and the keys besides :func:`config`'s. The ``ExtractNewDocumentState``
ones skip a record they cannot convert (``errors.tolerance=all``) rather than fail: none is expected to be."""
RECORDS = 109


def run_operations(client: Any) -> None:
    """The wide documents (and an update of some with edge values), the operations of every capture mode on
    ``ops`` (pre-images on), a collection renamed then dropped, a database dropped, then one more insert."""
    db = client[DB]
    for name in ("wide", "ops"):
        db.create_collection(name, changeStreamPreAndPostImages={"enabled": True})
    db["wide"].insert_many(WIDE)
    db["wide"].insert_one(_raw_document())
    db["exotic"].insert_many(EXOTIC)
    db["wide"].update_one({"_id": 1}, {"$set": {"dec": Decimal128("-NaN"), "bin": Binary(b"u", 0x80),
                                                "re": Regex("x", "s"), "when": DatetimeMS(-1), "d": 1e300}})
    ops = db["ops"]
    ops.insert_one({"_id": 1, "a": 1, "arr": [1, 2, 3, 4, 5], "sub": {"x": 1, "y": 2}, "s": "v"})
    ops.update_one({"_id": 1}, {"$set": {"a": 2, "sub.x": 3.5}, "$unset": {"s": ""}})
    ops.update_one({"_id": 1}, {"$push": {"arr": {"$each": [], "$slice": 2}}})
    ops.update_one({"_id": 1}, {"$set": {"arr.1": 9, "sub.new": {"k": [1]}}})
    ops.replace_one({"_id": 1}, {"replaced": True, "n": Int64(7)})
    ops.insert_one({"_id": 2, "v": 1})
    ops.update_one({"_id": 2}, [{"$set": {"v": {"$add": ["$v", 1]}, "w": "pipeline"}}])
    ops.delete_one({"_id": 1})
    gone = db["gone"]
    gone.insert_one({"_id": 1, "before": "rename"})
    gone.rename("renamed")
    db["renamed"].insert_one({"_id": 2, "after": "rename"})
    db["renamed"].drop()
    client[DROPPED_DB]["c"].insert_one({"_id": 1, "in": "dropped db"})
    client.drop_database(DROPPED_DB)
    ops.insert_one({"_id": 3, "after": "drops"})
    ops.delete_one({"_id": 2})


def config(mongo_uri: str, prefix: str, start_op_time: int, suffix: str) -> dict[str, str]:
    """The config of the connector ``<prefix><suffix>`` (:data:`CONNECTORS`)."""
    return {
        "connector.class": harness.CONNECTOR_CLASS, "mongodb.connection.string": mongo_uri,
        "topic.prefix": prefix + suffix, "snapshot.mode": "no_data", "capture.start.op.time": str(start_op_time),
        "tasks.max": "1", **CONNECTORS[suffix],
    }


def capture(client: Any, bootstrap: str, prefix: str, create: Callable[[dict[str, str]], None],
            mongo_uri: str) -> list[dict[str, Any]]:
    """Run the operations, then the connectors made by ``create(config)`` from before them; their records, one
    connector after the other."""
    start = client.admin.command("ping")["operationTime"]
    run_operations(client)
    for suffix in CONNECTORS:
        create(config(mongo_uri, prefix, harness.op_time(start), suffix))
    records: list[dict[str, Any]] = []
    for suffix in CONNECTORS:
        records += harness.read_records(bootstrap, prefix + suffix, 1, quiet=5, exact=False)
    return records
