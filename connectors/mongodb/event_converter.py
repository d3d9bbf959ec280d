"""Turns pymongo change-stream events (and snapshot documents) into SourceRecords exactly as Debezium 3.x's MongoDB
connector does (its ``MongoDbChangeRecordEmitter`` and event converters).

One ``insert``/``update``/``replace``/``delete`` event becomes one data record (plus a tombstone after a delete
when ``tombstones.on.delete`` is on). The record carries:

* key ``<topic>.Key`` {id: relaxed Extended JSON of ``documentKey._id``};
* value ``<topic>.Envelope``: ``before``/``after`` as STRICT Extended JSON strings, ``updateDescription`` for update
  events (``updatedFields`` as RELAXED JSON), the ``source`` block, ``op`` and the emit-time ``ts_ms``;
* source partition ``{"server_id": <topic.prefix>}`` and the offset of the event's :class:`.position.Position`
  (``{sec, ord, [lsid,] resume_token[, txnNumber]}``);
* the four ``__debezium.context.*`` headers when extended headers are enabled.

Other operation types (drop, rename, invalidate, ...) yield no record; the task deals with them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import orjson

from connect.api.data import STRING, LazyStruct, Schema, Struct
from connect.api.records import Header, PreparedRecords, PreparedRow, SourceRecord
from connectors.mongodb import _extjson, extjson, json_writer
from connectors.mongodb.envelope_writer import MAX_TS_MS, SnapshotPayloads, StreamPayloads
from connectors.mongodb.fields import FieldSelector
from connectors.mongodb.naming import TopicNaming
from connectors.mongodb.position import Position, event_offset, session_txn
from connectors.mongodb.releases import NEWEST, DebeziumRelease
from connectors.mongodb.schemas import (
    SOURCE_SCHEMA,
    TRANSACTION_SCHEMA,
    TRUNCATED_ARRAY_SCHEMA,
    UPDATE_DESCRIPTION_SCHEMA,
    envelope_schema,
    key_schema,
)
from connectors.mongodb.streaming.raw_events import DocumentKey, Scanned, UpdateDescription

__all__ = ["CONNECTOR_NAME", "OPERATIONS", "ChangeEventConverter"]

CONNECTOR_NAME = "mongodb"
OPERATIONS = {"insert": "c", "update": "u", "replace": "u", "delete": "d"}
"""Change-stream operation type -> Debezium ``op`` code."""

HEADER_LOGICAL_NAME = "__debezium.context.connectorLogicalName"
HEADER_TASK_ID = "__debezium.context.taskId"
HEADER_CONNECTOR_NAME = "__debezium.context.connectorName"
HEADER_RUN_ID = "__debezium.context.runId"


class ChangeEventConverter:
    """Converts the change-stream events of one connector task into Debezium-shaped SourceRecords."""

    def __init__(
        self,
        *,
        topic_prefix: str,
        release: DebeziumRelease = NEWEST,
        connector_version: str | None = None,
        tombstones_on_delete: bool = True,
        extended_headers: bool = True,
        task_id: str = "0",
        run_id: str,
        topic_delimiter: str = ".",
        clock_ms: Callable[[], int] | None = None,
        partition: Mapping[str, str] | None = None,
        naming: TopicNaming | None = None,
        fields: FieldSelector | None = None,
        written_payloads: bool = False,
    ) -> None:
        """``fields``: ``field.exclude.list``/``field.renames``, applied here to snapshot reads (a streamed event
        arrives with them applied). ``written_payloads``: the values go straight to a JsonConverter
        (``SourceTaskContext.values_go_to_json_converter``): a record's value is then a LazyStruct whose payload
        is written at once where :mod:`.envelope_writer` can (the values are built only if something reads
        them)."""
        self._fields = fields if fields is not None and fields.active else None
        self._prefix = topic_prefix
        self._naming = naming if naming is not None else TopicNaming(topic_prefix, delimiter=topic_delimiter)
        self._schemas: dict[tuple[str, str], tuple[str, Schema, Schema]] = {}
        self._version = connector_version or release.version
        self._plus = release.plus_exponent
        self._tombstones = tombstones_on_delete
        self._clock_ms = clock_ms or _wall_clock_ms
        self._partition = dict(partition) if partition is not None else {"server_id": topic_prefix}
        self._last_wall: tuple[Any, int] = (None, 0)  # the last wallTime converted, and its milliseconds
        self._last_template: tuple[Any, tuple[dict[str, Any], bytes | None, bytes]] = (None, ({}, None, b""))
        self._payloads = StreamPayloads(self._version, topic_prefix, self._plus) if written_payloads else None
        self._snapshot_payloads = SnapshotPayloads(self._version, topic_prefix) if written_payloads else None
        self._headers: tuple[Header, ...] = ()
        if extended_headers:
            self._headers = (
                Header(HEADER_LOGICAL_NAME, STRING, topic_prefix),
                Header(HEADER_TASK_ID, STRING, task_id),
                Header(HEADER_CONNECTOR_NAME, STRING, CONNECTOR_NAME),
                Header(HEADER_RUN_ID, STRING, run_id),
            )

    @property
    def source_partition(self) -> dict[str, str]:
        """The connector's single source partition."""
        return self._partition

    def source_ts_ms(self, event: Mapping[str, Any]) -> int:
        """``source.ts_ms`` of a change event: its ``wallTime``, else the cluster time's seconds. The stream reads
        it before converting the event (metrics, transactions), the ``source`` block again: converted once."""
        wall_ms = self._wall_ms(event.get("wallTime"))
        if wall_ms:
            return wall_ms
        cluster_time = event.get("clusterTime")
        return cluster_time.time * 1000 if cluster_time is not None else 0

    def _wall_ms(self, wall: Any) -> int:
        """Milliseconds of a ``wallTime`` (0 without one), remembered for the same object."""
        if wall is None:
            return 0
        last = self._last_wall
        if last[0] is wall:
            return last[1]
        millis = int(extjson.datetime_millis(wall))
        self._last_wall = (wall, millis)  # one tuple, read and replaced whole: safe from any thread
        return millis

    def to_records(self, event: Mapping[str, Any], transaction: Mapping[str, Any] | None = None,
                   offset_map: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> list[SourceRecord]:
        """The records of one change-stream event: [data] or [data, tombstone]; [] for non-data events.
        ``transaction`` fills the envelope's ``transaction`` block; ``offset_map`` adds keys to the offset."""
        op = OPERATIONS.get(event.get("operationType", ""))
        if op is None:
            return []
        namespace = event["ns"]
        db, coll = namespace["db"], namespace["coll"]
        topic, k_schema, v_schema = self._names(db, coll)
        key = self._key(k_schema, event.get("documentKey"))
        session = session_txn(event) if "lsid" in event else None  # without lsid, session_txn is None
        now = self._clock_ms()
        value: Struct | None = None
        if self._payloads is not None and session is None and transaction is None:
            value = self._written(event, op, db, coll, v_schema, now)
        if value is None:
            value = _struct(v_schema, self._values(event, op, db, coll, session, now, transaction))
        partition = self._partition
        offset = event_offset(event, session)
        if offset_map is not None:
            offset = offset_map(offset)
        record = SourceRecord(partition, offset, topic, None, k_schema, key, v_schema, value, None, self._headers)
        if op != "d" or not self._tombstones:
            return [record]
        tombstone = SourceRecord(partition, offset, topic, None, k_schema, key, None, None, None, self._headers)
        return [record, tombstone]

    @property
    def plus_exponent(self) -> bool:
        """Whether doubles are written with ``E+`` (the release's Java driver)."""
        return self._plus

    @property
    def writes_payloads(self) -> bool:
        """Whether values are written ahead for a JsonConverter (``written_payloads``)."""
        return self._payloads is not None

    def prepare_scanned(self, scanned: Scanned, decode: Callable[[bytes], dict[str, Any]],
                        records: PreparedRecords) -> bool:
        """The records of a data event outside any session read by ``_extjson.scan_event`` (never decoded), the
        same as :meth:`to_records` makes of the decoded event, added to ``records`` as prepared rows
        (:data:`~connect.api.records.PreparedRow`: the key's and value's payloads; the records, whose values are
        built from ``decode(raw)``, made only if read); False, adding nothing, where the payload cannot be written
        ahead (the caller then decodes the event)."""
        op, db, coll, token, key_id, full, before, updated, sec, order, wall_ms, _ = scanned
        payloads = self._payloads
        ts_ms = wall_ms if wall_ms else sec * 1000
        if payloads is None or not (0 <= order < 2**31 and 0 <= ts_ms < MAX_TS_MS):
            return False
        topic, k_schema, v_schema = self._names(db, coll)
        now = self._clock_ms()
        payload = payloads.write_raw(v_schema, db, coll, op, None if op == "c" else before,
                                     None if op == "d" else full, ts_ms, order, wall_ms, now, updated)
        if payload is None:
            return False
        key = None if key_id is None else b'{"id":%b}' % _extjson.jackson_string(key_id).encode()
        partition, headers = self._partition, self._headers
        offset = {"sec": sec, "ord": order, "resume_token": token}
        made = (scanned[-1], decode, now)
        records.add((topic, k_schema, key, v_schema, payload, partition, offset, headers, self._scanned_record, made))
        if op == "d" and self._tombstones:
            records.add((topic, k_schema, key, None, None, partition, offset, headers, self._scanned_record, made))
        return True

    def stream_plan(self, db: str, coll: str, op: str, update: bool) -> tuple[tuple[bytes, ...], str, Schema,
                                                                              Schema] | None:
        """What ``_extjson.StreamRows`` makes the rows of ``db.coll``'s scanned events with ``op`` (``update``:
        with updated fields) from, as :meth:`prepare_scanned` makes them: the payload's parts, the topic, the key
        and value schemas; None where their payloads cannot be written ahead."""
        if self._payloads is None:
            return None
        topic, k_schema, v_schema = self._names(db, coll)
        parts = self._payloads.parts(v_schema, db, coll, op, update)
        return None if parts is None else (parts, topic, k_schema, v_schema)

    def rows_context(self, decode: Callable[[bytes], dict[str, Any]]) -> tuple[Any, ...]:
        """``_extjson.StreamRows.run``'s context for the events taken now: the rows' partition, headers and
        record function, the decoding function, tombstones, the emit time."""
        return self._partition, self._headers, self._scanned_record, decode, self._tombstones, self._clock_ms()

    def _scanned_record(self, row: PreparedRow) -> SourceRecord:
        """The SourceRecord of a row of :meth:`prepare_scanned` (or of ``_extjson.StreamRows``)."""
        topic, k_schema, _, v_schema, payload, partition, offset, headers, _, made = row
        raw, decode, now = made
        scanned = _extjson.scan_event(raw, self._plus)
        assert scanned is not None  # the row was made from it
        key = None if scanned[4] is None else _struct(k_schema, {"id": scanned[4]})  # type: ignore[arg-type]
        if v_schema is None:  # the tombstone after a delete
            return SourceRecord(partition, offset, topic, None, k_schema, key, None, None, None, headers)
        assert payload is not None
        value = LazyStruct(v_schema, payload, partial(self._decoded_values, decode, scanned[-1], scanned[0],
                                                      scanned[1], scanned[2], now), defaults_written=True)
        return SourceRecord(partition, offset, topic, None, k_schema, key, v_schema, value, None, headers)

    def _decoded_values(self, decode: Callable[[bytes], dict[str, Any]], raw: bytes, op: str, db: str, coll: str,
                        now: int) -> dict[str, Any]:
        return self._values(decode(raw), op, db, coll, None, now, None)

    def _values(self, event: Mapping[str, Any], op: str, db: str, coll: str, session: tuple[str, int] | None,
                now: int, transaction: Mapping[str, Any] | None) -> dict[str, Any]:
        """The envelope's values of a change event (fields added in schema order)."""
        values = self._images(event, op)
        values["source"] = self._source(event, db, coll, event.get("clusterTime"), session)
        values["op"] = op
        values["ts_ms"] = now
        if transaction is not None:
            values["transaction"] = _struct(TRANSACTION_SCHEMA, dict(transaction))
        return values

    def _written(self, event: Mapping[str, Any], op: str, db: str, coll: str, v_schema: Schema,
                 now: int) -> LazyStruct | None:
        """The value of an event outside a session (an update's ``updateDescription`` with updated fields only,
        as the stream decoded it) as a LazyStruct whose payload is written at once
        (:class:`.envelope_writer.StreamPayloads`); None where that does not apply."""
        assert self._payloads is not None
        description = event.get("updateDescription")
        updated: bytes | None = None
        if description is not None:
            if op != "u" or type(description) is not UpdateDescription or description.get("removedFields") \
                    or description.get("truncatedArrays") or not isinstance(description.get("updatedFields"), dict):
                return None
            updated = _extjson.embedded(description.raw, "updatedFields")
            if updated is None:
                return None
        cluster_time = event.get("clusterTime")
        wall_ms = self._wall_ms(event.get("wallTime"))
        ts_ms = wall_ms if wall_ms else (cluster_time.time * 1000 if cluster_time is not None else 0)
        order = cluster_time.inc if cluster_time is not None else 0
        if not (0 <= order < 2**31 and 0 <= ts_ms < MAX_TS_MS):  # beyond the fields' ranges: the values' path
            return None
        before = None if op == "c" else event.get("fullDocumentBeforeChange")
        after = None if op == "d" else event.get("fullDocument")
        payload = self._payloads.write(v_schema, db, coll, op, before, after, ts_ms, order, wall_ms, now, updated)
        if payload is None:
            return None
        return LazyStruct(v_schema, payload, partial(self._values, event, op, db, coll, None, now, None),
                          defaults_written=True)

    def snapshot_record(self, doc: Mapping[str, Any] | bytes, db: str, coll: str, offset: Mapping[str, Any],
                        marker: str = "true") -> SourceRecord:
        """An ``r`` record of a snapshot: ``after`` is the document, ``source.snapshot`` is ``marker`` (``true``,
        or ``last`` on the final record), ``ord`` is -1 and ``ts_ms`` the time it was read. An incremental
        snapshot's record (``marker`` ``incremental``) has, as Debezium's, the stream position of ``offset`` in its
        source: ``ts_ms`` its cluster time's seconds, ``ord`` its increment."""
        return record_of(self.snapshot_row(doc, db, coll, offset, marker))

    def snapshot_row(self, doc: Mapping[str, Any] | bytes, db: str, coll: str, offset: Mapping[str, Any],
                     marker: str = "true") -> SourceRecord | PreparedRow:
        """:meth:`snapshot_record` as a prepared row (:data:`~connect.api.records.PreparedRow`: its key's and value's
        payloads; the record made only if read) where its payload is written ahead, else the record."""
        topic, k_schema, v_schema = self._names(db, coll)
        now = self._clock_ms()
        ts_ms, order = now, -1
        if marker == "incremental":
            stream = Position.from_offset(offset)
            if stream.sec is not None and stream.sec >= 0 and stream.ord is not None:
                ts_ms, order = stream.sec * 1000, stream.ord
        selected = self._fields.for_collection(db, coll) if self._fields is not None else None
        image = doc if selected is None else selected.image(doc)
        template = self._snapshot_template(v_schema, db, coll, marker, ts_ms, order, now)
        source = template[0]
        key_id = json_writer.relaxed_id(doc, self._plus)
        if template[1] is not None:  # the payload written around the document's quoted after
            after = json_writer.strict_quoted(image, self._plus)
            return (topic, k_schema, b'{"id":%b}' % _extjson.jackson_string(key_id).encode(), v_schema,
                    b"".join((template[1], after, template[2])), self._partition, dict(offset), self._headers,
                    self._snapshot_row_record, (key_id, after, source, now))
        value = _struct(v_schema, {"after": json_writer.strict(image, self._plus),
                                   "source": _struct(SOURCE_SCHEMA, dict(source)), "op": "r", "ts_ms": now})
        return SourceRecord(self._partition, dict(offset), topic, None, k_schema, _struct(k_schema, {"id": key_id}),
                            v_schema, value, None, self._headers)

    @staticmethod
    def _snapshot_row_record(row: PreparedRow) -> SourceRecord:
        """The SourceRecord of a row of :meth:`snapshot_row`."""
        topic, k_schema, _, v_schema, payload, partition, offset, headers, _, made = row
        key_id, after, source, now = made
        assert k_schema is not None and v_schema is not None and payload is not None
        value = LazyStruct(v_schema, payload, partial(_snapshot_values, after, source, now))
        return SourceRecord(partition, offset, topic, None, k_schema, _struct(k_schema, {"id": key_id}), v_schema,
                            value, None, headers)

    def _snapshot_template(self, v_schema: Schema, db: str, coll: str, marker: str, ts_ms: int, order: int,
                           now: int) -> tuple[dict[str, Any], bytes | None, bytes]:
        """The ``source`` values of a snapshot record and its envelope's payload before and after ``after``
        (None, b"" without written payloads or where :class:`.envelope_writer.SnapshotPayloads` declines it): the
        same for every document read in the same millisecond, so made once for them."""
        last = self._last_template
        if last[0] == (v_schema, db, coll, marker, ts_ms, order, now):
            return last[1]
        source: dict[str, Any] = {
            "version": self._version, "connector": CONNECTOR_NAME, "name": self._prefix, "ts_ms": ts_ms,
            "snapshot": marker, "db": db, "ts_us": ts_ms * 1000, "ts_ns": ts_ms * 1_000_000, "collection": coll,
            "ord": order,
        }
        around = None if self._snapshot_payloads is None else \
            self._snapshot_payloads.around(v_schema, db, coll, marker, ts_ms, order, now)
        template = (source, *around) if around is not None else (source, None, b"")
        self._last_template = ((v_schema, db, coll, marker, ts_ms, order, now), template)
        return template

    def with_snapshot_marker(self, record: SourceRecord | PreparedRow, marker: str,
                             offset: Mapping[str, Any]) -> SourceRecord:
        """``record`` (or the one a row stands for) with ``source.snapshot`` set to ``marker`` and another offset
        (the final snapshot record)."""
        record = record_of(record)
        value = record.value
        source = value.get("source")
        new_source = _struct(SOURCE_SCHEMA, {**source.values, "snapshot": marker})
        new_value = _struct(value.schema, {**value.values, "source": new_source})
        return SourceRecord(record.source_partition, dict(offset), record.topic, record.kafka_partition,
                            record.key_schema, record.key, record.value_schema, new_value, record.timestamp,
                            record.headers)

    def _names(self, db: str, coll: str) -> tuple[str, Schema, Schema]:
        """The topic, key schema and envelope schema of collection ``db.coll``."""
        names = self._schemas.get((db, coll))
        if names is None:
            if len(self._schemas) > 100_000:
                self._schemas.clear()
            naming = self._naming
            topic = naming.data_topic(db, coll)
            names = (topic, key_schema(topic, naming.schema_name(topic, "Key")),
                     envelope_schema(topic, naming.schema_name(topic, "Envelope")))
            self._schemas[(db, coll)] = names
        return names

    def _key(self, schema: Schema, document_key: Mapping[str, Any] | None) -> Struct | None:
        if document_key is None:
            return None
        if type(document_key) is DocumentKey:  # the stream's: its _id written from the bytes it was decoded from
            return _struct(schema, {"id": json_writer.relaxed_id_bytes(document_key.raw, self._plus)})
        return _struct(schema, {"id": json_writer.relaxed_key(document_key.get("_id"), self._plus)})

    def _images(self, event: Mapping[str, Any], op: str) -> dict[str, Any]:
        """``before``/``after``/``updateDescription`` as Debezium fills them for ``op``."""
        payload: dict[str, Any] = {}
        if op == "c":
            full = event.get("fullDocument")
            if full is not None:
                payload["after"] = json_writer.strict(full, self._plus)
        else:
            pre_image = event.get("fullDocumentBeforeChange")
            if pre_image is not None:
                payload["before"] = json_writer.strict(pre_image, self._plus)
            if op == "u":
                full = event.get("fullDocument")
                if full is not None:
                    payload["after"] = json_writer.strict(full, self._plus)
                description = event.get("updateDescription")
                if description is not None:
                    payload["updateDescription"] = _update_description(description, self._plus)
        return payload

    def _source(self, event: Mapping[str, Any], db: str, coll: str, cluster_time: Any,
                session: tuple[str, int] | None) -> Struct:
        """The ``source`` block (``snapshot`` stays unset: its schema default is ``false``)."""
        wall_ms = self._wall_ms(event.get("wallTime"))
        ts_ms = wall_ms if wall_ms else (cluster_time.time * 1000 if cluster_time is not None else 0)
        values: dict[str, Any] = {
            "version": self._version,
            "connector": CONNECTOR_NAME,
            "name": self._prefix,
            "ts_ms": ts_ms,
            "db": db,
            "ts_us": ts_ms * 1000,
            "ts_ns": ts_ms * 1_000_000,
            "collection": coll,
            "ord": cluster_time.inc if cluster_time is not None else 0,
        }
        if session is not None:
            values["lsid"], values["txnNumber"] = session
        if wall_ms:
            values["wallTime"] = wall_ms
        return _struct(SOURCE_SCHEMA, values)


_new = object.__new__


def record_of(row: SourceRecord | PreparedRow) -> SourceRecord:
    """The record a prepared row stands for (a record as it is)."""
    return row[8](row) if type(row) is tuple else row  # type: ignore[return-value]


def _struct(schema: Schema, values: dict[str, Any]) -> Struct:
    """A Struct of ``schema`` (a struct schema of this module's) from values whose names are known to be its
    fields: made without ``Struct.__init__``, whose checks and empty dict would be thrown away (three or four
    Structs per event)."""
    struct = _new(Struct)
    struct.schema = schema
    struct.values = values
    return struct


def _snapshot_values(after: bytes, source: dict[str, Any], now: int) -> dict[str, Any]:
    """The values of a snapshot record's envelope; ``after`` as :func:`.json_writer.strict_quoted` wrote it."""
    return {"after": orjson.loads(after), "source": _struct(SOURCE_SCHEMA, dict(source)), "op": "r", "ts_ms": now}


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _update_description(description: Mapping[str, Any], plus_exponent: bool) -> Struct:
    """``updateDescription``: updatedFields always (when given), removedFields/truncatedArrays only if non-empty."""
    values: dict[str, Any] = {}
    removed = description.get("removedFields")
    if removed:
        values["removedFields"] = list(removed)
    updated = description.get("updatedFields")
    if updated is not None:
        values["updatedFields"] = json_writer.relaxed(updated, plus_exponent)
    truncated = description.get("truncatedArrays")
    if truncated:
        values["truncatedArrays"] = [
            Struct(TRUNCATED_ARRAY_SCHEMA, {"field": item["field"], "size": int(item["newSize"])}) for item in truncated
        ]
    return _struct(UPDATE_DESCRIPTION_SCHEMA, values)
