"""An incremental snapshot's progress in Debezium's offset keys, so an in-flight snapshot continues across Debezium
3.x and us in both directions.

Debezium's MongoDB connector (``MongoDbIncrementalSnapshotContext``) keeps, on every record's source offset while
a snapshot runs:

- ``incremental_snapshot_collections``: a JSON array, the collection being read first, of
  ``{"incremental_snapshot_collections_id": "db.coll", "incremental_snapshot_collections_additional_condition":
  "(<filter>)" or null}``;
- ``incremental_snapshot_primary_key``: the ``_id`` of the last document sent (the next chunk starts after it), and
  ``incremental_snapshot_maximum_key``: the largest ``_id`` when the collection started, each the hex of a
  Java-serialized ``Object[]`` of the ``_id`` (a serialized null before the first one), see
  :mod:`.java_serialization`;
- ``incremental_snapshot_correlation_id``: the id of the signal, when there is one.

What Debezium has no place for stays in our own key ``incremental_snapshot_progress`` (a base64 BSON document, the
form earlier versions wrote alone): the pause flag, and a position whose ``_id`` type has no Java form (any but int,
long, double, string, ObjectId, Decimal128 and UUID - the types Debezium itself snapshots incrementally). When our
key is present it is read first; otherwise Debezium's keys are.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import bson
from bson import json_util
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions

from connectors.mongodb.position import INCREMENTAL_PREFIX
from connectors.mongodb.snapshot import java_serialization

log = logging.getLogger(__name__)

OUR_KEY = INCREMENTAL_PREFIX + "progress"
COLLECTIONS_KEY = INCREMENTAL_PREFIX + "collections"
PRIMARY_KEY = INCREMENTAL_PREFIX + "primary_key"
MAXIMUM_KEY = INCREMENTAL_PREFIX + "maximum_key"
CORRELATION_KEY = INCREMENTAL_PREFIX + "correlation_id"
_ID = "incremental_snapshot_collections_id"
_CONDITION = "incremental_snapshot_collections_additional_condition"
_CODEC: CodecOptions[Any] = CodecOptions(uuid_representation=UuidRepresentation.STANDARD)


@dataclass(frozen=True)
class Progress:
    """One queued collection: where its next chunk starts (after ``after`` once ``started``) and its last key."""

    ns: str
    condition: Mapping[str, Any] = field(default_factory=dict)
    started: bool = False
    after: Any = None
    has_max: bool = False
    maximum: Any = None


@dataclass(frozen=True)
class SnapshotState:
    """The queue (the collection being read first), the pause flag, the signal's id."""

    queue: tuple[Progress, ...]
    paused: bool = False
    correlation_id: str | None = None


def encode(state: SnapshotState) -> dict[str, Any]:
    """The offset keys of ``state`` ({} when nothing is queued)."""
    if not state.queue:
        return {}
    out: dict[str, Any] = {}
    try:
        first = state.queue[0]
        out[PRIMARY_KEY] = java_serialization.dumps([first.after] if first.started else None)
        out[MAXIMUM_KEY] = java_serialization.dumps([first.maximum] if first.has_max else None)
        out[COLLECTIONS_KEY] = json.dumps([{_ID: p.ns, _CONDITION: _condition_text(p.condition)} for p in state.queue],
                                          separators=(",", ":"))
        if state.correlation_id is not None:
            out[CORRELATION_KEY] = state.correlation_id
    except java_serialization.Unrepresentable:
        out = {}
    if not out or state.paused:
        out[OUR_KEY] = _our_form(state)
    return out


def decode(stored: Mapping[str, Any] | None) -> SnapshotState | None:
    """The snapshot recorded on a stored source offset, ours or Debezium's (None when there is none)."""
    stored = stored or {}
    if stored.get(OUR_KEY):
        return _from_our_form(str(stored[OUR_KEY]), stored.get(CORRELATION_KEY))
    if not stored.get(COLLECTIONS_KEY):
        return None
    entries = json.loads(str(stored[COLLECTIONS_KEY]))
    queue = [Progress(str(e[_ID]), _condition(e.get(_CONDITION))) for e in entries if e.get(_ID)]
    if queue:
        queue[0] = _position(queue[0], stored)
    correlation = stored.get(CORRELATION_KEY)
    return SnapshotState(tuple(queue), False, None if correlation is None else str(correlation))


def _position(first: Progress, stored: Mapping[str, Any]) -> Progress:
    try:
        after = java_serialization.loads(str(stored[PRIMARY_KEY])) if stored.get(PRIMARY_KEY) else None
        maximum = java_serialization.loads(str(stored[MAXIMUM_KEY])) if stored.get(MAXIMUM_KEY) else None
    except java_serialization.Unrepresentable as exc:
        log.warning("Incremental snapshot of %s restarts at its first document: its stored position cannot be read "
                    "(%s)", first.ns, exc)
        return first
    return Progress(first.ns, first.condition, bool(after), after[0] if after else None, bool(maximum),
                    maximum[0] if maximum else None)


def _condition_text(condition: Mapping[str, Any]) -> str | None:
    return f"({json_util.dumps(condition)})" if condition else None


def _condition(text: Any) -> Mapping[str, Any]:
    if not text:
        return {}
    raw = str(text)
    if raw.startswith("(") and raw.endswith(")"):
        raw = raw[1:-1]
    parsed = json_util.loads(raw) if raw.strip() else {}
    return dict(parsed) if isinstance(parsed, Mapping) else {}


def _our_form(state: SnapshotState) -> str:
    entries = []
    for p in state.queue:
        entry: dict[str, Any] = {"ns": p.ns, "condition": dict(p.condition)}
        if p.started:
            entry["after"] = p.after
        if p.has_max:
            entry["max"] = p.maximum
        entries.append(entry)
    doc = {"v": 1, "queue": entries, "paused": state.paused}
    return base64.b64encode(bson.encode(doc, codec_options=_CODEC)).decode("ascii")


def _from_our_form(text: str, correlation: Any) -> SnapshotState:
    doc = bson.decode(base64.b64decode(text), codec_options=_CODEC)
    queue = tuple(Progress(e["ns"], e.get("condition") or {}, "after" in e, e.get("after"), "max" in e, e.get("max"))
                  for e in doc.get("queue", []))
    return SnapshotState(queue, bool(doc.get("paused")), None if correlation is None else str(correlation))
