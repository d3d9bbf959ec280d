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
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final

import orjson

from connect.api.config import ConfigDef, ConfigKey, ConfigType, parse_bool
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
from connect.config.validators import invalid, one_of
from converters.json import JsonConverter
from converters.json_writer import dumps_jackson, dumps_members

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


_LAST: list[Any] = [None, "", None, ""]  # the last second and its text, the last millisecond and its text


def _iso_millis(millis: int) -> str:
    """``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`` in UTC (reused while events share a millisecond, its seconds part while
    they share a second)."""
    last = _LAST
    if last[2] == millis:
        text: str = last[3]
        return text
    seconds, ms = divmod(millis, 1000)
    if last[0] != seconds:
        last[1] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        last[0] = seconds
    text = f"{last[1]}.{ms:03d}Z"
    last[2], last[3] = millis, text
    return text


Extensions = Callable[..., tuple[Any, ...]]
"""The CloudEvent's attribute values with the extension attributes of a source block (given its ``values.get``),
in the order of the names it is generated with: ``(id, source, type, time, op, get, txid, txtotalorder,
txdatacollectionorder, data)``."""

_HEAD: Final = ("id", "source", "specversion", "type", "time", "datacontenttype")
_PLAIN_NAMES: Final = tuple(dumps_jackson(name) + b":" for name in (*_HEAD, "data"))


def _extensions_writer(source_schema: Schema) -> tuple[tuple[bytes, ...], Extensions]:
    """The attribute names (written) and a function generated for ``source_schema`` giving their values: the
    event's attributes, then an extension per source field (int64 as text, null as the field's default)."""
    names: dict[str, Any] = {}
    gets, entries, extensions = [], [], []
    for i, f in enumerate(source_schema.fields):
        _extension_schema(f.schema, False)  # refuses types CloudEvents attributes cannot hold
        as_text = f.schema.type is Type.INT64
        default = f.schema.default
        names[f"D{i}"] = str(default) if as_text and default is not None else default
        gets.append(f"    v{i} = get({f.name!r})\n")
        written = f"str(v{i})" if as_text else f"v{i}"
        entries.append(f"        D{i} if v{i} is None else {written},\n")
        extensions.append(_extension_name(f.name))
    lines = ["def build(id_, source, type_, time, op, get, txid, total, collection, data):\n", *gets,
             "    return (\n",
             "        id_, source, '1.0', type_, time, 'application/json', op,\n",
             *entries,
             "        txid, total, collection, data,\n",
             "    )\n"]
    exec(compile("".join(lines), f"<cloudevents extensions {source_schema.name}>", "exec"), names)
    build: Extensions = names["build"]
    attributes = (*_HEAD, "iodebeziumop", *extensions, "iodebeziumtxid", "iodebeziumtxtotalorder",
                  "iodebeziumtxdatacollectionorder", "data")
    if len(set(attributes)) != len(attributes):  # a source field named like another attribute: a map's semantics
        def as_map(*args: Any) -> tuple[Any, ...]:
            merged = dict(zip(attributes, build(*args), strict=True))
            return tuple(merged.values())

        return tuple(dumps_jackson(name) + b":" for name in dict.fromkeys(attributes)), as_map
    return tuple(dumps_jackson(name) + b":" for name in attributes), build


def _valid_metadata_source(name: str, value: Any) -> str | None:
    try:
        parse_metadata_source(str(value))
    except ConfigError as exc:
        return invalid(name, value, exc.reason)
    return None


def _json_only(name: str, value: Any) -> str | None:
    if str(value).lower() == "avro":
        return invalid(name, value, "Avro CloudEvents need a schema registry, which this worker does not support; "
                                    "use json")
    return one_of("json", "avro")(name, value)


def _key(name: str, type_: ConfigType, default: str | None, importance: str, width: str, doc: str,
         *validators: Any) -> ConfigKey:
    return ConfigKey(name, type_, default, False, importance, doc, None, -1, width, name, validators=validators)


_STRING, _BOOLEAN = ConfigType.STRING, ConfigType.BOOLEAN
_CONFIG_DEF: Final = ConfigDef((
    _key("serializer.type", _STRING, "json", "MEDIUM", "SHORT",
         "Serialization of the CloudEvents envelope: json (avro needs a schema registry).", _json_only),
    _key("data.serializer.type", _STRING, "json", "MEDIUM", "SHORT",
         "Serialization of the data attribute: json (avro needs a schema registry).", _json_only),
    _key("metadata.source", _STRING, "value,id:generate,type:generate,traceparent:header,dataSchemaName:generate",
         "MEDIUM", "MEDIUM", "Where source, op and transaction come from (value or header), then "
                             "id:generate|header, type:generate|header.", _valid_metadata_source),
    _key("extension.attributes.enable", _BOOLEAN, "true", "MEDIUM", "SHORT",
         "Whether the iodebezium* extension attributes are written."),
    _key("schema.cloudevents.name", _STRING, None, "LOW", "MEDIUM", "The CloudEvents schema name (Avro only)."),
    _key("schema.name.adjustment.mode", _STRING, "avro", "LOW", "SHORT",
         "Schema name adjustment: none, avro or avro_unicode (Avro only).", one_of("none", "avro", "avro_unicode")),
))


class CloudEventsConverter:
    """Debezium's CloudEvents converter (structured mode, JSON)."""

    @classmethod
    def config_def(cls) -> ConfigDef:
        """Its settings, checked when a connector config is validated (Debezium's converter declares none: it checks
        them when configured)."""
        return _CONFIG_DEF

    def __init__(self) -> None:
        self.metadata = MetadataSource()
        self._reads_headers = False
        self._value_mode, self._id_from_header, self._type_from_header = True, False, False
        self.extensions = True
        self.schemas_enabled = True
        self._envelope = JsonConverter()
        self._envelope.configure({"schemas.enable": "false"}, False)
        self._data = JsonConverter()
        self._data.configure({}, False)
        self._extensions: dict[int, tuple[Schema, tuple[tuple[bytes, ...], Extensions]]] = {}
        self._data_schemas: dict[int, tuple[Schema, Schema, JsonConverter, Any]] = {}

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
        self._reads_headers = "header" in (self.metadata.global_, self.metadata.id, self.metadata.type)
        self._value_mode = self.metadata.global_ == "value"
        self._id_from_header = self.metadata.id == "header"
        self._type_from_header = self.metadata.type == "header"
        self.extensions = parse_bool(configs.get("extension.attributes.enable"), True)
        json_settings = {k[len("json."):]: v for k, v in configs.items() if k.startswith("json.")}
        self.schemas_enabled = parse_bool(json_settings.get("schemas.enable"), True)
        self._data = JsonConverter()
        self._data.configure(json_settings, True)
        self._envelope = JsonConverter()
        self._envelope.configure({**json_settings, "schemas.enable": "false"}, is_key)
        self._extensions.clear()
        self._data_schemas.clear()

    # --- writing ---------------------------------------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: tuple[Header, ...] = ()
    ) -> bytes | None:
        """The CloudEvent of one change event, or None for records that are not change events."""
        if schema is None or value is None:
            return None
        # the last header of a name wins
        by_header = {h.key: h for h in headers} if headers and self._reads_headers else {}
        if self._value_mode:
            if not (schema.name or "").endswith(".Envelope"):
                return None
        elif "source" not in by_header or "op" not in by_header:
            return None
        if schema.type is not Type.STRUCT or not isinstance(value, Struct):
            raise DataError("Mismatching schema")
        if self._value_mode:
            values = value.values
            source, op, transaction = values.get("source"), values.get("op"), values.get("transaction")
        else:
            source, op, transaction = self._metadata(value, by_header)
        if not isinstance(source, Struct):
            raise DataError("The change event has no source block")
        src = source.values
        ts_ms = src.get("ts_ms")
        name = src.get("name")
        id_ = self._header_text(by_header, "id") if self._id_from_header else \
            f"name:{name};ts:{ts_ms};ord:{src.get('ord')}"
        type_ = self._header_text(by_header, "type") if self._type_from_header else EVENT_TYPE
        time_ = _iso_millis(int(ts_ms)) if ts_ms is not None else None
        writer = self._extension_names(source.schema) if self.extensions else None
        data = self._data_json(topic, schema, value)
        if data is None:
            data = b"null"  # (data is JSON text already written: copied as it is)
        if writer is None:
            return dumps_members(_PLAIN_NAMES, (id_, f"/debezium/mongodb/{name}", "1.0", type_, time_,
                                                "application/json", data))
        txid = total = collection = None
        if isinstance(transaction, Struct):
            tx = transaction.values
            txid, total, collection = tx.get("id"), tx.get("total_order"), tx.get("data_collection_order")
            total = None if total is None else str(total)
            collection = None if collection is None else str(collection)
        names, build = writer
        return dumps_members(names, build(id_, f"/debezium/mongodb/{name}", type_, time_, op, src.get, txid, total,
                                          collection, data))

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

    def _extension_names(self, source_schema: Schema) -> tuple[tuple[bytes, ...], Extensions]:
        """The extension writer of a source schema (cached per schema)."""
        cached = self._extensions.get(id(source_schema))
        if cached is not None and cached[0] is source_schema:
            return cached[1]
        writer = _extensions_writer(source_schema)
        if len(self._extensions) > 1000:
            self._extensions.clear()
        self._extensions[id(source_schema)] = (source_schema, writer)
        return writer

    def _data_json(self, topic: str, schema: Schema, value: Struct) -> bytes | None:
        """The JSON of the ``data`` attribute: the envelope's fields but the metadata (all of them in header mode),
        written straight from the envelope when the compiled writer can (see ``JsonConverter.projection``)."""
        cached = self._data_schemas.get(id(schema))
        if cached is None or cached[0] is not schema:
            keep = [f for f in schema.fields if self.metadata.global_ == "header" or f.name not in _META_FIELDS]
            data_schema = struct_schema([(f.name, f.schema) for f in keep], name=DATA_SCHEMA_NAME)
            converter = self._data if self.schemas_enabled else self._envelope
            cached = (schema, data_schema, converter, converter.projection(data_schema, schema))
            if len(self._data_schemas) > 1000:
                self._data_schemas.clear()
            self._data_schemas[id(schema)] = cached
        _, data_schema, converter, projection = cached
        if projection is not None:
            written = projection(value)
            if written is not None:
                return written
        data = Struct(data_schema)
        get = value.values.get
        data.values = {f.name: get(f.name) for f in data_schema.fields}
        return converter.from_connect_data(topic, data_schema, data)

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
