"""``provide.transaction.metadata``: BEGIN/END records on ``<topic.prefix>.<topic.transaction>`` and the
``transaction`` block of data events, as Debezium's ``TransactionMonitor`` writes them for MongoDB.

A transaction is identified by ``<lsid as STRICT JSON>:<txnNumber>``. BEGIN goes just before the first event of
a new transaction id; END is written lazily, when the next event has another transaction id or none (a change
stream has no commit event). While a transaction is open the data events' offsets carry ``transaction_id`` and
``transaction_data_collection_order_<db.coll>``.

BEGIN/END records carry the offset of the event *before* the one that triggered them: if only they were
committed, a restart still re-reads the triggering event.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from connect.api.data import INT64, OPTIONAL_INT64, STRING, Struct, array_schema, struct_schema
from connect.api.records import SourceRecord
from connectors.mongodb.position import Position, java_hashmap_order

KEY_SCHEMA = struct_schema([("id", STRING)], name="io.debezium.connector.common.TransactionMetadataKey", version=1)
COLLECTION_SCHEMA = struct_schema([("data_collection", STRING), ("event_count", INT64)], name="event.collection",
                                  version=1, optional=True)
VALUE_SCHEMA = struct_schema(
    [
        ("status", STRING),
        ("id", STRING),
        ("event_count", OPTIONAL_INT64),
        ("data_collections", array_schema(COLLECTION_SCHEMA, optional=True)),
        ("ts_ms", INT64),
    ],
    name="io.debezium.connector.common.TransactionMetadataValue",
    version=1,
)


class TransactionMonitor:
    """Tracks the open transaction of one task's stream."""

    def __init__(self, topic: str, partition: Mapping[str, Any]) -> None:
        self.topic = topic
        self._partition = partition
        self._id: str | None = None
        self._total = 0
        self._per_collection: dict[str, int] = {}
        self.committed = 0
        self.last_id: str | None = None

    def on_event(self, txn_id: str | None, collection: str, ts_ms: int,
                 previous_offset: Mapping[str, Any] | None) -> tuple[list[SourceRecord], dict[str, Any] | None]:
        """Records to emit before the event (END of the previous transaction, BEGIN of a new one) and the
        event's ``transaction`` block (None outside a transaction)."""
        records: list[SourceRecord] = []
        if self._id is not None and txn_id != self._id:
            records.append(self._end(ts_ms, previous_offset))
        if txn_id is None:
            return records, None
        if txn_id != self._id:
            self._id, self._total, self._per_collection = txn_id, 0, {}
            records.append(self._record("BEGIN", ts_ms, previous_offset))
        self._total += 1
        count = self._per_collection[collection] = self._per_collection.get(collection, 0) + 1
        return records, {"id": txn_id, "total_order": self._total, "data_collection_order": count}

    def offset(self, offset: Mapping[str, Any]) -> dict[str, Any]:
        """``offset`` with the open transaction's keys (unchanged outside a transaction)."""
        if self._id is None:
            return dict(offset)
        position = dataclasses.replace(Position.from_offset(offset), transaction_id=self._id,
                                       collection_orders=tuple(self._per_collection.items()))
        return position.to_offset()

    def _end(self, ts_ms: int, offset: Mapping[str, Any] | None) -> SourceRecord:
        record = self._record("END", ts_ms, offset)
        self.committed += 1
        self.last_id = self._id
        self._id, self._total, self._per_collection = None, 0, {}
        return record

    def _record(self, status: str, ts_ms: int, offset: Mapping[str, Any] | None) -> SourceRecord:
        assert self._id is not None
        values: dict[str, Any] = {"status": status, "id": self._id, "event_count": None, "data_collections": None,
                                  "ts_ms": ts_ms}
        if status == "END":
            values["event_count"] = self._total
            values["data_collections"] = [
                Struct(COLLECTION_SCHEMA, {"data_collection": name, "event_count": self._per_collection[name]})
                for name in java_hashmap_order(self._per_collection)
            ]
        key = Struct(KEY_SCHEMA, {"id": self._id})
        return SourceRecord(self._partition, dict(offset or {}), self.topic, None, KEY_SCHEMA, key, VALUE_SCHEMA,
                            Struct(VALUE_SCHEMA, values))


def transaction_id(lsid_json: str | None, txn_number: int | None) -> str | None:
    """Debezium's MongoDB transaction id: ``<lsid>:<txnNumber>`` (only one part when the other is missing)."""
    if lsid_json is None and txn_number is None:
        return None
    if lsid_json is None:
        return str(txn_number)
    if txn_number is None:
        return lsid_json
    return f"{lsid_json}:{txn_number}"
