"""The reading half of :class:`~converters.json.JsonConverter`: JSON bytes -> Connect schema and value, as Java's
``JsonConverter`` reads them (Jackson's tree, numbers as ``BigDecimal`` where a Decimal may be present)."""

from __future__ import annotations

import base64
import binascii
import json as stdlib_json
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

import orjson

from connect.api.data import DATE_NAME, DECIMAL_NAME, TIME_NAME, TIMESTAMP_NAME, Field, Schema, Struct, Type
from connect.api.errors import DataError
from converters.json_logical import date_from_days, decimal_scale, time_from_millis, timestamp_from_millis

__all__ = ["loads", "schema_from_json", "to_connect"]


def loads(value: bytes) -> Any:
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


def schema_from_json(node: Any, replace_null: bool) -> Schema | None:
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
        default = to_connect(schema, node["default"], replace_null)
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
    child = schema_from_json(node, replace_null)
    if child is None:
        raise DataError(f"Schema is missing its {role!r} schema")
    return child


def to_connect(schema: Schema | None, node: Any, replace_null: bool) -> Any:
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
    return [to_connect(schema.value_schema, item, replace_null) for item in _expect(schema, node, list)]


def _read_map(schema: Schema, node: Any, replace_null: bool) -> dict[Any, Any]:
    keys, values = schema.key_schema, schema.value_schema
    if keys is None or keys.type is Type.STRING:
        return {k: to_connect(values, v, replace_null) for k, v in _expect(schema, node, dict).items()}
    if not isinstance(node, list):
        raise DataError("Maps with non-string fields should be encoded as JSON array of tuples,"
                        f" but found {type(node).__name__}")
    result = {}
    for entry in node:
        if not isinstance(entry, list) or len(entry) != 2:
            raise DataError("Found invalid map entry instead of array tuple")
        result[to_connect(keys, entry[0], replace_null)] = to_connect(values, entry[1], replace_null)
    return result


def _read_struct(schema: Schema, node: Any, replace_null: bool) -> Struct:
    if not isinstance(node, dict):
        raise DataError(f"Structs should be encoded as JSON objects, but found {type(node).__name__}")
    result = Struct(schema)
    for field in schema.fields:
        result.values[field.name] = to_connect(field.schema, node.get(field.name), replace_null)
    return result


def _read_decimal(schema: Schema, node: Any, replace_null: bool) -> Decimal:
    if isinstance(node, int | Decimal) and not isinstance(node, bool):
        return Decimal(node)
    if isinstance(node, float):
        return Decimal(repr(node))
    unscaled = int.from_bytes(_read_bytes(schema, node, replace_null), "big", signed=True)
    scale = decimal_scale(schema)
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
    DATE_NAME: lambda schema, node, replace_null: date_from_days(_read_int(schema, node, replace_null)),
    TIME_NAME: lambda schema, node, replace_null: time_from_millis(_read_int(schema, node, replace_null)),
    TIMESTAMP_NAME: lambda schema, node, replace_null: timestamp_from_millis(_read_int(schema, node, replace_null)),
}
