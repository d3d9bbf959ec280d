"""ExtractNewDocumentState beyond the golden corpus: documents whose shapes vary never fail, configs are checked."""

from __future__ import annotations

import json
from typing import Any

import bson
import pytest
from bson import ObjectId, Timestamp
from bson.codec_options import CodecOptions, DatetimeConversion

from connect.api.errors import ConfigError
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.transforms.extract_new_document_state import ExtractNewDocumentState
from tests.unit.transforms.golden import write

OPTIONS: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)


def insert(doc: dict[str, Any]) -> Any:
    conv = ChangeEventConverter(topic_prefix="p", run_id="r", clock_ms=lambda: 1)
    change = {"_id": {"_data": "82"}, "operationType": "insert", "clusterTime": Timestamp(1700000000, 1),
              "ns": {"db": "d", "coll": "c"}, "documentKey": {"_id": doc["_id"]}, "fullDocument": doc}
    decoded = bson.decode(bson.encode(change), codec_options=OPTIONS)  # BSON types as a change stream returns them
    return conv.to_records(decoded)[0]


def unwrap(doc: dict[str, Any], **config: str) -> dict[str, Any]:
    smt = ExtractNewDocumentState()
    smt.configure(config)
    out = smt.apply(insert(doc))
    assert out is not None
    text = write(out.value_schema, out.value)
    assert text is not None
    parsed: dict[str, Any] = json.loads(text)
    return parsed


@pytest.mark.parametrize("doc", [
    {"_id": 1, "mixed": [1, "two", 3.5, None, {"x": 1}, [1, 2]]},
    {"_id": 2, "objs": [{"x": 1}, {"x": "clash"}]},
    {"_id": 3, "nested": [[1, 2], ["a"]]},
    {"_id": ObjectId(), "deep": {"a": [{"b": [1, "c"]}]}, "n": None, "e": []},
])
def test_heterogeneous_documents_never_fail(doc: dict[str, Any]) -> None:
    for encoding in ("array", "document"):
        out = unwrap(doc, **{"array.encoding": encoding, "flatten.struct": "true"})
        assert out["payload"]["_id"] is not None


def test_mixed_array_uses_the_document_encoding() -> None:
    out = unwrap({"_id": 1, "mixed": [1, "two"], "same": [1, 2]})
    fields = {f["field"]: f for f in out["schema"]["fields"]}
    assert fields["mixed"]["type"] == "struct" and fields["mixed"]["name"] == "p.d.c.mixed"
    assert out["payload"]["mixed"] == {"_0": 1, "_1": "two"}
    assert fields["same"]["type"] == "array" and out["payload"]["same"] == [1, 2]


def test_each_record_gets_its_own_schema() -> None:
    first = unwrap({"_id": 1, "v": 1})
    second = unwrap({"_id": 2, "v": "text", "extra": True})
    assert [f["type"] for f in first["schema"]["fields"]] == ["int32", "int32"]
    assert [f["type"] for f in second["schema"]["fields"]] == ["int32", "string", "boolean"]


@pytest.mark.parametrize("config", [
    {"delete.tombstone.handling.mode": "explode"},
    {"array.encoding": "list"},
    {"flatten.struct": "maybe"},
])
def test_bad_config(config: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        ExtractNewDocumentState().configure(config)


def test_non_change_events_pass_through() -> None:
    smt = ExtractNewDocumentState()
    smt.configure({})
    record = insert({"_id": 1})
    heartbeat = type(record)(record.source_partition, record.source_offset, "__debezium-heartbeat.p", None, None,
                             None, None, {"ts_ms": 1})
    assert smt.apply(heartbeat) is heartbeat


def test_an_added_field_is_written_as_it_is_in_the_event_without_its_default() -> None:
    """``source.snapshot`` is unset in a streaming event (its schema defaults to ``false``): Debezium 3.6 adds it as
    null in an optional schema without the default (the corpus golden of ``test_debezium_golden.py``)."""
    out = unwrap({"_id": 1, "a": 1}, **{"add.fields": "op,source.snapshot,db"})
    fields = {f["field"]: f for f in out["schema"]["fields"]}
    assert "default" not in fields["__source_snapshot"] and fields["__source_snapshot"]["optional"]
    assert fields["__db"] == {"type": "string", "optional": True, "field": "__db"}
    assert out["payload"]["__source_snapshot"] is None and out["payload"]["__op"] == "c"


def test_values_as_debezium_3_6_converts_them() -> None:
    """From the corpus golden of ``test_debezium_golden.py``: a DBRef-shaped document is a plain struct (``$id``'s
    ObjectId a string), an empty document's struct has no name, a BSON timestamp's seconds are a signed int."""
    out = unwrap({"_id": 1, "ref": {"$ref": "other", "$id": 7, "$db": "d"},
                  "ptr": {"$ref": "d.other", "$id": ObjectId("000102030405060708090a0b")}, "empty": {},
                  "late": Timestamp(4294967295, 1), "stamp": Timestamp(1700000000, 1)})
    fields = {f["field"]: f for f in out["schema"]["fields"]}
    assert [f["field"] for f in fields["ref"]["fields"]] == ["$ref", "$id", "$db"] and fields["ref"]["name"]
    assert out["payload"]["ref"] == {"$ref": "other", "$id": 7, "$db": "d"}
    assert out["payload"]["ptr"] == {"$ref": "d.other", "$id": "000102030405060708090a0b"}
    assert fields["empty"] == {"type": "struct", "fields": [], "optional": True, "field": "empty"}
    assert out["payload"]["late"] == -1000 and out["payload"]["stamp"] == 1700000000000
