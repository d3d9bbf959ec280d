"""The MongoDB connector's configuration keys (Debezium's ``MongoDbConnectorConfig``), their validation
and the parsed, typed form the task uses."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from bson import json_util

from connect.api.config import ConfigDef, ConfigKey, ConfigType, parse_bool, parse_list
from connect.api.errors import ConfigError
from connectors.mongodb import debezium_keys, notifications
from connectors.mongodb.capture_config import CAPTURE_DEF, CaptureOptions, validate_capture
from connectors.mongodb.debezium_keys import DEBEZIUM_KEYS_DEF, HonouredOptions
from connectors.mongodb.naming import NAMING_DEF, TopicNaming, validate_naming
from connectors.mongodb.releases import NEWEST, RELEASES, DebeziumRelease, release, validate_release

SPLIT_MODES = ("auto", "always", "never")
"""``snapshot.split.mode`` (ours): when a collection is read as several ``_id`` ranges."""


class CaptureMode(StrEnum):
    """``capture.mode``."""

    CHANGE_STREAMS = "change_streams"
    CHANGE_STREAMS_UPDATE_FULL = "change_streams_update_full"
    CHANGE_STREAMS_WITH_PRE_IMAGE = "change_streams_with_pre_image"
    CHANGE_STREAMS_UPDATE_FULL_WITH_PRE_IMAGE = "change_streams_update_full_with_pre_image"


class SnapshotMode(StrEnum):
    """``snapshot.mode`` (``never`` is the old name of ``no_data``)."""

    INITIAL = "initial"
    INITIAL_ONLY = "initial_only"
    NO_DATA = "no_data"
    NEVER = "never"
    WHEN_NEEDED = "when_needed"
    ALWAYS = "always"


class CaptureScope(StrEnum):
    """``capture.scope``."""

    DEPLOYMENT = "deployment"
    DATABASE = "database"
    COLLECTION = "collection"


_TOPIC_PREFIX = re.compile(r"^[a-zA-Z0-9_.\-]+$")


def _connection_string(_name: str, value: str) -> str | None:
    if not value.strip():
        return "Missing connection string"
    if not value.startswith(("mongodb://", "mongodb+srv://")):
        return "Invalid connection string"
    return None


def _topic_prefix(_name: str, value: str) -> str | None:
    if not value:
        return "A value is required"
    if not _TOPIC_PREFIX.match(value):
        return f"{value} has invalid format (only the underscore, hyphen, dot and alphanumeric characters are allowed)"
    return None


def _enum(values: type[StrEnum]) -> tuple:  # type: ignore[type-arg]
    allowed = [v.value for v in values]

    def check(_name: str, value: str) -> str | None:
        return None if value.strip().lower() in allowed else f"Value must be one of {', '.join(allowed)}"
    return (check,)


def _split_mode(_name: str, value: str) -> str | None:
    return None if value.strip().lower() in SPLIT_MODES else f"Value must be one of {', '.join(SPLIT_MODES)}"


def _namespace(_name: str, value: str) -> str | None:
    db, dot, coll = value.partition(".")
    return None if not value or (db and dot and coll) else "A collection name of the form db.collection is expected"


def _regex_list(_name: str, value: str) -> str | None:
    for item in parse_list(value):
        try:
            re.compile(item)
        except re.error as exc:
            return f"A comma-separated list of valid regular expressions is expected, but {item} is not: {exc}"
    return None


def _positive(_name: str, value: str) -> str | None:
    return None if int(value) > 0 else "A positive, non-zero integer value is expected"


def _non_negative(_name: str, value: str) -> str | None:
    return None if int(value) >= 0 else "An non-negative integer is expected"


def _key(name: str, type_: ConfigType = ConfigType.STRING, default: str | None = None, *, group: str,
         order: int, doc: str, required: bool = False, importance: str = "MEDIUM", validators: tuple = ()  # type: ignore[type-arg]
         ) -> ConfigKey:
    return ConfigKey(name, type_, default, required, importance, doc, group, order, "MEDIUM", name, validators)


CONFIG_DEF = ConfigDef((
    _key("topic.prefix", group="MongoDB", order=0, required=True, importance="HIGH", validators=(_topic_prefix,),
         doc="Topic prefix that identifies and provides a namespace for the MongoDB server from which the "
             "connector captures changes; used in topic names and as the source partition's server_id."),
    _key("mongodb.connection.string", group="MongoDB", order=1, required=True, importance="HIGH",
         validators=(_connection_string,),
         doc="Database connection string (a replica-set or mongos URI, e.g. mongodb://host:27017/?replicaSet=rs0)."),
    _key("mongodb.user", group="MongoDB", order=2, doc="Database user for connecting to MongoDB, if necessary."),
    _key("mongodb.password", ConfigType.PASSWORD, group="MongoDB", order=3, doc="Password for the database user."),
    _key("mongodb.authsource", default="admin", group="MongoDB", order=4, doc="Database for authentication."),
    _key("mongodb.connect.timeout.ms", ConfigType.INT, "10000", group="MongoDB", order=5, validators=(_positive,),
         doc="Milliseconds to wait before a new connection attempt is aborted."),
    _key("mongodb.server.selection.timeout.ms", ConfigType.INT, "30000", group="MongoDB", order=6,
         validators=(_positive,), doc="Milliseconds the driver waits to select a server before it gives up."),
    _key("mongodb.socket.timeout.ms", ConfigType.INT, "0", group="MongoDB", order=7, validators=(_non_negative,),
         doc="Milliseconds before a send/receive on the socket can take before a timeout occurs (0: none)."),
    _key("capture.mode", default=CaptureMode.CHANGE_STREAMS_UPDATE_FULL.value, group="Connector", order=8,
         validators=_enum(CaptureMode), doc="How change events are captured (change streams, with full documents "
                                            "on updates and/or pre-images)."),
    _key("capture.scope", default=CaptureScope.DEPLOYMENT.value, group="Connector", order=9,
         validators=_enum(CaptureScope), doc="Scope of the change stream: deployment, database or collection."),
    _key("capture.target", group="Connector", order=10,
         doc="The database (scope database) or db.collection (scope collection) to watch."),
    _key("database.include.list", ConfigType.LIST, group="Filters", order=11, validators=(_regex_list,),
         doc="Regular expressions matching the names of the databases to capture."),
    _key("database.exclude.list", ConfigType.LIST, group="Filters", order=12, validators=(_regex_list,),
         doc="Regular expressions matching the names of the databases not to capture."),
    _key("collection.include.list", ConfigType.LIST, group="Filters", order=13, validators=(_regex_list,),
         doc="Regular expressions matching the fully-qualified names (db.collection) of collections to capture."),
    _key("collection.exclude.list", ConfigType.LIST, group="Filters", order=14, validators=(_regex_list,),
         doc="Regular expressions matching the fully-qualified names of collections not to capture."),
    _key("tombstones.on.delete", ConfigType.BOOLEAN, "true", group="Connector", order=15,
         doc="Whether a delete event is followed by a tombstone event."),
    _key("max.batch.size", ConfigType.INT, "2048", group="Connector", order=16, validators=(_positive,),
         doc="Maximum number of events returned by one poll."),
    _key("max.queue.size", ConfigType.INT, "8192", group="Connector", order=17, validators=(_positive,),
         doc="Maximum number of change events read ahead of the task; must be larger than max.batch.size."),
    _key("cursor.max.await.time.ms", ConfigType.INT, group="Connector", order=17, validators=(_non_negative,),
         doc="Maximum milliseconds the server waits for new change events on a getMore."),
    _key("snapshot.mode", default=SnapshotMode.INITIAL.value, group="Connector", order=19,
         validators=_enum(SnapshotMode), doc="When to copy the captured collections before streaming: initial, "
                                              "initial_only, no_data (never), when_needed or always."),
    _key("snapshot.fetch.size", ConfigType.INT, None, group="Connector", order=20, validators=(_non_negative,),
         doc="Documents per batch while snapshotting (0: the server's default)."),
    _key("snapshot.max.threads", ConfigType.INT, "1", group="Connector", order=23, validators=(_positive,),
         doc="Threads reading the initial snapshot, across and within collections (chunks of _id values)."),
    _key("snapshot.split.mode", default="auto", group="Connector", order=23,
         validators=(_split_mode,),
         doc="Whether a collection is cut into _id ranges read by several threads: auto (when the server reads an "
             "_id range by index, not by scanning the whole collection), always or never."),
    _key("snapshot.delay.ms", ConfigType.LONG, "0", group="Connector", order=24, validators=(_non_negative,),
         doc="Milliseconds to wait before the snapshot starts."),
    _key("snapshot.include.collection.list", ConfigType.LIST, group="Connector", order=25,
         validators=(_regex_list,), doc="Regular expressions matching the fully-qualified names (db.collection) of "
                                        "the captured collections to snapshot (default: all captured)."),
    _key("snapshot.collection.filter.overrides", ConfigType.LIST, group="Connector", order=26,
         doc="db.collection names whose snapshot reads only the documents matching the filter given in "
             "snapshot.collection.filter.overrides.<db>.<collection> (a MongoDB filter document as JSON)."),
    _key("signal.data.collection", group="Connector", order=27, validators=(_namespace,),
         doc="The db.collection where signals are inserted (and incremental-snapshot watermarks written)."),
    _key("signal.enabled.channels", ConfigType.LIST, "source", group="Connector", order=28,
         doc="Signal channels: source (the signal collection) and/or kafka (signal.kafka.topic)."),
    _key("signal.kafka.topic", group="Connector", order=29,
         doc="The Kafka topic of the kafka signal channel (default <topic.prefix>-signal); record key = topic.prefix."),
    _key("signal.kafka.bootstrap.servers", group="Connector", order=30,
         doc="The Kafka brokers of the kafka signal channel."),
    _key("signal.kafka.groupId", default="kafka-signal", group="Connector", order=30,
         doc="The consumer group whose committed position on the signal topic is used when the connector's offsets "
             "hold none (committed when the task stops)."),
    _key("signal.poll.interval.ms", ConfigType.LONG, "5000", group="Connector", order=31, validators=(_non_negative,),
         doc="Milliseconds between reads of the Kafka signal topic."),
    _key("incremental.snapshot.chunk.size", ConfigType.INT, "1024", group="Connector", order=32,
         validators=(_positive,), doc="Documents read per chunk of an incremental snapshot."),
    _key("heartbeat.interval.ms", ConfigType.INT, "0", group="Connector", order=21, validators=(_non_negative,),
         doc="Milliseconds between heartbeat records (0: none); they keep offsets moving on idle or filtered streams."),
    _key("extended.headers.enabled", ConfigType.BOOLEAN, "true", group="Connector", order=18,
         doc="Whether to add the __debezium.context.* headers to data records."),
    _key("debezium.release", default=NEWEST.version, group="Connector", order=33, validators=(validate_release,),
         doc="The Debezium release whose record bytes are reproduced (ours): " + ", ".join(RELEASES) + ". 3.6.1 "
             "writes doubles with a non-negative exponent as 1.0E300, 3.6.3 as 1.0E+300; source.version follows."),
)) + CAPTURE_DEF + NAMING_DEF + DEBEZIUM_KEYS_DEF


def _filter_problem(text: str | None) -> str | None:
    if not text:
        return "no filter given (snapshot.collection.filter.overrides.<db>.<collection>)"
    try:
        parsed = json_util.loads(text)
    except ValueError as exc:
        return f"the filter is not valid JSON: {exc}"
    return None if isinstance(parsed, dict) else "the filter must be a JSON object"


def _mutually_exclusive(props: Mapping[str, str], include: str, exclude: str) -> str | None:
    if props.get(include) and props.get(exclude):
        return f'"{include}" is already specified'
    return None


def validate(props: Mapping[str, str]) -> list:  # type: ignore[type-arg]
    """Every problem of ``props``: key-level checks plus the cross-key ones."""
    results = CONFIG_DEF.validate(props)
    by_name = {r.name: r for r in results}
    for include, exclude in (("database.include.list", "database.exclude.list"),
                             ("collection.include.list", "collection.exclude.list")):
        if (message := _mutually_exclusive(props, include, exclude)) is not None:
            by_name[exclude].errors.append(message)
    try:
        if int(props.get("max.queue.size") or 8192) <= int(props.get("max.batch.size") or 2048):
            by_name["max.queue.size"].errors.append("Must be larger than the maximum batch size")
    except ValueError:
        pass
    for ns in parse_list(props.get("snapshot.collection.filter.overrides")):
        if (message := _filter_problem(props.get(f"snapshot.collection.filter.overrides.{ns}"))) is not None:
            by_name["snapshot.collection.filter.overrides"].errors.append(f"{ns}: {message}")
    channels = [c.lower() for c in parse_list(props.get("signal.enabled.channels") or "source")]
    if "kafka" in channels and not props.get("signal.kafka.bootstrap.servers"):
        by_name["signal.kafka.bootstrap.servers"].errors.append("Required when signal.enabled.channels has kafka")
    by_name["signal.enabled.channels"].errors.extend(debezium_keys.signal_channel_errors(props))
    by_name["notification.sink.topic.name"].errors.extend(notifications.topic_errors(props))
    for key, message in debezium_keys.refusals(props):
        by_name[key].errors.append(message)
    scope = (props.get("capture.scope") or "deployment").strip().lower()
    if scope in ("database", "collection") and not props.get("capture.target"):
        by_name["capture.target"].errors.append(f"A target is required for capture.scope={scope}")
    if scope == "collection" and props.get("capture.target") and "." not in str(props.get("capture.target")):
        by_name["capture.target"].errors.append("A target of the form <database>.<collection> is required for "
                                                "capture.scope=collection")
    validate_capture(props, by_name)
    validate_naming(props, by_name)
    return results


@dataclass(frozen=True)
class MongoDbConfig:
    """The parsed connector config."""

    connection_string: str
    topic_prefix: str
    capture_mode: CaptureMode
    capture_scope: CaptureScope
    capture_target: str | None
    database_include: tuple[re.Pattern[str], ...]
    database_exclude: tuple[re.Pattern[str], ...]
    collection_include: tuple[re.Pattern[str], ...]
    collection_exclude: tuple[re.Pattern[str], ...]
    tombstones_on_delete: bool
    max_batch_size: int
    snapshot_mode: SnapshotMode
    heartbeat_interval_ms: int
    heartbeat_topic_prefix: str
    snapshot_fetch_size: int
    max_queue_size: int
    max_await_time_ms: int
    extended_headers: bool
    user: str | None
    password: str | None
    auth_source: str
    connect_timeout_ms: int
    server_selection_timeout_ms: int
    socket_timeout_ms: int
    capture: CaptureOptions
    snapshot_max_threads: int = 1
    snapshot_delay_ms: int = 0
    snapshot_include: tuple[re.Pattern[str], ...] = ()
    snapshot_filters: Mapping[str, str] = field(default_factory=dict)
    snapshot_split: str = "auto"
    signal_data_collection: str | None = None
    signal_kafka_topic: str | None = None
    signal_kafka_settings: Mapping[str, str] = field(default_factory=dict)
    signal_poll_interval_ms: int = 5000
    incremental_chunk_size: int = 1024
    honoured: HonouredOptions = field(default_factory=HonouredOptions)
    release: DebeziumRelease = NEWEST
    naming: TopicNaming | None = field(default=None, compare=False, repr=False)

    @property
    def topic_naming(self) -> TopicNaming:
        """Topic and schema names (``topic.naming.strategy``, ``schema.name.adjustment.mode``, ...)."""
        return self.naming if self.naming is not None else TopicNaming(self.topic_prefix)

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> MongoDbConfig:
        """Validate and parse; the first problem raises :class:`ConfigError` naming the key."""
        for result in validate(props):
            if result.errors:
                raise ConfigError(result.name, result.value, result.errors[0])

        literal = (props.get("filters.match.mode") or "regex").strip().lower() == "literal"

        def patterns(key: str) -> tuple[re.Pattern[str], ...]:
            items = parse_list(props.get(key))
            return tuple(re.compile(re.escape(p) if literal else p, re.IGNORECASE) for p in items)

        def integer(key: str, default: int) -> int:
            return int(props.get(key) or default)

        return cls(
            connection_string=props["mongodb.connection.string"],
            topic_prefix=props["topic.prefix"],
            capture_mode=CaptureMode(props.get("capture.mode", CaptureMode.CHANGE_STREAMS_UPDATE_FULL).lower()),
            capture_scope=CaptureScope(props.get("capture.scope", CaptureScope.DEPLOYMENT).lower()),
            capture_target=props.get("capture.target") or None,
            database_include=patterns("database.include.list"),
            database_exclude=patterns("database.exclude.list"),
            collection_include=patterns("collection.include.list"),
            collection_exclude=patterns("collection.exclude.list"),
            tombstones_on_delete=parse_bool(props.get("tombstones.on.delete"), True),
            max_batch_size=integer("max.batch.size", 2048),
            snapshot_mode=SnapshotMode(props.get("snapshot.mode", SnapshotMode.INITIAL).strip().lower()),
            snapshot_fetch_size=integer("snapshot.fetch.size", 0),
            heartbeat_interval_ms=integer("heartbeat.interval.ms", 0),
            heartbeat_topic_prefix=props.get("topic.heartbeat.prefix") or "__debezium-heartbeat",
            max_queue_size=integer("max.queue.size", 8192),
            max_await_time_ms=integer("cursor.max.await.time.ms", 0),
            extended_headers=parse_bool(props.get("extended.headers.enabled"), True),
            user=props.get("mongodb.user") or None,
            password=props.get("mongodb.password") or None,
            auth_source=props.get("mongodb.authsource") or "admin",
            connect_timeout_ms=integer("mongodb.connect.timeout.ms", 10_000),
            server_selection_timeout_ms=integer("mongodb.server.selection.timeout.ms", 30_000),
            socket_timeout_ms=integer("mongodb.socket.timeout.ms", 0),
            capture=CaptureOptions.parse(props),
            snapshot_max_threads=integer("snapshot.max.threads", 1),
            snapshot_delay_ms=integer("snapshot.delay.ms", 0),
            snapshot_include=patterns("snapshot.include.collection.list"),
            snapshot_filters={ns: props[f"snapshot.collection.filter.overrides.{ns}"]
                              for ns in parse_list(props.get("snapshot.collection.filter.overrides"))},
            snapshot_split=(props.get("snapshot.split.mode") or "auto").strip().lower(),
            signal_data_collection=props.get("signal.data.collection") or None,
            signal_kafka_topic=(props.get("signal.kafka.topic") or f"{props['topic.prefix']}-signal")
            if "kafka" in [c.lower() for c in parse_list(props.get("signal.enabled.channels") or "source")] else None,
            signal_kafka_settings={"bootstrap.servers": props.get("signal.kafka.bootstrap.servers") or "",
                                   "group.id": props.get("signal.kafka.groupId") or "kafka-signal",
                                   "auto.offset.reset": "earliest",
                                   **{k[len("signal.consumer."):]: v for k, v in props.items()
                                      if k.startswith("signal.consumer.")}},
            signal_poll_interval_ms=integer("signal.poll.interval.ms", 5000),
            incremental_chunk_size=integer("incremental.snapshot.chunk.size", 1024),
            honoured=HonouredOptions.parse(props),
            release=release(props.get("debezium.release")),
            naming=TopicNaming.from_props(props),
        )


ALWAYS_EXCLUDED_DATABASES = frozenset(("admin", "config", "local"))


class CollectionFilter:
    """:func:`captured`, remembered per namespace (it runs for every change event)."""

    def __init__(self, config: MongoDbConfig) -> None:
        self._config = config
        self._known: dict[tuple[str, str], bool] = {}

    def __call__(self, db: str, coll: str) -> bool:
        """Whether ``db.coll`` is captured."""
        key = (db, coll)
        result = self._known.get(key)
        if result is None:
            if len(self._known) > 100_000:
                self._known.clear()
            result = self._known[key] = captured(self._config, db, coll)
        return result


def captured(config: MongoDbConfig, db: str, coll: str) -> bool:
    """Whether ``db.coll`` passes the filters (full match, case-insensitive, as Debezium)."""
    if db in ALWAYS_EXCLUDED_DATABASES:
        return False
    if config.database_include and not any(p.fullmatch(db) for p in config.database_include):
        return False
    if any(p.fullmatch(db) for p in config.database_exclude):
        return False
    full = f"{db}.{coll}"
    if config.collection_include and not any(p.fullmatch(full) for p in config.collection_include):
        return False
    return not any(p.fullmatch(full) for p in config.collection_exclude)
