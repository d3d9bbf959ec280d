"""The writing half of :class:`~converters.json.JsonConverter`: Connect values and schemas -> JSON bytes,
byte-identical to Java's ``org.apache.kafka.connect.json.JsonConverter`` (Kafka 4.x, Jackson defaults).

Writing is the hot path. Each schema is compiled once into a tree of small encoder functions that
turn a Connect value into plain Python JSON values; the compiled ``converters._jackson`` extension
(Rust, ``native/jackson/``) writes them as Jackson does (``\\u001F`` escapes in upper case, characters
outside the BMP as a surrogate pair ``\\uD83D\\uDE00``, everything else as UTF-8); the schema's own JSON is
serialized once and cached (by the converter), and the envelope is spliced together as bytes. Floats are
formatted by :mod:`connect.javalang` as Java's ``Double.toString`` does (``1.0E10``) and handed over as
``bytes`` (pre-serialized JSON text); NaN and infinities become the strings ``"NaN"``, ``"Infinity"``,
``"-Infinity"`` (Jackson's ``QUOTE_NON_NUMERIC_NUMBERS``).

Lone surrogates and integers beyond 64 bits (which the extension refuses) fall back to
:func:`dumps_reference`, a pure-Python writer that follows Jackson's rules directly and serves the tests as the
reference for the fast path.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any, Final

from connect.api.data import DATE_NAME, DECIMAL_NAME, TIME_NAME, TIMESTAMP_NAME, Field, Schema, Struct, Type
from connect.api.errors import DataError
from connect.javalang import double_to_string, float_to_string

try:
    from converters import _jackson
except ImportError as exc:  # pragma: no cover - a broken install
    raise ImportError(
        "converters._jackson, JsonConverter's compiled writer, is not built: install the project with pip "
        "(`make venv` or `pip install -e .`), which builds native/ with cargo (needs a Rust toolchain)") from exc
from converters.json_logical import (
    date_days,
    decimal_scale,
    java_big_decimal,
    time_millis,
    timestamp_millis,
    twos_complement,
    unscaled_value,
)

__all__ = [
    "Encoder",
    "Options",
    "Raw",
    "RawText",
    "dumps_jackson",
    "dumps_members",
    "dumps_reference",
    "encode_schemaless",
    "native_encoder",
    "native_projection",
    "nullable",
    "schema_json",
]

Encoder = Callable[[Any], Any]
"""Turns one non-null Connect value into a JSON-ready Python value."""

Raw = Callable[[bytes], Any]
"""Wraps pre-serialized JSON text (``bytes`` as it is on the fast path, :class:`RawText` for the reference)."""

_INT_RANGES: Final = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
_REQUIRED_NULL: Final = "Conversion error: null value for field that is required and has no default value"


# --------------------------------------------------------------------------------------------------
# Encoders: Connect value -> JSON-ready Python value (compiled once per schema)
# --------------------------------------------------------------------------------------------------


class Options:
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


def _float_encoder(schema: Schema, opts: Options) -> Encoder:
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


def _null_result(schema: Schema, opts: Options) -> tuple[bool, Any]:
    """What a null of ``schema`` encodes to: ``(allowed, encoded)``."""
    if schema.default is not None and opts.replace_null:
        return True, _compile(schema, opts)(schema.default)
    return schema.optional, None


def nullable(schema: Schema | None, opts: Options) -> Encoder:
    """An encoder that also accepts None (Java's ``convertToJson``)."""
    if schema is None:
        return lambda value: encode_schemaless(value, opts)
    encode = _compile(schema, opts)
    allowed, encoded_null = _null_result(schema, opts)

    def encode_nullable(value: Any) -> Any:
        if value is not None:
            return encode(value)
        if allowed:
            return encoded_null
        raise DataError(_REQUIRED_NULL)

    return encode_nullable


def _array_encoder(schema: Schema, opts: Options) -> Encoder:
    item = nullable(schema.value_schema, opts)

    def encode(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise _type_error(schema, value)
        return [item(element) for element in value]

    return encode


def _map_encoder(schema: Schema, opts: Options) -> Encoder:
    key = nullable(schema.key_schema, opts)
    val = nullable(schema.value_schema, opts)
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


def _struct_encoder(schema: Schema, opts: Options) -> Encoder:
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
              "    if type(value) is not Struct and not isinstance(value, Struct):\n"
              "        raise type_error(value)\n"
              "    if value.schema is not schema and value.schema != schema:\n"
              "        raise DataError('Mismatching schema.')\n"
              "    get = value.values.get\n"
              + "".join(gets) + "    return {\n" + "".join(entries) + "    }\n")
    exec(compile(source, f"<struct encoder {schema.name or ''}>", "exec"), names)
    encode: Encoder = names["encode"]
    return encode


_PASS_THROUGH: Final = {Type.STRING: str, Type.BOOLEAN: bool}


def _field_plan(field: Field, opts: Options) -> tuple[str, Any, int | None, int | None, Encoder, bool, Any]:
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


def _decimal_encoder(schema: Schema, opts: Options) -> Encoder:
    scale = decimal_scale(schema)
    if opts.numeric_decimals:
        raw = opts.raw

        def encode_numeric(value: Any) -> Any:
            unscaled_value(value, scale)  # type and finiteness check; Java writes the value as given
            return raw(java_big_decimal(Decimal(value)).encode())

        return encode_numeric
    return lambda value: base64.b64encode(twos_complement(unscaled_value(value, scale))).decode("ascii")


_LOGICAL: Final[dict[str | None, Callable[[Schema, Options], Encoder]]] = {
    DECIMAL_NAME: _decimal_encoder,
    DATE_NAME: lambda schema, opts: date_days,
    TIME_NAME: lambda schema, opts: time_millis,
    TIMESTAMP_NAME: lambda schema, opts: timestamp_millis,
}


def _compile(schema: Schema, opts: Options) -> Encoder:
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


def native_encoder(schema: Schema, opts: Options) -> Any:
    """``schema`` compiled for the compiled writer (``converters._jackson.Encoder``): its ``encode(value)`` gives
    the bytes ``dumps_jackson(nullable(schema, opts)(value))`` gives, writing structs, lists, strings, ints and
    booleans itself and handing anything else to these Python encoders; None when a null encoding (a default)
    is beyond the compiled writer."""
    try:
        return _jackson.Encoder(_slot_spec(schema, opts))
    except (ValueError, TypeError, OverflowError):
        return None


def native_projection(schema: Schema, holder: Schema, opts: Options) -> Any:
    """Like :func:`native_encoder` for the struct ``schema``, but reading its fields from Structs of ``holder``
    (which has fields of the same names): ``encode(value)`` writes what encoding ``Struct(schema)`` with those
    values writes, without building it; None when a null encoding is beyond the compiled writer."""
    python = _compile(schema, opts)
    names = [f.name for f in schema.fields]

    def through(value: Any) -> Any:  # the Python path: the projected Struct, encoded
        projected = Struct(schema)
        get = value.values.get
        projected.values = {name: get(name) for name in names}
        return python(projected)

    try:
        fields = tuple((f.name, dumps_jackson(f.name) + b":", _slot_spec(f.schema, opts)) for f in schema.fields)
        return _jackson.Encoder((("struct", holder, Struct, fields, through), None, through))
    except (ValueError, TypeError, OverflowError):
        return None


def _slot_spec(schema: Schema | None, opts: Options) -> tuple[Any, ...]:
    if schema is None:
        return ("python", nullable(None, opts)), b"null", nullable(None, opts)
    allowed, encoded_null = _null_result(schema, opts)
    return _node_spec(schema, opts), dumps_jackson(encoded_null) if allowed else None, nullable(schema, opts)


def _node_spec(schema: Schema, opts: Options) -> tuple[Any, ...]:
    python = _compile(schema, opts)
    if schema.name in _LOGICAL:
        return ("python", python)
    kind = schema.type
    if kind in _INT_RANGES:
        return ("int", *_INT_RANGES[kind], python)
    if kind is Type.STRING:
        return ("string", python)
    if kind is Type.BOOLEAN:
        return ("boolean", python)
    if kind is Type.ARRAY:
        return ("array", _slot_spec(schema.value_schema, opts), python)
    if kind is Type.STRUCT:
        fields = tuple((f.name, dumps_jackson(f.name) + b":", _slot_spec(f.schema, opts)) for f in schema.fields)
        return ("struct", schema, Struct, fields, python)
    return ("python", python)


def encode_schemaless(value: Any, opts: Options) -> Any:
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
        return [encode_schemaless(item, opts) for item in value]
    if isinstance(value, Mapping):
        if all(type(key) is str for key in value):
            return {key: encode_schemaless(item, opts) for key, item in value.items()}
        return [[encode_schemaless(k, opts), encode_schemaless(v, opts)] for k, v in value.items()]
    if isinstance(value, Struct):
        raise DataError("Mismatching schema.")
    raise DataError(f"Python type {type(value).__name__} does not have corresponding schema type.")


_SCHEMALESS_INT64: Final = Schema(Type.INT64, True)
_SCHEMALESS_FLOAT64: Final = Schema(Type.FLOAT64, True)


# --------------------------------------------------------------------------------------------------
# Schema -> JSON
# --------------------------------------------------------------------------------------------------


def schema_json(schema: Schema, opts: Options) -> dict[str, Any]:
    """Java's ``asJsonSchema``: key order ``type``, children, ``optional``, name, ..., ``default``."""
    out: dict[str, Any] = {"type": schema.type.value}
    if schema.type is Type.ARRAY:
        out["items"] = _child_schema_json(schema.value_schema, opts)
    elif schema.type is Type.MAP:
        out["keys"] = _child_schema_json(schema.key_schema, opts)
        out["values"] = _child_schema_json(schema.value_schema, opts)
    elif schema.type is Type.STRUCT:
        out["fields"] = [schema_json(field.schema, opts) | {"field": field.name} for field in schema.fields]
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


def _child_schema_json(schema: Schema | None, opts: Options) -> dict[str, Any] | None:
    return None if schema is None else schema_json(schema, opts)


# --------------------------------------------------------------------------------------------------
# Serialization: the compiled writer, and the pure-Python reference writer
# --------------------------------------------------------------------------------------------------

def dumps_jackson(tree: Any) -> bytes:
    """Plain JSON values (dicts, lists, str, int, bool, None, ``bytes`` of JSON text) as Jackson writes them;
    ValueError, TypeError or OverflowError for what only :func:`dumps_reference` writes."""
    return _jackson.dumps(tree)


def dumps_members(names: tuple[bytes, ...], values: tuple[Any, ...]) -> bytes:
    """A JSON object from its members' names already written (``b'"name":'``) and their values, in order (the
    values as :func:`dumps_jackson` takes them)."""
    return _jackson.members(names, values)


class RawText:
    """Pre-serialized JSON text for the reference writer (the fast path takes ``bytes``)."""

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
    if isinstance(tree, RawText):
        return tree.text
    if isinstance(tree, list):
        return "[" + ",".join(_reference_text(item) for item in tree) + "]"
    if isinstance(tree, dict):
        return "{" + ",".join(_reference_string(k) + ":" + _reference_text(v) for k, v in tree.items()) + "}"
    raise DataError(f"Cannot write {type(tree).__name__} as JSON")


def dumps_reference(tree: Any) -> bytes:
    """Jackson's compact output for a JSON-ready tree, written character by character (slow, exact)."""
    return _reference_text(tree).encode("utf-8")
