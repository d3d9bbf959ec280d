"""``io.debezium.connector.mongodb.transforms.ExtractNewDocumentState``: unwrap a MongoDB change event into a typed
record of the document itself.

The new value is a Connect struct inferred from the document (:mod:`.schema_inference`): ``after``; for a partial
update ``before`` with the update description applied; ``_id`` from the key when missing. It is named like the
topic's envelope without ``.Envelope``. The new key is ``{id: <typed>}``.

Deletes, tombstones and the ``rewrite`` modes follow ``delete.tombstone.handling.mode``; ``add.fields`` and
``add.headers`` copy envelope, source and transaction fields (prefix ``__`` by default); heartbeats and other
records that are not change events pass through unchanged.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any, ClassVar

from connect.api.config import ConfigDef, ConfigKey, ConfigType, parse_list
from connect.api.data import (
    OPTIONAL_BOOLEAN,
    OPTIONAL_INT32,
    OPTIONAL_INT64,
    OPTIONAL_STRING,
    STRING,
    LazyStruct,
    Schema,
    Struct,
    struct_schema,
)
from connect.api.errors import ConfigError, DataError
from connect.api.records import Header, SourceRecord
from connect.api.transforms import Transformation, new_record
from connect.transforms.flatten import flatten_schema, flatten_struct
from connectors.mongodb.naming import adjust_field_name_unicode
from connectors.mongodb.transforms.document_writer import DocumentWriter, extra_members
from connectors.mongodb.transforms.schema_inference import SchemaInference, parse_document, parse_with_shape

__all__ = ["ExtractNewDocumentState"]

_MODES = ("drop", "tombstone", "rewrite-with-tombstone", "rewrite", "delete-to-tombstone")
_TOP_LEVEL = ("op", "ts_ms", "ts_us", "ts_ns")
_TRANSACTION = ("id", "total_order", "data_collection_order")


def _one_of(*allowed: str) -> Any:
    def check(name: str, raw: str | None) -> str | None:
        if raw is None or raw.strip().lower() in allowed:
            return None
        return f"Invalid value {raw} for configuration {name}: Value must be one of {', '.join(allowed)}"
    return check


def _k(name: str, type_: ConfigType, default: str | None, importance: str, width: str, display: str, doc: str,
       *validators: Any) -> ConfigKey:
    return ConfigKey(name, type_, default, importance=importance, documentation=doc, order=1, width=width,
                     display_name=display, validators=tuple(validators))


class ExtractNewDocumentState(Transformation):
    version: ClassVar[str] = "3.6.1.Final"
    CONFIG: ClassVar[ConfigDef] = ConfigDef((
        _k("array.encoding", ConfigType.STRING, "array", "MEDIUM", "SHORT", "Array encoding",
           "The arrays can be encoded using 'array' schema type (the default) or 'document' (similar to how BSON "
           "encodes arrays). 'array' is easier to consume but requires all elements in the array to be of the same "
           "type. Use 'document' if the arrays in data source mix different types together.",
           _one_of("array", "document")),
        _k("delete.tombstone.handling.mode", ConfigType.STRING, "tombstone", "MEDIUM", "MEDIUM",
           "Handle delete and tombstone records", "How to handle delete records: drop, tombstone (default), "
           "rewrite, rewrite-with-tombstone or delete-to-tombstone.", _one_of(*_MODES)),
        _k("add.fields", ConfigType.LIST, "", "LOW", "LONG", "Adds the specified field(s) to the message if they "
           "exist.", "Adds each field listed, prefixed with __ (or __<struct>_ if the struct is specified), e.g. "
           "'op,source.ts_ms'; 'name:NEW' maps a field to a new name."),
        _k("add.fields.prefix", ConfigType.STRING, "__", "LOW", "SHORT", "Field prefix to be added to each field.",
           "Adds this prefix to each field listed."),
        _k("add.headers", ConfigType.LIST, "", "LOW", "LONG", "Adds the specified fields to the header if they "
           "exist.", "Adds each field listed to the headers, with the same naming as add.fields."),
        _k("add.headers.prefix", ConfigType.STRING, "__", "LOW", "SHORT", "Header prefix to be added to each header.",
           "Adds this prefix listed to each header."),
        _k("flatten.struct", ConfigType.BOOLEAN, "false", "LOW", "SHORT", "Flatten struct",
           "Flattening structs by concatenating the fields into plain properties, using a (configurable) "
           "delimiter."),
        _k("flatten.struct.delimiter", ConfigType.STRING, "_", "LOW", "SHORT", "Delimiter for flattened struct",
           "Delimiter to concat between field names from the input record when generating field names for the "
           "output record."),
        _k("route.by.field", ConfigType.STRING, "", "LOW", "LONG", "Route by field name",
           "Not used by the MongoDB transform (kept for Debezium's shared definition)."),
    ))
    EXTRA: ClassVar[ConfigDef] = ConfigDef((  # read by Debezium too, but not part of its ConfigDef
        _k("delete.tombstone.handling.mode.rewrite-with-id", ConfigType.BOOLEAN, "false", "LOW", "SHORT",
           "Rewrite with _id", "With rewrite, also add _id (from the key) to the rewritten delete."),
        _k("field.name.adjustment.mode", ConfigType.STRING, "none", "LOW", "SHORT", "Field name adjustment",
           "none, avro or avro_unicode: field names made valid Avro names (avro: invalid characters become _, a "
           "leading digit gets a _ prefix; avro_unicode: invalid characters and _ become _uXXXX) and empty arrays "
           "written as null.", _one_of("none", "avro", "avro_unicode")),
    ))

    def config(self) -> ConfigDef:
        return self.CONFIG

    def configure(self, configs: Mapping[str, Any]) -> None:
        raw = {k: (None if v is None else str(v)) for k, v in configs.items()}
        definition = self.CONFIG + self.EXTRA
        for result in definition.validate(raw):
            if result.errors:
                raise ConfigError(result.name, raw.get(result.name), result.errors[0].rsplit(": ", 1)[-1])

        def get(name: str) -> str:
            value = raw.get(name)
            default = next(k.default for k in definition.keys if k.name == name)
            return (value if value is not None else default) or ""

        self.inference = SchemaInference(get("array.encoding").strip().lower() == "document")
        adjustment = get("field.name.adjustment.mode").strip().lower()
        self.avro_names = adjustment in ("avro", "avro_unicode")
        self.unicode_names = adjustment == "avro_unicode"
        self.inference.empty_arrays_null = self.avro_names
        self._derived: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        self.flatten = get("flatten.struct").strip().lower() == "true"
        self.delimiter = get("flatten.struct.delimiter")
        self.mode = get("delete.tombstone.handling.mode").strip().lower()
        self._rewrite = self.mode.startswith("rewrite")
        self._key_schemas: dict[int, tuple[Schema, Schema]] = {}
        self.rewrite_with_id = get("delete.tombstone.handling.mode.rewrite-with-id").strip().lower() == "true"
        self.fields = [_spec(item, get("add.fields.prefix")) for item in parse_list(get("add.fields"))]
        self.headers = [_spec(item, get("add.headers.prefix")) for item in parse_list(get("add.headers"))]
        # the compiled path covers what needs no renaming or flattening (the rest takes the Python path)
        self._writer: DocumentWriter | None = None
        if not (self.avro_names or self.flatten):
            self._writer = DocumentWriter(self.inference)

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if record.value is None:  # an original tombstone
            if self.mode != "rewrite-with-tombstone":
                return None
            if record.key_schema is None or not (record.key_schema.name or "").endswith(".Key"):
                return record
            tombstone_key_schema, tombstone_key = self._new_key(self._key_id(record.key))
            op_headers = tuple(Header(out, STRING, "d") for struct_name, field, out in self.headers
                               if not struct_name and field == "op")  # all a tombstone can tell
            return new_record(record, key_schema=tombstone_key_schema, key=tombstone_key,
                              headers=record.headers + op_headers)
        key_schema, value_schema = record.key_schema, record.value_schema
        if (key_schema is None or value_schema is None or not (key_schema.name or "").endswith(".Key")
                or not (value_schema.name or "").endswith(".Envelope") or not isinstance(record.value, Struct)):
            return record
        envelope: Struct = record.value
        key_id = self._key_id(record.key)
        key_out_schema, new_key = self._new_key(key_id)
        headers = record.headers + tuple(self._headers(envelope)) if self.headers else record.headers
        after = envelope.values.get("after")
        deleted = after is None and envelope.values.get("updateDescription") is None
        if deleted and self.mode in ("drop",):
            return None
        if deleted and self.mode in ("tombstone", "delete-to-tombstone"):
            return new_record(record, key_schema=key_out_schema, key=new_key, value_schema=None, value=None,
                              headers=headers)
        name = value_schema.name[:-9] if value_schema.name else None  # without ".Envelope"
        extra: list[tuple[str, Schema, Any]] = []
        if self._rewrite:
            extra.append(("__deleted", OPTIONAL_BOOLEAN, deleted))
        if self.fields:
            extra.extend(self._added(envelope, self.fields))
        if type(after) is str and self._writer is not None:
            compiled = self._compiled(after, name, extra)
            if compiled is not None:
                return SourceRecord(record.source_partition, record.source_offset, record.topic,
                                    record.kafka_partition, key_out_schema, new_key, compiled[0], compiled[1],
                                    record.timestamp, headers)
        document, shape = self._document(envelope, key_id, deleted)
        if self.avro_names:
            document, shape = _avro_names(document, self.unicode_names), None
        if self.avro_names and name:
            name = ".".join(avro_name(segment, self.unicode_names) for segment in name.split("."))
        schema = self.inference.top_schema(document, name or "", shape)
        if deleted and self._rewrite and self.rewrite_with_id and "_id" not in document:
            extra.insert(1, ("_id", self.inference.schema(key_id, "_id"), key_id))
        out_schema = self._with_extra(schema, extra, name)
        value = Struct(out_schema)
        value.values = self._values(document, schema, extra, key_id)
        if self.flatten:
            flat = self._cached(("flat", id(out_schema)), out_schema,
                                lambda: flatten_schema(out_schema, self.delimiter))
            out_schema, value = flat, flatten_struct(value, flat, self.delimiter)
        return new_record(record, key_schema=key_out_schema, key=new_key, value_schema=out_schema, value=value,
                          headers=headers)

    def _compiled(self, after: str, name: str | None, extra: list[tuple[str, Schema, Any]]
                  ) -> tuple[Schema, LazyStruct] | None:
        """The new value with its JSON written by the compiled path (:mod:`.document_writer`); None when it does
        not cover this document or these added fields."""
        assert self._writer is not None
        tail = extra_members(extra) if extra else ""
        written = self._writer.write(after, name or "", tail) if tail is not None else None
        if written is None:
            return None
        schema, payload = written
        if not extra:
            return schema, LazyStruct(schema, payload, lambda: self._values(after, schema, extra, None))
        if any(schema.field(out_name) is not None for out_name, _, _ in extra):
            return None  # an added field named like a document field: left to the Python path
        out_schema = self._with_extra(schema, extra, name)
        return out_schema, LazyStruct(out_schema, payload, lambda: self._values(after, schema, extra, None))

    def _values(self, document: dict[str, Any] | str, schema: Schema, extra: list[tuple[str, Schema, Any]],
                key_id: Any) -> dict[str, Any]:
        """The new value's fields: the document's (``after`` parsed when given as text), then ``extra``."""
        if isinstance(document, str):
            document = parse_document(document)
        values = {field.name: self.inference.value(document.get(field.name), field.schema)
                  for field in schema.fields}
        for out_name, field_schema, field_val in extra:
            values[out_name] = self.inference.value(field_val, field_schema) if out_name == "_id" else field_val
        return values

    def _cached(self, key: tuple[Any, ...], anchor: Any, build: Any) -> Any:
        """A derived schema cached by ``key`` (ids), kept with ``anchor`` so the ids stay valid."""
        entry = self._derived.get(key)
        if entry is not None and entry[0] is anchor:
            return entry[1]
        if len(self._derived) >= 2000:
            self._derived.clear()
        result = build()
        self._derived[key] = (anchor, result)
        return result

    def _with_extra(self, schema: Schema, extra: list[tuple[str, Schema, Any]], name: str | None) -> Schema:
        """The document schema plus the rewrite and ``add.fields`` fields (the same object for the same inputs)."""
        if not extra:
            return schema
        key = (id(schema), *((n, id(s)) for n, s, _ in extra))
        built: Schema = self._cached(key, (schema, *(s for _, s, _ in extra)), lambda: struct_schema(
            [(f.name, f.schema) for f in schema.fields] + [(n, s) for n, s, _ in extra], name=name))
        return built

    def _new_key(self, key_id: Any) -> tuple[Schema, Struct]:
        kind = type(key_id)
        if kind is int:
            field_schema = OPTIONAL_INT32 if -(2**31) <= key_id < 2**31 else OPTIONAL_INT64
        else:
            field_schema = OPTIONAL_STRING if kind is str else self.inference.schema(key_id, "id")
        entry = self._key_schemas.get(id(field_schema))
        if entry is None or entry[0] is not field_schema:
            if len(self._key_schemas) >= 2000:
                self._key_schemas.clear()
            entry = self._key_schemas[id(field_schema)] = (field_schema, struct_schema([("id", field_schema)]))
        key = Struct(entry[1])
        key.values = {"id": key_id if kind is int or kind is str else self.inference.value(key_id, field_schema)}
        return entry[1], key

    @staticmethod
    def _key_id(key: Any) -> Any:
        text = key.values.get("id") if isinstance(key, Struct) else None
        if not isinstance(text, str):
            raise DataError(f"Unexpected key of a MongoDB change event: {key!r}")
        if text.isdigit() and text.isascii() and (text[0] != "0" or text == "0"):
            return int(text)  # the usual key, read without the JSON parser
        return parse_document('{"id": ' + text + "}")["id"]

    def _document(self, envelope: Struct, key_id: Any, deleted: bool) -> tuple[dict[str, Any], Any]:
        """The new state of the document, and its shape when it is known already (None: compute it).

        A partial update (no ``after``) is ``before`` with the updated fields set (their dotted names kept, or
        joined with the flatten delimiter when flattening) and the removed ones dropped, ``_id`` from the key
        appended when missing."""
        after = envelope.values.get("after")
        if isinstance(after, str):
            return parse_with_shape(after)
        before = envelope.values.get("before")
        document = parse_document(before) if isinstance(before, str) else {}
        if deleted:
            return document, None
        update = envelope.values.get("updateDescription")
        if isinstance(update, Struct):
            updated = update.values.get("updatedFields")
            if isinstance(updated, str):
                for name, item in parse_document(updated).items():
                    document[name.replace(".", self.delimiter) if self.flatten else name] = item
            for removed in update.values.get("removedFields") or ():
                document.pop(removed.replace(".", self.delimiter) if self.flatten else removed, None)
        if "_id" not in document:
            document["_id"] = key_id
        return document, None

    def _added(self, envelope: Struct, specs: list[tuple[str, str, str]]) -> list[tuple[str, Schema, Any]]:
        out = []
        for struct_name, field_name, out_name in specs:
            holder: Any = envelope
            if struct_name:
                holder = envelope.values.get(struct_name)
            container = envelope.schema.field(struct_name) if struct_name else None
            if struct_name and container is None:
                continue
            field = container.schema.field(field_name) if container is not None else envelope.schema.field(field_name)
            if field is None:
                continue
            # as written (a null stays null), in an optional copy of the field's schema without its default: what
            # Debezium 3.6 writes for source.snapshot in a streaming event (the corpus golden)
            value = holder.values.get(field_name) if isinstance(holder, Struct) else None
            optional = self._cached(("optional", id(field.schema)), field.schema,
                                    functools.partial(_optional_without_default, field.schema))
            out.append((out_name, optional, value))
        return out

    def _headers(self, envelope: Struct) -> list[Header]:
        return [Header(name, schema, value) for name, schema, value in self._added(envelope, self.headers)]


def _optional_without_default(schema: Schema) -> Schema:
    return dataclasses.replace(schema.as_optional(), default=None)


def avro_name(name: str, unicode: bool = False) -> str:
    """Debezium's ``avro`` field name adjustment: ``[A-Za-z_][A-Za-z0-9_]*``, invalid characters replaced by ``_``,
    a leading digit prefixed with ``_``; with ``unicode`` (``avro_unicode``): ``[A-Za-z][A-Za-z0-9]*``, invalid
    characters (``_`` included) replaced by ``_uXXXX``."""
    if not name:
        return name
    if unicode:
        return adjust_field_name_unicode(name)
    first = name[0]
    head = first if (first.isascii() and (first.isalpha() or first == "_")) else \
        ("_" + first if first.isascii() and first.isdigit() else "_")
    return head + "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name[1:])


def _avro_names(value: Any, unicode: bool = False) -> Any:
    if isinstance(value, dict):
        return {avro_name(k, unicode): _avro_names(v, unicode) for k, v in value.items()}
    if isinstance(value, list):
        return [_avro_names(v, unicode) for v in value]
    return value


def _spec(item: str, prefix: str) -> tuple[str, str, str]:
    """``(struct, field, output name)`` of an ``add.fields``/``add.headers`` entry."""
    name, _, rename = item.partition(":")
    struct_name, _, field = name.rpartition(".")
    if not struct_name:
        if field in _TOP_LEVEL:
            struct_name = ""
        elif field in _TRANSACTION:
            struct_name = "transaction"
        elif field in ("removedFields", "updatedFields", "truncatedArrays"):
            struct_name = "updateDescription"
        else:
            struct_name = "source"
        out = prefix + (rename or field)
    else:
        out = prefix + (rename or f"{struct_name}_{field}")
    return struct_name, field, out
