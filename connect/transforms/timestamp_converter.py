"""``TimestampConverter``: convert a timestamp field (or the whole key/value) between Unix epoch numbers, strings in
a SimpleDateFormat pattern (UTC) and Connect's Date, Time and Timestamp logical types."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, ClassVar

from connect.api.config import ConfigDef
from connect.api.data import (
    DATE_NAME,
    INT64,
    OPTIONAL_INT64,
    OPTIONAL_STRING,
    STRING,
    TIME_NAME,
    TIMESTAMP_NAME,
    Field,
    Schema,
    Struct,
    Type,
    date_schema,
    time_schema,
    timestamp_schema,
)
from connect.api.errors import ConfigError, DataError
from connect.api.records import SourceRecord
from connect.transforms.util import (
    REPLACE_NULL_WITH_DEFAULT,
    KeyOrValue,
    SchemaCache,
    check_date_format,
    copy_basics,
    field_value,
    format_date,
    key,
    one_of,
    parse_date,
    require_map,
    require_struct,
    settings,
)

__all__ = ["TimestampConverterKey", "TimestampConverterValue"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_PRECISION_MS = {"nanoseconds": 1e-6, "microseconds": 1e-3, "milliseconds": 1, "seconds": 1000}


def _target_schema(kind: str, optional: bool) -> Schema:
    return {
        "string": OPTIONAL_STRING if optional else STRING,
        "unix": OPTIONAL_INT64 if optional else INT64,
        "Date": date_schema(optional=optional),
        "Time": time_schema(optional=optional),
        "Timestamp": timestamp_schema(optional=optional),
    }[kind]


def _kind_of_schema(schema: Schema) -> str:
    names = {TIMESTAMP_NAME: "Timestamp", DATE_NAME: "Date", TIME_NAME: "Time"}
    if schema.name in names:
        return names[schema.name]
    if schema.type is Type.STRING:
        return "string"
    if schema.type is Type.INT64:
        return "unix"
    raise ConfigError("schema", schema.type.name, f"Schema {schema} does not correspond to a known timestamp type "
                                                  "format")


def _kind_of_value(value: Any) -> str:
    if isinstance(value, datetime):
        return "Timestamp"
    if isinstance(value, int) and not isinstance(value, bool):
        return "unix"
    if isinstance(value, str):
        return "string"
    raise DataError(f"TimestampConverter does not support {type(value).__name__} objects as timestamps")


class _TimestampConverter(KeyOrValue):
    """Convert timestamps between representations."""

    PURPOSE: ClassVar[str] = "converting timestamp formats"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        key("field", default="", importance="HIGH",
            doc="The field containing the timestamp, or empty if the entire value is a timestamp"),
        key("target.type", required=True, importance="HIGH",
            doc="The desired timestamp representation: string, unix, Date, Time, or Timestamp",
            validators=(one_of("string", "unix", "Date", "Time", "Timestamp"),)),
        key("format", default="", importance="MEDIUM",
            doc="A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string "
                "or used to parse the input if the input is a string.",
            validators=(lambda n, v: check_date_format(n, v) if v and v.strip() else None,)),
        key("unix.precision", default="milliseconds", importance="LOW",
            doc="The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds.",
            validators=(one_of("nanoseconds", "microseconds", "milliseconds", "seconds"),)),
        REPLACE_NULL_WITH_DEFAULT,
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        conf = settings(self.CONFIG, configs)
        self.field: str = conf["field"]
        self.target: str = conf["target.type"].strip()
        self.format: str = conf["format"]
        if self.target == "string" and not self.format.strip():
            raise ConfigError("format", self.format,
                              "TimestampConverter requires format option to be specified when using string timestamps")
        self.precision: float = _PRECISION_MS[conf["unix.precision"]]
        self.replace_null: bool = conf["replace.null.with.default"]
        self._cache = SchemaCache()

    # --- conversions -------------------------------------------------------------------------------------------
    def _to_instant(self, value: Any, kind: str) -> datetime:
        if kind == "string":
            if not self.format.strip():
                raise DataError("TimestampConverter requires format option to be specified when using string "
                                "timestamps")
            try:
                return parse_date(self.format, value)
            except ValueError as exc:
                raise DataError(f"Could not parse timestamp: value ({value}) does not match pattern ({self.format})"
                                ) from exc
        if kind == "unix":
            return _EPOCH + timedelta(milliseconds=int(value * self.precision))
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=UTC)
        if isinstance(value, date):
            return datetime(value.year, value.month, value.day, tzinfo=UTC)
        if isinstance(value, time):
            return datetime.combine(date(1970, 1, 1), value.replace(tzinfo=None), UTC)
        if isinstance(value, int):  # logical values given encoded
            return _EPOCH + timedelta(days=value) if kind == "Date" else _EPOCH + timedelta(milliseconds=value)
        raise DataError(f"Expected {kind} to be a datetime, got {type(value).__name__}")

    def _from_instant(self, instant: datetime) -> Any:
        if self.target == "string":
            return format_date(self.format, instant)
        if self.target == "unix":
            millis = (instant - _EPOCH) // timedelta(milliseconds=1)
            return int(millis // self.precision) if self.precision >= 1 else int(millis / self.precision)
        if self.target == "Date":
            return instant.date()
        if self.target == "Time":
            return instant.time().replace(tzinfo=None)
        return instant

    def _convert(self, value: Any, kind: str | None) -> Any:
        if value is None:
            return None
        return self._from_instant(self._to_instant(value, kind or _kind_of_value(value)))

    # --- records -----------------------------------------------------------------------------------------------
    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema, value = self.operating_schema(record), self.operating_value(record)
        if schema is None:
            if not self.field:
                return self.updated(record, None, self._convert(value, None))
            if value is None:
                return record
            updated_map = dict(require_map(value, self.PURPOSE))
            updated_map[self.field] = self._convert(updated_map.get(self.field), None)
            return self.updated(record, None, updated_map)
        if not self.field:
            return self.updated(record, _target_schema(self.target, schema.optional),
                                self._convert(value, _kind_of_schema(schema)))
        struct = None if value is None else require_struct(value, self.PURPOSE)
        updated_schema, kind = self._cache.get(schema, self._updated_schema)
        if struct is None:
            return self.updated(record, updated_schema, None)
        updated = Struct(updated_schema)
        for f in schema.fields:
            current = field_value(struct, f.name, self.replace_null)
            updated.values[f.name] = self._convert(current, kind) if f.name == self.field else current
        return self.updated(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> tuple[Schema, str]:
        if schema.type is not Type.STRUCT:
            raise DataError(f"Only Struct objects supported for [{self.PURPOSE}], found: {schema.type.name}")
        fields: list[Field] = []
        kind = ""
        for f in schema.fields:
            if f.name == self.field:
                kind = _kind_of_schema(f.schema)
                fields.append(Field(f.name, f.index, _target_schema(self.target, f.schema.optional)))
            else:
                fields.append(f)
        return copy_basics(schema, fields=tuple(fields), _by_name={f.name: f for f in fields}), kind



class TimestampConverterKey(_TimestampConverter):
    """``TimestampConverter$Key``."""

    is_key = True


class TimestampConverterValue(_TimestampConverter):
    """``TimestampConverter$Value``."""
