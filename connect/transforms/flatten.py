"""``Flatten``: nested structs (or maps) become top-level fields named ``outer<delimiter>inner``."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, ClassVar

from connect.api.config import ConfigDef
from connect.api.data import Schema, Struct, Type, struct_schema
from connect.api.errors import DataError
from connect.api.records import SourceRecord
from connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    copy_basics,
    field_value,
    key,
    require_map,
    require_struct,
    settings,
)

__all__ = ["FlattenKey", "FlattenValue", "flatten_schema", "flatten_struct"]

_PRIMITIVES = (bool, int, float, str, bytes, Decimal, list)


def _name(prefix: str, name: str, delimiter: str) -> str:
    return name if not prefix else prefix + delimiter + name


def flatten_schema(schema: Schema, delimiter: str) -> Schema:
    """The flattened schema of a struct schema (Java's ``buildUpdatedSchema``; not optional at the top)."""
    fields: list[tuple[str, Schema]] = []
    _collect(schema, "", fields, schema.optional, schema.default, delimiter)
    base = struct_schema(fields)
    return copy_basics(schema, fields=base.fields, _by_name=base._by_name)


def _collect(schema: Schema, prefix: str, out: list[tuple[str, Schema]], optional: bool, parent_default: Any,
             delimiter: str) -> None:
    for field in schema.fields:
        name = _name(prefix, field.name, delimiter)
        field_optional = optional or field.schema.optional
        default = field.schema.default
        if default is None and isinstance(parent_default, Struct):
            default = parent_default.get(field.name)
        if field.schema.type is Type.STRUCT:
            _collect(field.schema, name, out, field_optional, default, delimiter)
        else:
            out.append((name, copy_basics(field.schema, optional=field_optional, default=default)))


def flatten_struct(value: Struct | None, schema: Schema, delimiter: str, replace_null: bool = True) -> Struct:
    """``value`` flattened into ``schema`` (from :func:`flatten_schema`)."""
    out = Struct(schema)
    _fill(value, "", out.values, delimiter, replace_null)
    return out


def _fill(value: Struct | None, prefix: str, out: dict[str, Any], delimiter: str, replace_null: bool) -> None:
    if value is None:
        return
    for field in value.schema.fields:
        name = _name(prefix, field.name, delimiter)
        if field.schema.type is Type.STRUCT:
            _fill(value.values.get(field.name), name, out, delimiter, replace_null)
        else:
            out[name] = field_value(value, field.name, replace_null)


def _flatten_map(value: Mapping[str, Any], prefix: str, out: dict[str, Any], delimiter: str) -> None:
    for name, item in value.items():
        full = _name(prefix, name, delimiter)
        if isinstance(item, dict):
            _flatten_map(item, full, out, delimiter)
        elif item is None or isinstance(item, _PRIMITIVES):
            out[full] = item
        else:
            raise DataError(f"Flatten transformation does not support {type(item).__name__} for record without "
                            f"schemas (for field {full}).")


class _Flatten(KeyOrValue):
    """Flatten nested structures with ``delimiter`` (default ``.``)."""

    PURPOSE: ClassVar[str] = "flattening"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("delimiter", default=".", doc="Delimiter to insert between field names from the input record when "
                                          "generating field names for the output record"),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.delimiter: str = conf["delimiter"]
        self.replace_null: bool = conf["replace.null.with.default"]
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            if value is None:
                return record
            flat: dict[str, Any] = {}
            _flatten_map(require_map(value, self.PURPOSE), "", flat, self.delimiter)
            return self.updated(record, None, flat)
        struct = None if value is None else require_struct(value, self.PURPOSE)
        updated_schema = self._cache.get(schema, lambda s: flatten_schema(s, self.delimiter))
        if struct is None:
            return self.updated(record, updated_schema, None)
        return self.updated(record, updated_schema, flatten_struct(struct, updated_schema, self.delimiter,
                                                                   self.replace_null))


class FlattenKey(_Flatten):
    """``Flatten$Key``."""

    is_key = True


class FlattenValue(_Flatten):
    """``Flatten$Value``."""
