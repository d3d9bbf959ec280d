"""``JsonConverter``: Connect data <-> JSON bytes, byte-identical to Java's
``org.apache.kafka.connect.json.JsonConverter`` (Kafka 4.x, Jackson defaults).

This module holds the converter, its settings and its schema caches; the work is done by

* :mod:`converters.json_writer`: schemas compiled into encoders, the schema JSON, and Jackson-compatible
  serialization through the compiled ``converters._jackson`` writer (explained there);
* :mod:`converters.json_reader`: JSON bytes -> Connect schema and value;
* :mod:`converters.json_logical`: the Date, Time, Timestamp and Decimal encodings.

The helpers other modules use (``date_days``, ``time_millis``, ``timestamp_millis``, ``java_big_decimal``,
``dumps_jackson``, ``dumps_reference``) are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, TypeVar

import orjson

from connect.api.config import ConfigDef, ConfigKey, ConfigType, parse_bool
from connect.api.data import LazyStruct, Schema, SchemaAndValue, Struct
from connect.api.errors import ConfigError, DataError
from connect.api.records import Header
from connect.config.validators import one_of_ignoring_case
from converters.config import converter_config_def
from converters.json_logical import date_days, java_big_decimal, time_millis, timestamp_millis
from converters.json_reader import loads, schema_from_json, to_connect
from converters.json_writer import (
    Encoder,
    Options,
    RawText,
    dumps_jackson,
    dumps_reference,
    encode_schemaless,
    native_encoder,
    native_projection,
    nullable,
    schema_json,
)

__all__ = [
    "JsonConverter",
    "date_days",
    "dumps_jackson",
    "dumps_reference",
    "java_big_decimal",
    "time_millis",
    "timestamp_millis",
]

K = TypeVar("K")
V = TypeVar("V")

_NOT_YET: Final = object()

_ENVELOPE_ERROR: Final = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional'
    " fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter"
    " configuration."
)


class _Compiled:
    """A schema's cached artefacts: its serialized JSON (and the envelope's start, ``{"schema":...,"payload":``)
    and its payload encoders, each compiled on its first use (a value written ahead, as a LazyStruct's, needs
    neither: compiling them cost a restarted task ~6 ms before its first record)."""

    __slots__ = ("_encode", "_native", "_opts", "envelope", "schema", "schema_bytes")

    def __init__(self, schema: Schema, opts: Options | None = None) -> None:
        self.schema = schema  # keeps the schema alive, so its id() stays unique while cached
        self._opts = opts
        self._encode: Encoder | None = None
        self._native: Any = _NOT_YET
        if opts is not None:
            self.schema_bytes = dumps_jackson(schema_json(schema, opts))
            self.envelope = b'{"schema":' + self.schema_bytes + b',"payload":'

    @property
    def encode(self) -> Encoder:
        """The Python payload encoder."""
        if self._encode is None:
            assert self._opts is not None
            self._encode = nullable(self.schema, self._opts)
        return self._encode

    @property
    def native(self) -> Any:
        """The compiled payload encoder, None where the Python one writes."""
        if self._native is _NOT_YET:
            assert self._opts is not None
            self._native = native_encoder(self.schema, self._opts)
        return self._native

    def rebound(self, schema: Schema) -> _Compiled:
        """The same artefacts for an equal schema object (the compiled encoder checks struct schemas by identity:
        this one writes with the Python encoder)."""
        twin = _Compiled(schema)
        twin.schema_bytes, twin.envelope, twin._opts, twin._encode = \
            self.schema_bytes, self.envelope, self._opts, self._encode
        twin._native = None
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

    sends_written_payloads: ClassVar[bool] = True
    """A :class:`~connect.api.data.LazyStruct`'s written payload is sent as it is (``from_connect_data``)."""

    @classmethod
    def config_def(cls) -> ConfigDef:
        """Java's ``JsonConverterConfig``: ``converter.type``, then the settings above and ``schema.content``."""
        return _CONFIG_DEF

    def __init__(self) -> None:
        self.schemas_enabled = True
        self.replace_null = True
        self.cache_size = 1000
        self._opts = Options(numeric_decimals=False, replace_null=True, raw=bytes)
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
        self._opts = Options(decimal_format == "NUMERIC", self.replace_null, bytes)
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
            payload = self._dumps_payload(lambda v: encode_schemaless(v, self._opts), value)
            return b'{"schema":null,"payload":' + payload + b"}" if self.schemas_enabled else payload
        compiled = self._by_id.get(id(schema))
        if compiled is None or compiled.schema is not schema:
            compiled = self._compiled(schema)
        if type(value) is LazyStruct and value.json is not None and value.schema is schema and \
                (self.replace_null or not value.defaults_written):
            payload = value.json  # written by the transform that made it (the same bytes as encoding it)
        elif compiled.native is not None:
            try:
                if self.schemas_enabled:  # the envelope written in the same buffer
                    written: bytes = compiled.native.encode(value, compiled.envelope)
                    return written
                payload = compiled.native.encode(value)
            except (ValueError, TypeError, OverflowError):  # what only the reference writes (lone surrogates...)
                payload = self._dumps_slowly(value, schema)
        else:
            tree = compiled.encode(value)
            try:
                payload = dumps_jackson(tree)
            except (ValueError, TypeError, OverflowError):
                payload = self._dumps_slowly(value, schema)
        if self.schemas_enabled:
            return compiled.envelope + payload + b"}"
        return payload

    def written_envelope(self, schema: Schema) -> tuple[bytes, bytes] | None:
        """What this converter writes around a payload written ahead for ``schema`` (a
        :class:`~connect.api.records.PreparedRecords` row's): its envelope naming the schema and the closing brace,
        or nothing without schemas. None where such a payload is not sent as it is: with
        ``replace.null.with.default`` off (a payload written ahead may hold a null field's default)."""
        if not self.replace_null:
            return None
        if not self.schemas_enabled:
            return b"", b""
        return self._compiled(schema).envelope, b"}"

    def projection(self, schema: Schema, holder: Schema) -> Callable[[Struct], bytes | None] | None:
        """A writer of the struct ``schema`` whose field values are read from a Struct of ``holder`` (which has
        fields of the same names): the bytes :meth:`from_connect_data` gives for ``Struct(schema)`` holding them,
        or None for a value only the Python path writes; None when the compiled writer cannot write ``schema``."""
        native = native_projection(schema, holder, self._opts)
        if native is None:
            return None
        head = self._compiled(schema).envelope if self.schemas_enabled else None

        def write(value: Struct) -> bytes | None:
            try:
                written: bytes = native.encode(value, head)
            except (ValueError, TypeError, OverflowError):  # what only the reference writes: the caller's path
                return None
            return written

        return write

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
            return dumps_jackson(tree)
        except (ValueError, TypeError, OverflowError):
            return self._dumps_slowly(value, schema)

    def _dumps_slowly(self, value: Any, schema: Schema | None) -> bytes:
        """The reference writer, for what the compiled writer refuses (lone surrogates, integers beyond 64 bits)."""
        opts = Options(self._opts.numeric_decimals, self._opts.replace_null, RawText)
        return dumps_reference(nullable(schema, opts)(value))

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        """Parse bytes written by a JsonConverter; ints become Python ints (Java's int64) when schemaless."""
        if value is None:
            return SchemaAndValue(None, None)
        node = loads(value)
        if not self.schemas_enabled:
            return SchemaAndValue(None, to_connect(None, node, self.replace_null))
        if not isinstance(node, dict) or node.keys() != {"schema", "payload"}:
            raise DataError(_ENVELOPE_ERROR)
        schema = self._schema_to_connect(node["schema"])
        return SchemaAndValue(schema, to_connect(schema, node["payload"], self.replace_null))

    def _schema_to_connect(self, node: Any) -> Schema | None:
        """Parsed schemas are cached by their JSON, so equal schemas come back as the same object."""
        key = orjson.dumps(node, default=str)
        if key in self._schemas_to_connect:
            return self._schemas_to_connect[key]
        return _bounded_put(self._schemas_to_connect, key, schema_from_json(node, self.replace_null), self.cache_size)

    def from_connect_header(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        """As a header converter (Java's class is both): the same bytes as :meth:`from_connect_data`."""
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, key: str, value: bytes | None) -> SchemaAndValue:
        """As a header converter: :meth:`to_connect_data`."""
        return self.to_connect_data(topic, value)

    def as_json_schema(self, schema: Schema) -> bytes:
        """The serialized JSON of ``schema``, as it appears in the envelope."""
        return self._compiled(schema).schema_bytes
