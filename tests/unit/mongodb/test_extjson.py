"""Extended JSON writers against golden vectors produced by the real Java stack.

``data/extjson_golden.jsonl`` is recorded by ``python -m compat.debezium.extjson_golden`` (its first line says with
which Debezium release, driver and Java): each BSON document (``bson``, base64) decoded by the MongoDB Java driver
Debezium bundles and written as Debezium writes it: ``strict`` (its compact STRICT settings: after/before),
``relaxed`` (``BsonDocument.toJson()``: updatedFields) and ``keys`` (every top-level value as the record key
``id``). ``data/java17_unescaped_bmp_ranges.txt`` lists the BMP characters that the driver's writer leaves unescaped
in strings on Java 17 (printed by ``compat/jshell/unescaped_bmp.jsh``, re-recorded by ``python -m compat.record
java17-unescaped-bmp``; its first line names the JDK, Debezium and driver).
"""

from __future__ import annotations

import base64
import datetime
import json
import re
import unicodedata
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import bson
import pytest
from bson import Binary, Code, DBRef, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions, DatetimeConversion
from bson.datetime_ms import DatetimeMS
from bson.son import SON

from compat.debezium import harness, keys_scenario
from connectors.mongodb import _extjson, extjson, json_writer, releases
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.releases import NEWEST, RELEASES

DATA = Path(__file__).parent / "data"
AUTO: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)


def _golden(name: str) -> list[dict[str, Any]]:
    rows = map(json.loads, filter(None, (DATA / name).read_text().splitlines()))
    return [case for case in rows if "bson" in case]  # the first line says what recorded it


GOLDENS = {"3.6.1.Final": _golden("extjson_golden.jsonl"), "3.6.3.Final": _golden("extjson_golden-3.6.3.Final.jsonl")}
"""Each Debezium release's golden (``python -m compat.record extjson extjson-3.6.3.Final``): the same documents."""
GOLDEN = GOLDENS["3.6.1.Final"]
CASES = pytest.mark.parametrize(("release", "case"), [(r, c) for r, cases in GOLDENS.items() for c in cases],
                                ids=[f"{r}-{c['name']}" for r, cases in GOLDENS.items() for c in cases])
# The product's compiled writer (native/, over re-encoded BSON) and the pure-Python reference give the same bytes.
WRITERS = pytest.mark.parametrize("writer", [json_writer, extjson], ids=["native", "python"])


def _decode(case: dict[str, Any], options: CodecOptions[dict[str, Any]] = AUTO) -> dict[str, Any]:
    return bson.decode(base64.b64decode(case["bson"]), codec_options=options)


def test_every_release_has_a_golden_of_the_same_documents() -> None:
    assert set(GOLDENS) == set(RELEASES)
    assert all([c["bson"] for c in cases] == [c["bson"] for c in GOLDEN] for cases in GOLDENS.values())


@WRITERS
@CASES
def test_strict_matches_debezium(release: str, case: dict[str, Any], writer: ModuleType) -> None:
    assert writer.strict(_decode(case), RELEASES[release].plus_exponent) == case["strict"]


@WRITERS
@CASES
def test_relaxed_matches_driver_default(release: str, case: dict[str, Any], writer: ModuleType) -> None:
    assert writer.relaxed(_decode(case), RELEASES[release].plus_exponent) == case["relaxed"]


@WRITERS
@CASES
def test_relaxed_key_matches_debezium(release: str, case: dict[str, Any], writer: ModuleType) -> None:
    plus = RELEASES[release].plus_exponent
    assert [writer.relaxed_key(v, plus) for v in _decode(case).values()] == case["keys"]


@WRITERS
@pytest.mark.parametrize("case", [c for c in GOLDEN if c["name"] in ("uuid_std", "binary", "lsid")])
def test_uuid_representation_standard_gives_same_output(case: dict[str, Any], writer: ModuleType) -> None:
    options: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO,
                                                         uuid_representation=UuidRepresentation.STANDARD)
    doc = _decode(case, options)
    assert writer.strict(doc) == case["strict"]
    assert [writer.relaxed_key(v) for v in doc.values()] == case["keys"]


def test_golden_covers_out_of_range_dates_as_datetime_ms() -> None:
    doc = _decode(next(c for c in GOLDEN if c["name"] == "dates_out_of_range"))
    assert all(isinstance(v, DatetimeMS) for v in doc.values())


# Hand-built values (as pymongo returns them) with outputs copied from the golden file.
OID = ObjectId("596e275826f08b2730779e1f")


@WRITERS
def test_readable_examples(writer: ModuleType) -> None:
    doc = SON([("_id", OID), ("name", "Sally"), ("n", Int64(123)), ("i", 7), ("big", 2**40),
               ("d", datetime.datetime(2026, 7, 3, 17, 59, 45, 729000)), ("f", 1.0), ("e", 1e10), ("s", 1e-5),
               ("arr", [1, "x", {}]), ("sub", {"a": None, "b": True})])
    assert writer.strict(doc) == (
        '{"_id": {"$oid": "596e275826f08b2730779e1f"},"name": "Sally","n": {"$numberLong": "123"},"i": 7,'
        '"big": {"$numberLong": "1099511627776"},"d": {"$date": 1783101585729},"f": 1.0,"e": 1.0E10,"s": 1.0E-5,'
        '"arr": [1,"x",{}],"sub": {"a": null,"b": true}}')
    assert writer.relaxed(doc) == (
        '{"_id": {"$oid": "596e275826f08b2730779e1f"}, "name": "Sally", "n": 123, "i": 7, "big": 1099511627776, '
        '"d": {"$date": "2026-07-03T17:59:45.729Z"}, "f": 1.0, "e": 1.0E10, "s": 1.0E-5, "arr": [1, "x", {}], '
        '"sub": {"a": null, "b": true}}')


@pytest.mark.parametrize(("value", "expected"), [
    (1234, "1234"),
    (Int64(2147483657), "2147483657"),
    ("1234", '"1234"'),
    (12.34, "12.34"),
    (OID, '{"$oid": "596e275826f08b2730779e1f"}'),
    ({"company": 32, "dept": "home improvement"}, '{"company": 32,"dept": "home improvement"}'),
    ({"hi": "kafka", "nums": [10.0, 100.0, 1000.0]}, '{"hi": "kafka","nums": [10.0,100.0,1000.0]}'),
    (b"kafka", '{"$binary": {"base64": "a2Fma2E=","subType": "00"}}'),
    (Binary(b"kafka", 0), '{"$binary": {"base64": "a2Fma2E=","subType": "00"}}'),
    (uuid.UUID("14aed813-35e0-4174-97f4-ec66ce5947db"),
     '{"$binary": {"base64": "FK7YEzXgQXSX9OxmzllH2w==","subType": "04"}}'),
    (datetime.datetime(2017, 10, 19, 9, 47, 33, 123000), '{"$date": "2017-10-19T09:47:33.123Z"}'),
    (datetime.datetime(2017, 10, 19, 11, 47, 33, 120000, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
     '{"$date": "2017-10-19T09:47:33.12Z"}'),
    (DatetimeMS(-1), '{"$date": {"$numberLong": "-1"}}'),
    (Decimal128("123.45678"), '{"$numberDecimal": "123.45678"}'),
    (Timestamp(1, 2), '{"$timestamp": {"t": 1,"i": 2}}'),
    (Regex("^acme.*corp", "i"), '{"$regularExpression": {"pattern": "^acme.*corp","options": "i"}}'),
    (re.compile("p[0-9]+", re.I | re.M), '{"$regularExpression": {"pattern": "p[0-9]+","options": "imu"}}'),
    (MinKey(), '{"$minKey": 1}'),
    (MaxKey(), '{"$maxKey": 1}'),
    (Code("f()", {"y": 2}), '{"$code": "f()","$scope": {"y": 2}}'),
    (DBRef("coll", 5, "otherdb"), '{"$ref": "coll","$id": 5,"$db": "otherdb"}'),
    (float("nan"), '{"$numberDouble": "NaN"}'),
    ((1, 2), "[1,2]"),
])
@WRITERS
def test_relaxed_key_values(value: Any, expected: str, writer: ModuleType) -> None:
    assert writer.relaxed_key(value) == expected


@WRITERS
def test_strict_special_values(writer: ModuleType) -> None:
    doc = {"nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"), "ts": Timestamp(4294967295, 7),
           "re": Regex("a/b", "mi"), "bin": Binary(b"x", 0x80), "code": Code("f()")}
    assert writer.strict(doc) == (
        '{"nan": NaN,"inf": Infinity,"ninf": -Infinity,"ts": {"$timestamp": {"t": 4294967295,"i": 7}},'
        '"re": {"$regex": "a/b","$options": "im"},"bin": {"$binary": "eA==","$type": "80"},"code": {"$code": "f()"}}')


@pytest.mark.parametrize(("value", "expected"), [
    (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (0.001, "0.001"), (9.99e-4, "9.99E-4"), (1e7, "1.0E7"),
    (9999999.0, "9999999.0"), (123456789.123, "1.23456789123E8"), (-3e15, "-3.0E15"), (5e-324, "4.9E-324"),
    (1.7976931348623157e308, "1.7976931348623157E308"), (0.1, "0.1"), (1 / 3, "0.3333333333333333"),
    # JDK 19+ shortest form; JDK 17 prints the non-shortest 9.999999999999999E22 for this value.
    (1e23, "1.0E23"),
])
def test_java_double(value: float, expected: str) -> None:
    assert extjson.java_double(value) == expected
    assert _extjson.java_double(value) == expected


def test_string_escaping_of_every_bmp_char_matches_java17_except_newer_unicode() -> None:
    raw: set[int] = set()
    header, *lines = (DATA / "java17_unescaped_bmp_ranges.txt").read_text().splitlines()
    assert header.startswith("# recorded_with: ") and '"17.' in header  # a JDK 17 printed it
    for line in lines:
        first, last = (int(part, 16) for part in line.split("-"))
        raw.update(range(first, last + 1))
    ours = {cp for cp in range(0x10000) if extjson.java_string(chr(cp)) == '"' + chr(cp) + '"'}
    assert raw <= ours
    # The only differences are characters assigned after Unicode 13 (Java 17's table), which Python knows.
    newer = ours - raw
    assert len(newer) == 88
    assert all(unicodedata.category(chr(cp)) != "Cn" for cp in newer)
    assert {0x20C0, 0x2C2F, 0x9FFD} <= newer


def test_string_escapes() -> None:
    assert extjson.java_string('a"b\\c\n\x01\x7f\u00e9\U0001F600\u0301') == (
        '"a\\"b\\\\c\\n\\u0001\\u007fé\\ud83d\\ude00\\u0301"')


def test_unknown_type_raises() -> None:
    with pytest.raises(TypeError):
        extjson.strict({"a": object()})
    with pytest.raises(bson.errors.InvalidDocument):
        json_writer.strict({"a": object()})


def _kilobyte_doc() -> dict[str, Any]:
    return {
        "_id": OID, "name": "Sally Jones", "email": "sally@example.com", "age": 42, "score": 98.5,
        "created": datetime.datetime(2024, 1, 2, 3, 4, 5, 678000), "active": True, "visits": Int64(1234567890123),
        "address": {"street": "123 Main St", "city": "Springfield", "zip": "12345",
                    "geo": {"lat": 40.7128, "lng": -74.006}},
        "tags": ["alpha", "beta", "gamma", "delta"],
        "orders": [{"id": i, "sku": f"SKU-{i:05d}", "qty": i % 7, "price": 9.99 * i, "note": "deliver café"}
                   for i in range(6)],
        "notes": "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.",
    }


def test_a_1kb_document_renders_to_about_1kb() -> None:
    # speed is measured in benchmarks/, never asserted here
    assert 700 < len(extjson.strict(_kilobyte_doc())) < 1400
    assert json_writer.strict(_kilobyte_doc()) == extjson.strict(_kilobyte_doc())


@WRITERS
@pytest.mark.parametrize("release", list(RELEASES))
def test_double_ids_as_debeziums_record_keys(release: str, writer: ModuleType) -> None:
    """The record keys the real Debezium wrote for ``_id``s that are double edge values (``compat.debezium
    .keys_scenario``; its golden ``debezium-<release>-keys.jsonl``, checked end to end by
    ``test_debezium_golden.py``): each inserted document's key ``id`` is our ``relaxed_key`` of its ``_id``."""
    golden = Path(__file__).parents[2] / "integration" / "mongodb" / "golden" / f"debezium-{release}-keys.jsonl"
    inserts = [row for row in harness.golden_lines(golden)
               if row["topic"].startswith("golden-nos.") and row["value"] and row["value"]["op"] == "c"]
    assert len(inserts) == keys_scenario.DOCUMENTS
    for row in inserts:
        n = json.loads(row["value"]["after"])["n"]  # the index in SHARED, or the SINGLE collection's name
        key = keys_scenario.SHARED[n] if isinstance(n, int) else keys_scenario.SINGLE[n]
        assert row["raw_key"] == json.dumps({"id": writer.relaxed_key(key, RELEASES[release].plus_exponent)},
                                            separators=(",", ":")), row["raw_key"]


def test_keys_follow_the_newest_release_by_default() -> None:
    """Without ``debezium.release`` the connector writes the newest release's bytes, keys included."""
    assert releases.release(None) is NEWEST and NEWEST.version == max(RELEASES) and NEWEST.plus_exponent
    converter = ChangeEventConverter(topic_prefix="p", run_id="r")
    event = {"_id": {"_data": "00"}, "operationType": "insert", "clusterTime": Timestamp(1795265284, 7),
             "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": 1e300}, "fullDocument": {"_id": 1e300}}
    [record] = converter.to_records(event)
    assert record.key.get("id") == "1.0E+300"
    assert record.value.get("after") == '{"_id": 1.0E+300}'
