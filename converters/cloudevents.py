"""``io.debezium.converters.CloudEventsConverter`` for MongoDB change events: CloudEvents 1.0 in structured mode,
JSON envelope and JSON data, byte for byte as Debezium 3.6 writes them.

The envelope (written by a schemaless :class:`~converters.json.JsonConverter`)::

    {"id":"name:<source.name>;ts:<source.ts_ms>;ord:<source.ord>","source":"/debezium/mongodb/<source.name>",
     "specversion":"1.0","type":"io.debezium.connector.mongodb.DataChangeEvent","time":"<source.ts_ms, ISO UTC>",
     "datacontenttype":"application/json",
     "iodebeziumop":..., "iodebezium<source field>":..., "iodebeziumtxid":..., ...,    (extension.attributes.enable)
     "data":...}

Extension attributes: every ``source`` field (non-alphanumerics removed from the name), int64 values as strings,
then the transaction ones (null without a transaction block). ``data`` holds ``before``, ``after`` and
``updateDescription`` (all value fields when ``metadata.source`` is ``header``) as a struct named
``io.debezium.connector.mongodb.Data``, written with ``json.schemas.enable`` (default true: a schema+payload
envelope) and the other ``json.*`` settings.

``metadata.source``: ``value`` (default) reads source, op and transaction from the record value; ``header`` from
the record headers ``source``, ``op`` and ``transaction`` (e.g. put there by ``HeaderFrom``); then
``id:generate|header``, ``type:generate|header`` choose where ``id`` and ``type`` come from (headers ``id`` and
``type``). A global ``header`` makes them ``header`` too unless given.

Records that are not change events are written as null (as Debezium does): tombstones, heartbeats, transaction
and schema-change records (value mode: value schema not ``*.Envelope``; header mode: no ``source``/``op`` header).
Avro (``serializer.type``/``data.serializer.type`` ``avro``) needs a schema registry and is refused at
configuration time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import orjson

from connect.api.config import parse_bool
from connect.api.data import (
    BOOLEAN,
    INT32,
    OPTIONAL_BOOLEAN,
    OPTIONAL_INT32,
    OPTIONAL_STRING,
    STRING,
    Schema,
    SchemaAndValue,
    Struct,
    Type,
    struct_schema,
)
from connect.api.errors import ConfigError, DataError
from connect.api.records import Header
from converters.json import JsonConverter

__all__ = ["CloudEventsConverter", "MetadataSource", "parse_metadata_source"]

DATA_SCHEMA_NAME: Final = "io.debezium.connector.mongodb.Data"
EVENT_TYPE: Final = "io.debezium.connector.mongodb.DataChangeEvent"
_META_FIELDS: Final = frozenset(("source", "op", "transaction", "ts_ms"))
_TRANSACTION_FIELDS: Final = (("id", STRING), ("total_order", Schema(Type.INT64)),
                              ("data_collection_order", Schema(Type.INT64)))
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_EMPTY: Final = struct_schema([])
_NON_ALNUM: Final = re.compile(r"[^a-zA-Z0-9]")


class MetadataSource:
    """Where the converter reads the event metadata: ``global_`` (value/header), ``id``, ``type`` (generate/header)."""

    __slots__ = ("global_", "id", "type")

    def __init__(self, global_: str = "value", id_: str = "generate", type_: str = "generate") -> None:
        self.global_, self.id, self.type = global_, id_, type_


def parse_metadata_source(text: str) -> MetadataSource:
    """Debezium's ``metadata.source`` syntax: ``value|header[,id:generate|header][,type:...]...``."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or parts[0].lower() not in ("value", "header"):
        raise ConfigError("metadata.source", text, "The first element must be 'value' or 'header'")
    global_ = parts[0].lower()
    default = "header" if global_ == "header" else "generate"
    chosen = {"id": default, "type": default}
    for part in parts[1:]:
        name, _, where = part.partition(":")
        name, where = name.strip(), where.strip().lower()
        if name in ("id", "type") and where in ("generate", "header"):
            chosen[name] = where
        elif name in ("traceparent", "dataSchemaName") and where in ("generate", "header"):
            continue
        else:
            raise ConfigError("metadata.source", text, f"Invalid element '{part}'")
    return MetadataSource(global_, chosen["id"], chosen["type"])


def _extension_name(name: str) -> str:
    return "iodebezium" + _NON_ALNUM.sub("", name)


def _extension_schema(schema: Schema, always_optional: bool) -> Schema:
    optional = always_optional or schema.optional
    if schema.type is Type.BOOLEAN:
        return OPTIONAL_BOOLEAN if optional else BOOLEAN
    if schema.type in (Type.INT8, Type.INT16, Type.INT32):
        return OPTIONAL_INT32 if optional else INT32
    if schema.type in (Type.STRING, Type.INT64):
        return OPTIONAL_STRING if optional else STRING
    raise DataError(f"Source field of type {schema.type.name} cannot be converted into CloudEvents extension "
                    "attribute.")


def _iso_millis(millis: int) -> str:
    when = _EPOCH + timedelta(milliseconds=millis)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


class CloudEventsConverter:
    """Debezium's CloudEvents converter (structured mode, JSON)."""

    def __init__(self) -> None:
        self.metadata = MetadataSource()
        self.extensions = True
        self.schemas_enabled = True
        self._envelope = JsonConverter()
        self._envelope.configure({"schemas.enable": "false"}, False)
        self._data = JsonConverter()
        self._data.configure({}, False)
        self._envelope_schemas: dict[tuple[int, int], tuple[Schema, Schema, Schema, list[tuple[str, str, bool]]]] = {}
        self._data_schemas: dict[int, tuple[Schema, Schema]] = {}

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        """Apply the converter's settings and the ``json.*`` ones of its inner JsonConverters."""
        for name in ("serializer.type", "data.serializer.type"):
            kind = str(configs.get(name, "json")).strip().lower()
            if kind == "avro":
                raise ConfigError(name, kind, "Avro CloudEvents need a schema registry, which this worker does not "
                                              "support; use json")
            if kind != "json":
                raise ConfigError(name, kind, "Value must be one of json, avro")
        self.metadata = parse_metadata_source(str(configs.get("metadata.source", "value")))
        self.extensions = parse_bool(configs.get("extension.attributes.enable"), True)
        json_settings = {k[len("json."):]: v for k, v in configs.items() if k.startswith("json.")}
        self.schemas_enabled = parse_bool(json_settings.get("schemas.enable"), True)
        self._data = JsonConverter()
        self._data.configure(json_settings, True)
        self._envelope = JsonConverter()
        self._envelope.configure({**json_settings, "schemas.enable": "false"}, is_key)
        self._envelope_schemas.clear()
        self._data_schemas.clear()

    # --- writing ---------------------------------------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: tuple[Header, ...] = ()
    ) -> bytes | None:
        """The CloudEvent of one change event, or None for records that are not change events."""
        if schema is None or value is None:
            return None
        by_header = {h.key: h for h in headers}
        if self.metadata.global_ == "value":
            if not (schema.name or "").endswith(".Envelope"):
                return None
        elif "source" not in by_header or "op" not in by_header:
            return None
        if schema.type is not Type.STRUCT or not isinstance(value, Struct):
            raise DataError("Mismatching schema")
        source, op, transaction = self._metadata(value, by_header)
        if not isinstance(source, Struct):
            raise DataError("The change event has no source block")
        data_schema, data_value = self._data_of(schema, value)
        envelope_schema, extension_names = self._envelope_schema(source.schema, data_schema)
        envelope = Struct(envelope_schema)
        ce = envelope.values
        ce["id"] = self._header_text(by_header, "id") if self.metadata.id == "header" else \
            f"name:{source.get('name')};ts:{source.get('ts_ms')};ord:{source.get('ord')}"
        ce["source"] = f"/debezium/mongodb/{source.get('name')}"
        ce["specversion"] = "1.0"
        ce["type"] = self._header_text(by_header, "type") if self.metadata.type == "header" else EVENT_TYPE
        ts_ms = source.get("ts_ms")
        ce["time"] = _iso_millis(int(ts_ms)) if ts_ms is not None else None
        ce["datacontenttype"] = "application/json"
        if self.extensions:
            ce["iodebeziumop"] = op
            self._put_extensions(ce, source, extension_names)
            if isinstance(transaction, Struct):
                for name, field_schema in _TRANSACTION_FIELDS:
                    item = transaction.get(name)
                    ce["iodebeziumtx" + _NON_ALNUM.sub("", name)] = \
                        str(item) if item is not None and field_schema.type is Type.INT64 else item
        if self.schemas_enabled:
            ce["data"] = Struct(_EMPTY)
            head = self._envelope.from_connect_data(topic, envelope_schema, envelope)
            data = self._data.from_connect_data(topic, data_schema, data_value)
            assert head is not None and data is not None
            return head[:-3] + data + b"}"
        ce["data"] = data_value
        return self._envelope.from_connect_data(topic, envelope_schema, envelope)

    def _metadata(self, value: Struct, by_header: Mapping[str, Header]) -> tuple[Any, Any, Any]:
        if self.metadata.global_ == "value":
            return value.values.get("source"), value.values.get("op"), value.values.get("transaction")
        transaction = by_header.get("transaction")
        return by_header["source"].value, by_header["op"].value, None if transaction is None else transaction.value

    @staticmethod
    def _header_text(by_header: Mapping[str, Header], name: str) -> str:
        header = by_header.get(name)
        if header is None:
            raise DataError(f"Header `{name}` was not provided")
        return str(header.value)

    def _envelope_schema(self, source_schema: Schema, data_schema: Schema
                         ) -> tuple[Schema, list[tuple[str, str, bool]]]:
        """The envelope schema (cached per source and data schema) and the extension names of the source fields."""
        key = (id(source_schema), id(data_schema))
        cached = self._envelope_schemas.get(key)
        if cached is not None and cached[0] is source_schema and cached[1] is data_schema:
            return cached[2], cached[3]
        fields: list[tuple[str, Schema]] = [(n, STRING) for n in ("id", "source", "specversion", "type", "time",
                                                                  "datacontenttype")]
        if self.extensions:
            fields.append(("iodebeziumop", STRING))
            fields += [(_extension_name(f.name), _extension_schema(f.schema, False)) for f in source_schema.fields]
            fields += [("iodebeziumtx" + _NON_ALNUM.sub("", n), _extension_schema(s, True))
                       for n, s in _TRANSACTION_FIELDS]
        fields.append(("data", _EMPTY if self.schemas_enabled else data_schema))
        names = [(f.name, _extension_name(f.name), f.schema.type is Type.INT64) for f in source_schema.fields]
        envelope = struct_schema(fields)
        if len(self._envelope_schemas) > 1000:
            self._envelope_schemas.clear()
        self._envelope_schemas[key] = (source_schema, data_schema, envelope, names)
        return envelope, names

    @staticmethod
    def _put_extensions(ce: dict[str, Any], source: Struct, names: list[tuple[str, str, bool]]) -> None:
        for field_name, extension, as_text in names:
            item = source.get(field_name)
            ce[extension] = str(item) if as_text and item is not None else item

    def _data_of(self, schema: Schema, value: Struct) -> tuple[Schema, Struct]:
        cached = self._data_schemas.get(id(schema))
        if cached is None or cached[0] is not schema:
            keep = [f for f in schema.fields if self.metadata.global_ == "header" or f.name not in _META_FIELDS]
            cached = (schema, struct_schema([(f.name, f.schema) for f in keep], name=DATA_SCHEMA_NAME))
            if len(self._data_schemas) > 1000:
                self._data_schemas.clear()
            self._data_schemas[id(schema)] = cached
        data_schema = cached[1]
        data = Struct(data_schema)
        for f in data_schema.fields:
            data.values[f.name] = value.values.get(f.name)
        return data_schema, data

    # --- reading ---------------------------------------------------------------------------------------------
    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        """A CloudEvent as a schemaless map; ``data`` converted back with its schema when it has one."""
        if value is None:
            return SchemaAndValue(None, None)
        event = self._envelope.to_connect_data(topic, value).value
        if not isinstance(event, dict) or not {"id", "source", "specversion", "type"} <= event.keys():
            raise DataError("Not a CloudEvent: the id, source, specversion and type attributes are required")
        data = event.get("data")
        if self.schemas_enabled and isinstance(data, dict) and data.keys() == {"schema", "payload"}:
            event["data"] = self._data.to_connect_data(topic, orjson.dumps(data)).value
        return SchemaAndValue(None, event)
