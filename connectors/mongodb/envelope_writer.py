"""A record's JsonConverter payload written without building its Connect value.

The envelope of a MongoDB record is the same for every record of one collection and operation but for a few
values: the document images (``after``, ``before``), the times and the ``ord`` of its ``source`` block, the
emit time. :func:`payload_parts` writes the payload of a record's schema once, cut where those values go
(:class:`Hole`); each record's payload is then those parts with its values between them, written by the compiled
module (``_extjson.fill_payload``: an image from its BSON bytes, quoted as Jackson quotes the string; an int as
its decimal text; None as ``null``). The record's value is a :class:`~connect.api.data.LazyStruct` holding that
payload: JsonConverter sends it as it is, anything else (a transform, another converter, the snapshot's own marker
change) reads the values, built then. The event converter only writes such payloads when the task's values go
straight to a JsonConverter (``SourceTaskContext.values_go_to_json_converter``).

The parts are only written where their JSON cannot depend on the converter's settings (strings, booleans,
in-range integers, nulls of optional fields without a default, structs of those), except for the default of a
null field when asked (``defaults``: the payload of a converter with ``replace.null.with.default``, its default;
the LazyStruct then says so); otherwise :func:`payload_parts` declines (None) and the record is built as a plain
Struct. ``tests/unit/mongodb/test_envelope_writer.py`` compares the payloads with JsonConverter's writing of the
built values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from connect.api.data import Schema, Type
from connectors.mongodb import _extjson, json_writer

__all__ = ["HOLE", "INT_BOUNDS", "MAX_TS_MS", "Hole", "SnapshotPayloads", "StreamPayloads", "payload_parts"]


class Hole:
    """A value left open in a payload; ``document``: a BSON document's bytes (written as a quoted Extended JSON
    string), else an int (in its field's range: whoever fills the hole checks it); ``nullable``: None may fill it
    (written ``null``)."""

    __slots__ = ("document", "nullable")

    def __init__(self, *, document: bool, nullable: bool) -> None:
        self.document = document
        self.nullable = nullable


HOLE: Final = Hole(document=True, nullable=False)
"""The ``after`` of a snapshot record: a document, never None (:class:`SnapshotPayloads`)."""

INT_BOUNDS: Final[dict[Type, int]] = {Type.INT8: 2**7, Type.INT16: 2**15, Type.INT32: 2**31, Type.INT64: 2**63}
"""Each Connect integer type's bound: its values lie in [-bound, bound)."""


def payload_parts(schema: Schema, values: Mapping[str, Any], *,
                  defaults: bool = False) -> tuple[tuple[bytes, ...], tuple[Hole, ...]] | None:
    """The JsonConverter payload of a struct of ``schema`` holding ``values`` (nested structs as mappings), cut
    at every :class:`Hole` among them: (the parts, the holes in the order they come). None when a value's JSON
    could depend on the converter's settings or is not a plain one, or a hole's field cannot take its values."""
    writer = _Writer(defaults)
    if not writer.struct(schema, values):
        return None
    writer.parts.append("".join(writer.out))
    return tuple(part.encode() for part in writer.parts), tuple(writer.holes)


class _Writer:
    def __init__(self, defaults: bool) -> None:
        self.defaults = defaults
        self.out: list[str] = []
        self.parts: list[str] = []
        self.holes: list[Hole] = []

    def struct(self, schema: Schema, values: Mapping[str, Any]) -> bool:
        if schema.type is not Type.STRUCT:
            return False
        out = self.out
        out.append("{")
        for index, field in enumerate(schema.fields):
            if index:
                out.append(",")
            out.append(_extjson.jackson_string(field.name))
            out.append(":")
            if not self.value(field.schema, values.get(field.name)):
                return False
        out.append("}")
        return True

    def value(self, schema: Schema, value: Any) -> bool:
        if isinstance(value, Hole):
            return self.hole(schema, value)
        if value is None and schema.default is not None:  # replace.null.with.default writes the default
            if not self.defaults:
                return False
            value = schema.default
        if value is None:
            if not schema.optional:
                return False
            self.out.append("null")
            return True
        if schema.type is Type.STRUCT:
            return isinstance(value, Mapping) and self.struct(schema, value)
        if schema.type is Type.STRING and type(value) is str:
            self.out.append(_extjson.jackson_string(value))
            return True
        if schema.type is Type.BOOLEAN and type(value) is bool:
            self.out.append("true" if value else "false")
            return True
        bound = INT_BOUNDS.get(schema.type)
        if bound is not None and type(value) is int and -bound <= value < bound and schema.name is None:
            self.out.append(str(value))
            return True
        return False

    def hole(self, schema: Schema, hole: Hole) -> bool:
        if hole.nullable and (not schema.optional or schema.default is not None):
            return False
        if hole.document:
            if schema.type is not Type.STRING:
                return False
        elif schema.type not in (Type.INT32, Type.INT64) or schema.name is not None:  # the filler keeps the range
            return False
        self.parts.append("".join(self.out))
        self.out.clear()
        self.holes.append(hole)
        return True


MAX_TS_MS: Final = 2**63 // 1_000_000
"""Source times (ms) whose ``ts_ns`` fits its int64 field."""

_BEFORE, _AFTER = Hole(document=True, nullable=True), Hole(document=True, nullable=True)
_TS_MS, _TS_US, _TS_NS = (Hole(document=False, nullable=False) for _ in range(3))
_ORD, _WALL, _NOW = Hole(document=False, nullable=False), Hole(document=False, nullable=True), \
    Hole(document=False, nullable=False)
_STREAM_HOLES: Final = (_BEFORE, _AFTER, _TS_MS, _TS_US, _TS_NS, _ORD, _WALL, _NOW)
_UPDATED = Hole(document=True, nullable=False)
"""An update's ``updatedFields`` (v2 RELAXED, the driver's default layout: ``fill_payload``'s ``relaxed`` bit)."""
_UPDATE_HOLES: Final = (_BEFORE, _AFTER, _UPDATED, _TS_MS, _TS_US, _TS_NS, _ORD, _WALL, _NOW)
_UPDATED_BIT: Final = 1 << _UPDATE_HOLES.index(_UPDATED)
_MAX_TEMPLATES: Final = 10_000


class StreamPayloads:
    """The payloads of a task's change events outside sessions: per collection, operation and whether the event
    is an update with an ``updateDescription`` (its ``updatedFields`` only: no removed fields or truncated
    arrays), the envelope (``source``'s ``snapshot`` written as its default, ``false``: such a payload is
    ``defaults_written``) is cut once around the images, the updated fields, times and ``ord``, which
    ``_extjson.fill_payload`` writes in for each event."""

    def __init__(self, version: str, name: str, plus_exponent: bool) -> None:
        self._version = version
        self._name = name
        self._plus = plus_exponent
        self._parts: dict[tuple[str, str, str, bool], tuple[Schema, tuple[bytes, ...] | None]] = {}

    def write(self, schema: Schema, db: str, coll: str, op: str, before: Mapping[str, Any] | None,
              after: Mapping[str, Any] | None, ts_ms: int, order: int, wall_ms: int, now: int,
              updated: bytes | None = None) -> bytes | None:
        """The payload of an event of ``db.coll`` (``schema`` its envelope) with these images and times
        (``wall_ms`` 0: no ``wallTime``) and, for an update, the BSON of its ``updatedFields`` (``updated``);
        None where the envelope cannot be written ahead."""
        before_raw = None if before is None else json_writer.raw_bson(before)
        after_raw = None if after is None else json_writer.raw_bson(after)
        return self.write_raw(schema, db, coll, op, before_raw, after_raw, ts_ms, order, wall_ms, now, updated)

    def write_raw(self, schema: Schema, db: str, coll: str, op: str, before: bytes | None, after: bytes | None,
                  ts_ms: int, order: int, wall_ms: int, now: int, updated: bytes | None = None) -> bytes | None:
        """:meth:`write` with the images' BSON."""
        parts = self.parts(schema, db, coll, op, updated is not None)
        if parts is None:
            return None
        if updated is None:
            return _extjson.fill_payload(parts, (before, after, ts_ms, ts_ms * 1000, ts_ms * 1_000_000,
                                                 order, wall_ms or None, now), self._plus)
        return _extjson.fill_payload(parts, (before, after, updated, ts_ms, ts_ms * 1000, ts_ms * 1_000_000,
                                             order, wall_ms or None, now), self._plus, _UPDATED_BIT)

    def parts(self, schema: Schema, db: str, coll: str, op: str, update: bool) -> tuple[bytes, ...] | None:
        """The constant parts of the payloads of ``db.coll``'s events with ``op`` (and with ``update``, an
        ``updateDescription`` of updated fields alone) around their holes (:data:`_STREAM_HOLES`, or
        :data:`_UPDATE_HOLES` with ``update``); None where the envelope cannot be written ahead."""
        return _cached(self._parts, (db, coll, op, update), schema, lambda: self._cut(schema, db, coll, op, update))

    def _cut(self, schema: Schema, db: str, coll: str, op: str, update: bool) -> tuple[bytes, ...] | None:
        source = {"version": self._version, "connector": "mongodb", "name": self._name, "ts_ms": _TS_MS, "db": db,
                  "ts_us": _TS_US, "ts_ns": _TS_NS, "collection": coll, "ord": _ORD, "wallTime": _WALL}
        values: dict[str, Any] = {"before": _BEFORE, "after": _AFTER, "source": source, "op": op, "ts_ms": _NOW}
        if update:  # removedFields and truncatedArrays: empty, so null (as Debezium leaves them)
            values["updateDescription"] = {"removedFields": None, "updatedFields": _UPDATED, "truncatedArrays": None}
        found = payload_parts(schema, values, defaults=True)
        if found is None or found[1] != (_UPDATE_HOLES if update else _STREAM_HOLES):
            return None
        return found[0]


def _cached(cache: dict[Any, tuple[Schema, tuple[bytes, ...] | None]], key: Any, schema: Schema,
            cut: Callable[[], tuple[bytes, ...] | None]) -> tuple[bytes, ...] | None:
    """The parts ``cache`` holds under ``key`` for ``schema``, else ``cut()``'s, kept (at most
    :data:`_MAX_TEMPLATES` templates: all dropped when full)."""
    known = cache.get(key)
    if known is None or known[0] is not schema:
        known = (schema, cut())
        if len(cache) >= _MAX_TEMPLATES:
            cache.clear()
        cache[key] = known
    return known[1]


class SnapshotPayloads:
    """The payloads of a task's snapshot records around their quoted ``after``: per collection, marker and
    ``ord``, the envelope is cut once around ``after``, the source times and the emit time; the bytes before and
    after ``after`` are then joined with those times' text (the caller keeps them for the documents of one
    millisecond)."""

    def __init__(self, version: str, name: str) -> None:
        self._version = version
        self._name = name
        self._parts: dict[tuple[int, str, str, str, int], tuple[Schema, tuple[bytes, ...] | None]] = {}

    def around(self, schema: Schema, db: str, coll: str, marker: str, ts_ms: int, order: int,
               now: int) -> tuple[bytes, bytes] | None:
        """The payload of a snapshot record of ``db.coll`` before and after its ``after``; None where the
        envelope cannot be written ahead."""
        if not -MAX_TS_MS < ts_ms < MAX_TS_MS:
            return None
        parts = _cached(self._parts, (id(schema), db, coll, marker, order), schema,
                        lambda: self._cut(schema, db, coll, marker, order))
        if parts is None:
            return None
        return parts[0], b"".join((parts[1], b"%d" % ts_ms, parts[2], b"%d" % (ts_ms * 1000), parts[3],
                                   b"%d" % (ts_ms * 1_000_000), parts[4], b"%d" % now, parts[5]))

    def _cut(self, schema: Schema, db: str, coll: str, marker: str, order: int) -> tuple[bytes, ...] | None:
        source = {"version": self._version, "connector": "mongodb", "name": self._name, "ts_ms": _TS_MS,
                  "snapshot": marker, "db": db, "ts_us": _TS_US, "ts_ns": _TS_NS, "collection": coll, "ord": order}
        found = payload_parts(schema, {"after": HOLE, "source": source, "op": "r", "ts_ms": _NOW})
        if found is None or found[1] != _SNAPSHOT_HOLES:
            return None
        return found[0]


_SNAPSHOT_HOLES: Final = (HOLE, _TS_MS, _TS_US, _TS_NS, _NOW)
