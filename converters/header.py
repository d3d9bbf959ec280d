"""``SimpleHeaderConverter``: header values as text, like Java's
``org.apache.kafka.connect.storage.SimpleHeaderConverter`` (Connect's default header converter).

Writing follows Java's ``Values.convertToString``: strings are written as they are, numbers and
booleans as Java prints them, bytes as base64, Decimals as ``BigDecimal.toString()``, dates and times
in ISO-8601 (the format is picked from the instant, as Java does: before the end of the first day
since the epoch a time, on a midnight a date, else a timestamp), and lists, maps and structs in a
JSON-like form whose nested strings are quoted with only ``"`` and ``\\`` escaped.

Reading infers a schema from the text, a subset of Java's ``Values.parseString``: booleans, integers
(the narrowest of int8..int64, then a Decimal), fractions (float32 when finite there, else float64,
else a Decimal), ISO dates, times and timestamps, and JSON arrays and objects of those; anything else
is a string.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any, Final

import orjson

from connect.api.config import ConfigDef
from connect.api.data import (
    DATE_NAME,
    TIME_NAME,
    TIMESTAMP_NAME,
    Schema,
    SchemaAndValue,
    Struct,
    Type,
    array_schema,
    date_schema,
    decimal_schema,
    time_schema,
    timestamp_schema,
)
from connect.api.errors import DataError
from connect.javalang import double_to_string, float_to_string
from converters.json_logical import (
    date_days,
    java_big_decimal,
    time_millis,
    timestamp_millis,
)

__all__ = ["SimpleHeaderConverter", "convert_to_string", "parse_string"]

_MS_PER_DAY: Final = 86_400_000
_STRING: Final = Schema(Type.STRING)
_INT_SCHEMAS: Final = tuple(
    (Schema(kind), -(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    for kind, bits in ((Type.INT8, 8), (Type.INT16, 16), (Type.INT32, 32), (Type.INT64, 64))
)
_FLOAT32_MAX: Final = 3.4028234663852886e38


# --------------------------------------------------------------------------------------------------
# Connect value -> text
# --------------------------------------------------------------------------------------------------


def _instant_millis(schema: Schema | None, value: Any) -> int:
    """Milliseconds since the epoch of a date, time or timestamp (ints follow the schema's logical type)."""
    name = schema.name if schema is not None else None
    if isinstance(value, datetime) or name == TIMESTAMP_NAME:
        return timestamp_millis(value)
    if isinstance(value, date) or name == DATE_NAME:
        return date_days(value) * _MS_PER_DAY
    return time_millis(value)


def _format_instant(millis: int) -> str:
    """Java's choice of pattern by instant: time, date or timestamp."""
    moment = datetime.fromtimestamp(millis // 1000, UTC).replace(microsecond=millis % 1000 * 1000)
    if millis < _MS_PER_DAY:
        return moment.strftime("%H:%M:%S.") + f"{millis % 1000:03d}Z"
    if millis % _MS_PER_DAY == 0:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{millis % 1000:03d}Z"


def _is_logical_instant(schema: Schema | None, value: Any) -> bool:
    if isinstance(value, date | time):
        return True
    return schema is not None and schema.name in (DATE_NAME, TIME_NAME, TIMESTAMP_NAME)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _text(schema: Schema | None, value: Any, nested: bool) -> str:
    """Java's ``Values.append``: ``nested`` values quote their strings and bytes."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return _quote(value) if nested else value
    if isinstance(value, bool):
        return "true" if value else "false"
    if _is_logical_instant(schema, value):
        return _format_instant(_instant_millis(schema, value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float_to_string(value) if schema is not None and schema.type is Type.FLOAT32 else double_to_string(value)
    if isinstance(value, Decimal):
        return java_big_decimal(value)
    if isinstance(value, bytes | bytearray | memoryview):
        encoded = base64.b64encode(value).decode("ascii")
        return _quote(encoded) if nested else encoded
    return _container_text(schema, value)


def _container_text(schema: Schema | None, value: Any) -> str:
    if isinstance(value, Struct):
        return "{" + ",".join(_quote(f.name) + ":" + _text(f.schema, value.values.get(f.name), True)
                              for f in value.schema.fields) + "}"
    if isinstance(value, Mapping):
        keys = schema.key_schema if schema is not None else None
        values = schema.value_schema if schema is not None else None
        return "{" + ",".join(_text(keys, k, True) + ":" + _text(values, v, True) for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        items = schema.value_schema if schema is not None else None
        return "[" + ",".join(_text(items, item, True) for item in value) + "]"
    raise DataError(f"Cannot convert a {type(value).__name__} header value to a string")


def convert_to_string(schema: Schema | None, value: Any) -> str | None:
    """Java's ``Values.convertToString``: the text of a header value (None for null)."""
    return None if value is None else _text(schema, value, False)


# --------------------------------------------------------------------------------------------------
# text -> Connect value
# --------------------------------------------------------------------------------------------------

_NUMBER: Final = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DATE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_TIME: Final = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{3}Z")
_TIMESTAMP: Final = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


def _parse_number(text: str) -> SchemaAndValue:
    number = Decimal(text)
    scale = -int(number.as_tuple().exponent)
    if number == number.to_integral_value():
        integral = int(number)
        for schema, low, high in _INT_SCHEMAS:
            if low <= integral <= high:
                return SchemaAndValue(schema, integral)
        if scale == 0:
            return SchemaAndValue(decimal_schema(0), number)
    as_float = float(number)
    if abs(as_float) <= _FLOAT32_MAX:
        return SchemaAndValue(Schema(Type.FLOAT32), as_float)
    if math.isfinite(as_float):
        return SchemaAndValue(Schema(Type.FLOAT64), as_float)
    return SchemaAndValue(decimal_schema(scale), number)


def _parse_instant(text: str) -> SchemaAndValue | None:
    try:
        if _DATE.fullmatch(text):
            return SchemaAndValue(date_schema(), date.fromisoformat(text))
        if _TIME.fullmatch(text):
            return SchemaAndValue(time_schema(), time.fromisoformat(text[:-1]))
        if _TIMESTAMP.fullmatch(text):
            return SchemaAndValue(timestamp_schema(), datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC))
    except ValueError:
        return None
    return None


def _parse_scalar(text: str) -> SchemaAndValue:
    stripped = text.strip()
    if stripped in ("true", "false"):
        return SchemaAndValue(Schema(Type.BOOLEAN), stripped == "true")
    if _NUMBER.fullmatch(stripped):
        try:
            return _parse_number(stripped)
        except (InvalidOperation, OverflowError, ValueError):
            pass
    return _parse_instant(stripped) or SchemaAndValue(_STRING, text)


def _infer(node: Any) -> SchemaAndValue:
    """Schema and value of one parsed JSON element."""
    if isinstance(node, str):
        return _parse_instant(node) or SchemaAndValue(_STRING, node)
    if isinstance(node, bool | int | float):
        return _parse_scalar(orjson.dumps(node).decode())
    if isinstance(node, list):
        items = [_infer(item) for item in node]
        common = _common_schema([item.schema for item in items])
        return SchemaAndValue(array_schema(common) if common else Schema(Type.ARRAY),
                              [_widen(common, item.value) for item in items])
    if isinstance(node, dict):
        values = {key: _infer(item) for key, item in node.items()}
        common = _common_schema([item.schema for item in values.values()])
        keys = _STRING if node else None
        return SchemaAndValue(Schema(Type.MAP, key_schema=keys, value_schema=common),
                              {key: _widen(common, item.value) for key, item in values.items()})
    return SchemaAndValue(None, None)


_WIDTHS: Final = {Type.INT8: 0, Type.INT16: 1, Type.INT32: 2, Type.INT64: 3, Type.FLOAT32: 4, Type.FLOAT64: 5}


def _common_schema(schemas: list[Schema | None]) -> Schema | None:
    """The one schema all elements share, widening numbers (int8 < ... < int64 < float32 < float64)."""
    present = [schema for schema in schemas if schema is not None]
    if not present:
        return None
    if all(schema == present[0] for schema in present):
        return present[0]
    if all(schema.type in _WIDTHS and schema.name is None for schema in present):
        return max(present, key=lambda schema: _WIDTHS[schema.type])
    return None


def _widen(common: Schema | None, value: Any) -> Any:
    if common is not None and common.type in (Type.FLOAT32, Type.FLOAT64) and isinstance(value, int):
        return float(value)
    return value


def parse_string(text: str) -> SchemaAndValue:
    """Infer a schema and value from header text (see the module docstring)."""
    if not text:
        return SchemaAndValue(_STRING, text)
    if text.lstrip()[:1] in ("[", "{"):
        try:
            return _infer(orjson.loads(text))
        except orjson.JSONDecodeError:
            return SchemaAndValue(_STRING, text)
    return _parse_scalar(text)


class SimpleHeaderConverter:
    """Java's ``SimpleHeaderConverter``; it has no settings."""

    @classmethod
    def config_def(cls) -> ConfigDef:
        """No settings (an empty ``ConfigDef``, as Java's ``config()``)."""
        return ConfigDef()

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Nothing to configure."""

    def from_connect_header(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        """The header value as UTF-8 text; None stays None."""
        text = convert_to_string(schema, value)
        return None if text is None else text.encode("utf-8")

    def to_connect_header(self, topic: str, key: str, value: bytes | None) -> SchemaAndValue:
        """Parse header bytes, inferring the schema from the text."""
        if value is None:
            return SchemaAndValue(None, None)
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"Header {key!r} is not valid UTF-8") from exc
        return parse_string(text)
