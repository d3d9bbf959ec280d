"""A snapshot record's payload written around its quoted ``after`` (:mod:`connectors.mongodb.envelope_writer`) is
the payload JsonConverter writes for the record's values, under every converter setting; the values built later
are the ones the record had before the writer existed."""

from __future__ import annotations

import datetime as dt
import itertools
import random
from typing import Any

import bson
import pytest
from bson import Int64, Timestamp
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

from connect.api.data import INT64, STRING, LazyStruct, Schema, Struct, Type, struct_schema
from connectors.mongodb import _extjson, extjson
from connectors.mongodb.envelope_writer import HOLE, payload_parts
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.fields import FieldSelector
from connectors.mongodb.streaming.raw_events import Decoder
from converters.json import JsonConverter

NOW = 1_795_891_920_247

TEXTS = ['plain', 'quote " and \\ backslash', "tab\tnew\nline\r", "\x00\x01\x1f control", "\u2028\u2029 seps",
         "é ü 中文", "emoji \U0001f600 astral \U00010348", "</script>", ""]


def documents() -> list[dict[str, Any]]:
    rng = random.Random(7)
    docs: list[dict[str, Any]] = []
    for n, text in enumerate(TEXTS):
        docs.append({"_id": n, "text": text, "nested": {"t": text, "list": [text, n, 1.5]},
                     text.replace("\x00", "") or "empty": n, "when": dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
                     "oid": bson.ObjectId(), "dec": bson.Decimal128("1.50"), "big": 2**62, "f": rng.random()})
    docs.append({"_id": {"compound": "key \" x", "n": 1}, "v": None})
    docs.append({"_id": "string id \U0001f600"})
    return docs


def converters() -> list[JsonConverter]:
    found = []
    for schemas, replace in itertools.product(("true", "false"), ("true", "false")):
        converter = JsonConverter()
        converter.configure({"schemas.enable": schemas, "replace.null.with.default": replace}, False)
        found.append(converter)
    return found


def plain_copy(value: Struct) -> Struct:
    """A plain Struct of the same values (nested structs copied too)."""
    return Struct(value.schema, {k: plain_copy(v) if isinstance(v, Struct) else v for k, v in value.values.items()})


@pytest.mark.parametrize("marker", ["true", "last", "incremental"])
@pytest.mark.parametrize("raw", [True, False])
def test_snapshot_payload_is_the_converters_writing_of_its_values(marker: str, raw: bool) -> None:
    events = ChangeEventConverter(topic_prefix='pre"fix', run_id="r", clock_ms=lambda: NOW, written_payloads=True)
    offset = {"sec": 1_700_000_000, "ord": 3, "resume_token": "x"} if marker == "incremental" else {"initsync": True}
    for doc in documents():
        given = RawBSONDocument(bson.encode(doc)) if raw else doc
        record = events.snapshot_record(given, "db", "coll é", offset, marker)
        for converter in converters():
            lazy = events.snapshot_record(given, "db", "coll é", offset, marker).value
            assert type(lazy) is LazyStruct and lazy.json is not None
            written = converter.from_connect_data(record.topic, record.value_schema, lazy)
            built = plain_copy(record.value)  # reading the values builds them (and drops the written payload)
            assert type(record.value) is LazyStruct and record.value.json is None
            assert written == converter.from_connect_data(record.topic, record.value_schema, built)
        values = record.value.values
        assert values["after"] == extjson.strict(bson.decode(bson.encode(doc)))
        assert values["op"] == "r" and values["ts_ms"] == NOW
        source = values["source"]
        assert source.get("snapshot") == marker and source.get("collection") == "coll é"
        if marker == "incremental":
            assert (source.get("ts_ms"), source.get("ord")) == (1_700_000_000_000, 3)
        else:
            assert (source.get("ts_ms"), source.get("ord")) == (NOW, -1)


def test_excluded_fields_are_left_out_of_the_written_after() -> None:
    selector = FieldSelector(["db.coll.text", "db.coll.nested.t"], [])
    events = ChangeEventConverter(topic_prefix="p", run_id="r", clock_ms=lambda: NOW, fields=selector,
                                  written_payloads=True)
    doc = documents()[1]
    record = events.snapshot_record(RawBSONDocument(bson.encode(doc)), "db", "coll", {"initsync": True})
    converter = converters()[0]
    written = converter.from_connect_data(record.topic, record.value_schema, record.value)
    after = record.value.get("after")
    assert '"text"' not in after and '"t"' not in after and '"list"' in after
    assert written == converter.from_connect_data(record.topic, record.value_schema, plain_copy(record.value))


def test_a_value_whose_json_depends_on_the_settings_is_not_written() -> None:
    with_default = Schema(Type.STRING, optional=True, default="d")
    schema = struct_schema([("a", STRING), ("b", with_default), ("n", INT64)])
    assert payload_parts(schema, {"a": HOLE, "b": "set", "n": 5}) == ((b'{"a":', b',"b":"set","n":5}'), (HOLE,))
    assert payload_parts(schema, {"a": HOLE, "b": None, "n": 5}) is None  # replace.null.with.default decides
    assert payload_parts(schema, {"a": HOLE, "b": None, "n": 5}, defaults=True) == (
        (b'{"a":', b',"b":"d","n":5}'), (HOLE,))  # unless the caller writes for that setting
    assert payload_parts(schema, {"a": HOLE, "b": "x", "n": 2**63}) is None  # beyond int64
    assert payload_parts(schema, {"a": "x", "b": "x", "n": 1}) == ((b'{"a":"x","b":"x","n":1}',), ())  # no hole
    assert payload_parts(schema, {"a": HOLE, "b": "x", "n": 1.5}) is None  # not an int


def test_strict_quoted_is_the_strict_text_as_a_json_string() -> None:
    for doc in documents():
        raw = bson.encode(doc)
        assert _extjson.strict_quoted(raw) == _extjson.jackson_string(_extjson.strict(raw)).encode()


@pytest.mark.parametrize("batch", ["firstBatch", "nextBatch"])
def test_cursor_reply_cuts_a_find_or_get_more_reply(batch: str) -> None:
    docs = [bson.encode(d) for d in documents()]
    reply = {"cursor": {batch: [bson.decode(d) for d in docs], "id": Int64(2**40), "ns": "db.c é"}, "ok": 1.0,
             "$clusterTime": {"clusterTime": Timestamp(7, 8)}, "operationTime": Timestamp(7, 8)}
    rest, cut = _extjson.cursor_reply(bson.encode(reply))
    assert cut == docs
    assert bson.decode(rest) == {**reply, "cursor": {batch: [], "id": 2**40, "ns": "db.c é"}}
    empty = bson.encode({"cursor": {"id": Int64(0), "ns": "a.b", batch: []}, "ok": 1})
    assert _extjson.cursor_reply(empty) == (empty, [])
    error = bson.encode({"ok": 0.0, "errmsg": "no", "code": 2})
    assert _extjson.cursor_reply(error) == (error, [])
    with pytest.raises(ValueError, match="invalid BSON"):
        _extjson.cursor_reply(bson.encode({"cursor": {batch: [1, 2]}, "ok": 1}))
    with pytest.raises(ValueError, match="invalid BSON"):
        _extjson.cursor_reply(bson.encode(reply)[:-1])


def change_events() -> list[dict[str, Any]]:
    """Inserts, replaces and deletes with and without images and wallTime, and events the writer leaves to the
    values' path (an update description, a session, an ord beyond int32)."""
    found: list[dict[str, Any]] = []
    for n, doc in enumerate(documents()):
        base: dict[str, Any] = {"_id": {"_data": f"82{n:016X}"}, "clusterTime": Timestamp(1_795_265_284, n + 1),
                                "ns": {"db": "d\"b", "coll": f"c é {n}"}, "documentKey": {"_id": doc["_id"]}}
        if n % 2:
            base["wallTime"] = dt.datetime(2026, 11, 21, 0, 0, n, 5000, tzinfo=dt.UTC)
        found.append({**base, "operationType": "insert", "fullDocument": doc})
        found.append({**base, "operationType": "replace", "fullDocument": doc})
        found.append({**base, "operationType": "replace", "fullDocument": doc, "fullDocumentBeforeChange": doc})
        found.append({**base, "operationType": "delete"})
        found.append({**base, "operationType": "delete", "fullDocumentBeforeChange": doc})
        found.append({**base, "operationType": "update", "fullDocument": doc,
                      "updateDescription": {"updatedFields": {"a": 1}, "removedFields": []}})
        found.append({**base, "operationType": "update", "fullDocument": doc if n % 3 else None,
                      "updateDescription": {"updatedFields": {k: v for k, v in doc.items() if k != "_id"},
                                            "removedFields": [], "truncatedArrays": []}})
        found.append({**base, "operationType": "update", "fullDocument": doc,
                      "updateDescription": {"updatedFields": {"a.b": 2.5}, "removedFields": ["x", "y.z"]}})
        found.append({**base, "operationType": "update", "fullDocument": doc, "fullDocumentBeforeChange": doc,
                      "updateDescription": {"updatedFields": {"arr": [1]}, "removedFields": [],
                                            "truncatedArrays": [{"field": "arr", "newSize": 1}]}})
        found.append({**base, "operationType": "insert", "fullDocument": doc, "lsid": {"id": bson.Binary(b"x" * 16, 4)},
                      "txnNumber": Int64(3)})
        found.append({**base, "operationType": "insert", "fullDocument": doc,
                      "clusterTime": Timestamp(1_795_265_284, 2**31 + n)})
    return found


def written(event: dict[str, Any], raw: bool) -> bool:
    """Whether the writer writes the event's payload: outside sessions, ``ord`` in range; an update when the stream
    decoded it (its ``updateDescription`` keeps its BSON) and it only updated fields."""
    description = event.get("updateDescription")
    if description is not None and (not raw or description.get("removedFields")
                                    or description.get("truncatedArrays")):
        return False
    return "lsid" not in event and event["clusterTime"].inc < 2**31


@pytest.mark.parametrize("raw", [True, False])
def test_change_event_payload_is_the_converters_writing_of_its_values(raw: bool) -> None:
    events = ChangeEventConverter(topic_prefix='pre"fix', run_id="r", clock_ms=lambda: NOW, written_payloads=True)
    decoder = Decoder(CodecOptions())
    options = CodecOptions(document_class=RawBSONDocument)
    lazies = updates = 0
    for change in change_events():
        given = decoder.event(RawBSONDocument(bson.encode(change), options)) if raw else change
        for converter in converters():
            record = events.to_records(given)[0]
            if not written(change, raw):
                assert type(record.value) is Struct
                continue
            assert type(record.value) is LazyStruct and record.value.defaults_written
            lazies += 1
            updates += "updateDescription" in change
            sent = converter.from_connect_data(record.topic, record.value_schema, record.value)
            assert sent == converter.from_connect_data(record.topic, record.value_schema, plain_copy(record.value))
        plain = ChangeEventConverter(topic_prefix='pre"fix', run_id="r", clock_ms=lambda: NOW).to_records(given)[0]
        assert type(plain.value) is Struct
        assert plain_copy(events.to_records(given)[0].value) == plain_copy(plain.value)
    assert lazies > 0
    assert (updates > 0) is raw  # an update's payload is written from the bytes of its updatedFields


def test_without_written_payloads_every_value_is_built() -> None:
    events = ChangeEventConverter(topic_prefix="p", run_id="r", clock_ms=lambda: NOW)
    assert type(events.to_records(change_events()[0])[0].value) is Struct
    assert type(events.snapshot_record(documents()[0], "db", "coll", {"initsync": True}).value) is Struct
