"""The connector's source offset (Debezium's ``MongoDbOffsetContext``): every offset the connector writes is built
from a :class:`Position` and every stored offset is read into one, so the keys, their types and their order are
known in this one place.

An offset is Debezium 3.x's flat map, so either connector continues from the other's offsets:

* the stream position: ``sec``/``ord`` (the event's cluster time; -1/-1 for a cursor's resume token without an
  event), ``resume_token`` (Base64 of the BSON token document) and, for an event in a transaction, ``lsid`` and
  ``txnNumber``; with ``provide.transaction.metadata``, while a transaction is open, ``transaction_id`` and one
  ``transaction_data_collection_order_<db.coll>`` per collection;
* while an initial snapshot runs, ``initsync: true`` and our ``snapshot_progress`` (:mod:`.snapshot.progress`);
* while an incremental snapshot runs, its ``incremental_snapshot_*`` keys (:mod:`.snapshot.incremental_state`),
  and ``incremental_snapshot_signal_offset``, the Kafka signal topic's position (:mod:`.streaming.signal_dispatch`).

The order of the keys is part of the bytes in the offsets topic. The stream position comes in the iteration order
of the ``java.util.HashMap`` Debezium writes; the other keys where the connector has always put them:
:meth:`Position.to_offset`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import bson
from bson.errors import BSONError

from connectors.mongodb import json_writer
from connectors.mongodb.streaming.raw_events import ResumeToken

COLLECTION_ORDER_PREFIX = "transaction_data_collection_order_"
SNAPSHOT_PROGRESS_KEY = "snapshot_progress"
INCREMENTAL_PREFIX = "incremental_snapshot_"
"""The prefix of Debezium's incremental-snapshot keys (and of ours)."""
SIGNAL_OFFSET_KEY = INCREMENTAL_PREFIX + "signal_offset"


@dataclass(frozen=True, slots=True)
class Position:
    """One source offset. A field left None (empty, False) is a key the offset does not have."""

    sec: int | None = None
    ord: int | None = None
    resume_token: str | None = None
    """In the offset's form: see :func:`encode_resume_token`."""
    lsid: str | None = None
    txn_number: int | None = None
    transaction_id: str | None = None
    collection_orders: tuple[tuple[str, int], ...] = ()
    """``(db.coll, events so far)`` of the open transaction, in the order the collections came."""
    initsync: bool = False
    snapshot_progress: str | None = None
    incremental: tuple[tuple[str, Any], ...] = ()
    """The incremental snapshot's keys and values, as :mod:`.snapshot.incremental_state` encodes them."""
    incremental_read: bool = False
    """An incremental snapshot's ``r`` record: its snapshot keys follow the stream position (on any other record
    they precede it)."""
    signal_offset: int | None = None

    @classmethod
    def from_event(cls, event: Mapping[str, Any], session: tuple[str, int] | None = None) -> Position:
        """The position after a change event (``session``: its :func:`session_txn`, when already known)."""
        cluster_time = event.get("clusterTime")
        sec, inc = (cluster_time.time, cluster_time.inc) if cluster_time is not None else (0, 0)
        if session is None:
            session = session_txn(event)
        token = encode_resume_token(event["_id"])
        if session is None:
            return cls(sec, inc, token)
        return cls(sec, inc, token, session[0], session[1])

    @classmethod
    def at_token(cls, token: Mapping[str, Any]) -> Position:
        """The position of a cursor's resume token that came without an event (an idle stream, a snapshot start)."""
        return cls(-1, -1, encode_resume_token(token))

    @classmethod
    def from_offset(cls, offset: Mapping[str, Any]) -> Position:
        """A stored offset, ours or Debezium's; keys of neither are left out. ``to_offset`` gives an offset of ours
        back unchanged, order included."""
        values: dict[str, Any] = {}
        orders: list[tuple[str, int]] = []
        incremental: list[tuple[str, Any]] = []
        stream_seen = incremental_read = False
        for key, value in offset.items():
            known = _KEYS.get(key)
            if known is not None:
                field, parse = known
                values[field] = parse(value)
                stream_seen = stream_seen or field in _STREAM_FIELDS
            elif key.startswith(COLLECTION_ORDER_PREFIX):
                count = _integer(value)
                if count is not None:
                    orders.append((key[len(COLLECTION_ORDER_PREFIX):], count))
                stream_seen = True
            elif key.startswith(INCREMENTAL_PREFIX):
                incremental.append((key, value))
                incremental_read = incremental_read or stream_seen
        return cls(**values, collection_orders=tuple(orders), incremental=tuple(incremental),
                   incremental_read=incremental_read)

    def to_offset(self) -> dict[str, Any]:
        """The offset map: the signal position, the incremental snapshot's keys, the stream position (the
        snapshot's keys after it instead on an incremental ``r`` record), then ``initsync`` and
        ``snapshot_progress``."""
        stream = self._stream_keys()
        if self.signal_offset is None and not self.incremental and not self.initsync \
                and self.snapshot_progress is None:
            return stream
        offset: dict[str, Any] = {}
        if self.signal_offset is not None:
            offset[SIGNAL_OFFSET_KEY] = self.signal_offset
        if not self.incremental_read:
            offset.update(self.incremental)
        offset.update(stream)
        if self.incremental_read:
            offset.update(self.incremental)
        if self.initsync:
            offset["initsync"] = True
        if self.snapshot_progress is not None:
            offset[SNAPSHOT_PROGRESS_KEY] = self.snapshot_progress
        return offset

    def _stream_keys(self) -> dict[str, Any]:
        keys: dict[str, Any] = {}
        if self.sec is not None:
            keys["sec"] = self.sec
        if self.ord is not None:
            keys["ord"] = self.ord
        if self.lsid is not None:
            keys["lsid"] = self.lsid
        if self.resume_token is not None:
            keys["resume_token"] = self.resume_token
        if self.txn_number is not None:
            keys["txnNumber"] = self.txn_number
        if self.transaction_id is None:
            return keys  # these five are in HashMap order already
        keys["transaction_id"] = self.transaction_id
        for collection, count in self.collection_orders:
            keys[COLLECTION_ORDER_PREFIX + collection] = count
        return java_map(keys)

    def resume_token_document(self) -> dict[str, Any] | None:
        """The resume token to resume after, None without one."""
        return decode_resume_token(self.resume_token) if self.resume_token else None


def _integer(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


_KEYS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "sec": ("sec", _integer), "ord": ("ord", _integer), "resume_token": ("resume_token", _text),
    "lsid": ("lsid", _text), "txnNumber": ("txn_number", _integer), "transaction_id": ("transaction_id", _text),
    "initsync": ("initsync", bool), SNAPSHOT_PROGRESS_KEY: ("snapshot_progress", _text),
    SIGNAL_OFFSET_KEY: ("signal_offset", _integer),
}
"""Offset key -> field and parser, for the keys of one value each."""
_STREAM_FIELDS = frozenset(("sec", "ord", "resume_token", "lsid", "txn_number", "transaction_id"))


def encode_resume_token(token: Mapping[str, Any]) -> str:
    """The offset form of a resume token: standard padded Base64 of the BSON-encoded token document."""
    data = token.raw if type(token) is ResumeToken else bson.encode(token)
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def event_offset(event: Mapping[str, Any], session: tuple[str, int] | None) -> dict[str, Any]:
    """``Position.from_event(event, session).to_offset()`` (``session``: the event's :func:`session_txn`), built
    directly: the offset of every change event, so without the Position in between."""
    cluster_time = event.get("clusterTime")
    sec, inc = (cluster_time.time, cluster_time.inc) if cluster_time is not None else (0, 0)
    token = encode_resume_token(event["_id"])
    if session is None:
        return {"sec": sec, "ord": inc, "resume_token": token}
    return {"sec": sec, "ord": inc, "lsid": session[0], "resume_token": token, "txnNumber": session[1]}


def decode_resume_token(text: str) -> dict[str, Any]:
    """A resume token document from its offset form; a legacy offset (raw ``_data`` hex) gives ``{"_data": text}``."""
    try:
        return dict(bson.decode(base64.b64decode(text, validate=True)))
    except (binascii.Error, BSONError, ValueError, IndexError, TypeError):
        return {"_data": text}


def session_txn(event: Mapping[str, Any]) -> tuple[str, int] | None:
    """(lsid as STRICT compact JSON, txnNumber) for an event inside a transaction, else None."""
    lsid = event.get("lsid")
    txn_number = event.get("txnNumber")
    if lsid is None or txn_number is None:
        return None
    return json_writer.strict(lsid), int(txn_number)


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units), as an unsigned 32-bit value."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hashmap_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a ``java.util.HashMap`` holding ``keys`` (inserted in the given order)."""
    ordered = list(dict.fromkeys(keys))
    capacity = 16
    while len(ordered) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)
    return sorted(ordered, key=bucket)  # stable: insertion order within a bucket


def java_map(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` re-ordered as a Java HashMap iterates them."""
    return {key: values[key] for key in java_hashmap_order(values)}
