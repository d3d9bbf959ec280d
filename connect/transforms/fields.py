"""Field-level SMTs: ``InsertField``, ``ReplaceField``, ``MaskField``, ``ValueToKey``, ``ExtractField`` and
``HoistField`` (``org.apache.kafka.connect.transforms.*``; ``...Key``/``...Value`` are Java's ``$Key``/``$Value``).

Records without a schema carry maps (``dict``), records with one carry :class:`~connect.api.data.Struct`; a null
key or value (a tombstone) passes through unchanged where Connect lets it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any, ClassVar

from connect.api.config import ConfigDef, ConfigType
from connect.api.data import (
    INT32,
    INT64,
    OPTIONAL_INT32,
    OPTIONAL_INT64,
    OPTIONAL_STRING,
    STRING,
    Schema,
    Struct,
    Type,
    struct_schema,
    timestamp_schema,
)
from connect.api.errors import ConfigError, DataError
from connect.api.records import SourceRecord
from connect.api.transforms import new_record
from connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    copy_basics,
    field_value,
    invalid,
    key,
    non_empty_list,
    non_empty_string,
    one_of,
    require_map,
    require_struct,
    settings,
)

__all__ = [
    "ExtractFieldKey", "ExtractFieldValue", "HoistFieldKey", "HoistFieldValue", "InsertFieldKey",
    "InsertFieldValue", "MaskFieldKey", "MaskFieldValue", "ReplaceFieldKey", "ReplaceFieldValue",
    "SetSchemaMetadataKey", "SetSchemaMetadataValue", "ValueToKey",
]


def _struct_like(schema: Schema, fields: list[tuple[str, Schema]]) -> Schema:
    """A struct schema with ``schema``'s name, version, doc and parameters and the given fields."""
    base = struct_schema(fields, name=schema.name, version=schema.version, doc=schema.doc)
    return copy_basics(schema, fields=base.fields, _by_name=base._by_name)


# --- InsertField -------------------------------------------------------------------------------------------------
class _InsertField(KeyOrValue):
    """Insert the topic, partition, timestamp and/or a static string into the key or value."""

    PURPOSE: ClassVar[str] = "field insertion"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("topic.field", doc="Field name for Kafka topic. Suffix with ! to make this a required field, or ? to "
                               "keep it optional (the default)."),
        key("partition.field", doc="Field name for Kafka partition."),
        key("offset.field", doc="Field name for Kafka offset - only applicable to sink connectors."),
        key("timestamp.field", doc="Field name for record timestamp."),
        key("static.field", doc="Field name for static data field."),
        key("static.value", doc="Static field value, if field name configured."),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.fields = {name: _insertion(conf[name]) for name in ("topic.field", "partition.field", "offset.field",
                                                                 "timestamp.field", "static.field")}
        self.static_value = conf["static.value"]
        self.replace_null = conf["replace.null.with.default"]
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.fields["offset.field"] is not None:
            raise DataError(f"Only SinkRecord supported for [{self.PURPOSE}], found: "
                            "org.apache.kafka.connect.source.SourceRecord")
        schema = self.operating_schema(record)
        if schema is None:
            updated_map = dict(require_map(value, self.PURPOSE))
            for name, field_val in self._insertions(record, schemaless=True):
                updated_map[name] = field_val
            return self.updated(record, None, updated_map)
        struct = require_struct(value, self.PURPOSE)
        updated_schema = self._cache.get(struct.schema, self._updated_schema)
        updated = Struct(updated_schema)
        for field in struct.schema.fields:
            updated.values[field.name] = field_value(struct, field.name, self.replace_null)
        for name, field_val in self._insertions(record, schemaless=False):
            updated.values[name] = field_val
        return self.updated(record, updated_schema, updated)

    def _insertions(self, record: SourceRecord, *, schemaless: bool) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        if (topic := self.fields["topic.field"]) is not None:
            out.append((topic[0], record.topic))
        if (partition := self.fields["partition.field"]) is not None and record.kafka_partition is not None:
            out.append((partition[0], record.kafka_partition))
        if (stamp := self.fields["timestamp.field"]) is not None and record.timestamp is not None:
            when = record.timestamp if schemaless else datetime.fromtimestamp(record.timestamp / 1000, UTC)
            out.append((stamp[0], when))
        if (static := self.fields["static.field"]) is not None and self.static_value is not None:
            out.append((static[0], self.static_value))
        return out

    def _updated_schema(self, schema: Schema) -> Schema:
        fields = [(f.name, f.schema) for f in schema.fields]
        for name, required_schema, optional_schema in (
            ("topic.field", STRING, OPTIONAL_STRING),
            ("partition.field", INT32, OPTIONAL_INT32),
            ("offset.field", INT64, OPTIONAL_INT64),
            ("timestamp.field", timestamp_schema(), timestamp_schema(optional=True)),
            ("static.field", STRING, OPTIONAL_STRING),
        ):
            spec = self.fields[name]
            if spec is not None:
                fields.append((spec[0], optional_schema if spec[1] else required_schema))
        return _struct_like(schema, fields)


def _insertion(spec: str | None) -> tuple[str, bool] | None:
    """``InsertField.InsertionSpec.parse``: ``(name, optional)``."""
    if spec is None or not spec.strip():
        return None
    spec = spec.strip()
    if spec.endswith("?"):
        return spec[:-1], True
    if spec.endswith("!"):
        return spec[:-1], False
    return spec, True


class InsertFieldKey(_InsertField):
    """``InsertField$Key``."""

    is_key = True


class InsertFieldValue(_InsertField):
    """``InsertField$Value``."""


# --- ReplaceField ------------------------------------------------------------------------------------------------
def _check_renames(name: str, raw: str | None) -> str | None:
    if raw is None:
        return None
    items = [item.strip() for item in raw.split(",") if item.strip()]
    for item in items:
        if len(item.split(":")) != 2:
            return invalid(name, items, f"Invalid rename mapping: {item}")
    return None


class _ReplaceField(KeyOrValue):
    """Keep (``include``), drop (``exclude``) and rename (``renames=old:new,...``) fields."""

    PURPOSE: ClassVar[str] = "field replacement"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("exclude", ConfigType.LIST, "", doc="Fields to exclude. This takes precedence over the fields to "
                                                  "include."),
        key("include", ConfigType.LIST, "", doc="Fields to include. If specified, only these fields will be used."),
        key("renames", ConfigType.LIST, "", doc="Field rename mappings.", validators=(_check_renames,)),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.exclude, self.include = set(conf["exclude"]), set(conf["include"])
        self.renames = dict(item.split(":") for item in conf["renames"])
        self.reverse_renames = {v: k for k, v in self.renames.items()}
        self.replace_null = conf["replace.null.with.default"]
        self._cache = SchemaCache()

    def _keep(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if value is None:
            return record
        if schema is None:
            return self.updated(record, None, {self.renames.get(k, k): v for k, v in
                                               require_map(value, self.PURPOSE).items() if self._keep(k)})
        struct = require_struct(value, self.PURPOSE)
        updated_schema = self._cache.get(struct.schema, self._updated_schema)
        updated = Struct(updated_schema)
        for field in updated_schema.fields:
            original = self.reverse_renames.get(field.name, field.name)
            updated.values[field.name] = field_value(struct, original, self.replace_null)
        return self.updated(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        return _struct_like(schema, [(self.renames.get(f.name, f.name), f.schema) for f in schema.fields
                                     if self._keep(f.name)])


class ReplaceFieldKey(_ReplaceField):
    """``ReplaceField$Key``."""

    is_key = True


class ReplaceFieldValue(_ReplaceField):
    """``ReplaceField$Value``."""


# --- MaskField ---------------------------------------------------------------------------------------------------
_MASKS: dict[type, Any] = {bool: False, int: 0, float: 0.0, Decimal: Decimal(0), str: "", bytes: b""}


class _MaskField(KeyOrValue):
    """Replace the value of ``fields`` by the null of their type (or ``replacement``)."""

    PURPOSE: ClassVar[str] = "mask fields"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("fields", ConfigType.LIST, required=True, importance="HIGH", doc="Names of fields to mask.",
            validators=(non_empty_list,)),
        key("replacement", doc="Custom value replacement, that will be applied to all 'fields' values (numeric or "
                               "non-empty string values only).", validators=(non_empty_string,)),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.fields = set(conf["fields"])
        self.replacement = conf["replacement"]
        self.replace_null = conf["replace.null.with.default"]

    def _masked(self, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, list):
            return []
        if isinstance(value, dict):
            return {}
        if isinstance(value, datetime | date | time):
            return type(value).fromtimestamp(0, UTC) if isinstance(value, datetime) else \
                (date(1970, 1, 1) if isinstance(value, date) else time(0))
        kind = type(value)
        if kind not in _MASKS:
            raise DataError(f"Cannot mask value of type: {kind.__name__}")
        if self.replacement is None:
            return _MASKS[kind]
        try:
            return kind(self.replacement) if kind is not bytes else self.replacement.encode()
        except (ValueError, ArithmeticError) as exc:
            raise DataError(f"Unable to convert {self.replacement} ({type(self.replacement).__name__}) to number"
                            ) from exc

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        if self.operating_schema(record) is None:
            updated_map = dict(require_map(value, self.PURPOSE))
            for name in self.fields:
                updated_map[name] = self._masked(updated_map.get(name))
            return self.updated(record, None, updated_map)
        struct = require_struct(value, self.PURPOSE)
        updated = Struct(struct.schema)
        for field in struct.schema.fields:
            current = field_value(struct, field.name, self.replace_null)
            updated.values[field.name] = self._masked(current) if field.name in self.fields else current
        return self.updated(record, struct.schema, updated)


class MaskFieldKey(_MaskField):
    """``MaskField$Key``."""

    is_key = True


class MaskFieldValue(_MaskField):
    """``MaskField$Value``."""


# --- ValueToKey --------------------------------------------------------------------------------------------------
class ValueToKey(KeyOrValue):
    """Replace the key by a struct (or map) of the value's ``fields``."""

    PURPOSE: ClassVar[str] = "copying fields from value to key"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("fields", ConfigType.LIST, required=True, importance="HIGH",
            doc="Field names on the record value to extract as the record key.", validators=(non_empty_list,)),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.fields: list[str] = conf["fields"]
        self.replace_null = conf["replace.null.with.default"]
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if record.value_schema is None:
            value = require_map(record.value, self.PURPOSE)
            return new_record(record, key_schema=None, key={name: value.get(name) for name in self.fields})
        struct = require_struct(record.value, self.PURPOSE)
        key_schema = self._cache.get(struct.schema, self._key_schema)
        key_struct = Struct(key_schema)
        for name in self.fields:
            key_struct.values[name] = field_value(struct, name, self.replace_null)
        return new_record(record, key_schema=key_schema, key=key_struct)

    def _key_schema(self, schema: Schema) -> Schema:
        fields = []
        for name in self.fields:
            field = schema.field(name)
            if field is None:
                raise DataError(f"Field does not exist: {name}")
            fields.append((name, field.schema))
        return struct_schema(fields)


# --- ExtractField ------------------------------------------------------------------------------------------------
class _ExtractField(KeyOrValue):
    """Replace the key or value by one of its fields (``field``; dotted paths with ``field.syntax.version=V2``)."""

    PURPOSE: ClassVar[str] = "field extraction"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("field", required=True, importance="MEDIUM",
            doc="Field name to extract."),
        key("field.syntax.version", default="V1", importance="HIGH",
            doc="Defines the version of the syntax to access fields: V1 (field names with dots are plain names) or"
                " V2 (dots separate nested fields; backticks quote a name with dots).",
            validators=(one_of("V1", "V2", ignore_case=True),)),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.field_name: str = conf["field"]
        self.path = _field_path(self.field_name) if conf["field.syntax.version"].upper() == "V2" else [self.field_name]
        self.replace_null = conf["replace.null.with.default"]

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if schema is None:
            if value is None:
                return self.updated(record, None, None)
            current: Any = require_map(value, self.PURPOSE)
            for step in self.path:
                current = current.get(step) if isinstance(current, dict) else None
            return self.updated(record, None, current)
        if value is not None:
            require_struct(value, self.PURPOSE)
        field_schema: Schema | None = schema
        for step in self.path:
            field = field_schema.field(step) if field_schema is not None and field_schema.type is Type.STRUCT \
                else None
            if field is None:
                raise DataError(f"Unknown field: {self.field_name}")
            field_schema = field.schema
            if value is not None:
                value = field_value(value, step, self.replace_null) if isinstance(value, Struct) else None
        return self.updated(record, field_schema, value)


def _field_path(text: str) -> list[str]:
    """``SingleFieldPath`` V2: dots separate steps; a step wrapped in backticks may contain dots."""
    if "`" not in text:
        return text.split(".")
    steps: list[str] = []
    rest = text
    while True:
        if rest.startswith("`"):
            end = rest.find("`.", 1)
            if end < 0 and rest.endswith("`") and len(rest) > 1:
                steps.append(rest[1:-1])
                return steps
            if end > 0:
                steps.append(rest[1:end])
                rest = rest[end + 2:]
                continue
        head, dot, rest = rest.partition(".")
        steps.append(head)
        if not dot:
            return steps


class ExtractFieldKey(_ExtractField):
    """``ExtractField$Key``."""

    is_key = True


class ExtractFieldValue(_ExtractField):
    """``ExtractField$Value``."""


# --- HoistField --------------------------------------------------------------------------------------------------
class _HoistField(KeyOrValue):
    """Wrap the key or value in a struct (or map) with one ``field``."""

    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("field", required=True, doc="Field name for the single field that will be created in the resulting "
                                        "Struct or Map."),
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.field_name: str = settings(self.CONFIG, configs)["field"]
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            return self.updated(record, None, {self.field_name: value})
        hoisted = self._cache.get(schema, lambda s: struct_schema([(self.field_name, s)]))
        return self.updated(record, hoisted, Struct(hoisted, {self.field_name: value}))


class HoistFieldKey(_HoistField):
    """``HoistField$Key``."""

    is_key = True


class HoistFieldValue(_HoistField):
    """``HoistField$Value``."""


# --- SetSchemaMetadata -------------------------------------------------------------------------------------------
class _SetSchemaMetadata(KeyOrValue):
    """Set the schema name and/or version of the key or value."""

    PURPOSE: ClassVar[str] = "updating schema metadata"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("schema.name", importance="HIGH", doc="Schema name to set."),
        key("schema.version", ConfigType.INT, importance="HIGH", doc="Schema version to set."),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.name: str | None = conf["schema.name"]
        self.schema_version: int | None = conf["schema.version"]
        if self.name is None and self.schema_version is None:
            raise ConfigError("schema.name", None, "Neither schema name nor version configured")
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            raise DataError(f"Schema required for [{self.PURPOSE}]")
        updated_schema = self._cache.get(schema, lambda s: dataclasses.replace(
            s, name=self.name if self.name is not None else s.name,
            version=self.schema_version if self.schema_version is not None else s.version))
        if isinstance(value, Struct):
            updated = Struct(updated_schema)
            updated.values.update(value.values)
            value = updated
        return self.updated(record, updated_schema, value)


class SetSchemaMetadataKey(_SetSchemaMetadata):
    """``SetSchemaMetadata$Key``."""

    is_key = True


class SetSchemaMetadataValue(_SetSchemaMetadata):
    """``SetSchemaMetadata$Value``."""
