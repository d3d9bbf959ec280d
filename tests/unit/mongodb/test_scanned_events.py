"""A plain data event read in one pass (``_extjson.scan_event`` + ``ChangeEventConverter.prepare_scanned``) makes
the records the decoded event makes (``to_records``): the same topic, key, offset, headers and the bytes every
JsonConverter setting writes, and the same values once something reads them; every other event is left to the
decoding path."""

from __future__ import annotations

import datetime as dt
import struct
from typing import Any, cast

import bson
import pytest
from bson import Int64, Timestamp
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

from connect.api.data import LazyStruct, Schema, Struct
from connect.api.errors import DataError
from connect.api.records import PreparedRecords, SourceRecord
from connectors.mongodb import _extjson
from connectors.mongodb import config as mongo_config
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.position import Position
from connectors.mongodb.releases import RELEASES
from connectors.mongodb.streaming.capture import StreamCapture
from connectors.mongodb.streaming.fetcher import ChangeStreamFetcher
from connectors.mongodb.streaming.metrics import StreamingMetrics
from connectors.mongodb.streaming.raw_events import Decoder, RawEvent, Scanned
from connectors.mongodb.streaming.signal_dispatch import SignalDispatcher, SignalSettings
from converters.json import JsonConverter
from tests.unit.mongodb.test_envelope_writer import NOW, change_events, converters, documents, plain_copy
from tests.unit.mongodb.test_fetcher_batches import RAW, BatchedStream

DECODER = Decoder(CodecOptions())


def more_events() -> list[dict[str, Any]]:
    """Fields a server may leave out or set to null, key shapes, and members the records never read."""
    doc = documents()[0]
    base: dict[str, Any] = {"_id": {"_data": "8200AB"}, "ns": {"db": "db", "coll": "c"}, "documentKey": {"_id": 7}}
    return [
        {**base, "operationType": "insert", "fullDocument": doc},  # no clusterTime: sec and ord 0
        {**base, "operationType": "insert", "fullDocument": doc, "clusterTime": Timestamp(5, 6), "wallTime": None},
        {**base, "operationType": "insert", "fullDocument": doc, "clusterTime": Timestamp(5, 6),
         "wallTime": dt.datetime(1970, 1, 1, tzinfo=dt.UTC)},  # wallTime 0 counts as none, as decoded
        {**base, "operationType": "replace", "fullDocument": None, "clusterTime": Timestamp(5, 6)},
        {**base, "operationType": "delete", "documentKey": None, "clusterTime": Timestamp(5, 6)},
        {**base, "operationType": "delete", "documentKey": {"shard": 1}, "clusterTime": Timestamp(5, 6)},
        {**base, "operationType": "insert", "documentKey": {"_id": {"$x": 1.5e300, "d": bson.Decimal128("1E+3")}},
         "fullDocument": doc, "clusterTime": Timestamp(5, 6)},
        {**base, "operationType": "update", "clusterTime": Timestamp(5, 6)},  # no updateDescription
        {**base, "operationType": "update", "clusterTime": Timestamp(5, 6),
         "updateDescription": {"updatedFields": {"a": 1}, "removedFields": None}},
        {**base, "operationType": "insert", "fullDocument": doc, "clusterTime": Timestamp(5, 6),
         "collectionUUID": bson.Binary(b"u" * 16, 4), "ns": {"db": "db", "coll": "c", "extra": 1}},
        {**base, "operationType": "insert", "fullDocument": doc, "clusterTime": Timestamp(5, 2**31 - 1),
         "wallTime": dt.datetime(9999, 12, 31, tzinfo=dt.UTC)},  # ts_ns beyond int64: the values' path
    ]


def scannable(event: dict[str, Any]) -> bool:
    """Whether the scan takes the event (else the decoding path reads it)."""
    description = event.get("updateDescription")
    if description is not None and (description.get("removedFields") or description.get("truncatedArrays")):
        return False
    return event["operationType"] in ("insert", "update", "replace", "delete") and "lsid" not in event


def sent(converter: JsonConverter, topic: str, schema: Schema | None, value: Any) -> bytes | str | None:
    """What the converter writes, or the error it raises (a key without ``documentKey`` fails either way)."""
    try:
        return converter.from_connect_data(topic, schema, value)
    except DataError as exc:
        return str(exc)


def same_records(mine: list[SourceRecord], theirs: list[SourceRecord]) -> None:
    assert len(mine) == len(theirs)
    for scanned, decoded in zip(mine, theirs, strict=True):
        assert (scanned.topic, scanned.key_schema, scanned.value_schema, scanned.headers) == \
            (decoded.topic, decoded.key_schema, decoded.value_schema, decoded.headers)
        assert scanned.source_partition == decoded.source_partition
        assert list((scanned.source_offset or {}).items()) == list((decoded.source_offset or {}).items())
        assert scanned.key == decoded.key
        for converter in converters():
            for schema, mine_value, theirs_value in ((scanned.key_schema, scanned.key, decoded.key),
                                                     (scanned.value_schema, scanned.value, decoded.value)):
                assert sent(converter, scanned.topic, schema, mine_value) == \
                    sent(converter, decoded.topic, schema, theirs_value)
        if decoded.value is None:
            assert scanned.value is None
        else:
            assert plain_copy(scanned.value) == plain_copy(decoded.value)


def scanned_records(events: ChangeEventConverter, scanned: Scanned) -> list[SourceRecord] | None:
    """The records the prepared rows of a scanned event stand for; None where it is left to the decoding path."""
    records = PreparedRecords()
    return list(records) if events.prepare_scanned(scanned, DECODER.decode, records) else None


@pytest.mark.parametrize("release", list(RELEASES))
@pytest.mark.parametrize("tombstones", [True, False])
def test_a_scanned_event_makes_the_records_of_the_decoded_event(release: str, tombstones: bool) -> None:
    def converter() -> ChangeEventConverter:
        return ChangeEventConverter(topic_prefix='pre"fix', run_id="r", clock_ms=lambda: NOW, written_payloads=True,
                                    tombstones_on_delete=tombstones, release=RELEASES[release])
    mine, theirs = converter(), converter()
    scans = writes = 0
    for change in change_events() + more_events():
        raw = bson.encode(change)
        scanned = _extjson.scan_event(raw, mine.plus_exponent)
        if not scannable(change):
            assert scanned is None, change
            continue
        assert scanned is not None, change
        scans += 1
        decoded = DECODER.decode(raw)
        records = scanned_records(mine, scanned)
        if records is None:  # declined (ord or times beyond the fields): the decoded event's values' path
            assert type(theirs.to_records(decoded)[0].value) is not LazyStruct
            continue
        writes += 1
        assert type(records[0].value) is LazyStruct
        same_records(records, theirs.to_records(decoded))
        assert records[0].source_offset == Position.from_event(decoded).to_offset()
    assert scans > 80 and writes > 60


def _element(tag: int, name: str, value: bytes) -> bytes:
    return bytes([tag]) + name.encode() + b"\x00" + value


def _document(*elements: bytes) -> bytes:
    body = b"".join(elements) + b"\x00"
    return struct.pack("<i", len(body) + 4) + body


def test_events_the_scan_leaves_to_the_decoding_path() -> None:
    base: dict[str, Any] = {"_id": {"_data": "82"}, "ns": {"db": "db", "coll": "c"}, "documentKey": {"_id": 1},
                            "clusterTime": Timestamp(5, 6)}
    left = [
        {**base, "operationType": "drop"},
        {**base, "operationType": "insert", "lsid": {"id": 1}},
        {**base, "operationType": "insert", "txnNumber": Int64(1)},
        {**base, "operationType": "insert", "splitEvent": {"fragment": 1, "of": 2}},
        {**base, "operationType": "insert", "updateDescription": {"updatedFields": {}}},  # only updates have one
        {**base, "operationType": "update", "updateDescription": {"updatedFields": {}, "disambiguatedPaths": {}}},
        {**base, "operationType": "update", "updateDescription": {"removedFields": []}},
        {**base, "operationType": "insert", "_id": "not a document"},
        {**base, "operationType": "insert", "ns": {"db": "db"}},
        {**base, "operationType": "insert", "ns": {"db": "db", "coll": 5}},
        {**base, "operationType": "insert", "clusterTime": 5},
        {**base, "operationType": "insert", "wallTime": 5},
        {**base, "operationType": "insert", "fullDocument": "text"},
        {**base, "operationType": "insert", "documentKey": [1]},
        {"ns": {"db": "db", "coll": "c"}, "operationType": "insert"},  # no resume token
    ]
    for change in left:
        assert _extjson.scan_event(bson.encode(change)) is None, change
    token = _element(0x03, "_id", bson.encode({"_data": "82"}))
    insert = _element(0x02, "operationType", struct.pack("<i", 7) + b"insert\x00")
    ns = _element(0x03, "ns", bson.encode({"db": "db", "coll": "c"}))
    assert _extjson.scan_event(_document(token, insert, ns)) is not None
    assert _extjson.scan_event(_document(token, insert, ns, insert)) is None  # a field twice
    assert _extjson.scan_event(_document(token, insert, ns)[:-3]) is None  # malformed
    wall = _element(0x09, "wallTime", struct.pack("<q", 253_402_300_800_000))  # beyond datetime: decoded otherwise
    assert _extjson.scan_event(_document(token, insert, ns, wall)) is None


def test_a_decoder_scans_once_told_to() -> None:
    options = CodecOptions(document_class=RawBSONDocument)
    change = change_events()[0]
    raw = RawBSONDocument(bson.encode(change), options)
    decoder = Decoder(CodecOptions())
    assert type(decoder.read(raw)) is dict
    decoder.scan(False)
    scanned = decoder.read(raw)
    assert type(scanned) is tuple and scanned[-1] == raw.raw
    assert type(decoder.event(raw)) is dict  # always decoded
    decoder.scan(None)
    assert type(decoder.read(raw)) is dict


def _captured(events: list[dict[str, Any]], scan: bool, signals: str,
              expected: int, rows: bool = False) -> tuple[StreamCapture, list[SourceRecord]]:
    """A capture of ``db.c`` (``signals``: none, an idle dispatcher of ``db.signals``, or one whose Kafka signal
    position rides on the offsets) that took ``events`` (``expected`` records), scanning plain data events (one by
    one, or with ``rows`` in runs, as ``StreamCapture._open_stream`` sets it up) or decoding them all."""
    config = mongo_config.MongoDbConfig.parse({"topic.prefix": "p", "mongodb.connection.string": "mongodb://h/",
                                               "collection.include.list": "db.c"})
    partition = {"server_id": "p"}
    capture = StreamCapture(config=config, client=object(), partition=partition, label="c-task-0",
                            events=ChangeEventConverter(topic_prefix="p", run_id="r", partition=partition,
                                                        clock_ms=lambda: NOW, written_payloads=True),
                            metrics=StreamingMetrics("p", "0", 1, lambda: 0))
    if signals != "none":
        settings = SignalSettings("p", "db.signals", None, {}, 1000, 1024)
        capture.signal_collection = "db.signals"
        capture.signals = SignalDispatcher(None, settings, capture.events, "c|task-0", list, None, None)
        if signals == "stamping":
            capture.signals._signal_offset = 7
    decoder = Decoder(CodecOptions())
    if scan:
        decoder.scan(capture.events.plus_exponent)
    if rows:
        capture._rows = _extjson.StreamRows(capture.events.plus_exponent)
    capture._decoder = decoder
    stream = BatchedStream([([RawEvent(bson.encode(event), RAW) for event in events], None)])
    capture._fetcher = ChangeStreamFetcher.open(lambda: (stream, decoder), 8192, f"scan-{scan}")
    records: list[SourceRecord] = []
    try:
        while len(records) < expected or (capture.position() or {}).get("sec") != -1:  # then idle: its marker
            records += capture.take(100, 5.0)
    finally:
        capture.close()
    return capture, records


@pytest.mark.parametrize("signals", ["none", "idle", "stamping"])
def test_a_capture_scanning_events_emits_and_stands_where_a_decoding_one_does(signals: str) -> None:
    doc = documents()[1]
    base: dict[str, Any] = {"ns": {"db": "db", "coll": "c"}, "documentKey": {"_id": doc["_id"]},
                            "wallTime": dt.datetime(2026, 11, 21, tzinfo=dt.UTC)}
    events = [
        {**base, "operationType": "insert", "fullDocument": doc},
        {**base, "operationType": "insert", "fullDocument": doc, "ns": {"db": "db", "coll": "other"}},  # filtered
        {**base, "operationType": "update", "fullDocument": doc,
         "updateDescription": {"updatedFields": {"a": 1}, "removedFields": ["b"]}},  # decoded either way
        {**base, "operationType": "delete"},  # and its tombstone
        {**base, "operationType": "drop"},
        {**base, "operationType": "insert", "ns": {"db": "db", "coll": "signals"}, "documentKey": {"_id": "s"},
         "fullDocument": {"_id": "s", "type": "log", "data": {"message": "hello"}}},  # a signal, when there are
        {**base, "operationType": "update", "fullDocument": doc,
         "updateDescription": {"updatedFields": {"a": 2}, "removedFields": []}},
    ]
    for n, event in enumerate(events):
        event["_id"], event["clusterTime"] = {"_data": f"82{n:04d}"}, Timestamp(1_795_265_284, n + 1)
    expected = 5 if signals == "none" else 6  # the signal collection is captured with signals (else filtered)
    scanning, scanned = _captured(events, True, signals, expected, rows=True)
    one_by_one, scanned_one_by_one = _captured(events, True, signals, expected)
    decoding, decoded = _captured(events, False, signals, expected)
    same_records(scanned, decoded)
    same_records(scanned_one_by_one, decoded)
    assert one_by_one.position() == decoding.position() and one_by_one.metrics.counts == decoding.metrics.counts
    assert [type(r.value) for r in scanned if r.topic == "p.db.c"] == \
        [LazyStruct, Struct, LazyStruct, type(None), LazyStruct]
    stamped = {"incremental_snapshot_signal_offset": 7} if signals == "stamping" else {}
    assert all(stamped.items() <= dict(r.source_offset or {}).items() for r in scanned)
    assert scanning.position() == decoding.position() == Position.at_token(events[-1]["_id"]).to_offset()
    assert scanning.metrics.counts == decoding.metrics.counts
    assert scanning.metrics.counts["NumberOfEventsFiltered"] == (2 if signals == "none" else 1)
    event = {**events[0], "_id": {"_data": "82FFFE"}}  # one more event, taken directly: the position after it
    raw = RawEvent(bson.encode(event), RAW)
    assert scanning._decoder is not None and decoding._decoder is not None
    scanning._take_scanned(cast(Scanned, scanning._decoder.read(raw)), PreparedRecords())
    decoding._emit(decoding._decoder.event(raw), PreparedRecords())
    for capture in (scanning, decoding):
        assert capture.position() == Position.from_event(event).to_offset()
        assert capture.resume_token == event["_id"]
        capture.resume_token = {"_data": "82FFFF"}  # set (the task does, on a lost position): the last event stays
        assert capture.resume_token == {"_data": "82FFFF"}
        assert capture.position() == Position.from_event(event).to_offset()
