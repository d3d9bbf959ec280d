"""Debezium's notifications (``notification.enabled.channels``): what the connector tells about its snapshots.

Two channels, as Debezium's ``SinkNotificationChannel`` and ``LogNotificationChannel``:

* ``sink``: a record on ``notification.sink.topic.name``, key ``io.debezium.connector.common.NotificationKey``
  ``{id}``, value ``io.debezium.connector.common.Notification`` ``{id, type, aggregate_type, additional_data,
  timestamp}``; ``additional_data`` is a string map in the iteration order of the ``HashMap`` Debezium builds it in
  (so the bytes match);
* ``log``: an INFO line ``[Notification Service]  {id='…', aggregateType='…', type='…', additionalData={…},
  timestamp=…}``.

Debezium's ``jmx`` channel has no counterpart here (no JMX): it is named in a WARN at start, as is any channel
name Debezium does not know (Debezium ignores those in silence).

Aggregates and types are Debezium's: ``Initial Snapshot`` (``STARTED``, ``IN_PROGRESS`` per collection,
``TABLE_SCAN_COMPLETED`` with ``status`` ``SUCCEEDED``, ``COMPLETED``, ``ABORTED``, ``SKIPPED`` when a start needs
no snapshot; each with a random id; a blocking snapshot sends the same) and ``Incremental Snapshot`` (``STARTED``,
``IN_PROGRESS`` per chunk with ``maximum_key`` and ``last_processed_key`` printed as Java prints the driver's
values, ``TABLE_SCAN_COMPLETED`` with ``total_rows_scanned`` and ``status`` ``SUCCEEDED``/``EMPTY``, ``COMPLETED``,
``PAUSED``, ``RESUMED``, ``ABORTED``; their id is the signal's id).

Notification records carry no source partition or offset: they commit nothing (a notification never moves the
position a restart resumes from).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from connect.api.config import parse_list
from connect.api.data import INT64, STRING, Struct, map_schema, struct_schema
from connect.api.records import SourceRecord
from connect.javalang import JavaHashMap, map_to_string

log = logging.getLogger(__name__)

KEY_SCHEMA = struct_schema([("id", STRING)], name="io.debezium.connector.common.NotificationKey", version=1)
VALUE_SCHEMA = struct_schema(
    [("id", STRING), ("type", STRING), ("aggregate_type", STRING),
     ("additional_data", map_schema(STRING, STRING, optional=True)), ("timestamp", INT64)],
    name="io.debezium.connector.common.Notification", version=1)

INITIAL_SNAPSHOT = "Initial Snapshot"
INCREMENTAL_SNAPSHOT = "Incremental Snapshot"
CHANNELS = ("sink", "log")
"""The channels this connector has (Debezium's also has ``jmx``)."""
DEBEZIUM_CHANNELS = ("sink", "log", "jmx")


@dataclass(frozen=True)
class Notification:
    """One notification, its ``additional_data`` in the iteration order Debezium's ``HashMap`` gives."""

    id: str
    aggregate_type: str
    type: str
    additional_data: tuple[tuple[str, str], ...]
    timestamp: int

    def __str__(self) -> str:
        """Debezium's ``Notification.toString`` (what the log channel writes)."""
        return (f"{{id='{self.id}', aggregateType='{self.aggregate_type}', type='{self.type}', "
                f"additionalData={map_to_string(dict(self.additional_data))}, timestamp={self.timestamp}}}")


def additional_data(data: Mapping[str, str], connector_name: str) -> tuple[tuple[str, str], ...]:
    """``new HashMap<>(Map.of(data…))`` with ``connector_name`` put last, in its iteration order. Keys that share a
    bucket keep the order of ``data``, which must be the order Debezium's ``Map.of`` iterates in (fixed for a JDK
    build, by its archived salt): the callers give it as recorded from Debezium."""
    values = {**data, "connector_name": connector_name}
    table = JavaHashMap.copy_of(list(data))
    table.put("connector_name")
    keys: list[str] = table.keys()
    return tuple((key, values[key]) for key in keys)


def channel_warnings(props: Mapping[str, str]) -> list[str]:
    """What ``notification.enabled.channels`` names that this connector cannot send to."""
    out = []
    for channel in parse_list(props.get("notification.enabled.channels") or ""):
        if channel == "jmx":
            out.append("The notification channel jmx is not available here (no JMX): its notifications are not "
                       "sent; the sink and log channels are")
        elif channel not in DEBEZIUM_CHANNELS:
            out.append(f"The notification channel {channel} is unknown (Debezium's are sink, log, jmx): nothing "
                       "is sent to it")
    return out


def topic_errors(props: Mapping[str, str]) -> list[str]:
    """Debezium's check of ``notification.sink.topic.name``: required when the sink channel is on."""
    if "sink" in parse_list(props.get("notification.enabled.channels") or "") \
            and not props.get("notification.sink.topic.name"):
        return ["Notification topic name must be provided when kafka notification channel is enabled"]
    return []


class NotificationService:
    """Builds the notifications of one task and sends them to the enabled channels: :meth:`notify` returns the
    records of the sink channel (for the caller to hand to the framework in order with its other records)."""

    def __init__(self, channels: Iterable[str], topic: str | None, connector_name: str, tag: str) -> None:
        names = set(channels)
        self._sink = "sink" in names and bool(topic)
        self._log = "log" in names
        self._topic = topic or ""
        self._connector_name = connector_name
        self._tag = tag

    @property
    def enabled(self) -> bool:
        """Whether any channel of this connector is on."""
        return self._sink or self._log

    def notify(self, aggregate_type: str, type_: str, data: Mapping[str, str] | None = None,
               notification_id: str | None = None) -> list[SourceRecord]:
        """Send one notification (a random id unless given); the sink channel's records."""
        if not self.enabled:
            return []
        notification = Notification(notification_id or str(uuid.uuid4()), aggregate_type, type_,
                                    additional_data(data or {}, self._connector_name), time.time_ns() // 1_000_000)
        if self._log:
            log.info("[%s] [Notification Service]  %s", self._tag, notification)
        return [self.record(notification)] if self._sink else []

    def initial(self, type_: str, data: Mapping[str, str] | None = None) -> list[SourceRecord]:
        """An ``Initial Snapshot`` notification."""
        return self.notify(INITIAL_SNAPSHOT, type_, data)

    def record(self, notification: Notification) -> SourceRecord:
        """The sink channel's record: no source partition or offset, no Kafka partition (the key picks it)."""
        key = Struct(KEY_SCHEMA, {"id": notification.id})
        value = Struct(VALUE_SCHEMA, {"id": notification.id, "type": notification.type,
                                      "aggregate_type": notification.aggregate_type,
                                      "additional_data": dict(notification.additional_data),
                                      "timestamp": notification.timestamp})
        return SourceRecord(None, None, self._topic, None, KEY_SCHEMA, key, VALUE_SCHEMA, value)


DISABLED = NotificationService((), None, "", "")
