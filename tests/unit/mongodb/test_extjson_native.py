"""The compiled writer (``connectors.mongodb._extjson`` over raw BSON) against the pure-Python reference
(``extjson`` over what pymongo decodes with the connector's codec options): random documents of every BSON type,
hand-made BSON of the deprecated types pymongo cannot encode, and malformed input."""

from __future__ import annotations

import datetime
import math
import random
import struct
import uuid
from typing import Any

import bson
import pytest
from bson import Binary, Code, DBRef, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions, DatetimeConversion
from bson.datetime_ms import DatetimeMS
from bson.raw_bson import RawBSONDocument
from bson.son import SON

from connectors.mongodb import _extjson, extjson, json_writer
from connectors.mongodb.event_converter import ChangeEventConverter
from converters.json_writer import dumps_reference

# How the connector's clients decode (uuidRepresentation=standard); DATETIME_AUTO so dates pymongo's datetime
# cannot hold are decoded too (the connector's default conversion fails on them; the native writer does not).
DECODE: CodecOptions[dict[str, Any]] = CodecOptions(uuid_representation=UuidRepresentation.STANDARD,
                                                    datetime_conversion=DatetimeConversion.DATETIME_AUTO)
ENCODE = json_writer.ENCODE_OPTIONS

EDGE_DOUBLES = [0.0, -0.0, math.nan, math.inf, -math.inf, 5e-324, -5e-324, 2.2250738585072014e-308,
                2.225073858507201e-308, 1.7976931348623157e308, 1e-3, 9.999999999999998e-4, 0.001000000000000001,
                1e7, 9999999.999999998, 10000000.000000002, -1e7, 1e-5, 1e23, 1e22, 4.35, 0.1, 1 / 3, 123456789.0,
                2.0**63, 1e16, 1e-7, 100.0]
EDGE_MILLIS = [0, -1, 1, -62135596800000, -62135596800001, 253402300799999, 253402300800000, -(2**63), 2**63 - 1,
               1783101585729, 1000, 1010, 1100, -86400000, 951782400000]


def _text(rng: random.Random, size: int) -> str:
    pools = [(0x20, 0x7E)] * 6 + [(0x00, 0x1F), (0x7F, 0xFF), (0x100, 0x2FFF), (0x3000, 0xD7FF), (0xE000, 0xFFFF),
                                  (0x10000, 0x10FFFF)]
    chars = []
    for _ in range(size):
        lo, hi = rng.choice(pools)
        chars.append(chr(rng.randint(lo, hi)))
    chars += rng.sample(['"', "\\", "\n", "\t", "\b", "\f", "\r", "/", "\u2028", "😀", "é"], k=rng.randint(0, 3))
    return "".join(chars)


def _double(rng: random.Random) -> float:
    pick = rng.random()
    if pick < 0.3:
        return rng.choice(EDGE_DOUBLES)
    if pick < 0.6:
        return float(struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0])  # any bit pattern
    if pick < 0.8:
        return rng.uniform(-1e8, 1e8)
    return round(rng.uniform(-1000, 1000), rng.randint(0, 6)) * 10.0 ** rng.randint(-12, 12)


def _decimal(rng: random.Random) -> Decimal128:
    pick = rng.random()
    if pick < 0.5:
        digits = str(rng.randint(0, 10 ** rng.randint(1, 34) - 1))
        text = ("-" if rng.random() < 0.3 else "") + digits + f"E{rng.randint(-40, 40)}"
        return Decimal128(text)
    if pick < 0.7:
        return Decimal128(rng.choice(["NaN", "-NaN", "Infinity", "-Infinity", "0", "-0", "0E-6176", "1E+6144",
                                      "0.000001", "0.0000001", "-1.5E-7", "123.456"]))
    return Decimal128.from_bid(rng.getrandbits(128).to_bytes(16, "little"))  # any bit pattern, NaN payloads too


def _scalar(rng: random.Random) -> Any:  # one branch per BSON type
    kind = rng.randrange(22)
    if kind == 0:
        return _text(rng, rng.randint(0, 12))
    if kind == 1:
        return rng.choice([0, 1, -1, 2**31 - 1, -(2**31), rng.randint(-(2**31), 2**31 - 1)])
    if kind == 2:
        return Int64(rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randint(-(2**63), 2**63 - 1)]))
    if kind == 3:
        return rng.choice([2**31, -(2**31) - 1, rng.randint(2**31, 2**63 - 1)])  # int outside int32: int64
    if kind == 4:
        return _double(rng)
    if kind == 5:
        return rng.random() < 0.5
    if kind == 6:
        return None
    if kind == 7:
        return ObjectId(rng.getrandbits(96).to_bytes(12, "big"))
    if kind == 8:
        millis = rng.choice(EDGE_MILLIS) if rng.random() < 0.4 else rng.randint(-(10**13), 10**14)
        return DatetimeMS(millis)
    if kind == 9:
        return datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=rng.randint(-(10**13), 10**13))
    if kind == 10:
        return _decimal(rng)
    if kind == 11:
        data = rng.randbytes(rng.randint(0, 40))
        return Binary(data, rng.choice([0, 1, 2, 3, 5, 6, 7, 8, 0x80, 0xFF]))
    if kind == 12:
        return uuid.UUID(int=rng.getrandbits(128))
    if kind == 13:
        return rng.randbytes(rng.randint(0, 9))
    if kind == 14:
        flags = "".join(rng.sample("ilmsux", k=rng.randint(0, 6)))
        return Regex(_text(rng, rng.randint(0, 6)).replace("\x00", ""), flags)
    if kind == 15:
        return Timestamp(rng.getrandbits(32), rng.getrandbits(32))
    if kind == 16:
        return Code(_text(rng, rng.randint(0, 8)))
    if kind == 17:
        return Code(_text(rng, 5), _document(rng, 2) if rng.random() < 0.8 else {})
    if kind == 18:
        return MinKey() if rng.random() < 0.5 else MaxKey()
    if kind == 19:
        extra: dict[str, Any] = {"x": 1} if rng.random() < 0.5 else {}
        return DBRef(_text(rng, 4), _scalar(rng), rng.choice([None, "db"]), None, **extra)
    if kind == 20:  # DBRef-shaped documents pymongo may or may not turn into a DBRef
        items = [("$ref", rng.choice(["c", 5, Code("c")])), ("$id", _scalar(rng)), ("a", 1),
                 ("$db", rng.choice(["d", None, 3]))]
        rng.shuffle(items)
        return SON(items[: rng.randint(1, 4)])
    return rng.choice(["", "plain ascii", "café", "\u0000nul", "\U0001F600", "\u0301", "\u00ad", "\ufeff"])


def _value(rng: random.Random, depth: int) -> Any:
    if depth > 0 and rng.random() < 0.15:
        return _document(rng, depth - 1)
    if depth > 0 and rng.random() < 0.12:
        return [_value(rng, depth - 1) for _ in range(rng.randint(0, 5))]
    return _scalar(rng)


def _document(rng: random.Random, depth: int) -> SON[str, Any]:
    doc: SON[str, Any] = SON()
    for _ in range(rng.randint(0, 8)):
        doc[_text(rng, rng.randint(0, 6)).replace("\x00", "")] = _value(rng, depth)
    return doc


def _assert_same(raw: bytes) -> None:
    decoded = bson.decode(raw, codec_options=DECODE)
    assert _extjson.strict(raw) == extjson.strict(decoded)
    # the STRICT text as a JSON string in one pass: what the reference writers make of the reference text
    assert _extjson.strict_quoted(raw) == dumps_reference(extjson.strict(decoded))
    assert _extjson.fill_payload((b"[", b",", b"]"), (raw, raw), False, 0b10) == \
        b"[" + dumps_reference(extjson.strict(decoded)) + b"," + dumps_reference(extjson.relaxed(decoded)) + b"]"
    assert _extjson.relaxed(raw) == extjson.relaxed(decoded)
    for value in decoded.values():
        key_raw = bson.encode({"_id": value}, codec_options=ENCODE)
        expected = extjson.relaxed_key(bson.decode(key_raw, codec_options=DECODE)["_id"])
        assert _extjson.relaxed_key(key_raw) == expected


@pytest.mark.parametrize("seed", range(40))
def test_random_documents_match_the_python_writer(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        doc = _document(rng, 4)
        doc["_id"] = _value(rng, 2)
        _assert_same(bson.encode(doc, codec_options=ENCODE))


def test_every_edge_double_and_date() -> None:
    for value in EDGE_DOUBLES:
        _assert_same(bson.encode({"d": value, "n": -value}))
        assert _extjson.java_double(value) == extjson.java_double(value)
    for millis in EDGE_MILLIS:
        _assert_same(bson.encode({"t": DatetimeMS(millis)}))


def test_random_double_bits_match_java_double() -> None:
    rng = random.Random(7)
    for _ in range(20000):
        value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        assert _extjson.java_double(value) == extjson.java_double(value)


def test_random_doubles_of_the_plain_layout_match_java_double() -> None:
    """[1e-3, 1e7), where Java writes no exponent (the compiled writer copies Ryu's text there), and around it."""
    rng = random.Random(11)
    values = [10 ** rng.uniform(-4, 8) for _ in range(20000)] + [round(rng.uniform(0, 1000), 2) for _ in range(5000)]
    values += [math.nextafter(edge, direction) for edge in (1e-3, 1e7) for direction in (0.0, math.inf)]
    values += [1e-3, 1e7, float(2**23), 1234567.0, 0.1 + 0.2]
    for value in values:
        for signed in (value, -value):
            assert _extjson.java_double(signed) == extjson.java_double(signed)


def _element(tag: int, name: str, value: bytes) -> bytes:
    return bytes([tag]) + name.encode() + b"\x00" + value


def _raw(*elements: bytes) -> bytes:
    body = b"".join(elements)
    return struct.pack("<i", len(body) + 5) + body + b"\x00"


def _string(text: str) -> bytes:
    data = text.encode() + b"\x00"
    return struct.pack("<i", len(data)) + data


def test_deprecated_types_pymongo_cannot_encode() -> None:
    oid = bytes(range(12))
    raw = _raw(_element(0x0E, "symbol", _string("sym\u00e9")), _element(0x06, "undefined", b""),
               _element(0x0C, "pointer", _string("db.coll") + oid),
               _element(0x03, "ref", _raw(_element(0x02, "$ref", _string("c")), _element(0x06, "$db", b""),
                                          _element(0x10, "$id", struct.pack("<i", 3)))))
    _assert_same(raw)
    assert _extjson.strict(raw) == (
        '{"symbol": "sym\u00e9","undefined": null,"pointer": {"$ref": "db.coll","$id": '
        '{"$oid": "000102030405060708090a0b"}},"ref": {"$ref": "c","$id": 3}}')


def test_raw_documents_are_written_without_decoding() -> None:
    doc = {"_id": ObjectId("596e275826f08b2730779e1f"), "a": [1, {"b": "x"}]}
    raw = RawBSONDocument(bson.encode(doc))
    assert json_writer.strict(raw) == extjson.strict(doc) == (
        '{"_id": {"$oid": "596e275826f08b2730779e1f"},"a": [1,{"b": "x"}]}')
    assert json_writer.relaxed(raw) == extjson.relaxed(doc)


@pytest.mark.parametrize("raw", [
    b"", b"\x05\x00\x00", b"\x05\x00\x00\x00\x01", b"\x06\x00\x00\x00\x00\x00",
    _raw(_element(0x02, "s", b"\x03\x00\x00\x00a\x00")),  # string length past the end
    _raw(_element(0x02, "s", struct.pack("<i", 2) + b"\xff\x00")),  # invalid UTF-8
    _raw(_element(0x08, "b", b"\x02")),  # boolean neither 0 nor 1
    _raw(_element(0x20, "x", b"")),  # unknown type
    _raw(_element(0x05, "b", struct.pack("<i", 5) + b"\x02" + struct.pack("<i", 9) + b"x")),  # subtype 2 lengths
])
def test_malformed_bson_raises_value_error(raw: bytes) -> None:
    with pytest.raises(ValueError, match="invalid BSON"):
        _extjson.strict(raw)


def test_deep_nesting_is_refused_not_a_crash() -> None:
    doc: dict[str, Any] = {}
    for _ in range(90):
        doc = {"a": [doc]}
    raw = bson.encode(doc)
    assert _extjson.strict(raw) == extjson.strict(bson.decode(raw))
    deeper = _raw(_element(0x03, "a", raw))
    for _ in range(30):
        deeper = _raw(_element(0x03, "a", deeper))
    with pytest.raises(ValueError, match="nesting"):
        _extjson.strict(deeper)


def test_split_images_cuts_out_the_embedded_images_only() -> None:
    event = SON([("_id", {"_data": "82"}), ("fullDocument", {"a": 1}), ("ns", {"db": "d"}),
                 ("fullDocumentBeforeChange", {"b": [2]}), ("x", None)])
    rest, full, before = _extjson.split_images(bson.encode(event))
    assert bson.decode(rest) == {"_id": {"_data": "82"}, "ns": {"db": "d"}, "x": None}
    assert full is not None and before is not None
    assert (bson.decode(full), bson.decode(before)) == ({"a": 1}, {"b": [2]})
    rest, full, before = _extjson.split_images(bson.encode({"fullDocument": None, "o": "delete"}))
    assert (bson.decode(rest), full, before) == ({"fullDocument": None, "o": "delete"}, None, None)
    with pytest.raises(ValueError, match="invalid BSON"):
        _extjson.split_images(b"\x05\x00")


def test_split_event_also_gives_the_token_and_document_key_bytes() -> None:
    event = SON([("_id", {"_data": "82"}), ("fullDocument", {"a": 1}), ("ns", {"db": "d"}),
                 ("documentKey", {"_id": 5}), ("fullDocumentBeforeChange", {"b": [2]})])
    rest, full, before, token, key = _extjson.split_event(bson.encode(event))
    assert bson.decode(rest) == {"_id": {"_data": "82"}, "ns": {"db": "d"}, "documentKey": {"_id": 5}}
    assert full is not None and before is not None and token is not None and key is not None
    assert (bson.decode(full), bson.decode(before)) == ({"a": 1}, {"b": [2]})
    assert (token, key) == (bson.encode({"_data": "82"}), bson.encode({"_id": 5}))
    rest, full, before, token, key = _extjson.split_event(bson.encode({"_id": "not a document", "o": "drop"}))
    assert (bson.decode(rest), full, before, token, key) == ({"_id": "not a document", "o": "drop"}, None, None,
                                                             None, None)
    with pytest.raises(ValueError, match="invalid BSON"):
        _extjson.split_event(b"\x05\x00")


def test_snapshot_records_from_raw_documents_match_decoded_ones() -> None:
    conv = ChangeEventConverter(topic_prefix="p", run_id="r", clock_ms=lambda: 1_800_000_000_000)
    for doc in ({"_id": ObjectId("596e275826f08b2730779e1f"), "a": [1, {"b": 2.5}]},
                {"x": 1, "_id": {"k": Int64(5), "u": uuid.UUID(int=3)}}, {"no_id": True}):
        data = bson.encode(doc, codec_options=ENCODE)  # pymongo writes a top-level _id first
        plain: dict[str, Any] = bson.decode(data, codec_options=DECODE)
        decoded = conv.snapshot_record(plain, "db", "c", {"o": 1})
        raw = conv.snapshot_record(RawBSONDocument(data), "db", "c", {"o": 1})
        assert raw.key.values == decoded.key.values
        assert raw.value.values["after"] == decoded.value.values["after"]
    assert _extjson.relaxed_id(bson.encode({"no_id": 1})) is None
