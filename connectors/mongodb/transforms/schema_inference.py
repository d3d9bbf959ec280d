"""The schema and Connect value of a MongoDB document from the Extended JSON of Debezium's change events, as
Debezium's ``MongoDataConverter`` infers them for ExtractNewDocumentState.

Every field optional; nested documents named ``<parent>.<field>``. Type mapping: ObjectId, Decimal128, JavaScript
and null -> string, int32, int64, double, boolean, binary -> bytes, dates and BSON timestamps -> ``Timestamp``,
regexes -> struct ``io.debezium.mongodb.regex``, documents -> structs, arrays -> arrays (``array.encoding=array``)
or structs of ``_0``, ``_1``... (``document``).

One deliberate difference: Debezium fails the record on an array whose elements have different BSON types
(``[1, "two"]``) or on arrays of documents whose fields clash; here such an array is written in the ``document``
encoding instead, so documents whose shapes vary never fail the task.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from bson import json_util
from bson.binary import Binary
from bson.code import Code
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.json_util import JSONOptions
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.timestamp import Timestamp

from connect.api.data import (
    OPTIONAL_BOOLEAN,
    OPTIONAL_BYTES,
    OPTIONAL_INT32,
    OPTIONAL_INT64,
    OPTIONAL_STRING,
    Schema,
    Struct,
    Type,
    array_schema,
    struct_schema,
    timestamp_schema,
)
from connect.api.errors import DataError

OPTIONAL_FLOAT64 = Schema(Type.FLOAT64, optional=True)
OPTIONAL_TIMESTAMP = timestamp_schema(optional=True)
REGEX_SCHEMA = struct_schema([("regex", OPTIONAL_STRING), ("options", OPTIONAL_STRING)],
                             name="io.debezium.mongodb.regex", optional=True)
_INT32 = (-(2 ** 31), 2 ** 31 - 1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_JSON_OPTIONS = JSONOptions(tz_aware=True)


class _RegexValue:
    __slots__ = ("options", "pattern")

    def __init__(self, pattern: str, options: str) -> None:
        self.pattern, self.options = pattern, options


class _Millis(int):
    """A BSON date as epoch milliseconds."""


def _wrapper(node: dict[str, Any]) -> Any:
    """One Extended JSON wrapper object (``{"$numberLong": ...}``, ``{"$date": ...}``...) as a BSON value."""
    keys = list(node)
    if keys == ["$numberLong"]:
        return Int64(int(node["$numberLong"]))
    if keys == ["$regex", "$options"]:
        return _RegexValue(node["$regex"], node["$options"])
    if keys == ["$date"]:
        stamp = node["$date"]
        if isinstance(stamp, int):
            return _Millis(stamp)
        if isinstance(stamp, dict) and list(stamp) == ["$numberLong"]:
            return _Millis(int(stamp["$numberLong"]))
        value = json_util.object_pairs_hook(list(node.items()), _JSON_OPTIONS)
        if isinstance(value, datetime):
            return _Millis((value - _EPOCH) // timedelta(milliseconds=1))
        return _Millis(int(value))
    return json_util.object_pairs_hook(list(node.items()), _JSON_OPTIONS)


def _from_extended(node: Any) -> tuple[Any, Any]:
    """The BSON value of a parsed Extended JSON node and its shape (see :func:`_shape`), in one walk."""
    kind = type(node)
    if kind is dict:
        first = next(iter(node), "")
        if first.startswith("$") and first != "$ref":  # a DBRef/DBPointer is a document to Debezium's SMT
            value = _wrapper(node)
            return value, _shape(value)
        out, shapes = {}, []
        for key, item in node.items():
            out[key], item_shape = _from_extended(item)
            shapes.append((key, item_shape))
        return out, tuple(shapes)
    if kind is list:
        pairs = [_from_extended(item) for item in node]
        return [p[0] for p in pairs], ("[", *(p[1] for p in pairs))
    if kind is int:
        return node, ("i" if _INT32[0] <= node <= _INT32[1] else "l")
    return node, kind


def parse_with_shape(text: str) -> tuple[dict[str, Any], Any]:
    """A document from the Extended JSON Debezium writes (types kept: int64, dates, regex options...) and its
    shape."""
    try:
        document, shape = _from_extended(orjson.loads(text))
    except orjson.JSONDecodeError as exc:
        raise DataError(f"Not a JSON document: {text[:80]!r}") from exc
    if not isinstance(document, dict):
        raise DataError(f"Expected a document, got {text[:80]!r}")
    return document, shape


def parse_document(text: str) -> dict[str, Any]:
    """A document from the Extended JSON Debezium writes."""
    return parse_with_shape(text)[0]


_PLAIN = frozenset((str, int, float, bool))


def _shape(value: Any) -> Any:
    """A hashable description of a value's type structure (what its inferred schema depends on)."""
    kind = type(value)
    if kind is dict:
        return tuple((k, _shape(v)) for k, v in value.items())
    if kind is list:
        return ("[", *(_shape(v) for v in value))
    if kind is int:
        return "i" if _INT32[0] <= value <= _INT32[1] else "l"
    if kind is Int64 or kind is _Millis:
        return kind
    return kind


class _Mixed(Exception):
    """An array whose elements cannot share one schema."""


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, Int64):
        return "int64"
    if isinstance(value, int) and not isinstance(value, _Millis):
        return "int32" if _INT32[0] <= value <= _INT32[1] else "int64"
    return type(value).__name__


class SchemaInference:
    """Builds the schema and the Connect value of documents, per Debezium's MongoDataConverter."""

    def __init__(self, array_as_document: bool) -> None:
        self.array_as_document = array_as_document
        self.empty_arrays_null = False
        self._schemas: dict[tuple[str, bool, Any], Schema] = {}

    def top_schema(self, document: Mapping[str, Any], name: str, shape: Any = None) -> Schema:
        """The schema of a whole document, the same object for every document of the same shape (so converters
        downstream hit their schema caches)."""
        key = (name, False, _shape(document) if shape is None else shape)
        schema = self._schemas.get(key)
        if schema is None:
            if len(self._schemas) >= 2000:
                self._schemas.clear()
            schema = self._schemas[key] = self.document_schema(document, name)
        return schema

    def schema(self, value: Any, name: str) -> Schema:
        """The optional schema of one BSON value; documents and arrays get ``name``."""
        if value is None or isinstance(value, str | ObjectId | Decimal128 | Code):
            return OPTIONAL_STRING
        if isinstance(value, bool):
            return OPTIONAL_BOOLEAN
        if isinstance(value, _Millis | Timestamp):
            return OPTIONAL_TIMESTAMP
        if isinstance(value, int):
            return OPTIONAL_INT32 if _kind(value) == "int32" else OPTIONAL_INT64
        if isinstance(value, float):
            return OPTIONAL_FLOAT64
        if isinstance(value, bytes | Binary):
            return OPTIONAL_BYTES
        if isinstance(value, _RegexValue | Regex):
            return REGEX_SCHEMA
        if isinstance(value, dict):
            return self.document_schema(value, name, optional=True)
        if isinstance(value, list):
            return self.array_schema(value, name)
        return OPTIONAL_STRING

    def document_schema(self, document: Mapping[str, Any], name: str, optional: bool = False) -> Schema:
        """A struct of the document's fields, in order; an empty document's has no name (as Debezium 3.6's)."""
        return struct_schema([(k, self.schema(v, f"{name}.{k}")) for k, v in document.items()],
                             name=name if document or not optional else None, optional=optional)

    def array_schema(self, items: list[Any], name: str) -> Schema:
        if self.array_as_document:
            return self._indexed_schema(items, name)
        try:
            return array_schema(self._element_schema(items, name), optional=True)
        except _Mixed:
            return self._indexed_schema(items, name)

    def _indexed_schema(self, items: list[Any], name: str) -> Schema:
        return struct_schema([(f"_{i}", self.schema(v, f"{name}._{i}")) for i, v in enumerate(items)], name=name,
                             optional=True)

    def _element_schema(self, items: list[Any], name: str) -> Schema:
        kinds = {_kind(v) for v in items if v is not None}
        if len(kinds) > 1:
            raise _Mixed
        present = [v for v in items if v is not None]
        if not present:
            return OPTIONAL_STRING
        if isinstance(present[0], dict):
            merged: dict[str, Schema] = {}
            typed: set[str] = set()  # fields whose schema came from a non-null value
            for document in present:
                for key, value in document.items():
                    schema = self.schema(value, f"{name}.{key}")
                    if value is None:
                        merged.setdefault(key, schema)
                    elif key not in typed:
                        merged[key] = schema
                        typed.add(key)
                    elif merged[key] != schema:
                        raise _Mixed
            return struct_schema(list(merged.items()), name=name, optional=True)
        schemas = [self.schema(v, name) for v in present]
        if any(s != schemas[0] for s in schemas[1:]):
            raise _Mixed
        return schemas[0]

    def value(self, value: Any, schema: Schema) -> Any:
        """``value`` in the representation of ``schema``."""
        if value is None or type(value) in _PLAIN:
            return value
        if schema.type is Type.STRUCT:
            if schema is REGEX_SCHEMA or schema.name == REGEX_SCHEMA.name:
                pattern, options = ((value.pattern, value.options) if isinstance(value, _RegexValue)
                                    else (value.pattern, _regex_flags(value)))
                return Struct(schema, {"regex": pattern, "options": options})
            items = value.items() if isinstance(value, dict) else ((f"_{i}", v) for i, v in enumerate(value))
            out = Struct(schema)
            values, field_of = out.values, schema.field
            for key, item in items:
                if item is None or type(item) in _PLAIN:  # most leaves: no call
                    values[key] = item
                elif (field := field_of(key)) is not None:
                    values[key] = self.value(item, field.schema)
            return out
        if schema.type is Type.ARRAY:
            if not value and self.empty_arrays_null:
                return None
            items_schema = schema.value_schema
            assert items_schema is not None
            return [item if item is None or type(item) in _PLAIN else self.value(item, items_schema)
                    for item in value]
        return _scalar(value, schema)


def _regex_flags(value: Regex) -> str:  # type: ignore[type-arg]
    flags = value.flags if isinstance(value.flags, int) else 0
    return "".join(letter for bit, letter in ((2, "i"), (4, "l"), (8, "m"), (16, "s"), (32, "u"), (64, "x"))
                   if flags & bit)


def _scalar(value: Any, schema: Schema) -> Any:
    if isinstance(value, ObjectId):
        return str(value)
    if isinstance(value, Decimal128):
        return str(value.to_decimal())
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, Timestamp):  # its seconds as Java's BsonTimestamp.getTime() reads them: a signed int
        return _EPOCH + timedelta(seconds=value.time - (1 << 32) if value.time >= 1 << 31 else value.time)
    if isinstance(value, _Millis):
        return _EPOCH + timedelta(milliseconds=int(value))
    if isinstance(value, Binary):
        return bytes(value)
    if isinstance(value, Int64):
        return int(value)
    if schema.type is Type.STRING and not isinstance(value, str):
        return str(value)
    return value
