"""Every key of Debezium's MongoDB connector that :mod:`.config` does not define, and what this worker does with
it: honoured (implemented here), or named at start (a WARN) and, when a value would change the records or the
delivery guarantee, refused at validation. A Debezium config is never half-applied in silence.

The list is checked against the keys recorded from the real Debezium (``python -m compat.debezium.config_keys``,
``tests/unit/mongodb/golden/debezium_mongodb_keys.json``): a Debezium release with a new key fails the unit test
until the key is given a status here. README's "Debezium keys" table is generated from :data:`KEYS`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from connect.api.config import ConfigDef, ConfigKey, ConfigType, parse_list

log = logging.getLogger(__name__)


class Support(StrEnum):
    HONOURED = "honoured"
    """Implemented by this connector, as Debezium does."""
    INERT = "no effect"
    """Has no effect on Debezium's MongoDB connector either (a relational, internal or legacy key)."""
    IGNORED = "ignored"
    """Debezium acts on it, this worker does not; the records and the delivery guarantee are the same. A value
    other than the default is named in a WARN when the connector starts."""
    REFUSED = "refused"
    """A value other than Debezium's default would change the records or the guarantee and is not implemented
    here: a validation error (the connector is not created)."""


@dataclass(frozen=True)
class DebeziumKey:
    name: str
    type: ConfigType
    default: str | None
    support: Support
    note: str


def _k(name: str, type_: ConfigType, default: str | None, support: Support, note: str) -> DebeziumKey:
    return DebeziumKey(name, type_, default, support, note)


_S, _B, _I, _L, _LIST, _P, _C = (ConfigType.STRING, ConfigType.BOOLEAN, ConfigType.INT, ConfigType.LONG,
                                 ConfigType.LIST, ConfigType.PASSWORD, ConfigType.CLASS)
H, N, IG, R = Support.HONOURED, Support.INERT, Support.IGNORED, Support.REFUSED

FAILURE_MODES = ("fail", "warn", "skip", "ignore")
SANITIZE_DEFAULT = (r".*secret$|.*password$|.*sasl\.jaas\.config$|.*basic\.auth\.user\.info|"
                    r".*registry\.auth\.client-secret|.*credentials\.json$|.*connectionstring$|"
                    r".*connection\.string$")
WATERMARKING = ("INSERT_INSERT", "INSERT_DELETE")

KEYS: tuple[DebeziumKey, ...] = (
    # -- honoured ------------------------------------------------------------------------------------------------
    _k("event.processing.failure.handling.mode", _S, "fail", H,
       "fail: a change event that cannot be converted fails the task; warn: it is skipped and logged at WARN with "
       "its position; skip/ignore: it is skipped"),
    _k("max.queue.size.in.bytes", _L, "0", H,
       "bytes of change events read ahead of the task (0: no byte limit, max.queue.size only)"),
    _k("streaming.delay.ms", _L, "0", H, "milliseconds between the end of the initial snapshot and the start of "
                                         "streaming (none when the task starts without a snapshot, as Debezium)"),
    _k("poll.interval.ms", _L, "500", H, "milliseconds a poll waits for new change events"),
    _k("signal.kafka.poll.timeout.ms", _I, "0", H, "milliseconds each read of the Kafka signal topic waits"),
    _k("incremental.snapshot.watermarking.strategy", _S, "INSERT_INSERT", H,
       "INSERT_INSERT: both window watermarks stay in the signal collection; INSERT_DELETE: the window-open "
       "watermark is deleted when the window closes"),
    _k("mongodb.ssl.truststore.type", _S, "PKCS12", H, "PKCS12, JKS or PEM (a PEM file is recognised as such)"),
    _k("mongodb.ssl.truststore.password", _P, None, H, "password of a PKCS12 or JKS trust store"),
    _k("mongodb.ssl.keystore.type", _S, "PKCS12", H, "PKCS12, JKS or PEM (a PEM file is recognised as such)"),
    _k("custom.metric.tags", _LIST, None, H,
       "k1=v1,k2=v2: extra labels on the connector's Debezium metrics (Debezium adds them to its MBean names); a "
       "malformed list is a validation error; plugin, name, context, task and table stay the standard labels"),
    _k("notification.enabled.channels", _LIST, None, H,
       "sink: Debezium's initial, blocking and incremental snapshot notifications as records on "
       "notification.sink.topic.name; log: as INFO lines; jmx is not available (no JMX here): named in a WARN"),
    _k("notification.sink.topic.name", _S, None, H, "the topic of the sink channel's notifications (required with "
                                                    "sink)"),
    # -- ignored: named in a WARN when set --------------------------------------------------------------------
    _k("custom.sanitize.pattern", _S, SANITIZE_DEFAULT, IG, "values of keys named like password/secret are masked "
                                                             "anyway"),
    _k("connection.validation.timeout.ms", _L, "60000", IG,
       "validation checks the config without connecting to MongoDB"),
    _k("statistics.metrics.enabled", _B, "true", H,
       "the quantiles of the lag behind the source (MilliSecondsBehindSourceP50, P95, P99)"),
    _k("guardrail.collections.max", _I, "0", IG, "no limit on the number of captured collections is checked"),
    _k("guardrail.collections.limit.action", _S, "warn", IG, "see guardrail.collections.max"),
    _k("snapshot.max.threads.multiplier", _I, "1", IG, "collections are split into _id ranges by "
                                                       "snapshot.split.mode instead"),
    _k("openlineage.integration.enabled", _B, "false", IG, "no OpenLineage events are emitted"),
    _k("openlineage.integration.config.file.path", _S, "./openlineage.yml", IG, "OpenLineage is not integrated"),
    _k("openlineage.integration.dataset.kafka.bootstrap.servers", _S, None, IG, "OpenLineage is not integrated"),
    _k("openlineage.integration.job.description", _S, "Debezium change data capture job", IG,
       "OpenLineage is not integrated"),
    _k("openlineage.integration.job.namespace", _S, None, IG, "OpenLineage is not integrated"),
    _k("openlineage.integration.job.owners", _LIST, None, IG, "OpenLineage is not integrated"),
    _k("openlineage.integration.job.tags", _LIST, None, IG, "OpenLineage is not integrated"),
    _k("executor.shutdown.timeout.ms", _L, "4000", IG, "the task's threads stop within the task's own timeouts"),
    # -- refused unless at Debezium's default ---------------------------------------------------------------------
    _k("post.processors", _S, None, R, "post processors (Java plugins) cannot run here"),
    _k("converters", _S, None, R, "custom converters (Java plugins) cannot run here"),
    _k("sourceinfo.struct.maker", _C, "io.debezium.connector.mongodb.MongoDbSourceInfoStructMaker", R,
       "only Debezium's own source block is written"),
    _k("transaction.metadata.factory", _C, "io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory", R,
       "only Debezium's default transaction metadata is written"),
    _k("mongodb.authentication.class", _S, "io.debezium.connector.mongodb.connection.DefaultMongoDbAuthProvider",
       R, "only the default authentication (mongodb.user/mongodb.password or the connection string) is available"),
    _k("queue.provider.type", _S, "memory", R, "the change event queue is in memory"),
    _k("skip.messages.without.change", _B, "false", R, "every update event is emitted"),
    _k("snapshot.mode.custom.name", _S, None, R, "custom snapshot modes (Java plugins) cannot run here"),
    _k("snapshot.query.mode", _S, "select_all", R, "snapshots read every document of a collection"),
    _k("snapshot.query.mode.custom.name", _S, None, R, "custom snapshot queries (Java plugins) cannot run here"),
    _k("signal.file", _S, None, R, "the file signal channel is not available (signal.enabled.channels: source, "
                                   "kafka)"),
    # -- no effect in Debezium's MongoDB connector either ----------------------------------------------------
    _k("binary.handling.mode", _S, "bytes", N, "relational connectors only"),
    _k("event.converting.failure.handling.mode", _S, "warn", N, "relational connectors only"),
    _k("field.name.adjustment.mode", _S, "none", N, "relational connectors only"),
    _k("incremental.snapshot.allow.schema.changes", _B, "false", N, "relational connectors only"),
    _k("query.fetch.size", _I, "0", N, "relational connectors only (MongoDB: snapshot.fetch.size)"),
    _k("snapshot.locking.mode.custom.name", _S, None, N, "relational connectors only"),
    _k("heartbeat.topics.prefix", _S, "__debezium-heartbeat", N, "Debezium 3 names heartbeat topics with "
                                                                  "topic.heartbeat.prefix"),
    _k("topic.key.enforce.uniqueness", _B, "true", N, "regex topic naming of relational connectors only"),
    _k("topic.key.field.name", _S, "__dbz__physicalTableIdentifier", N,
       "regex topic naming of relational connectors only"),
    _k("topic.key.field.regex", _S, None, N, "regex topic naming of relational connectors only"),
    _k("topic.key.field.replacement", _S, None, N, "regex topic naming of relational connectors only"),
    _k("snapshot.mode.configuration.based.snapshot.data", _B, "false", N,
       "read only with snapshot.mode=configuration_based, which is refused"),
    _k("snapshot.mode.configuration.based.snapshot.schema", _B, "false", N,
       "read only with snapshot.mode=configuration_based, which is refused"),
    _k("snapshot.mode.configuration.based.start.stream", _B, "false", N,
       "read only with snapshot.mode=configuration_based, which is refused"),
    _k("snapshot.mode.configuration.based.snapshot.on.data.error", _B, "false", N,
       "read only with snapshot.mode=configuration_based, which is refused"),
    _k("snapshot.mode.configuration.based.snapshot.on.schema.error", _B, "false", N,
       "read only with snapshot.mode=configuration_based, which is refused"),
    _k("legacy.snapshot.max.threads", _B, "false", N, "a switch back to Debezium's older snapshot threading"),
    _k("internal.legacy.snapshot.max.threads", _B, "false", N, "internal"),
    _k("internal.advanced.metrics.enable", _B, "false", H,
       "Debezium's advanced streaming metrics: create, update and delete events per collection"),
    _k("internal.custom.retriable.exception", _S, "false", N, "internal"),
    _k("internal.log.position.check.enable", _B, "true", N, "internal"),
    _k("internal.mongodb.allow.offset.invalidation", _B, "false", N, "internal"),
    _k("mongodb.task.id", _S, "0", N, "internal (set by the connector for its tasks)"),
)
BY_NAME: Mapping[str, DebeziumKey] = {key.name: key for key in KEYS}


def _one_of(values: tuple[str, ...], ignore_case: bool = True) -> tuple[object, ...]:
    def check(_name: str, value: str) -> str | None:
        ok = value.strip().lower() in [v.lower() for v in values] if ignore_case else value.strip() in values
        return None if ok else f"Value must be one of {', '.join(values)}"
    return (check,)


def _java_split(text: str, separator: str) -> list[str]:
    """Java's ``String.split`` with a one-character separator: trailing empty strings are dropped."""
    parts = text.split(separator)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def metric_tags(value: str | None) -> tuple[tuple[str, str], ...] | None:
    """``custom.metric.tags`` as Debezium reads it (``k1=v1,k2=v2``, items trimmed, a later key wins); None when
    it is malformed (an item without exactly one ``=``)."""
    if value is None or not value.strip():
        return ()
    tags: dict[str, str] = {}
    for item in _java_split(value, ","):
        pair = [part.strip() for part in _java_split(item.strip(), "=")]
        if len(pair) != 2:
            return None
        tags[pair[0]] = pair[1]
    return tuple(tags.items())


STANDARD_METRIC_LABELS = frozenset(("plugin", "name", "context", "task", "table"))
"""The labels of the connector's Debezium metrics, which a ``custom.metric.tags`` tag does not replace."""


def _metric_tags_check(_name: str, value: str) -> str | None:
    if metric_tags(value) is None:
        return "A equivalent-separated map of valid key/value pairs is expected, for example: k1=v1,k2=v2"
    return None


_VALIDATORS: Mapping[str, tuple[object, ...]] = {
    "custom.metric.tags": (_metric_tags_check,),
    "event.processing.failure.handling.mode": _one_of(FAILURE_MODES),
    "incremental.snapshot.watermarking.strategy": _one_of(WATERMARKING),
    "mongodb.ssl.truststore.type": _one_of(("PKCS12", "JKS", "PEM")),
    "mongodb.ssl.keystore.type": _one_of(("PKCS12", "JKS", "PEM")),
}

_EVENTS_GROUP = frozenset(("custom.metric.tags", "notification.enabled.channels", "notification.sink.topic.name",
                           "post.processors", "converters", "sourceinfo.struct.maker", "transaction.metadata.factory",
                           "heartbeat.topics.prefix"))
_IMPORTANCE = {"notification.sink.topic.name": "HIGH", **{name: "MEDIUM" for name in (
    "event.processing.failure.handling.mode", "max.queue.size.in.bytes", "poll.interval.ms",
    "statistics.metrics.enabled", "notification.enabled.channels", "guardrail.collections.max",
    "guardrail.collections.limit.action", "snapshot.max.threads.multiplier", "executor.shutdown.timeout.ms",
    "snapshot.mode.custom.name", "query.fetch.size", "internal.advanced.metrics.enable",
    "internal.log.position.check.enable", "internal.mongodb.allow.offset.invalidation",
    *(f"snapshot.mode.configuration.based.{part}" for part in (
        "snapshot.data", "snapshot.schema", "start.stream", "snapshot.on.data.error", "snapshot.on.schema.error")))}}


def _group(name: str) -> str:
    """Debezium's group of the key (``MongoDB`` for the driver's, ``Events``, else ``Connector``)."""
    return "Events" if name in _EVENTS_GROUP else "MongoDB" if name.startswith(("mongodb.", "internal.mongodb.")) \
        else "Connector"


DEBEZIUM_KEYS_DEF = ConfigDef(tuple(
    ConfigKey(key.name, key.type, key.default, False, _IMPORTANCE.get(key.name, "LOW"),
              f"{key.note[0].upper()}{key.note[1:]}." if key.support is Support.HONOURED
              else f"Debezium key, {key.support.value} here: {key.note}.", _group(key.name), order, "MEDIUM",
              key.name, _VALIDATORS.get(key.name, ()))  # type: ignore[arg-type]
    for order, key in enumerate(KEYS, start=100)))
"""The keys above as config keys, so that the validate report lists them (with Debezium's defaults) and can
carry their errors."""


def _normal(key: DebeziumKey, value: str) -> object:
    if key.type is ConfigType.LIST:
        return tuple(parse_list(value))
    if key.type in (ConfigType.BOOLEAN, ConfigType.STRING):  # Debezium's enumerated values ignore case
        return value.strip().lower()
    return value.strip()


def is_set(key: DebeziumKey, props: Mapping[str, str]) -> bool:
    """Whether ``props`` gives ``key`` a value other than Debezium's default (an empty value counts as unset)."""
    value = props.get(key.name)
    if value is None or (not value.strip() and key.default in (None, "")):
        return False
    return key.default is None or _normal(key, value) != _normal(key, key.default)


def refusals(props: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(key, message)`` for every refused key given another value than Debezium's default."""
    return [(key.name, f"Not supported by this connector: {key.note}; remove the key"
             + (f" or set it to {key.default}" if key.default else ""))
            for key in KEYS if key.support is Support.REFUSED and is_set(key, props)]


def warn_ignored(props: Mapping[str, str], tag: str) -> list[str]:
    """Log a WARN naming every ignored or inert key set to a non-default value; their names."""
    named = []
    for key in KEYS:
        if key.support in (Support.IGNORED, Support.INERT) and is_set(key, props):
            effect = "is ignored by this connector" if key.support is Support.IGNORED else "has no effect"
            log.warning("[%s] The Debezium key %s %s: %s", tag, key.name, effect, key.note)
            named.append(key.name)
    return named


SIGNAL_CHANNELS = ("source", "kafka")


def signal_channel_errors(props: Mapping[str, str]) -> list[str]:
    """Channels of ``signal.enabled.channels`` this connector does not have (Debezium also has file, jmx and
    in-process channels)."""
    unknown = [c for c in parse_list(props.get("signal.enabled.channels") or "source")
               if c.strip().lower() not in SIGNAL_CHANNELS]
    return [f"Signal channel {c} is not available here (available: {', '.join(SIGNAL_CHANNELS)})" for c in unknown]


@dataclass(frozen=True)
class HonouredOptions:
    """The parsed values of the honoured keys above."""

    failure_mode: str = "fail"
    max_queue_bytes: int = 0
    streaming_delay_ms: int = 0
    poll_interval_ms: int = 500
    signal_channels: tuple[str, ...] = ("source",)
    signal_kafka_poll_timeout_ms: int = 0
    watermarking: str = "INSERT_INSERT"
    metric_tags: tuple[tuple[str, str], ...] = ()
    notification_channels: tuple[str, ...] = ()
    notification_topic: str | None = None
    truststore_type: str = "PKCS12"
    truststore_password: str | None = None
    keystore_type: str = "PKCS12"
    advanced_metrics: bool = False
    statistics_metrics: bool = True

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> HonouredOptions:
        def text(key: str) -> str:
            value = props.get(key)
            return value.strip() if value and value.strip() else str(BY_NAME[key].default)

        return cls(
            failure_mode=text("event.processing.failure.handling.mode").lower(),
            max_queue_bytes=int(text("max.queue.size.in.bytes")),
            streaming_delay_ms=int(text("streaming.delay.ms")),
            poll_interval_ms=int(text("poll.interval.ms")),
            signal_channels=tuple(c.strip().lower() for c in parse_list(props.get("signal.enabled.channels")
                                                                           or "source")),
            signal_kafka_poll_timeout_ms=int(text("signal.kafka.poll.timeout.ms")),
            watermarking=text("incremental.snapshot.watermarking.strategy").upper(),
            metric_tags=metric_tags(props.get("custom.metric.tags")) or (),
            notification_channels=tuple(parse_list(props.get("notification.enabled.channels") or "")),
            notification_topic=(props.get("notification.sink.topic.name") or "").strip() or None,
            truststore_type=text("mongodb.ssl.truststore.type").upper(),
            truststore_password=props.get("mongodb.ssl.truststore.password") or None,
            keystore_type=text("mongodb.ssl.keystore.type").upper(),
            advanced_metrics=text("internal.advanced.metrics.enable").lower() == "true",
            statistics_metrics=text("statistics.metrics.enabled").lower() == "true",
        )


def markdown_table() -> str:
    """README's table of the keys above (``tests/unit/mongodb/test_debezium_keys.py`` keeps them in step)."""
    lines = ["| Debezium key | here | what happens |", "|---|---|---|"]
    lines += [f"| `{key.name}` | {key.support.value} | {key.note} |" for key in KEYS]
    return "\n".join(lines)


FRAMEWORK_PREFIXES = ("key.converter", "value.converter", "header.converter", "transforms", "predicates", "errors.",
                      "topic.creation.", "transaction.boundary", "producer.override.", "consumer.override.",
                      "admin.override.", "snapshot.collection.filter.overrides.", "signal.consumer.")
"""Key prefixes of Kafka Connect's own settings and of this connector's per-item keys."""
FRAMEWORK_KEYS = frozenset(("name", "connector.class", "tasks.max", "tasks.max.enforce", "config.action.reload",
                            "exactly.once.support", "offsets.storage.topic", "connector.plugin.version"))


def warn_unknown(props: Mapping[str, str], defined: frozenset[str], tag: str) -> list[str]:
    """Log a WARN naming every key that neither the connector (``defined``), Debezium nor Kafka Connect knows
    (a typo is otherwise ignored in silence, as Debezium does); their names."""
    unknown = [key for key in props if key not in defined and key not in BY_NAME and key not in FRAMEWORK_KEYS
               and not key.startswith(FRAMEWORK_PREFIXES)]
    for key in unknown:
        log.warning("[%s] The key %s is neither a Debezium MongoDB connector key nor a Kafka Connect one: it is "
                    "ignored (a typo?)", tag, key)
    return unknown
