"""Header SMTs: ``HeaderFrom`` (copy or move fields into headers), ``InsertHeader`` and ``DropHeaders``; and
``Filter``, which drops every record it is applied to (use it with a predicate)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from connect.api.config import ConfigDef, ConfigType
from connect.api.data import BOOLEAN, STRING, Schema, SchemaAndValue, Struct, Type
from connect.api.errors import ConfigError, DataError
from connect.api.records import Header, SourceRecord
from connect.api.transforms import Transformation, new_record
from connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    copy_basics,
    field_value,
    key,
    non_empty_list,
    non_empty_string,
    one_of,
    require_map,
    require_struct,
    settings,
)

__all__ = ["DropHeaders", "Filter", "HeaderFromKey", "HeaderFromValue", "InsertHeader", "parse_literal"]


class _HeaderFrom(KeyOrValue):
    """Copy or move the fields ``fields`` into the headers ``headers`` (same length, in order)."""

    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("fields", ConfigType.LIST, required=True, importance="HIGH",
            doc="Field names in the record whose values are to be copied or moved to headers.",
            validators=(non_empty_list,)),
        key("headers", ConfigType.LIST, required=True, importance="HIGH",
            doc="Header names, in the same order as the field names listed in the fields configuration property.",
            validators=(non_empty_list,)),
        key("operation", required=True, importance="HIGH",
            doc="Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), "
                "or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value).",
            validators=(one_of("move", "copy"),)),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.fields: list[str] = conf["fields"]
        self.headers: list[str] = conf["headers"]
        if len(self.fields) != len(self.headers):
            raise ConfigError("fields", configs.get("fields"),
                              "'fields' config must have the same number of elements as 'headers' config.")
        self.move = conf["operation"] == "move"
        self.purpose = f"header {conf['operation']}"
        self.replace_null: bool = conf["replace.null.with.default"]
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema, value = self.operating_schema(record), self.operating_value(record)
        added: list[Header] = []
        if schema is None:
            values = require_map(value, self.purpose)
            for field, header in zip(self.fields, self.headers, strict=True):
                added.append(Header(header, None, values.get(field)))
            updated_map = {k: v for k, v in values.items() if k not in self.fields} if self.move else values
            return new_record(self.updated(record, None, updated_map), headers=record.headers + tuple(added))
        struct = require_struct(value, self.purpose)
        for field, header in zip(self.fields, self.headers, strict=True):
            schema_field = schema.field(field)
            if schema_field is None:
                raise DataError(f"{field} is not a valid field name")
            added.append(Header(header, schema_field.schema, field_value(struct, field, self.replace_null)))
        updated_schema, updated = schema, struct
        if self.move:
            updated_schema = self._cache.get(schema, self._moved_schema)
            updated = Struct(updated_schema)
            for f in updated_schema.fields:
                updated.values[f.name] = struct.values.get(f.name)
        return new_record(self.updated(record, updated_schema, updated), headers=record.headers + tuple(added))

    def _moved_schema(self, schema: Schema) -> Schema:
        kept = [f for f in schema.fields if f.name not in self.fields]
        fields = tuple(type(f)(f.name, i, f.schema) for i, f in enumerate(kept))
        return copy_basics(schema, fields=fields, _by_name={f.name: f for f in fields})


class HeaderFromKey(_HeaderFrom):
    """``HeaderFrom$Key``."""

    is_key = True


class HeaderFromValue(_HeaderFrom):
    """``HeaderFrom$Value``."""


_INT_TYPES = ((Type.INT8, 7), (Type.INT16, 15), (Type.INT32, 31), (Type.INT64, 63))


def parse_literal(text: str) -> SchemaAndValue:
    """A subset of Java's ``Values.parseString``: booleans, integers (narrowest of int8..int64), doubles,
    otherwise the string itself."""
    stripped = text.strip()
    if stripped.lower() in ("true", "false"):
        return SchemaAndValue(BOOLEAN, stripped.lower() == "true")
    if re.fullmatch(r"[+-]?[0-9]+", stripped):
        number = int(stripped)
        for kind, bits in _INT_TYPES:
            if -(1 << bits) <= number < (1 << bits):
                return SchemaAndValue(Schema(kind), number)
    if re.fullmatch(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", stripped):
        return SchemaAndValue(Schema(Type.FLOAT64), float(stripped))
    return SchemaAndValue(STRING, text)


class InsertHeader(Transformation):
    """Add the header ``header`` with the literal ``value.literal`` (typed as Connect's ``Values`` parses it)."""

    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("header", required=True, importance="HIGH", doc="The name of the header.",
            validators=(non_empty_string,)),
        key("value.literal", required=True, importance="HIGH",
            doc="The literal value that is to be set as the header value on all records.",
            validators=(non_empty_string,)),
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.header: str = conf["header"]
        self.literal = parse_literal(conf["value.literal"])

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        header = Header(self.header, self.literal.schema, self.literal.value)
        return new_record(record, headers=(*record.headers, header))


class DropHeaders(Transformation):
    """Remove every header whose name is in ``headers``."""

    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("headers", ConfigType.LIST, required=True, importance="HIGH", doc="The name of the headers to be removed.",
            validators=(non_empty_list,)),
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.names = set(settings(self.CONFIG, configs)["headers"])

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        return new_record(record, headers=tuple(h for h in record.headers if h.key not in self.names))


class Filter(Transformation):
    """Drops every record (gate it with a predicate, e.g. ``RecordIsTombstone``)."""

    def config(self) -> ConfigDef:
        return ConfigDef()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        return None
