"""The capture keys of the MongoDB connector beyond the basics of :mod:`config`: field filters and renames,
skipped operations, transaction metadata, the change-stream cursor options, TLS, fault handling and the
replica-set (sharded discovery) mode; their validation and their parsed form :class:`CaptureOptions`.

Debezium reads several of these keys without validating them (``capture.scope``, ``cursor.*``); here every key
is validated, so a bad value is a 400 from validate/POST with the key and the reason, not a runtime failure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from connect.api.config import ConfigDef, ConfigKey, ConfigType, ConfigValue, parse_bool, parse_list


class PipelineOrder(StrEnum):
    """``cursor.pipeline.order``."""

    INTERNAL_FIRST = "internal_first"
    USER_FIRST = "user_first"
    USER_ONLY = "user_only"


class OversizeMode(StrEnum):
    """``cursor.oversize.handling.mode``."""

    FAIL = "fail"
    SKIP = "skip"
    SPLIT = "split"


class FullUpdateType(StrEnum):
    """``capture.mode.full.update.type``."""

    LOOKUP = "lookup"
    POST_IMAGE = "post_image"


class ConnectionMode(StrEnum):
    """``mongodb.connection.mode``: ``sharded`` (one stream, Debezium 3.x) or ``replica_set`` (one stream per
    shard replica set, Debezium 2.x's mode, split over tasks)."""

    SHARDED = "sharded"
    REPLICA_SET = "replica_set"


SKIPPABLE_OPERATIONS = ("c", "u", "d", "t", "none")

_FIELD_ITEM = re.compile(r"^[^.\s:]+\.[^.\s:]+(\.[^.\s:]+)+$")
_RENAME_ITEM = re.compile(r"^[^.\s:]+\.[^.\s:]+(\.[^.\s:]+)+:[^.\s:]+$")


def _one_of(values: type[StrEnum]) -> tuple:  # type: ignore[type-arg]
    allowed = [v.value for v in values]

    def check(_name: str, value: str) -> str | None:
        return None if value.strip().lower() in allowed else f"Value must be one of {', '.join(allowed)}"
    return (check,)


def _field_list(_name: str, value: str) -> str | None:
    for item in parse_list(value):
        if not _FIELD_ITEM.match(item):
            return (f"{item} has invalid format (expecting "
                    "<databaseName>.<collectionName>.<fieldName>.<nestedFieldName>)")
    return None


def _rename_list(_name: str, value: str) -> str | None:
    for item in parse_list(value):
        if not _RENAME_ITEM.match(item):
            return (f"{item} has invalid format (expecting "
                    "<databaseName>.<collectionName>.<fieldName>.<nestedFieldName>:<newNestedFieldName>)")
    return None


def _operations(_name: str, value: str) -> str | None:
    for item in parse_list(value):
        if item.lower() not in SKIPPABLE_OPERATIONS:
            return f"Value must be one of {', '.join(SKIPPABLE_OPERATIONS)}; '{item}' is not"
    return None


def _pipeline(_name: str, value: str) -> str | None:
    if not value.strip():
        return None
    try:
        stages = json.loads(value)
    except ValueError as exc:
        return f"Change stream pipeline JSON is invalid: {exc}"
    if not isinstance(stages, list) or not all(isinstance(s, dict) and len(s) == 1 for s in stages):
        return "Change stream pipeline JSON is invalid: expected an array of single-key stage documents"
    return None


def _at_least(minimum: int) -> tuple:  # type: ignore[type-arg]
    def check(_name: str, value: str) -> str | None:
        return None if int(value) >= minimum else f"Value must be at least {minimum}"
    return (check,)


def _key(name: str, type_: ConfigType = ConfigType.STRING, default: str | None = None, *, group: str,
         order: int, doc: str, validators: tuple = ()) -> ConfigKey:  # type: ignore[type-arg]
    return ConfigKey(name, type_, default, False, "MEDIUM", doc, group, order, "MEDIUM", name, validators)


CAPTURE_DEF = ConfigDef((
    _key("field.exclude.list", group="Filters", order=30, validators=(_field_list,),
         doc="Fully-qualified fields (db.collection.field.nested; '*' matches any database or collection) "
             "left out of change events."),
    _key("field.renames", group="Filters", order=31, validators=(_rename_list,),
         doc="Fields to rename in change events: db.collection.field.nested:newName, comma-separated."),
    _key("skipped.operations", ConfigType.LIST, "t", group="Filters", order=32, validators=(_operations,),
         doc="Operations not emitted: c (inserts), u (updates and replaces), d (deletes), t (truncates), none."),
    _key("provide.transaction.metadata", ConfigType.BOOLEAN, "false", group="Connector", order=33,
         doc="Emit BEGIN/END transaction records and a 'transaction' block in data events."),
    _key("cursor.pipeline", group="Connector", order=36, validators=(_pipeline,),
         doc="User aggregation stages (a JSON array) added to the change stream pipeline."),
    _key("cursor.pipeline.order", default=PipelineOrder.INTERNAL_FIRST.value, group="Connector", order=37,
         validators=_one_of(PipelineOrder),
         doc="Where the user stages go: internal_first, user_first or user_only."),
    _key("cursor.oversize.handling.mode", default=OversizeMode.FAIL.value, group="Connector", order=38,
         validators=_one_of(OversizeMode),
         doc="Change events over 16 MB: fail, skip (documents over cursor.oversize.skip.threshold) or split "
             "($changeStreamSplitLargeEvent, reassembled by the connector)."),
    _key("cursor.oversize.skip.threshold", ConfigType.INT, "0", group="Connector", order=39,
         validators=_at_least(0), doc="Documents larger than this many bytes are skipped when the mode is skip."),
    _key("capture.mode.full.update.type", default=FullUpdateType.LOOKUP.value, group="Connector", order=40,
         validators=_one_of(FullUpdateType),
         doc="How update_full modes get the document: lookup (updateLookup) or post_image (whenAvailable)."),
    _key("capture.start.op.time", ConfigType.LONG, group="Connector", order=41,
         doc="Cluster time (BSON timestamp as a long, seconds << 32 | increment) to start at without offsets."),
    _key("mongodb.ssl.enabled", ConfigType.BOOLEAN, "false", group="MongoDB", order=42,
         doc="Connect with TLS."),
    _key("mongodb.ssl.invalid.hostname.allowed", ConfigType.BOOLEAN, "false", group="MongoDB", order=43,
         doc="Accept a server certificate whose host name does not match."),
    _key("mongodb.ssl.truststore", group="MongoDB", order=44,
         doc="Trust store of the certificate authorities that signed the server certificate: a PEM file, or a "
             "PKCS12 or JKS store (mongodb.ssl.truststore.type, mongodb.ssl.truststore.password)."),
    _key("mongodb.ssl.keystore", group="MongoDB", order=45,
         doc="Key store with the client certificate and key, for mutual TLS: a PEM file, or a PKCS12 or JKS store "
             "(mongodb.ssl.keystore.type, mongodb.ssl.keystore.password)."),
    _key("mongodb.ssl.keystore.password", ConfigType.PASSWORD, group="MongoDB", order=46,
         doc="Password of the client key."),
    _key("mongodb.heartbeat.frequency.ms", ConfigType.INT, "10000", group="MongoDB", order=47,
         validators=_at_least(500), doc="Milliseconds between the driver's server monitor checks."),
    _key("mongodb.poll.interval.ms", ConfigType.LONG, "30000", group="MongoDB", order=48,
         validators=_at_least(1), doc="Milliseconds between checks of the shard topology (replica_set mode)."),
    _key("mongodb.connection.mode", default=ConnectionMode.SHARDED.value, group="MongoDB", order=49,
         validators=_one_of(ConnectionMode),
         doc="sharded: one change stream through mongos (Debezium 3.x); replica_set: one change stream per "
             "shard replica set, split over up to tasks.max tasks."),
    _key("filters.match.mode", default="regex", group="Filters", order=52,
         validators=(lambda _n, v: None if v.strip().lower() in ("regex", "literal")
                     else "Value must be one of regex, literal",),
         doc="How the include/exclude lists match names: regex (full-match regular expressions) or literal "
             "(plain names, case-insensitive)."),
    _key("errors.max.retries", ConfigType.INT, "-1", group="Connector", order=50, validators=_at_least(-1),
         doc="Retries of a retriable MongoDB failure before the task fails (-1: unlimited, 0: none)."),
    _key("retriable.restart.connector.wait.ms", ConfigType.LONG, "10000", group="Connector", order=51,
         validators=_at_least(0), doc="Milliseconds to wait before reconnecting after a retriable failure."),
))


def validate_capture(props: Mapping[str, str], by_name: dict[str, ConfigValue]) -> None:
    """Cross-key checks of the capture keys, appended to ``by_name``."""
    mode = (props.get("cursor.oversize.handling.mode") or "fail").strip().lower()
    try:
        threshold = int(props.get("cursor.oversize.skip.threshold") or 0)
    except ValueError:
        return
    if mode == OversizeMode.SKIP and threshold <= 0:
        by_name["cursor.oversize.skip.threshold"].errors.append("Invalid threshold value for skipped document size")


@dataclass(frozen=True)
class CaptureOptions:
    """The parsed capture keys."""

    field_excludes: tuple[str, ...]
    field_renames: tuple[tuple[str, str], ...]
    skipped_operations: frozenset[str]
    transaction_metadata: bool
    transaction_topic: str
    topic_delimiter: str
    user_pipeline: tuple[dict[str, Any], ...]
    pipeline_order: PipelineOrder
    oversize_mode: OversizeMode
    oversize_threshold: int
    full_update_type: FullUpdateType
    start_op_time: int | None
    ssl_enabled: bool
    ssl_invalid_hostname_allowed: bool
    ssl_ca_file: str | None
    ssl_cert_file: str | None
    ssl_cert_password: str | None
    heartbeat_frequency_ms: int
    poll_interval_ms: int
    connection_mode: ConnectionMode
    max_retries: int
    retry_wait_ms: int

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> CaptureOptions:
        """Parse already validated ``props``."""
        renames = []
        for item in parse_list(props.get("field.renames")):
            path, _, new = item.rpartition(":")
            renames.append((path, new))
        start = props.get("capture.start.op.time")
        return cls(
            field_excludes=tuple(parse_list(props.get("field.exclude.list"))),
            field_renames=tuple(renames),
            skipped_operations=frozenset(o.lower() for o in parse_list(props.get("skipped.operations", "t"))),
            transaction_metadata=parse_bool(props.get("provide.transaction.metadata"), False),
            transaction_topic=props.get("topic.transaction") or "transaction",
            topic_delimiter=props.get("topic.delimiter") or ".",
            user_pipeline=tuple(json.loads(props["cursor.pipeline"])) if (props.get("cursor.pipeline") or "").strip()
            else (),
            pipeline_order=PipelineOrder((props.get("cursor.pipeline.order") or "internal_first").strip().lower()),
            oversize_mode=OversizeMode((props.get("cursor.oversize.handling.mode") or "fail").strip().lower()),
            oversize_threshold=int(props.get("cursor.oversize.skip.threshold") or 0),
            full_update_type=FullUpdateType((props.get("capture.mode.full.update.type") or "lookup").strip().lower()),
            start_op_time=int(start) if start and int(start) >= 0 else None,
            ssl_enabled=parse_bool(props.get("mongodb.ssl.enabled"), False),
            ssl_invalid_hostname_allowed=parse_bool(props.get("mongodb.ssl.invalid.hostname.allowed"), False),
            ssl_ca_file=props.get("mongodb.ssl.truststore") or None,
            ssl_cert_file=props.get("mongodb.ssl.keystore") or None,
            ssl_cert_password=props.get("mongodb.ssl.keystore.password") or None,
            heartbeat_frequency_ms=int(props.get("mongodb.heartbeat.frequency.ms") or 10_000),
            poll_interval_ms=int(props.get("mongodb.poll.interval.ms") or 30_000),
            connection_mode=ConnectionMode((props.get("mongodb.connection.mode") or "sharded").strip().lower()),
            max_retries=int(props.get("errors.max.retries") or -1),
            retry_wait_ms=int(props.get("retriable.restart.connector.wait.ms") or 10_000),
        )
