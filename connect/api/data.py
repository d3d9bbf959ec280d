"""Connect's data model: schemas, structs and the logical types (Python counterpart of
``org.apache.kafka.connect.data``).

Values map to Python as: int8..int64 -> ``int``, float/double -> ``float``, boolean -> ``bool``,
string -> ``str``, bytes -> ``bytes``, array -> ``list``, map -> ``dict``, struct -> :class:`Struct`.
Logical types: Decimal -> ``decimal.Decimal``, Date -> ``datetime.date``, Time -> ``datetime.time``,
Timestamp -> ``datetime.datetime``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from connect.api.errors import DataError


class Type(StrEnum):
    """Schema types, valued with their JsonConverter names."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float"
    FLOAT64 = "double"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"


@dataclass(frozen=True, slots=True)
class Field:
    """A named, ordered field of a struct schema."""

    name: str
    index: int
    schema: Schema


@dataclass(frozen=True, slots=True)
class Schema:
    """An immutable Connect schema. Build structs with :func:`struct_schema`."""

    type: Type
    optional: bool = False
    name: str | None = None
    version: int | None = None
    doc: str | None = None
    parameters: Mapping[str, str] | None = None
    default: Any = None
    fields: tuple[Field, ...] = ()
    key_schema: Schema | None = None
    value_schema: Schema | None = None
    _by_name: Mapping[str, Field] = field(default_factory=dict, compare=False, repr=False)

    def field(self, name: str) -> Field | None:
        """The field called ``name``, or None (struct schemas only)."""
        return self._by_name.get(name)

    def as_optional(self) -> Schema:
        """This schema with ``optional`` set."""
        return Schema(self.type, True, self.name, self.version, self.doc, self.parameters, self.default,
                      self.fields, self.key_schema, self.value_schema, self._by_name)


def struct_schema(
    fields: list[tuple[str, Schema]] | tuple[tuple[str, Schema], ...],
    *,
    name: str | None = None,
    optional: bool = False,
    version: int | None = None,
    doc: str | None = None,
) -> Schema:
    """A struct schema with the given ``(name, schema)`` fields, in order."""
    built = tuple(Field(fname, i, fschema) for i, (fname, fschema) in enumerate(fields))
    return Schema(Type.STRUCT, optional, name, version, doc, fields=built,
                  _by_name={f.name: f for f in built})


def array_schema(items: Schema, *, optional: bool = False) -> Schema:
    """An array schema of ``items``."""
    return Schema(Type.ARRAY, optional, value_schema=items)


def map_schema(keys: Schema, values: Schema, *, optional: bool = False) -> Schema:
    """A map schema from ``keys`` to ``values``."""
    return Schema(Type.MAP, optional, key_schema=keys, value_schema=values)


class Struct:
    """The value of a struct schema: field values in schema order."""

    __slots__ = ("schema", "values")

    def __init__(self, schema: Schema, values: Mapping[str, Any] | None = None) -> None:
        if schema.type is not Type.STRUCT:
            raise DataError(f"Struct needs a struct schema, got {schema.type}")
        self.schema = schema
        self.values: dict[str, Any] = {}
        if values:
            for name, value in values.items():
                self.put(name, value)

    def put(self, name: str, value: Any) -> Struct:
        """Set field ``name``; unknown fields raise :class:`DataError`."""
        if schema_field := self.schema.field(name):
            self.values[schema_field.name] = value
            return self
        raise DataError(f"{name} is not a valid field name")

    def get(self, name: str) -> Any:
        """The value of field ``name`` (its default when unset)."""
        if name in self.values:
            return self.values[name]
        schema_field = self.schema.field(name)
        if schema_field is None:
            raise DataError(f"{name} is not a valid field name")
        return schema_field.schema.default

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Struct) and self.schema == other.schema and self.values == other.values

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Struct({self.values!r})"


_STRUCT_VALUES: Any = Struct.__dict__["values"]  # the slot under LazyStruct's property


class LazyStruct(Struct):
    """A Struct whose values are built on first use and whose JsonConverter payload is already known.

    Made by code that can write a value's JSON faster than it can build it (ExtractNewDocumentState, the MongoDB
    connector's envelopes): ``json`` is the payload JsonConverter would write for ``schema`` and the values
    ``load`` returns, the same under every JsonConverter setting (but ``replace.null.with.default`` when
    ``defaults_written``). Reading or replacing ``values`` (``get``, ``put``, ``==``...) builds them and drops
    ``json``, so the struct behaves as any other once touched."""

    __slots__ = ("_load", "defaults_written", "json")

    def __init__(self, schema: Schema, json: bytes, load: Callable[[], dict[str, Any]], *,
                 defaults_written: bool = False) -> None:
        """``defaults_written``: ``json`` holds the default of a field whose value is null, as a JsonConverter
        with ``replace.null.with.default`` (its default) writes it: only such a converter may send it."""
        self.schema = schema
        self.json: bytes | None = json
        self._load: Callable[[], dict[str, Any]] | None = load
        self.defaults_written = defaults_written

    @property
    def values(self) -> dict[str, Any]:
        """The field values (built on first use)."""
        load = self._load
        if load is not None:
            _STRUCT_VALUES.__set__(self, load())
            self._load = self.json = None
        values: dict[str, Any] = _STRUCT_VALUES.__get__(self)
        return values

    @values.setter
    def values(self, values: dict[str, Any]) -> None:
        _STRUCT_VALUES.__set__(self, values)
        self._load = self.json = None


@dataclass(frozen=True, slots=True)
class SchemaAndValue:
    """A schema (or None for schemaless data) with its value."""

    schema: Schema | None
    value: Any


DECIMAL_NAME = "org.apache.kafka.connect.data.Decimal"
DATE_NAME = "org.apache.kafka.connect.data.Date"
TIME_NAME = "org.apache.kafka.connect.data.Time"
TIMESTAMP_NAME = "org.apache.kafka.connect.data.Timestamp"


def decimal_schema(scale: int, *, optional: bool = False) -> Schema:
    """Connect's Decimal logical type (bytes holding the unscaled two's-complement value)."""
    return Schema(Type.BYTES, optional, DECIMAL_NAME, 1, parameters={"scale": str(scale)})


def date_schema(*, optional: bool = False) -> Schema:
    """Connect's Date logical type (int32 days since the epoch)."""
    return Schema(Type.INT32, optional, DATE_NAME, 1)


def time_schema(*, optional: bool = False) -> Schema:
    """Connect's Time logical type (int32 milliseconds since midnight)."""
    return Schema(Type.INT32, optional, TIME_NAME, 1)


def timestamp_schema(*, optional: bool = False) -> Schema:
    """Connect's Timestamp logical type (int64 milliseconds since the epoch)."""
    return Schema(Type.INT64, optional, TIMESTAMP_NAME, 1)


STRING = Schema(Type.STRING)
OPTIONAL_STRING = Schema(Type.STRING, optional=True)
INT32 = Schema(Type.INT32)
OPTIONAL_INT32 = Schema(Type.INT32, optional=True)
INT64 = Schema(Type.INT64)
OPTIONAL_INT64 = Schema(Type.INT64, optional=True)
BOOLEAN = Schema(Type.BOOLEAN)
OPTIONAL_BOOLEAN = Schema(Type.BOOLEAN, optional=True)
FLOAT64 = Schema(Type.FLOAT64)
BYTES = Schema(Type.BYTES)
OPTIONAL_BYTES = Schema(Type.BYTES, optional=True)
