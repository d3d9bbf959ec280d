"""ExtractNewDocumentState's compiled path (``document_writer`` + ``native/src/unwrap.rs``) against its Python path
(the reference): the same records, the same JsonConverter bytes under every converter setting, the same Connect
values once read, on the golden corpus and on random documents of every BSON type."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import bson
import bson.datetime_ms
import pytest
from bson import ObjectId, Regex, Timestamp
from bson.codec_options import CodecOptions, DatetimeConversion
from bson.int64 import Int64

from connect.api.data import LazyStruct
from connect.api.errors import DataError
from connect.api.records import SourceRecord
from connectors.mongodb import _extjson
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.transforms.extract_new_document_state import ExtractNewDocumentState
from converters.json import JsonConverter
from tests.unit.mongodb.test_extjson_native import ENCODE, _document, _text, _value
from tests.unit.transforms.golden import load, record

OPTIONS: CodecOptions[Any] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)
CONFIGS: list[dict[str, str]] = [
    {},
    {"array.encoding": "document"},
    {"delete.tombstone.handling.mode": "rewrite", "add.fields": "op,ts_ms,source.db,source.ord,source.snapshot"},
    {"add.fields": "transaction.id,collection,ord:seq", "add.fields.prefix": "_", "add.headers": "op"},
]
CONVERTERS = [{}, {"decimal.format": "NUMERIC", "replace.null.with.default": "false"}]


def _converters() -> list[JsonConverter]:
    out = []
    for config in CONVERTERS:
        conv = JsonConverter()
        conv.configure(config, False)
        out.append(conv)
    return out


CONVERTED = _converters()


def _pair(config: dict[str, str]) -> tuple[ExtractNewDocumentState, ExtractNewDocumentState]:
    fast, slow = ExtractNewDocumentState(), ExtractNewDocumentState()
    fast.configure(config)
    slow.configure(config)
    slow._writer = None  # the Python path
    return fast, slow


def _assert_same(fast: ExtractNewDocumentState, slow: ExtractNewDocumentState, rec: SourceRecord) -> bool:
    """Both paths give the same record (or fail alike); True when the compiled path wrote it."""
    try:
        expected = slow.apply(rec)
    except Exception as exc:  # noqa: BLE001 - both paths must fail alike
        with pytest.raises(type(exc)):
            fast.apply(rec)
        return False
    ours = fast.apply(rec)
    if expected is None or ours is None:
        assert ours is expected
        return False
    compiled = type(ours.value) is LazyStruct
    assert ours.value_schema == expected.value_schema
    assert (ours.key_schema, ours.key, ours.headers) == (expected.key_schema, expected.key, expected.headers)
    for conv in CONVERTED:
        assert _convert(conv, ours) == _convert(conv, expected)
    assert ours.value == expected.value  # reading the values builds them with the Python path
    assert not isinstance(ours.value, LazyStruct) or ours.value.json is None
    return compiled


def _convert(conv: JsonConverter, rec: SourceRecord) -> bytes | str | None:
    try:
        return conv.from_connect_data("t", rec.value_schema, rec.value)
    except DataError as exc:
        return f"DataError: {exc}"


def _insert(doc: Any, op: str = "insert", transaction: dict[str, Any] | None = None) -> SourceRecord:
    conv = ChangeEventConverter(topic_prefix="p", run_id="r", clock_ms=lambda: 1_800_000_000_000)
    change = {"_id": {"_data": "82"}, "operationType": op, "clusterTime": Timestamp(1700000000, 7),
              "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": doc["_id"]}, "fullDocument": doc}
    if op == "update":
        change["updateDescription"] = {"updatedFields": {"x": 1}, "removedFields": []}
    raw = bson.encode(change, codec_options=ENCODE)
    return conv.to_records(bson.decode(raw, codec_options=OPTIONS), transaction)[0]


def test_golden_cases_take_the_compiled_path() -> None:
    compiled = 0
    for case in load("transforms/smt_golden.json"):
        if not case["class"].endswith("ExtractNewDocumentState"):
            continue
        fast, slow = _pair(case["config"])
        for rec in case["records"]:
            compiled += _assert_same(fast, slow, record(rec))
    assert compiled >= 10


@pytest.mark.parametrize("seed", range(2))
def test_random_documents(seed: int) -> None:
    rng = random.Random(seed)
    compiled = total = 0
    for config in CONFIGS:
        fast, slow = _pair(config)
        for n in range(25):
            doc = _document(rng, 3)
            doc["_id"] = _value(rng, 1) if n % 3 else n
            rec = _insert(doc, "update" if n % 5 == 0 else "insert",
                          {"id": "tx", "total_order": 3, "data_collection_order": 2} if n % 2 else None)
            compiled += _assert_same(fast, slow, rec)
            total += 1
    assert compiled > total // 10  # random documents of every BSON type: most hold a type left to Python


def _common(rng: random.Random, depth: int) -> Any:
    """A value of the BSON types the compiled path covers (and some it leaves to Python, rarely)."""
    pick = rng.random()
    if depth > 0 and pick < 0.15:
        return {_text(rng, rng.randint(0, 4)).replace("\x00", ""): _common(rng, depth - 1)
                for _ in range(rng.randint(0, 5))}
    if depth > 0 and pick < 0.3:
        if rng.random() < 0.5:  # uniform arrays, of documents too (merged schemas)
            kinds: list[Callable[[], Any]] = [lambda: rng.randint(-9, 9), lambda: _text(rng, 3), lambda: rng.random(),
                                              lambda: {"a": rng.choice([None, 1, 2]), rng.choice("bc"): "x"}]
            kind = rng.choice(kinds)
            return [kind() if rng.random() < 0.9 else None for _ in range(rng.randint(0, 4))]
        return [_common(rng, depth - 1) for _ in range(rng.randint(0, 4))]
    if pick < 0.97:
        makers: list[Callable[[], Any]] = [
            lambda: _text(rng, rng.randint(0, 10)), lambda: rng.randint(-(2**40), 2**40), lambda: rng.random() * 1e3,
            lambda: Int64(rng.randint(-(2**63), 2**63 - 1)), lambda: rng.random() < 0.5, lambda: None,
            lambda: ObjectId(rng.randbytes(12)), lambda: Timestamp(rng.getrandbits(32), rng.getrandbits(32)),
            lambda: Regex(_text(rng, 3).replace("\x00", ""), "".join(rng.sample("imsx", 2))),
            lambda: rng.randbytes(rng.randint(0, 7)), lambda: bson.Binary(rng.randbytes(5), rng.choice([1, 4, 128])),
            lambda: bson.datetime_ms.DatetimeMS(rng.randint(-(10**14), 10**14)),
        ]
        return _value(rng, 0) if rng.random() < 0.05 else rng.choice(makers)()
    return _value(rng, 1)


@pytest.mark.parametrize("seed", range(2))
def test_random_common_documents(seed: int) -> None:
    rng = random.Random(seed)
    compiled = total = 0
    for config in CONFIGS:
        fast, slow = _pair(config)
        for n in range(25):
            doc = {_text(rng, rng.randint(0, 5)).replace("\x00", ""): _common(rng, 3) for _ in range(8)}
            doc["_id"] = n if n % 3 else _text(rng, 4)
            compiled += _assert_same(fast, slow, _insert(doc, "update" if n % 5 == 0 else "insert"))
            total += 1
    assert compiled > total // 2


UNIFORM = [
    {"_id": 1, "a": 1.5, "b": -0.0, "c": 1e-7, "d": 1e22, "e": 5e-324, "f": 123456789.0, "g": [0.1, 1 / 3]},
    {"_id": 2, "nested": {"a": {"b": {"c": [1, 2, {"d": None}]}}}, "empty": {}, "list": [], "nulls": [None, None]},
    {"_id": 3, "s": "café \u2028 \U0001F600 \x00\x1f\x7f \"q\" \\ / \b\f\n\r\t é\u0301 \ufeff", "é": "ü"},
    {"_id": ObjectId("5f1f2f3f4f5f6f7f8f9fafbf"), "i": 2**31 - 1, "j": -(2**31), "k": 2**31, "l": Int64(5),
     "m": -(2**63), "n": 2**63 - 1},
    {"_id": "text", "r": Regex("a.*b", "im"), "t": Timestamp(1700000000, 3), "bin": b"\x00\x01\xff",
     "objs": [{"x": 1}, {"y": "a"}, {"x": 2, "y": None}], "mixed": [1, "a"], "nested_lists": [[1], [2, 3]]},
]


@pytest.mark.parametrize("doc", UNIFORM, ids=range(len(UNIFORM)))
def test_edge_documents_take_the_compiled_path(doc: dict[str, Any]) -> None:
    for config in CONFIGS:
        fast, slow = _pair(config)
        assert _assert_same(fast, slow, _insert(doc))


def test_declined_text_takes_the_python_path() -> None:
    plans: dict[bytes, Any] = {}
    for text in ['{"a": 1, "a": 2}', '{"a": {"$numberDecimal": "1.5"}}', '{"a": "\\ud800"}', '[1]', '{"a": 1e400}',
                 '{"a": 99999999999999999999}', '{"a": {"$date": "2020-01-01T00:00:00Z"}}', '{"a": 1} x', '{"a": 01}',
                 '{"$oid": "5f1f2f3f4f5f6f7f8f9fafbf"}', '{"a": {"$binary": "AA=A", "$type": "00"}}']:
        assert _extjson.unwrap_document(text, plans, "") is None, text
    assert _extjson.unwrap_document('{"a": 1}', plans, "") == (b"{\x01ai}", None, None)


def test_jackson_strings() -> None:
    conv = JsonConverter()
    conv.configure({"schemas.enable": "false"}, False)
    rng = random.Random(5)
    for _ in range(300):
        text = _text(rng, rng.randint(0, 20))
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            continue
        assert _extjson.jackson_string(text).encode() == conv.from_connect_data("t", None, text)


def test_touching_a_lazy_value_keeps_it_right() -> None:
    fast, slow = _pair({})
    doc = {"_id": 7, "a": 1, "b": {"c": "d"}}
    ours, expected = fast.apply(_insert(doc)), slow.apply(_insert(doc))
    assert ours is not None and expected is not None and type(ours.value) is LazyStruct
    ours.value.put("a", 2)
    expected.value.put("a", 2)
    conv = CONVERTED[0]
    assert conv.from_connect_data("t", ours.value_schema, ours.value) == \
        conv.from_connect_data("t", expected.value_schema, expected.value)


def test_added_fields_named_like_document_fields() -> None:
    doc = {"_id": 1, "__deleted": "yes", "__op": 5, "a": 1}
    for config in CONFIGS[2:]:
        fast, slow = _pair(config)
        _assert_same(fast, slow, _insert(doc))


def test_doubles() -> None:
    rng = random.Random(3)
    values = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-12, 12) for _ in range(400)]
    values += [1e-3, -1e-3, 9.999999999999998e-4, 1e7, 9999999.999999998, 1e7 - 1, 0.1, 100.0, 5e-324, 1e300, 0.0]
    fast, slow = _pair({})
    assert _assert_same(fast, slow, _insert({"_id": 1, "d": values}))
    for value in values:
        assert _assert_same(fast, slow, _insert({"_id": 2, "d": value}))
