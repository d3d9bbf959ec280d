"""Connect schemas of Debezium's MongoDB change-event records (key, envelope, source block) and topic names.

Mirrors Debezium 3.6 ``MongoDbSchema`` / ``MongoDbSchemaFactory`` / ``MongoDbSourceInfoStructMaker``: field names,
order, optionality, schema names, versions and parameters are part of the wire format (JsonConverter with
``schemas.enable=true`` writes them all).
"""

from __future__ import annotations

from functools import lru_cache

from connect.api.data import (
    INT32,
    INT64,
    OPTIONAL_INT64,
    OPTIONAL_STRING,
    STRING,
    Schema,
    Type,
    array_schema,
    struct_schema,
)
from connectors.mongodb.naming import sanitize_topic

__all__ = [
    "JSON_SCHEMA_NAME",
    "SNAPSHOT_VALUES",
    "SOURCE_SCHEMA",
    "TRANSACTION_SCHEMA",
    "TRUNCATED_ARRAY_SCHEMA",
    "UPDATE_DESCRIPTION_SCHEMA",
    "envelope_schema",
    "key_schema",
    "sanitize_topic_name",
    "topic_name",
]

JSON_SCHEMA_NAME = "io.debezium.data.Json"
ENUM_SCHEMA_NAME = "io.debezium.data.Enum"

# io.debezium.connector.SnapshotRecord, in declaration order (the Enum's "allowed" parameter).
SNAPSHOT_VALUES = ("true", "first", "first_in_data_collection", "last_in_data_collection", "last", "false",
                   "incremental")

OPTIONAL_JSON = Schema(Type.STRING, optional=True, name=JSON_SCHEMA_NAME, version=1)
"""``io.debezium.data.Json`` v1, optional: ``before``, ``after`` and ``updatedFields``."""

SNAPSHOT_SCHEMA = Schema(Type.STRING, optional=True, name=ENUM_SCHEMA_NAME, version=1,
                         parameters={"allowed": ",".join(SNAPSHOT_VALUES)}, default="false")
"""``source.snapshot``: optional Enum defaulting to ``false`` (left unset while streaming)."""

SOURCE_SCHEMA = struct_schema(
    [
        ("version", STRING),
        ("connector", STRING),
        ("name", STRING),
        ("ts_ms", INT64),
        ("snapshot", SNAPSHOT_SCHEMA),
        ("db", STRING),
        ("sequence", OPTIONAL_STRING),
        ("ts_us", OPTIONAL_INT64),
        ("ts_ns", OPTIONAL_INT64),
        ("collection", STRING),
        ("ord", INT32),
        ("lsid", OPTIONAL_STRING),
        ("txnNumber", OPTIONAL_INT64),
        ("wallTime", OPTIONAL_INT64),
    ],
    name="io.debezium.connector.mongo.Source",
    version=1,
)

TRUNCATED_ARRAY_SCHEMA = struct_schema(
    [("field", STRING), ("size", INT32)],
    name="io.debezium.connector.mongodb.changestream.truncatedarray",
    version=1,
)

UPDATE_DESCRIPTION_SCHEMA = struct_schema(
    [
        ("removedFields", array_schema(STRING, optional=True)),
        ("updatedFields", OPTIONAL_JSON),
        ("truncatedArrays", array_schema(TRUNCATED_ARRAY_SCHEMA, optional=True)),
    ],
    name="io.debezium.connector.mongodb.changestream.updatedescription",
    version=1,
    optional=True,
)

TRANSACTION_SCHEMA = struct_schema(
    [("id", STRING), ("total_order", INT64), ("data_collection_order", INT64)],
    name="event.block",
    version=1,
    optional=True,
)

def sanitize_topic_name(name: str) -> str:
    """Debezium's default topic sanitising (:func:`connectors.mongodb.naming.sanitize_topic`)."""
    return sanitize_topic(name)


@lru_cache(maxsize=10_000)
def topic_name(prefix: str, db: str, coll: str, delimiter: str = ".") -> str:
    """The data topic of collection ``db.coll``: ``<prefix><delimiter><db><delimiter><coll>``, sanitised."""
    return sanitize_topic_name(delimiter.join((prefix, db, coll)))


def key_schema(topic: str, name: str | None = None) -> Schema:
    """The record key schema of a data topic: struct ``<topic>.Key`` (or ``name``, once adjusted) {id: string}."""
    return _key_schema(name or f"{topic}.Key")


@lru_cache(maxsize=10_000)
def _key_schema(name: str) -> Schema:
    return struct_schema([("id", STRING)], name=name)


def envelope_schema(topic: str, name: str | None = None) -> Schema:
    """The record value schema of a data topic: struct ``<topic>.Envelope`` (or ``name``, once adjusted), no
    version."""
    return _envelope_schema(name or f"{topic}.Envelope")


@lru_cache(maxsize=10_000)
def _envelope_schema(name: str) -> Schema:
    return struct_schema(
        [
            ("before", OPTIONAL_JSON),
            ("after", OPTIONAL_JSON),
            ("updateDescription", UPDATE_DESCRIPTION_SCHEMA),
            ("source", SOURCE_SCHEMA),
            ("op", OPTIONAL_STRING),
            ("ts_ms", OPTIONAL_INT64),
            ("transaction", TRANSACTION_SCHEMA),
        ],
        name=name,
    )
