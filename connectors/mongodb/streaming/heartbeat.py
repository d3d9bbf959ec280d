"""Debezium's heartbeats (``heartbeat.interval.ms``): a small record on ``__debezium-heartbeat.<topic.prefix>``
(``topic.heartbeat.prefix``, ``topic.delimiter``, ``topic.heartbeat.name``)
that carries the task's latest change-stream position, so offsets advance while every event is filtered out or
nothing happens (and the resume token does not fall off the oplog)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from connect.api.data import INT64, STRING, Struct, struct_schema
from connect.api.records import SourceRecord

KEY_SCHEMA = struct_schema([("serverName", STRING)], name="io.debezium.connector.common.ServerNameKey", version=1)
VALUE_SCHEMA = struct_schema([("ts_ms", INT64)], name="io.debezium.connector.common.Heartbeat", version=1)


class Heartbeat:
    """Emits at most one heartbeat record per interval."""

    def __init__(self, interval_ms: int, topic_prefix: str, topic: str, partition: Mapping[str, Any]) -> None:
        self.interval = interval_ms / 1000
        self.topic = topic
        self._server = topic_prefix
        self._partition = partition
        self._last = time.monotonic()

    @property
    def enabled(self) -> bool:
        """Whether heartbeats are on (interval > 0)."""
        return self.interval > 0

    def due(self) -> bool:
        """Whether the interval has passed since the last heartbeat."""
        return self.enabled and time.monotonic() - self._last >= self.interval

    def record(self, offset: Mapping[str, Any]) -> SourceRecord:
        """The heartbeat for ``offset`` (the task's current position); restarts the interval."""
        self._last = time.monotonic()
        key = Struct(KEY_SCHEMA, {"serverName": self._server})
        value = Struct(VALUE_SCHEMA, {"ts_ms": time.time_ns() // 1_000_000})
        return SourceRecord(self._partition, dict(offset), self.topic, 0, KEY_SCHEMA, key, VALUE_SCHEMA, value)
