"""ChangeEventConverter and the Debezium MongoDB schemas, on change events shaped as pymongo returns them.

The event dicts below mirror events captured from a real change stream (SecantusDB 0.7 through pymongo 4.20,
``full_document="updateLookup"``); the expected strings follow Debezium 3.6 (see the docs' example events).
"""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import bson
import pytest
from bson import Binary, Int64, ObjectId, Timestamp
from bson.codec_options import CodecOptions, DatetimeConversion
from bson.raw_bson import RawBSONDocument

from connect.api.data import STRING, Schema, Struct, Type
from connect.api.records import Header, SourceRecord
from connectors.mongodb import schemas
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.position import Position, decode_resume_token, encode_resume_token, event_offset
from connectors.mongodb.releases import RELEASES
from connectors.mongodb.streaming.raw_events import IMAGES, Decoder, DocumentKey, ResumeToken

TOKEN = {"_data": "4300000010730002000000117400070000000493016b026e0014000000696e76656e746f72792e637573746f6d657273"}
WALL = datetime.datetime(2026, 11, 21, 12, 48, 4, 704000)
WALL_MS = 1795265284704
NS = {"coll": "customers", "db": "inventory"}
HEADERS = (
    Header("__debezium.context.connectorLogicalName", STRING, "fulfillment"),
    Header("__debezium.context.taskId", STRING, "0"),
    Header("__debezium.context.connectorName", STRING, "mongodb"),
    Header("__debezium.context.runId", STRING, "run-1"),
)


def converter(**kwargs: Any) -> ChangeEventConverter:
    """The vectors were recorded from Debezium 3.6.1."""
    return ChangeEventConverter(topic_prefix="fulfillment", run_id="run-1", clock_ms=lambda: 1_800_000_000_000,
                                **{"release": RELEASES["3.6.1.Final"], **kwargs})


def event(op: str, **fields: Any) -> dict[str, Any]:
    base = {"_id": TOKEN, "operationType": op, "clusterTime": Timestamp(1795265284, 7), "wallTime": WALL, "ns": NS,
            "documentKey": {"_id": 1004}}
    base.update(fields)
    return base


def test_insert() -> None:
    doc = {"_id": 1004, "first_name": "Anne", "n": Int64(5), "arr": [1, 2.5]}
    [record] = converter().to_records(event("insert", fullDocument=doc))
    assert record.topic == "fulfillment.inventory.customers"
    assert record.kafka_partition is None and record.timestamp is None
    assert record.source_partition == {"server_id": "fulfillment"}
    assert list(offset_of(record).items()) == [
        ("sec", 1795265284), ("ord", 7), ("resume_token", base64.b64encode(bson.encode(TOKEN)).decode())]
    assert record.key_schema is schemas.key_schema("fulfillment.inventory.customers")
    assert record.key == Struct(record.key_schema, {"id": "1004"})
    assert record.value_schema is schemas.envelope_schema("fulfillment.inventory.customers")
    value = record.value
    assert value.get("before") is None
    assert value.get("after") == '{"_id": 1004,"first_name": "Anne","n": {"$numberLong": "5"},"arr": [1,2.5]}'
    assert value.get("updateDescription") is None
    assert value.get("op") == "c"
    assert value.get("ts_ms") == 1_800_000_000_000
    assert value.get("transaction") is None
    assert list(value.values) == ["after", "source", "op", "ts_ms"]  # schema order
    source = value.get("source")
    assert source.values == {
        "version": "3.6.1.Final", "connector": "mongodb", "name": "fulfillment", "ts_ms": WALL_MS, "db": "inventory",
        "ts_us": WALL_MS * 1000, "ts_ns": WALL_MS * 1_000_000, "collection": "customers", "ord": 7,
        "wallTime": WALL_MS,
    }
    assert "snapshot" not in source.values and source.get("snapshot") == "false"
    assert source.get("sequence") is None and source.get("lsid") is None and source.get("txnNumber") is None
    assert record.headers == HEADERS


def test_insert_key_types() -> None:
    oid = ObjectId("596e275826f08b2730779e1f")
    cases = [(oid, '{"$oid": "596e275826f08b2730779e1f"}'), ("1234", '"1234"'), (Int64(2147483657), "2147483657"),
             ({"company": 32, "dept": "home improvement"}, '{"company": 32,"dept": "home improvement"}')]
    for key, expected in cases:
        [record] = converter().to_records(event("insert", documentKey={"_id": key}, fullDocument={"_id": key}))
        assert record.key.get("id") == expected


def test_update_with_lookup() -> None:
    description = {"updatedFields": {"first_name": "Anne Marie", "x": {"y": 1}}, "removedFields": ["n"],
                   "truncatedArrays": [{"field": "arr", "newSize": 2}]}
    full = {"_id": Int64(1004), "first_name": "Anne Marie", "email": "annek@noanswer.org"}
    [record] = converter().to_records(event("update", updateDescription=description, fullDocument=full))
    value = record.value
    assert value.get("op") == "u"
    assert value.get("before") is None
    assert value.get("after") == ('{"_id": {"$numberLong": "1004"},"first_name": "Anne Marie",'
                                  '"email": "annek@noanswer.org"}')
    update = value.get("updateDescription")
    assert update.schema is schemas.UPDATE_DESCRIPTION_SCHEMA
    assert update.get("updatedFields") == '{"first_name": "Anne Marie", "x": {"y": 1}}'
    assert update.get("removedFields") == ["n"]
    [truncated] = update.get("truncatedArrays")
    assert truncated == Struct(schemas.TRUNCATED_ARRAY_SCHEMA, {"field": "arr", "size": 2})


def test_update_without_full_document_and_empty_lists() -> None:
    description: dict[str, Any] = {"removedFields": [], "truncatedArrays": [], "updatedFields": {}}
    [record] = converter().to_records(event("update", updateDescription=description, fullDocument=None))
    value = record.value
    assert value.get("after") is None
    update = value.get("updateDescription")
    assert update.get("updatedFields") == "{}"
    assert update.get("removedFields") is None
    assert update.get("truncatedArrays") is None


def test_update_with_pre_image() -> None:
    [record] = converter().to_records(event("update", updateDescription={"updatedFields": {"a": 2}},
                                            fullDocumentBeforeChange={"_id": 1004, "a": 1}))
    assert record.value.get("before") == '{"_id": 1004,"a": 1}'
    assert record.value.get("after") is None


def test_replace() -> None:
    [record] = converter().to_records(event("replace", fullDocument={"_id": 1004, "first_name": "Z"}))
    value = record.value
    assert value.get("op") == "u"
    assert value.get("after") == '{"_id": 1004,"first_name": "Z"}'
    assert value.get("updateDescription") is None
    assert value.get("before") is None


def test_insert_ignores_pre_image() -> None:
    [record] = converter().to_records(event("insert", fullDocument={"_id": 1}, fullDocumentBeforeChange={"_id": 0}))
    assert record.value.get("before") is None


def test_delete_and_tombstone() -> None:
    records = converter().to_records(event("delete"))
    assert len(records) == 2
    data, tombstone = records
    assert data.value.get("op") == "d"
    assert data.value.get("before") is None and data.value.get("after") is None
    assert tombstone.value is None and tombstone.value_schema is None
    assert tombstone.key == data.key and tombstone.key_schema is data.key_schema
    assert tombstone.topic == data.topic
    assert tombstone.source_offset == data.source_offset
    assert tombstone.source_partition == data.source_partition
    assert tombstone.headers == data.headers == HEADERS


def test_delete_with_pre_image_without_tombstone() -> None:
    records = converter(tombstones_on_delete=False).to_records(
        event("delete", fullDocumentBeforeChange={"_id": 1004, "a": "x"}))
    assert len(records) == 1
    assert records[0].value.get("before") == '{"_id": 1004,"a": "x"}'


def test_transaction_fields() -> None:
    lsid = {"id": Binary(base64.b64decode("FA7YEzXgQXSX9OxmzllH2w=="), 4),
            "uid": Binary(base64.b64decode("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="), 0)}
    lsid_json = ('{"id": {"$binary": "FA7YEzXgQXSX9OxmzllH2w==","$type": "04"},'
                 '"uid": {"$binary": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=","$type": "00"}}')
    [record] = converter().to_records(event("insert", fullDocument={"_id": 1}, lsid=lsid, txnNumber=Int64(1)))
    source = record.value.get("source")
    assert source.get("lsid") == lsid_json  # the docs' example value
    assert source.get("txnNumber") == 1
    # Debezium's offset is a java.util.HashMap: this is its iteration order for these keys.
    assert list(offset_of(record)) == ["sec", "ord", "lsid", "resume_token", "txnNumber"]
    assert offset_of(record)["lsid"] == lsid_json
    assert offset_of(record)["txnNumber"] == 1


def test_lsid_without_txn_number_is_not_transactional() -> None:
    [record] = converter().to_records(event("insert", fullDocument={"_id": 1}, lsid={"id": 1}))
    assert record.value.get("source").get("lsid") is None
    assert "lsid" not in offset_of(record)


def test_without_wall_time_uses_cluster_time_seconds() -> None:
    ev = event("insert", fullDocument={"_id": 1})
    del ev["wallTime"]
    [record] = converter().to_records(ev)
    source = record.value.get("source")
    assert source.get("ts_ms") == 1795265284000
    assert source.get("ts_us") == 1795265284000000
    assert source.get("ts_ns") == 1795265284000000000
    assert source.get("wallTime") is None


def test_headers_can_be_disabled_and_options_apply() -> None:
    conv = ChangeEventConverter(topic_prefix="p", run_id="r", extended_headers=False, connector_version="9.9",
                                task_id="3")
    [record] = conv.to_records(event("insert", fullDocument={"_id": 1}, ns={"db": "d b", "coll": "c$1"}))
    assert record.headers == ()
    assert record.topic == "p.d_b.c_1"
    assert record.key_schema is not None and record.key_schema.name == "p.d_b.c_1.Key"
    assert record.value.get("source").get("version") == "9.9"
    assert record.value.get("source").get("db") == "d b"  # the source block keeps the real names
    assert isinstance(record.value.get("ts_ms"), int)


@pytest.mark.parametrize("op", ["drop", "rename", "dropDatabase", "invalidate", "createIndexes", "create"])
def test_other_operation_types_give_no_records(op: str) -> None:
    assert converter().to_records({"_id": TOKEN, "operationType": op, "ns": NS}) == []


def test_resume_token_round_trip_and_legacy_form() -> None:
    token = {"_data": "8263A1B2C3000000012B022C0100296E5A1004", "_typeBits": Binary(b"\x01", 0)}
    text = encode_resume_token(token)
    assert text == base64.b64encode(bson.encode(token)).decode()
    assert decode_resume_token(text) == {"_data": token["_data"], "_typeBits": b"\x01"}
    legacy = "8263A1B2C3000000012B022C0100296E5A1004"
    assert decode_resume_token(legacy) == {"_data": legacy}
    assert decode_resume_token("not base64!") == {"_data": "not base64!"}


@pytest.mark.parametrize("key", [1004, Int64(2**40), 2.5, 1e300, "k\u00e9y", ObjectId("5f1b2c3d4e5f6a7b8c9d0e1f"),
                                 {"a": 1, "b": [1, "x"]}, None])
@pytest.mark.parametrize("release", ["3.6.1.Final", "3.6.3.Final"])
def test_stream_decoded_events_write_what_decoded_ones_write(key: Any, release: str) -> None:
    """The stream's decoder keeps the bytes of the resume token and of the document key, from which the offset
    and the key are written: the same record as from the fully decoded event, transactions included."""
    token = {"_data": "8263A1B2C3000000012B022C0100296E5A1004", "_typeBits": Binary(b"\x01", 0)}
    lsid = {"id": Binary(b"\x01" * 16, 4), "uid": Binary(b"\x02" * 32, 0)}
    options: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)
    conv = converter(release=RELEASES[release])
    for extra in ({}, {"lsid": lsid, "txnNumber": Int64(3)}):
        change = event("insert", _id=token, documentKey={"_id": key}, fullDocument={"_id": key, "a": 1}, **extra)
        data = bson.encode(change, codec_options=options)
        streamed = Decoder(options).event(RawBSONDocument(data, options.with_options(document_class=RawBSONDocument)))
        assert type(streamed["_id"]) is ResumeToken and type(streamed["documentKey"]) is DocumentKey
        assert streamed["_id"] == bson.decode(data)["_id"] and streamed["documentKey"] == {"_id": key}
        [mine] = conv.to_records(streamed)
        decoded: dict[str, Any] = bson.decode(data, codec_options=options)
        [reference] = conv.to_records(decoded)
        assert (mine.key, mine.value, list(offset_of(mine).items())) == \
            (reference.key, reference.value, list(offset_of(reference).items()))
        assert encode_resume_token(streamed["_id"]) == base64.b64encode(bson.encode(token)).decode()


def test_event_offset_is_the_position_of_the_event() -> None:
    for change, session in ((event("insert"), None), (event("insert", clusterTime=None), None),
                            (event("insert"), ('{"id": 1}', 7))):
        offset = event_offset(change, session)
        reference = Position(*((0, 0) if change["clusterTime"] is None else (1795265284, 7)),
                             encode_resume_token(TOKEN), *(session or ())).to_offset()
        assert list(offset.items()) == list(reference.items())
        if session is None:
            assert list(Position.from_event(change).to_offset().items()) == list(offset.items())


# ---------------------------------------------------------------------------------------------------------------
# Schemas


def _fields(schema: Any) -> list[tuple[str, Type, bool]]:
    return [(f.name, f.schema.type, f.schema.optional) for f in schema.fields]


def _field_schema(schema: Schema, name: str) -> Schema:
    """The schema of the field ``name`` of a struct schema (which must have it)."""
    field = schema.field(name)
    assert field is not None, f"{schema.name} has no field {name}"
    return field.schema


def test_envelope_schema() -> None:
    envelope = schemas.envelope_schema("fulfillment.inventory.customers")
    assert envelope.name == "fulfillment.inventory.customers.Envelope"
    assert envelope.version is None and not envelope.optional
    assert _fields(envelope) == [("before", Type.STRING, True), ("after", Type.STRING, True),
                                 ("updateDescription", Type.STRUCT, True), ("source", Type.STRUCT, False),
                                 ("op", Type.STRING, True), ("ts_ms", Type.INT64, True),
                                 ("transaction", Type.STRUCT, True)]
    for name in ("before", "after"):
        json_schema = _field_schema(envelope, name)
        assert (json_schema.name, json_schema.version) == ("io.debezium.data.Json", 1)
    assert _field_schema(envelope, "source") is schemas.SOURCE_SCHEMA
    assert schemas.envelope_schema("fulfillment.inventory.customers") is envelope


def test_key_schema() -> None:
    key = schemas.key_schema("a.b.c")
    assert key.name == "a.b.c.Key" and key.version is None and not key.optional
    assert _fields(key) == [("id", Type.STRING, False)]


def test_source_schema() -> None:
    source = schemas.SOURCE_SCHEMA
    assert (source.name, source.version, source.optional) == ("io.debezium.connector.mongo.Source", 1, False)
    assert _fields(source) == [
        ("version", Type.STRING, False), ("connector", Type.STRING, False), ("name", Type.STRING, False),
        ("ts_ms", Type.INT64, False), ("snapshot", Type.STRING, True), ("db", Type.STRING, False),
        ("sequence", Type.STRING, True), ("ts_us", Type.INT64, True), ("ts_ns", Type.INT64, True),
        ("collection", Type.STRING, False), ("ord", Type.INT32, False), ("lsid", Type.STRING, True),
        ("txnNumber", Type.INT64, True), ("wallTime", Type.INT64, True)]
    snapshot = _field_schema(source, "snapshot")
    assert (snapshot.name, snapshot.version, snapshot.default) == ("io.debezium.data.Enum", 1, "false")
    assert snapshot.parameters == {"allowed": "true,first,first_in_data_collection,last_in_data_collection,last,"
                                              "false,incremental"}


def test_update_description_and_transaction_schemas() -> None:
    update = schemas.UPDATE_DESCRIPTION_SCHEMA
    assert (update.name, update.version, update.optional) == (
        "io.debezium.connector.mongodb.changestream.updatedescription", 1, True)
    assert _fields(update) == [("removedFields", Type.ARRAY, True), ("updatedFields", Type.STRING, True),
                               ("truncatedArrays", Type.ARRAY, True)]
    assert _field_schema(update, "removedFields").value_schema == STRING
    assert _field_schema(update, "updatedFields").name == "io.debezium.data.Json"
    truncated = _field_schema(update, "truncatedArrays").value_schema
    assert truncated is not None and truncated is schemas.TRUNCATED_ARRAY_SCHEMA
    assert (truncated.name, truncated.version, truncated.optional) == (
        "io.debezium.connector.mongodb.changestream.truncatedarray", 1, False)
    assert _fields(truncated) == [("field", Type.STRING, False), ("size", Type.INT32, False)]
    tx = schemas.TRANSACTION_SCHEMA
    assert (tx.name, tx.version, tx.optional) == ("event.block", 1, True)
    assert _fields(tx) == [("id", Type.STRING, False), ("total_order", Type.INT64, False),
                           ("data_collection_order", Type.INT64, False)]


@pytest.mark.parametrize(("args", "expected"), [
    (("fulfillment", "inventory", "customers"), "fulfillment.inventory.customers"),
    (("p", "my db", "coll$x"), "p.my_db.coll_x"),
    (("p", "d\u00e9", "\U0001F600"), "p.d_.__"),
    (("p", "db", "c", "_"), "p_db_c"),
    (("p", "db", "a-b_c.d"), "p.db.a-b_c.d"),
    (("p", "d", "x" * 300), ("p.d." + "x" * 300)[:249]),
])
def test_topic_name(args: tuple[str, ...], expected: str) -> None:
    assert schemas.topic_name(*args) == expected


# ---------------------------------------------------------------------------------------------------------------
# Golden records from Debezium itself
#
# data/debezium_records_golden.jsonl: each change event (``event``: base64 BSON) fed through Debezium 3.6.1.Final's own
# classes - MongoDbSchema / MongoDbCollectionSchema (key and value), MongoDbOffsetContext (source block and offset),
# MongoDbChangeRecordEmitter with ts_ms fixed at 1800000000000 - key and value serialized with Kafka Connect's
# JsonConverter (schemas.enable=true) and the offset with a schemaless one (what lands in the offsets topic).
# Re-recorded by ``python -m compat.record debezium-records`` (compat/debezium/records_golden.py); its first line says
# which versions produced it.

GOLDEN_RECORDS = [row for row in (json.loads(line) for line in (Path(__file__).parent / "data" /
                                  "debezium_records_golden.jsonl").read_text().splitlines() if line)
                  if "recorded_with" not in row]


def _schema_json(schema: Schema, field: str | None = None) -> dict[str, Any]:
    """``schema`` as Kafka's JsonConverter describes it (key order aside)."""
    out: dict[str, Any] = {"type": schema.type.value, "optional": schema.optional}
    if schema.type is Type.STRUCT:
        out["fields"] = [_schema_json(f.schema, f.name) for f in schema.fields]
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        out["items"] = _schema_json(schema.value_schema)
    for attr in ("name", "version", "parameters", "default"):
        if getattr(schema, attr) is not None:
            out[attr] = getattr(schema, attr)
    if field is not None:
        out["field"] = field
    return out


def _payload_json(schema: Schema, value: Any) -> Any:
    """``value`` as JsonConverter writes it (a null field takes the schema default)."""
    if value is None:
        return schema.default
    if schema.type is Type.STRUCT:
        return {f.name: _payload_json(f.schema, value.values.get(f.name)) for f in schema.fields}
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return [_payload_json(schema.value_schema, item) for item in value]
    return value


@pytest.mark.parametrize("raw", [False, True], ids=["decoded", "raw"])
@pytest.mark.parametrize("golden", GOLDEN_RECORDS, ids=[str(i) for i in range(len(GOLDEN_RECORDS))])
def test_records_match_debezium(golden: dict[str, Any], raw: bool) -> None:
    options: CodecOptions[dict[str, Any]] = CodecOptions(datetime_conversion=DatetimeConversion.DATETIME_AUTO)
    data = base64.b64decode(golden["event"])
    if raw:  # as the connector's stream reads it: images stay raw BSON, the rest is decoded
        change = Decoder(options).event(RawBSONDocument(data, options.with_options(document_class=RawBSONDocument)))
        assert all(type(change[image]) is RawBSONDocument for image in IMAGES if change.get(image) is not None)
    else:
        change = bson.decode(data, codec_options=options)
    records = converter().to_records(change)
    record = records[0]
    assert record.topic == golden["topic"]
    assert record.key_schema is not None and record.value_schema is not None
    assert {"schema": _schema_json(record.key_schema), "payload": _payload_json(record.key_schema, record.key)} == \
        json.loads(golden["key"])
    assert {"schema": _schema_json(record.value_schema),
            "payload": _payload_json(record.value_schema, record.value)} == json.loads(golden["value"])
    assert list(offset_of(record).items()) == json.loads(golden["offset"], object_pairs_hook=list)
    assert len(records) == (2 if change["operationType"] == "delete" else 1)


def offset_of(record: SourceRecord) -> Mapping[str, Any]:
    """A change record's source offset (every one has one)."""
    assert record.source_offset is not None
    return record.source_offset


def test_incremental_snapshot_records_carry_the_stream_position_in_source() -> None:
    """As Debezium's (``readEvent`` with the offset context of the window's close): ``ord`` the increment and
    ``ts_ms`` the seconds of the stream position, where an initial snapshot record has ``ord`` -1."""
    events = converter()
    offset = {"sec": 1700000000, "ord": 3, "resume_token": "x"}
    incremental = events.snapshot_record({"_id": 1}, "db", "c", offset, marker="incremental")
    source = incremental.value.get("source")
    assert (source.get("ord"), source.get("ts_ms"), source.get("snapshot")) == (3, 1_700_000_000_000, "incremental")
    initial = events.snapshot_record({"_id": 1}, "db", "c", offset).value.get("source")
    assert (initial.get("ord"), initial.get("snapshot")) == (-1, "true")
