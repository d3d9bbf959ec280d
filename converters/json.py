"""``JsonConverter``: Connect data <-> JSON bytes, byte-identical to Java's
``org.apache.kafka.connect.json.JsonConverter`` (Kafka 4.x, Jackson defaults).

Writing is the hot path. Each schema is compiled once into a tree of small encoder functions that
turn a Connect value into plain Python JSON values, which orjson serializes; the schema's own JSON is
serialized once and cached, and the envelope is spliced together as bytes. orjson and Jackson agree on
everything except three details, which :func:`_jacksonize` patches after the fact:

* Jackson writes ``\\u00XX`` escapes in upper case (``\\u001F``), orjson in lower case;
* Jackson escapes characters outside the BMP as a surrogate pair (``\\uD83D\\uDE00``), orjson writes
  them as raw UTF-8;
* floats: Jackson prints doubles with Java's ``Double.toString`` (``1.0E10``), so floats are
  formatted by :mod:`connect.javalang` and handed to orjson as pre-serialized fragments; NaN and
  infinities become the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (Jackson's
  ``QUOTE_NON_NUMERIC_NUMBERS``).

Lone surrogates (which orjson refuses) fall back to :func:`dumps_reference`, a pure-Python writer that
follows Jackson's rules directly and serves the tests as the reference for the fast path.
"""

from __future__ import annotations

import base64
import binascii
import json as stdlib_json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, Final, TypeVar

import orjson

from connect.api.config import ConfigDef, ConfigKey, ConfigType, parse_bool
from connect.api.data import (
    DATE_NAME,
    DECIMAL_NAME,
    TIME_NAME,
    TIMESTAMP_NAME,
    Field,
    Schema,
    SchemaAndValue,
    Struct,
    Type,
)
from connect.api.errors import ConfigError, DataError
from connect.api.records import Header
from connect.config.validators import one_of_ignoring_case
from connect.javalang import double_to_string, float_to_string
from converters.config import converter_config_def

__all__ = [
    "JsonConverter",
    "date_days",
    "dumps_jackson",
    "dumps_reference",
    "java_big_decimal",
    "time_millis",
    "timestamp_millis",
]

Encoder = Callable[[Any], Any]
"""Turns one non-null Connect value into a JSON-ready Python value."""

Raw = Callable[[bytes], Any]
"""Wraps pre-serialized JSON text (``orjson.Fragment`` on the fast path)."""

K = TypeVar("K")
V = TypeVar("V")

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_DAY: Final = date(1970, 1, 1).toordinal()
_MS_PER_DAY: Final = 86_400_000
_INT_RANGES: Final = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
_REQUIRED_NULL: Final = "Conversion error: null value for field that is required and has no default value"
_ENVELOPE_ERROR: Final = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional'
    " fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter"
    " configuration."
)


# --------------------------------------------------------------------------------------------------
# Logical types
# --------------------------------------------------------------------------------------------------


def _decimal_scale(schema: Schema) -> int:
    try:
        return int((schema.parameters or {})["scale"])
    except (KeyError, ValueError) as exc:
        raise DataError("Invalid Decimal schema: scale parameter not found.") from exc


def _unscaled(value: Any, scale: int) -> int:
    """The unscaled integer of ``value`` at ``scale``; rescales only when no digit is lost."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = Decimal(value)
    if not isinstance(value, Decimal) or not value.is_finite():
        raise DataError(f"Invalid type for Decimal, expected decimal.Decimal but was {type(value).__name__}")
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    shift = -scale - int(exponent)
    if shift < 0:
        unscaled *= 10**-shift
    elif shift > 0:
        unscaled, remainder = divmod(unscaled, 10**shift)
        if remainder:
            raise DataError(f"Decimal value has mismatching scale for given Decimal schema. Schema has scale {scale},"
                            f" value has scale {-int(exponent)}.")
    return -unscaled if sign else unscaled


def _twos_complement(number: int) -> bytes:
    """``BigInteger.toByteArray()``: minimal big-endian two's complement, at least one byte."""
    magnitude_bits = (number if number >= 0 else ~number).bit_length()  # Java's bitLength()
    return number.to_bytes(magnitude_bits // 8 + 1, "big", signed=True)


def date_days(value: Any) -> int:
    """Connect's Date encoding: days since the epoch (a datetime must be a UTC midnight)."""
    if isinstance(value, datetime):
        millis = timestamp_millis(value)
        if millis % _MS_PER_DAY:
            raise DataError("Kafka Connect Date type should not have any time fields set to non-zero values.")
        return millis // _MS_PER_DAY
    if isinstance(value, date):
        return value.toordinal() - _EPOCH_DAY
    return _logical_int(value, "Date", "datetime.date")


def time_millis(value: Any) -> int:
    """Connect's Time encoding: milliseconds since midnight (UTC when the time is aware)."""
    if isinstance(value, time):
        offset = value.utcoffset() or timedelta(0)
        millis = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
        return (millis - offset // timedelta(milliseconds=1)) % _MS_PER_DAY
    return _logical_int(value, "Time", "datetime.time")


def timestamp_millis(value: Any) -> int:
    """Connect's Timestamp encoding: milliseconds since the epoch (a naive datetime counts as UTC)."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return (aware - _EPOCH) // timedelta(milliseconds=1)
    return _logical_int(value, "Timestamp", "datetime.datetime")


def _logical_int(value: Any, kind: str, expected: str) -> int:
    """Logical values may also be given already encoded, as plain ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DataError(f"Invalid type for {kind}, expected {expected} but was {type(value).__name__}")


def _date_from_days(days: int) -> date:
    return date.fromordinal(days + _EPOCH_DAY)


def _time_from_millis(millis: int) -> time:
    if not 0 <= millis < _MS_PER_DAY:
        raise DataError("Time values must use number of milliseconds greater than 0 and less than 86400000")
    seconds, ms = divmod(millis, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return time(hour, minute, second, ms * 1000)


def _timestamp_from_millis(millis: int) -> datetime:
    return _EPOCH + timedelta(milliseconds=millis)


# --------------------------------------------------------------------------------------------------
# Encoders: Connect value -> JSON-ready Python value (compiled once per schema)
# --------------------------------------------------------------------------------------------------


class _Options:
    """What an encoder tree depends on besides the schema."""

    __slots__ = ("numeric_decimals", "raw", "replace_null")

    def __init__(self, numeric_decimals: bool, replace_null: bool, raw: Raw) -> None:
        self.numeric_decimals = numeric_decimals
        self.replace_null = replace_null
        self.raw = raw


def _type_error(schema: Schema | None, value: Any) -> DataError:
    kind = schema.type.name if schema is not None else "unknown schema"
    return DataError(f"Invalid type for {kind}: {type(value).__name__}")


def _int_encoder(schema: Schema) -> Encoder:
    low, high = _INT_RANGES[schema.type]

    def encode(value: Any) -> Any:
        if type(value) is not int and (not isinstance(value, int) or isinstance(value, bool)):
            raise _type_error(schema, value)
        if not low <= value <= high:
            raise DataError(f"Value {value} is out of range for {schema.type.name}")
        return int(value)

    return encode


def _float_encoder(schema: Schema, opts: _Options) -> Encoder:
    formatter = float_to_string if schema.type is Type.FLOAT32 else double_to_string
    raw = opts.raw

    def encode(value: Any) -> Any:
        if not isinstance(value, float | int) or isinstance(value, bool):
            raise _type_error(schema, value)
        text = formatter(float(value))
        return text if text[-1] == "y" or text == "NaN" else raw(text.encode())

    return encode


def _simple_encoder(schema: Schema, expected: type) -> Encoder:
    def encode(value: Any) -> Any:
        if not isinstance(value, expected):
            raise _type_error(schema, value)
        return expected(value)

    return encode


def _encode_bytes(value: Any) -> Any:
    if not isinstance(value, bytes | bytearray | memoryview):
        raise DataError(f"Invalid type for bytes type: {type(value).__name__}")
    return base64.b64encode(value).decode("ascii")


def _null_result(schema: Schema, opts: _Options) -> tuple[bool, Any]:
    """What a null of ``schema`` encodes to: ``(allowed, encoded)``."""
    if schema.default is not None and opts.replace_null:
        return True, _compile(schema, opts)(schema.default)
    return schema.optional, None


def _nullable(schema: Schema | None, opts: _Options) -> Encoder:
    """An encoder that also accepts None (Java's ``convertToJson``)."""
    if schema is None:
        return lambda value: _encode_schemaless(value, opts)
    encode = _compile(schema, opts)
    allowed, encoded_null = _null_result(schema, opts)

    def encode_nullable(value: Any) -> Any:
        if value is not None:
            return encode(value)
        if allowed:
            return encoded_null
        raise DataError(_REQUIRED_NULL)

    return encode_nullable


def _array_encoder(schema: Schema, opts: _Options) -> Encoder:
    item = _nullable(schema.value_schema, opts)

    def encode(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise _type_error(schema, value)
        return [item(element) for element in value]

    return encode


def _map_encoder(schema: Schema, opts: _Options) -> Encoder:
    key = _nullable(schema.key_schema, opts)
    val = _nullable(schema.value_schema, opts)
    object_mode = schema.key_schema is not None and schema.key_schema.type is Type.STRING

    def encode(value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise _type_error(schema, value)
        if object_mode:
            return {_as_text(key(k)): val(v) for k, v in value.items()}
        return [[key(k), val(v)] for k, v in value.items()]

    return encode


def _as_text(encoded_key: Any) -> str:
    """Jackson's ``asText()`` of a map key node that was encoded with a string schema."""
    return encoded_key if isinstance(encoded_key, str) else "null"


def _required_null() -> Any:
    raise DataError(_REQUIRED_NULL)


def _struct_encoder(schema: Schema, opts: _Options) -> Encoder:
    """A struct encoder generated for ``schema``: one dict display with a conditional expression per field
    (strings, booleans and in-range ints are written as they are; nulls take the field's null encoding)."""
    plan = [_field_plan(field, opts) for field in schema.fields]
    names: dict[str, Any] = {"Struct": Struct, "DataError": DataError, "schema": schema,
                             "type_error": lambda value: _type_error(schema, value), "required": _required_null}
    gets, entries = [], []
    for i, (name, fast_type, low, high, encode_field, allowed, encoded_null) in enumerate(plan):
        names[f"T{i}"], names[f"E{i}"], names[f"N{i}"] = fast_type, encode_field, encoded_null
        null = f"N{i}" if allowed else "required()"
        if fast_type is None:
            written = f"E{i}(v{i})"
        elif low is None:
            written = f"v{i} if type(v{i}) is T{i} else E{i}(v{i})"
        else:
            written = f"v{i} if type(v{i}) is T{i} and {low} <= v{i} <= {high} else E{i}(v{i})"
        gets.append(f"    v{i} = get({name!r})\n")
        entries.append(f"        {name!r}: {null} if v{i} is None else ({written}),\n")
    source = ("def encode(value):\n"
              "    if type(value) is not Struct:\n"
              "        raise type_error(value)\n"
              "    if value.schema is not schema and value.schema != schema:\n"
              "        raise DataError('Mismatching schema.')\n"
              "    get = value.values.get\n"
              + "".join(gets) + "    return {\n" + "".join(entries) + "    }\n")
    exec(compile(source, f"<struct encoder {schema.name or ''}>", "exec"), names)
    encode: Encoder = names["encode"]
    return encode


_PASS_THROUGH: Final = {Type.STRING: str, Type.BOOLEAN: bool}


def _field_plan(field: Field, opts: _Options) -> tuple[str, Any, int | None, int | None, Encoder, bool, Any]:
    """``(name, type written unchanged, its int range, encoder, null allowed, null encoding)`` of one field:
    strings, booleans and in-range ints of plain (not logical) schemas are written as they are."""
    allowed, encoded_null = _null_result(field.schema, opts)
    low = high = None
    fast_type: type | None = None
    if field.schema.name in _LOGICAL:
        pass
    elif field.schema.type in _INT_RANGES:
        fast_type, (low, high) = int, _INT_RANGES[field.schema.type]
    else:
        fast_type = _PASS_THROUGH.get(field.schema.type)
    return field.name, fast_type, low, high, _compile(field.schema, opts), allowed, encoded_null


def _decimal_encoder(schema: Schema, opts: _Options) -> Encoder:
    scale = _decimal_scale(schema)
    if opts.numeric_decimals:
        raw = opts.raw

        def encode_numeric(value: Any) -> Any:
            _unscaled(value, scale)  # type and finiteness check; Java writes the value as given
            return raw(java_big_decimal(Decimal(value)).encode())

        return encode_numeric
    return lambda value: base64.b64encode(_twos_complement(_unscaled(value, scale))).decode("ascii")


def java_big_decimal(value: Decimal) -> str:
    """``BigDecimal.toString()``: Python's ``str`` follows the same rules, bar the sign of zero."""
    return str(value.copy_abs()) if value.is_zero() else str(value)


_LOGICAL: Final[dict[str | None, Callable[[Schema, _Options], Encoder]]] = {
    DECIMAL_NAME: _decimal_encoder,
    DATE_NAME: lambda schema, opts: date_days,
    TIME_NAME: lambda schema, opts: time_millis,
    TIMESTAMP_NAME: lambda schema, opts: timestamp_millis,
}


def _compile(schema: Schema, opts: _Options) -> Encoder:
    """The encoder of non-null values of ``schema``."""
    logical = _LOGICAL.get(schema.name)
    if logical is not None:
        return logical(schema, opts)
    kind = schema.type
    if kind in _INT_RANGES:
        return _int_encoder(schema)
    if kind is Type.FLOAT32 or kind is Type.FLOAT64:
        return _float_encoder(schema, opts)
    if kind is Type.BOOLEAN or kind is Type.STRING:
        return _simple_encoder(schema, _PASS_THROUGH[kind])
    if kind is Type.BYTES:
        return _encode_bytes
    if kind is Type.ARRAY:
        return _array_encoder(schema, opts)
    if kind is Type.MAP:
        return _map_encoder(schema, opts)
    return _struct_encoder(schema, opts)


def _encode_schemaless(value: Any, opts: _Options) -> Any:
    """Java's ``convertToJson(null, value)``: the JSON type follows the Python type."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return _int_encoder(_SCHEMALESS_INT64)(value)
    if isinstance(value, float):
        return _float_encoder(_SCHEMALESS_FLOAT64, opts)(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return _encode_bytes(value)
    if isinstance(value, list | tuple):
        return [_encode_schemaless(item, opts) for item in value]
    if isinstance(value, Mapping):
        if all(type(key) is str for key in value):
            return {key: _encode_schemaless(item, opts) for key, item in value.items()}
        return [[_encode_schemaless(k, opts), _encode_schemaless(v, opts)] for k, v in value.items()]
    if isinstance(value, Struct):
        raise DataError("Mismatching schema.")
    raise DataError(f"Python type {type(value).__name__} does not have corresponding schema type.")


_SCHEMALESS_INT64: Final = Schema(Type.INT64, True)
_SCHEMALESS_FLOAT64: Final = Schema(Type.FLOAT64, True)


# --------------------------------------------------------------------------------------------------
# Schema -> JSON
# --------------------------------------------------------------------------------------------------


def _schema_json(schema: Schema, opts: _Options) -> dict[str, Any]:
    """Java's ``asJsonSchema``: key order ``type``, children, ``optional``, name, ..., ``default``."""
    out: dict[str, Any] = {"type": schema.type.value}
    if schema.type is Type.ARRAY:
        out["items"] = _child_schema_json(schema.value_schema, opts)
    elif schema.type is Type.MAP:
        out["keys"] = _child_schema_json(schema.key_schema, opts)
        out["values"] = _child_schema_json(schema.value_schema, opts)
    elif schema.type is Type.STRUCT:
        out["fields"] = [_schema_json(field.schema, opts) | {"field": field.name} for field in schema.fields]
    out["optional"] = schema.optional
    if schema.name is not None:
        out["name"] = schema.name
    if schema.version is not None:
        out["version"] = schema.version
    if schema.doc is not None:
        out["doc"] = schema.doc
    if schema.parameters is not None:
        out["parameters"] = dict(schema.parameters)
    if schema.default is not None:
        out["default"] = _compile(schema, opts)(schema.default)
    return out


def _child_schema_json(schema: Schema | None, opts: _Options) -> dict[str, Any] | None:
    return None if schema is None else _schema_json(schema, opts)


# --------------------------------------------------------------------------------------------------
# Serialization: orjson + Jackson fix-ups, and the pure-Python reference writer
# --------------------------------------------------------------------------------------------------

_FIXUPS: Final = re.compile(rb"\\\\|\\u00[01][0-9a-f]|[\xf0-\xf4][\x80-\xbf]{3}")


def _fix(match: re.Match[bytes]) -> bytes:
    found = match.group()
    if found[0] == 0x5C:  # an escaped backslash (kept) or a control character escape (upper-cased)
        return found.upper().replace(b"\\U", b"\\u")
    code = ord(found.decode("utf-8")) - 0x10000
    return b"\\u%04X\\u%04X" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


_FOUR_BYTE_LEADS: Final = tuple(bytes([lead]) for lead in range(0xF0, 0xF5))


def _jacksonize(out: bytes) -> bytes:
    """Rewrite orjson's escapes the way Jackson writes them (see the module docstring).

    The checks before the rewrite are single C scans (``memchr``), so clean output costs ~1 us/KB.
    """
    if b"\\u00" not in out and (out.isascii() or not any(lead in out for lead in _FOUR_BYTE_LEADS)):
        return out
    return _FIXUPS.sub(_fix, out)


def _dumps(tree: Any) -> bytes:
    return _jacksonize(orjson.dumps(tree))


def dumps_jackson(tree: Any) -> bytes:
    """Plain JSON values (dicts, lists, str, int, bool, None, ``orjson.Fragment``) as Jackson writes them."""
    return _jacksonize(orjson.dumps(tree))


class _RawText:
    """Pre-serialized JSON text for the reference writer (the fast path uses ``orjson.Fragment``)."""

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = text.decode("ascii")


_SHORT_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _reference_string(text: str) -> str:
    parts = ['"']
    for char in text:
        code = ord(char)
        if char in _SHORT_ESCAPES:
            parts.append(_SHORT_ESCAPES[char])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            parts.append(f"\\u{code:04X}")
        elif code >= 0x10000:
            code -= 0x10000
            parts.append(f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def _reference_text(tree: Any) -> str:
    if tree is None:
        return "null"
    if isinstance(tree, bool):
        return "true" if tree else "false"
    if isinstance(tree, int):
        return str(tree)
    if isinstance(tree, str):
        return _reference_string(tree)
    if isinstance(tree, _RawText):
        return tree.text
    if isinstance(tree, list):
        return "[" + ",".join(_reference_text(item) for item in tree) + "]"
    if isinstance(tree, dict):
        return "{" + ",".join(_reference_string(k) + ":" + _reference_text(v) for k, v in tree.items()) + "}"
    raise DataError(f"Cannot write {type(tree).__name__} as JSON")


def dumps_reference(tree: Any) -> bytes:
    """Jackson's compact output for a JSON-ready tree, written character by character (slow, exact)."""
    return _reference_text(tree).encode("utf-8")


# --------------------------------------------------------------------------------------------------
# JSON -> Connect
# --------------------------------------------------------------------------------------------------


def _loads(value: bytes) -> Any:
    """Parse JSON; exact decimals when the data may carry Decimal numbers, as Jackson's BigDecimal mode."""
    if DECIMAL_NAME.encode() in value:
        return _loads_exact(value)
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return _loads_exact(value)


def _loads_exact(value: bytes) -> Any:
    try:
        return stdlib_json.loads(value, parse_float=Decimal)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"Converting byte[] to Kafka Connect data failed due to serialization error: {exc}") from exc


_TYPES_BY_NAME: Final = {kind.value: kind for kind in Type}


def _schema_from_json(node: Any, replace_null: bool) -> Schema | None:
    """Java's ``asConnectSchema``."""
    if node is None:
        return None
    if not isinstance(node, dict):
        raise DataError("Schema must be a JSON object")
    kind = _TYPES_BY_NAME.get(node.get("type"))  # type: ignore[arg-type]
    if kind is None:
        raise DataError(f"Unknown schema type: {node.get('type')}" if "type" in node
                        else "Schema must contain 'type' field")
    schema = Schema(
        kind,
        node.get("optional") is True,
        node.get("name"),
        _optional_int(node.get("version")),
        node.get("doc"),
        {str(k): str(v) for k, v in node["parameters"].items()} if isinstance(node.get("parameters"), dict) else None,
        **_children(kind, node, replace_null),
    )
    if node.get("default") is not None:
        default = _to_connect(schema, node["default"], replace_null)
        schema = Schema(schema.type, schema.optional, schema.name, schema.version, schema.doc, schema.parameters,
                        default, schema.fields, schema.key_schema, schema.value_schema, schema._by_name)
    return schema


def _optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _children(kind: Type, node: dict[str, Any], replace_null: bool) -> dict[str, Any]:
    if kind is Type.ARRAY:
        return {"value_schema": _child(node.get("items"), "items", replace_null)}
    if kind is Type.MAP:
        return {"key_schema": _child(node.get("keys"), "keys", replace_null),
                "value_schema": _child(node.get("values"), "values", replace_null)}
    if kind is not Type.STRUCT:
        return {}
    fields_node = node.get("fields")
    if not isinstance(fields_node, list):
        raise DataError("Struct schema's \"fields\" argument is not an array.")
    fields = []
    for index, field_node in enumerate(fields_node):
        name = field_node.get("field") if isinstance(field_node, dict) else None
        if not isinstance(name, str):
            raise DataError("Struct schema's field name not specified properly")
        fields.append(Field(name, index, _child(field_node, name, replace_null)))
    return {"fields": tuple(fields), "_by_name": {f.name: f for f in fields}}


def _child(node: Any, role: str, replace_null: bool) -> Schema:
    child = _schema_from_json(node, replace_null)
    if child is None:
        raise DataError(f"Schema is missing its {role!r} schema")
    return child


def _to_connect(schema: Schema | None, node: Any, replace_null: bool) -> Any:
    """Java's ``convertToConnect``."""
    if schema is None:
        return _schemaless_to_connect(node)
    if node is None:
        if schema.default is not None and replace_null:
            return schema.default
        if schema.optional:
            return None
        raise DataError(f"Invalid null value for required {schema.type.name} field")
    reader = _LOGICAL_READERS.get(schema.name) or _READERS[schema.type]
    return reader(schema, node, replace_null)


def _schemaless_to_connect(node: Any) -> Any:
    if isinstance(node, Decimal):
        return float(node) + 0.0  # BigDecimal has no negative zero
    if isinstance(node, list):
        return [_schemaless_to_connect(item) for item in node]
    if isinstance(node, dict):
        return {key: _schemaless_to_connect(item) for key, item in node.items()}
    return node


def _expect(schema: Schema, node: Any, kinds: type | tuple[type, ...]) -> Any:
    if not isinstance(node, kinds) or (isinstance(node, bool) and kinds is not bool):
        raise DataError(f"Invalid JSON value {node!r} for {schema.type.name} schema")
    return node


def _read_float(schema: Schema, node: Any, replace_null: bool) -> float:
    if isinstance(node, str):  # Java reads a text node with doubleValue(): 0.0, "NaN" and "Infinity" included
        return 0.0
    # Jackson reads JSON numbers as BigDecimal, which has no negative zero: "-0.0" reads as 0.0
    return float(_expect(schema, node, (int, float, Decimal))) + 0.0


def _read_bytes(schema: Schema, node: Any, replace_null: bool) -> bytes:
    try:
        return base64.b64decode(_expect(schema, node, str), validate=True)
    except binascii.Error as exc:
        raise DataError("Invalid bytes field") from exc


def _read_array(schema: Schema, node: Any, replace_null: bool) -> list[Any]:
    return [_to_connect(schema.value_schema, item, replace_null) for item in _expect(schema, node, list)]


def _read_map(schema: Schema, node: Any, replace_null: bool) -> dict[Any, Any]:
    keys, values = schema.key_schema, schema.value_schema
    if keys is None or keys.type is Type.STRING:
        return {k: _to_connect(values, v, replace_null) for k, v in _expect(schema, node, dict).items()}
    if not isinstance(node, list):
        raise DataError("Maps with non-string fields should be encoded as JSON array of tuples,"
                        f" but found {type(node).__name__}")
    result = {}
    for entry in node:
        if not isinstance(entry, list) or len(entry) != 2:
            raise DataError("Found invalid map entry instead of array tuple")
        result[_to_connect(keys, entry[0], replace_null)] = _to_connect(values, entry[1], replace_null)
    return result


def _read_struct(schema: Schema, node: Any, replace_null: bool) -> Struct:
    if not isinstance(node, dict):
        raise DataError(f"Structs should be encoded as JSON objects, but found {type(node).__name__}")
    result = Struct(schema)
    for field in schema.fields:
        result.values[field.name] = _to_connect(field.schema, node.get(field.name), replace_null)
    return result


def _read_decimal(schema: Schema, node: Any, replace_null: bool) -> Decimal:
    if isinstance(node, int | Decimal) and not isinstance(node, bool):
        return Decimal(node)
    if isinstance(node, float):
        return Decimal(repr(node))
    unscaled = int.from_bytes(_read_bytes(schema, node, replace_null), "big", signed=True)
    scale = _decimal_scale(schema)
    return Decimal((0 if unscaled >= 0 else 1, tuple(map(int, str(abs(unscaled)))), -scale))


def _read_int(schema: Schema, node: Any, replace_null: bool) -> int:
    return int(_expect(schema, node, int))


_READERS: Final[dict[Type, Callable[[Schema, Any, bool], Any]]] = {
    Type.INT8: _read_int,
    Type.INT16: _read_int,
    Type.INT32: _read_int,
    Type.INT64: _read_int,
    Type.FLOAT32: _read_float,
    Type.FLOAT64: _read_float,
    Type.BOOLEAN: lambda schema, node, replace_null: _expect(schema, node, bool),
    Type.STRING: lambda schema, node, replace_null: _expect(schema, node, str),
    Type.BYTES: _read_bytes,
    Type.ARRAY: _read_array,
    Type.MAP: _read_map,
    Type.STRUCT: _read_struct,
}
_LOGICAL_READERS: Final[dict[str | None, Callable[[Schema, Any, bool], Any]]] = {
    DECIMAL_NAME: _read_decimal,
    DATE_NAME: lambda schema, node, replace_null: _date_from_days(_read_int(schema, node, replace_null)),
    TIME_NAME: lambda schema, node, replace_null: _time_from_millis(_read_int(schema, node, replace_null)),
    TIMESTAMP_NAME: lambda schema, node, replace_null: _timestamp_from_millis(_read_int(schema, node, replace_null)),
}


# --------------------------------------------------------------------------------------------------
# The converter
# --------------------------------------------------------------------------------------------------


class _Compiled:
    """A schema's cached artefacts: its serialized JSON and its payload encoder."""

    __slots__ = ("encode", "schema", "schema_bytes")

    def __init__(self, schema: Schema, opts: _Options | None = None) -> None:
        self.schema = schema  # keeps the schema alive, so its id() stays unique while cached
        if opts is not None:
            self.schema_bytes = _dumps(_schema_json(schema, opts))
            self.encode = _nullable(schema, opts)

    def rebound(self, schema: Schema) -> _Compiled:
        """The same artefacts for an equal schema object."""
        twin = _Compiled(schema)
        twin.schema_bytes, twin.encode = self.schema_bytes, self.encode
        return twin


def _bounded_put(cache: dict[K, V], key: K, value: V, size: int) -> V:
    """Store ``value``, evicting the oldest entry when the cache is full; returns ``value``."""
    if key not in cache and len(cache) >= max(size, 1):
        del cache[next(iter(cache))]
    cache[key] = value
    return value


def _config_int(configs: Mapping[str, Any], name: str, default: int) -> int:
    value = configs.get(name, default)
    try:
        return int(str(value).strip())
    except ValueError as exc:
        raise ConfigError(name, value, "Not a 32-bit integer") from exc


def _config_bool(configs: Mapping[str, Any], name: str, default: bool) -> bool:
    value = configs.get(name)
    if value is not None and str(value).strip().lower() not in ("true", "false"):
        raise ConfigError(name, value, "Expected value to be either true or false")
    return parse_bool(value, default)


_CONFIG_DEF: Final = converter_config_def(
    ConfigKey("schemas.enable", ConfigType.BOOLEAN, "true", False, "HIGH",
              "Include schemas within each of the serialized values and keys.", "Schemas", 0, "MEDIUM",
              "Enable Schemas"),
    ConfigKey("schemas.cache.size", ConfigType.INT, "1000", False, "HIGH",
              "The maximum number of schemas that can be cached in this converter instance.", "Schemas", 1, "MEDIUM",
              "Schema Cache Size"),
    ConfigKey("schema.content", ConfigType.STRING, None, False, "HIGH",
              "A schema used for every message instead of the schemas within the messages (sink side only).",
              "Schemas", 2, "MEDIUM", "Schema Content"),
    ConfigKey("decimal.format", ConfigType.STRING, "BASE64", False, "LOW",
              "How decimals are serialized: 'BASE64' (default) or 'NUMERIC', case insensitive.", "Serialization", 0,
              "MEDIUM", "Decimal Format", validators=(one_of_ignoring_case("NUMERIC", "BASE64"),)),
    ConfigKey("replace.null.with.default", ConfigType.BOOLEAN, "true", False, "LOW",
              "Whether a null field with a default value is written as that default.", "Serialization", 1, "MEDIUM",
              "Replace null with default"),
)


class JsonConverter:
    """Java's ``JsonConverter``. Settings (``configure``, declared by :meth:`config_def`):

    * ``schemas.enable`` (default true): wrap values in ``{"schema":...,"payload":...}``;
    * ``decimal.format`` (``BASE64`` default, or ``NUMERIC``): how Decimal values are written;
    * ``replace.null.with.default`` (default true): write (and read) a null with a default as the default;
    * ``schemas.cache.size`` (default 1000): how many schemas keep their compiled form.
    """

    @classmethod
    def config_def(cls) -> ConfigDef:
        """Java's ``JsonConverterConfig``: ``converter.type``, then the settings above and ``schema.content``."""
        return _CONFIG_DEF

    def __init__(self) -> None:
        self.schemas_enabled = True
        self.replace_null = True
        self.cache_size = 1000
        self._opts = _Options(numeric_decimals=False, replace_null=True, raw=orjson.Fragment)
        self._by_id: dict[int, _Compiled] = {}
        self._by_value: dict[Schema, _Compiled] = {}
        self._schemas_to_connect: dict[bytes, Schema | None] = {}

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        """Apply ``schemas.enable``, ``decimal.format``, ``replace.null.with.default``, ``schemas.cache.size``."""
        self.schemas_enabled = _config_bool(configs, "schemas.enable", True)
        self.replace_null = _config_bool(configs, "replace.null.with.default", True)
        self.cache_size = _config_int(configs, "schemas.cache.size", 1000)
        decimal_format = str(configs.get("decimal.format", "BASE64")).strip().upper()
        if decimal_format not in ("BASE64", "NUMERIC"):
            raise ConfigError("decimal.format", configs.get("decimal.format"), "String must be one of: BASE64, NUMERIC")
        self._opts = _Options(decimal_format == "NUMERIC", self.replace_null, orjson.Fragment)
        self._by_id.clear()
        self._by_value.clear()
        self._schemas_to_connect.clear()

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: tuple[Header, ...] = ()
    ) -> bytes | None:
        """Serialize ``value``; None only for a tombstone (no schema and no value)."""
        if schema is None:
            if value is None:
                return None
            payload = self._dumps_payload(lambda v: _encode_schemaless(v, self._opts), value)
            return b'{"schema":null,"payload":' + payload + b"}" if self.schemas_enabled else payload
        compiled = self._compiled(schema)
        payload = self._dumps_payload(compiled.encode, value, schema)
        if self.schemas_enabled:
            return b'{"schema":' + compiled.schema_bytes + b',"payload":' + payload + b"}"
        return payload

    def _compiled(self, schema: Schema) -> _Compiled:
        """The cached form of ``schema``: by identity first, then (for hashable schemas) by equality."""
        compiled = self._by_id.get(id(schema))
        if compiled is not None and compiled.schema is schema:
            return compiled
        try:
            compiled = self._by_value.get(schema)
        except TypeError:  # parameters, defaults and the like can make a schema unhashable
            compiled = None
        else:
            if compiled is None:
                compiled = _bounded_put(self._by_value, schema, _Compiled(schema, self._opts), self.cache_size)
        if compiled is None or compiled.schema is not schema:
            compiled = _Compiled(schema, self._opts) if compiled is None else compiled.rebound(schema)
        return _bounded_put(self._by_id, id(schema), compiled, self.cache_size)

    def _dumps_payload(self, encode: Encoder, value: Any, schema: Schema | None = None) -> bytes:
        tree = encode(value)
        try:
            return _dumps(tree)
        except orjson.JSONEncodeError:
            return self._dumps_slowly(value, schema)

    def _dumps_slowly(self, value: Any, schema: Schema | None) -> bytes:
        """The reference writer, for what orjson refuses (lone surrogates, integers beyond 64 bits)."""
        opts = _Options(self._opts.numeric_decimals, self._opts.replace_null, _RawText)
        return dumps_reference(_nullable(schema, opts)(value))

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        """Parse bytes written by a JsonConverter; ints become Python ints (Java's int64) when schemaless."""
        if value is None:
            return SchemaAndValue(None, None)
        node = _loads(value)
        if not self.schemas_enabled:
            return SchemaAndValue(None, _to_connect(None, node, self.replace_null))
        if not isinstance(node, dict) or node.keys() != {"schema", "payload"}:
            raise DataError(_ENVELOPE_ERROR)
        schema = self._schema_to_connect(node["schema"])
        return SchemaAndValue(schema, _to_connect(schema, node["payload"], self.replace_null))

    def _schema_to_connect(self, node: Any) -> Schema | None:
        """Parsed schemas are cached by their JSON, so equal schemas come back as the same object."""
        key = orjson.dumps(node, default=str)
        if key in self._schemas_to_connect:
            return self._schemas_to_connect[key]
        return _bounded_put(self._schemas_to_connect, key, _schema_from_json(node, self.replace_null), self.cache_size)

    def from_connect_header(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        """As a header converter (Java's class is both): the same bytes as :meth:`from_connect_data`."""
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, key: str, value: bytes | None) -> SchemaAndValue:
        """As a header converter: :meth:`to_connect_data`."""
        return self.to_connect_data(topic, value)

    def as_json_schema(self, schema: Schema) -> bytes:
        """The serialized JSON of ``schema``, as it appears in the envelope."""
        return self._compiled(schema).schema_bytes
