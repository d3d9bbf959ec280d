"""Field excludes/renames, transaction metadata, the pipeline and split events, fault classification, shard
grouping: the pure parts of the capture."""

from __future__ import annotations

import uuid
from typing import Any

import bson
import pytest
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from pymongo.errors import AutoReconnect, OperationFailure

from connect.api.errors import DataError
from connectors.mongodb import config as mongo_config
from connectors.mongodb.capture_config import CaptureOptions
from connectors.mongodb.connection import (
    Backoff,
    Fault,
    classify,
    fatal_message,
    java_map_string,
    lost_position_message,
)
from connectors.mongodb.fields import FieldSelector
from connectors.mongodb.position import java_hashmap_order, java_string_hash
from connectors.mongodb.sharding import Shard, group, task_configs
from connectors.mongodb.streaming.pipeline import FragmentMerger, build_pipeline
from connectors.mongodb.streaming.raw_events import IMAGES, Decoder, RawEvent
from connectors.mongodb.streaming.transactions import (
    TransactionMonitor,
    transaction_id,
)


def _options(**props: str) -> CaptureOptions:
    return CaptureOptions.parse(props)


def test_field_excludes_and_renames_on_documents_and_update_descriptions() -> None:
    selector = FieldSelector(["db.c.secret", "*.c.a.zip", "db.*.items.price"],
                             [("db.c.name", "full_name"), ("db.c.a.city", "town")])
    fields = selector.for_collection("db", "c")
    assert fields is not None and selector.for_collection("db2", "other") is None
    doc = {"_id": 1, "name": "x", "secret": 1, "a": {"city": "O", "zip": "1"},
           "items": [{"price": 1, "n": 2}, {"price": 3}]}
    assert fields.document(doc) == {"_id": 1, "full_name": "x", "a": {"town": "O"}, "items": [{"n": 2}, {}]}
    # a renamed field moves to the end of its document, as Debezium's renamer re-appends it
    assert list(fields.document(doc)) == ["_id", "a", "items", "full_name"]
    event = fields.event({"updateDescription": {
        "updatedFields": {"a.city": "B", "a.zip": "2", "secret": 2, "items.0.price": 5, "a": {"city": "C"}},
        "removedFields": ["name", "secret", "other"], "truncatedArrays": [{"field": "a.city", "newSize": 1}]}})
    description = event["updateDescription"]
    assert description["updatedFields"] == {"a.town": "B", "a": {"town": "C"}}
    assert description["removedFields"] == ["full_name", "other"]
    assert description["truncatedArrays"] == [{"field": "a.town", "newSize": 1}]


def test_rename_onto_an_existing_field_fails() -> None:
    fields = FieldSelector([], [("db.c.a", "b")]).for_collection("db", "c")
    assert fields is not None
    with pytest.raises(DataError, match="Document already contains field : b"):
        fields.document({"a": 1, "b": 2})


def test_java_hashmap_order_matches_debeziums_offsets() -> None:
    assert java_string_hash("sec") == 113_745
    assert java_hashmap_order(["sec", "ord", "lsid", "resume_token", "txnNumber"]) == [
        "sec", "ord", "lsid", "resume_token", "txnNumber"]


def test_transaction_monitor_begin_end_and_blocks() -> None:
    monitor = TransactionMonitor("p.transaction", {"server_id": "p"})
    before, block = monitor.on_event("t:1", "db.a", 10, {"sec": 1})
    assert [r.value.get("status") for r in before] == ["BEGIN"] and block == {
        "id": "t:1", "total_order": 1, "data_collection_order": 1}
    assert monitor.offset({"sec": 2, "ord": 1})["transaction_id"] == "t:1"
    _, block = monitor.on_event("t:1", "db.b", 11, {"sec": 2})
    assert block == {"id": "t:1", "total_order": 2, "data_collection_order": 1}
    before, block = monitor.on_event(None, "db.a", 12, {"sec": 3})
    assert block is None
    [end] = before
    assert end.value.get("status") == "END" and end.value.get("event_count") == 2
    assert end.source_offset == {"sec": 3} and monitor.committed == 1
    assert transaction_id('{"id": 1}', 5) == '{"id": 1}:5' and transaction_id(None, None) is None


def test_pipeline_orders_and_oversize() -> None:
    user = '[{"$match": {"x": 1}}]'
    assert build_pipeline(_options()) == []
    skip = build_pipeline(_options(**{"cursor.pipeline": user, "cursor.oversize.handling.mode": "skip",
                                      "cursor.oversize.skip.threshold": "10", "cursor.pipeline.order": "user_first"}))
    assert skip[0] == {"$match": {"x": 1}} and "$and" in skip[1]["$match"]
    only = build_pipeline(_options(**{"cursor.pipeline": user, "cursor.oversize.handling.mode": "split",
                                      "cursor.pipeline.order": "user_only"}))
    assert only == [{"$match": {"x": 1}}, {"$changeStreamSplitLargeEvent": {}}]


def test_fragments_are_merged_in_order() -> None:
    merger = FragmentMerger()
    assert merger.add({"_id": 1, "a": 1, "splitEvent": {"fragment": 1, "of": 2}}) is None
    assert merger.add({"_id": 2, "b": 2, "splitEvent": {"fragment": 2, "of": 2}}) == {"_id": 2, "a": 1, "b": 2}
    with pytest.raises(DataError, match="Missing event fragment"):
        merger.add({"_id": 3, "splitEvent": {"fragment": 2, "of": 2}})


def test_fault_classes() -> None:
    assert classify(OperationFailure("auth", 18)) is Fault.AUTH
    assert classify(OperationFailure("lost", 286)) is Fault.POSITION_LOST
    assert classify(OperationFailure("capped", 136)) is Fault.POSITION_LOST
    assert classify(OperationFailure("too big", 10334)) is Fault.FATAL
    assert classify(AutoReconnect("down")) is Fault.RETRY
    assert java_map_string({"sec": 1, "initsync": True}) == "{sec=1, initsync=true}"
    assert lost_position_message({"sec": 1}).startswith("The connector is trying to read change stream starting "
                                                        "at {sec=1}, but this is no longer available")


def test_backoff_doubles_and_gives_up() -> None:
    backoff = Backoff(max_retries=2, max_wait_ms=1000, initial_ms=100)
    assert backoff.failed() and 0 < backoff.remaining() <= 0.1
    assert backoff.failed() and backoff.remaining() <= 0.2
    assert not backoff.failed()
    backoff.succeeded()
    assert backoff.failed()


def test_shards_grouped_contiguously() -> None:
    assert group([1, 2, 3], 2) == [[1, 2], [3]]
    assert group([1, 2, 3, 4], 3) == [[1, 2], [3], [4]]
    assert group([1], 5) == [[1]]
    shard = Shard("s0", "rs0/h1:1,h2:2")
    assert shard.connection_string("mongodb://u:p@cfg:9/?replicaSet=cfg&tls=true") == (
        "mongodb://u:p@h1:1,h2:2/?tls=true&replicaSet=rs0")
    configs = task_configs({"mongodb.connection.string": "mongodb://cfg:9/", "name": "n"},
                           [shard, Shard("s1", "rs1/h3:3")], 1)
    assert len(configs) == 1 and '"rs": "s1"' in configs[0]["mongodb.internal.task.replica.sets"]


def test_validation_lists_every_capture_problem() -> None:
    props: dict[str, Any] = {"topic.prefix": "p", "mongodb.connection.string": "mongodb://h/",
                             "field.exclude.list": "nodots", "cursor.pipeline": "{}",
                             "cursor.oversize.handling.mode": "skip", "skipped.operations": "z",
                             "capture.scope": "collection", "capture.target": "nodot"}
    errors = {r.name: r.errors for r in mongo_config.validate(props) if r.errors}
    assert set(errors) >= {"field.exclude.list", "cursor.pipeline", "cursor.oversize.skip.threshold",
                           "skipped.operations", "capture.target"}


def test_literal_filter_mode() -> None:
    base = {"topic.prefix": "p", "mongodb.connection.string": "mongodb://h/"}
    regex = mongo_config.MongoDbConfig.parse({**base, "collection.include.list": "db.c.*"})
    literal = mongo_config.MongoDbConfig.parse({**base, "collection.include.list": "db.c.*",
                                                "filters.match.mode": "literal"})
    assert mongo_config.captured(regex, "db", "cx") and not mongo_config.captured(literal, "db", "cx")
    assert mongo_config.captured(literal, "DB", "C.*")


def test_fatal_message_names_the_oversize_setting() -> None:
    text = fatal_message("c-0", OperationFailure("BSONObjectTooLarge", 10334))
    assert text.startswith("[c-0] An exception occurred in the change event producer. This connector will be stopped.")
    assert "cursor.oversize.handling.mode=split" in text
    assert "oversize" not in fatal_message("c-0", OperationFailure("other", 2))


def test_field_rules_apply_to_raw_images() -> None:
    # the change stream keeps images as raw BSON; the rules decode them first
    fields = FieldSelector(["db.c.secret"], [("db.c.name", "full_name")]).for_collection("db", "c")
    assert fields is not None
    raw = RawBSONDocument(bson.encode({"_id": 1, "name": "x", "secret": 2, "sub": {"a": 1}}))
    event = fields.event({"fullDocument": raw, "fullDocumentBeforeChange": None})
    assert event["fullDocument"] == {"_id": 1, "full_name": "x", "sub": {"a": 1}}
    assert type(event["fullDocument"]["sub"]) is dict


def test_raw_event_decoder_keeps_only_the_images_raw() -> None:
    options: CodecOptions[dict[str, Any]] = CodecOptions(uuid_representation=UuidRepresentation.STANDARD)
    change = {"_id": {"_data": "82"}, "operationType": "update", "ns": {"db": "d", "coll": "c"},
              "documentKey": {"_id": uuid.UUID(int=5)}, "fullDocument": {"_id": uuid.UUID(int=5), "a": [1]},
              "fullDocumentBeforeChange": {"_id": uuid.UUID(int=5)},
              "updateDescription": {"updatedFields": {"a": [1]}, "removedFields": [], "truncatedArrays": []}}
    raw = RawBSONDocument(bson.encode(change, codec_options=options),
                          options.with_options(document_class=RawBSONDocument))
    decoder = Decoder(options)
    event = decoder.event(raw)
    assert [type(event[k]) for k in ("fullDocument", "fullDocumentBeforeChange")] == [RawBSONDocument] * 2
    assert {k: v for k, v in event.items() if k not in IMAGES} == {k: v for k, v in change.items() if k not in IMAGES}
    assert type(event["updateDescription"]["updatedFields"]) is dict
    assert decoder.token(RawBSONDocument(bson.encode({"_data": "83"}))) == {"_data": "83"}


def test_raw_event_reads_its_resume_token_from_the_bytes() -> None:
    options: CodecOptions[Any] = CodecOptions(document_class=RawEvent, uuid_representation=UuidRepresentation.STANDARD)
    data = bson.encode({"_id": {"_data": "8263"}, "operationType": "insert", "ns": {"db": "d", "coll": "c"}})
    event = RawEvent(data, options)
    token = event["_id"]
    assert type(token) is RawBSONDocument and dict(token) == {"_data": "8263"}
    assert event["operationType"] == "insert" and event["ns"]["coll"] == "c"
    assert RawEvent(bson.encode({"_id": 5}), options)["_id"] == 5  # not a document: RawBSONDocument's own path
    assert Decoder(options).event(event)["ns"] == {"db": "d", "coll": "c"}


def test_raw_events_made_by_pymongos_decoder_are_raw_documents_as_its_base_makes_them() -> None:
    """RawEvent sets RawBSONDocument's slots itself (without its checks): pymongo still names them as RawEvent
    expects, and the events read as the base class's do."""
    assert "__init__" in vars(RawEvent), "RawBSONDocument's slots were renamed: RawEvent's own __init__ is off"
    options: CodecOptions[Any] = CodecOptions(document_class=RawEvent, uuid_representation=UuidRepresentation.STANDARD)
    docs = [{"_id": {"_data": f"82{n}"}, "operationType": "insert", "fullDocument": {"_id": n, "u": uuid.uuid4()}}
            for n in range(3)]
    base: CodecOptions[dict[str, Any]] = CodecOptions(uuid_representation=UuidRepresentation.STANDARD)
    reply = bson.encode({"cursor": {"nextBatch": docs}}, codec_options=base)
    events = bson.decode(reply, codec_options=options)["cursor"]["nextBatch"]
    for event, doc in zip(events, docs, strict=True):
        assert type(event) is RawEvent and event.raw == bson.encode(doc, codec_options=base)
        plain = RawBSONDocument(event.raw, base.with_options(document_class=RawBSONDocument))
        assert dict(event.items()) == dict(plain.items())
        assert bson.decode(event["fullDocument"].raw, codec_options=base) == doc["fullDocument"]
    assert RawEvent(bson.encode({"a": 1}))["a"] == 1  # without options: the base class's __init__, its defaults
