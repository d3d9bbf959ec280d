"""``Cast``: change the type of fields (``spec=field:type,...``) or of the whole key/value (``spec=type``) to
int8, int16, int32, int64, float32, float64, boolean or string, with Java's conversions (integer narrowing wraps,
float32 rounds, strings parse, bytes become base64 strings, dates ISO-8601 text)."""

from __future__ import annotations

import base64
import struct
from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, ClassVar

from connect.api.config import ConfigDef, ConfigType, parse_list
from connect.api.data import Schema, Struct, Type
from connect.api.errors import DataError
from connect.api.records import SourceRecord
from connect.javalang import double_to_string
from connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    copy_basics,
    field_value,
    invalid,
    key,
    require_map,
    require_struct,
    settings,
)

__all__ = ["CastKey", "CastValue"]

_TARGETS = {"int8": Type.INT8, "int16": Type.INT16, "int32": Type.INT32, "int64": Type.INT64,
            "float32": Type.FLOAT32, "float64": Type.FLOAT64, "boolean": Type.BOOLEAN, "string": Type.STRING}
_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_F32 = struct.Struct(">f")


def _parse_spec(name: str, items: list[str]) -> dict[str | None, Type]:
    """``field:type`` pairs, or one bare type for the whole value (key None)."""
    if not items:
        raise ValueError(invalid(name, items, "Must specify at least one field to cast."))
    casts: dict[str | None, Type] = {}
    for item in items:
        parts = item.split(":")
        if len(parts) > 2 or (len(parts) == 1 and len(items) > 1):
            raise ValueError(invalid(name, items, f"Invalid cast mapping: {item}"))
        field, type_name = (None, parts[0]) if len(parts) == 1 else (parts[0].strip(), parts[1])
        target = _TARGETS.get(type_name.strip().lower())
        if target is None:
            raise ValueError(invalid(name, items, f"Invalid type found in casting spec: {type_name.strip()}"))
        casts[field] = target
    return casts


def _check_spec(name: str, raw: str | None) -> str | None:
    try:
        _parse_spec(name, parse_list(raw))
    except ValueError as exc:
        return str(exc)
    return None


def _wrap(number: int, bits: int) -> int:
    mask = (1 << bits) - 1
    number &= mask
    return number - (1 << bits) if number >> (bits - 1) else number


def _java_number_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return double_to_string(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{aware.microsecond // 1000:03d}Z"
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, time):
        return value.strftime("%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    return str(value)


def cast_value(value: Any, target: Type) -> Any:
    """``value`` cast to ``target`` as Java's ``Cast.castValueToType`` does."""
    if value is None:
        return None
    try:
        if target is Type.STRING:
            return _java_number_text(value)
        if target is Type.BOOLEAN:
            if isinstance(value, str):
                return value.strip().lower() == "true"
            return bool(value)
        if isinstance(value, datetime):
            aware = value if value.tzinfo else value.replace(tzinfo=UTC)
            value = (aware - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
        if target in _BITS:
            if isinstance(value, str):
                number = int(value.strip())
                low, high = -(1 << (_BITS[target] - 1)), (1 << (_BITS[target] - 1)) - 1
                if not low <= number <= high:
                    raise ValueError(f'Value out of range. Value:"{value}"')
                return number
            return _wrap(int(value), _BITS[target])
        real = float(value.strip()) if isinstance(value, str) else float(value)
        if target is Type.FLOAT32:
            return _F32.unpack(_F32.pack(real))[0]
        return real
    except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
        raise DataError(f"Value ({type(value).__name__}) '{value}' could not be cast to {target.name}: {exc}"
                        ) from exc


_CASTABLE = (bool, int, float, str, bytes, Decimal, date, time)


class _Cast(KeyOrValue):
    """Cast fields or the whole key/value."""

    PURPOSE: ClassVar[str] = "cast types"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("spec", ConfigType.LIST, required=True, importance="HIGH",
            doc="List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of "
                "Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64,"
                " float32, float64, boolean, and string.", validators=(_check_spec,)),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.casts = _parse_spec("spec", conf["spec"])
        self.whole = self.casts.get(None)
        self.replace_null: bool = conf["replace.null.with.default"]
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if value is None:
            return record
        if schema is None:
            if self.whole is not None:
                return self.updated(record, None, cast_value(value, self.whole))
            updated_map = dict(require_map(value, self.PURPOSE))
            for name, target in self.casts.items():
                if name is not None:
                    updated_map[name] = cast_value(updated_map.get(name), target)
            return self.updated(record, None, updated_map)
        updated_schema = self._cache.get(schema, self._updated_schema)
        if self.whole is not None:
            return self.updated(record, updated_schema, cast_value(value, self.whole))
        struct_value = require_struct(value, self.PURPOSE)
        updated = Struct(updated_schema)
        for field in struct_value.schema.fields:
            current = field_value(struct_value, field.name, self.replace_null)
            cast_to = self.casts.get(field.name)
            updated.values[field.name] = current if cast_to is None else cast_value(current, cast_to)
        return self.updated(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        if self.whole is not None:  # Java keeps the name, version, doc and parameters (a logical name included)
            return copy_basics(schema, type=self.whole, optional=schema.optional,
                               default=cast_value(schema.default, self.whole))
        if schema.type is not Type.STRUCT:
            raise DataError(f"Only Struct objects supported for [{self.PURPOSE}], found: {schema.type.name}")
        fields = []
        for field in schema.fields:
            target_type = self.casts.get(field.name)
            if target_type is None:
                fields.append(field)
                continue
            if field.schema.type in (Type.ARRAY, Type.MAP, Type.STRUCT):
                raise DataError(f"Cast transformation does not support casting to/from {field.schema.type.name}")
            cast_schema = Schema(target_type, field.schema.optional,
                                 default=cast_value(field.schema.default, target_type))
            fields.append(type(field)(field.name, field.index, cast_schema))
        return copy_basics(schema, fields=tuple(fields), _by_name={f.name: f for f in fields})


class CastKey(_Cast):
    """``Cast$Key``."""

    is_key = True


class CastValue(_Cast):
    """``Cast$Value``."""
