"""Reading a Kafka topic from a plugin (what Debezium's Kafka signal channel needs), without importing a Kafka
client: the runtime offers :class:`TopicReaders` on the task context, the task opens a :class:`TopicReader`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class TopicRecord:
    """One record read: its offset in the partition, key and value."""

    offset: int
    key: bytes | None
    value: bytes | None


class TopicReader(Protocol):
    """Records of one topic partition, from the position given when it was opened."""

    def poll(self, timeout: float) -> list[TopicRecord]:
        """The records that arrived, waiting at most ``timeout`` seconds for the first."""

    def close(self) -> None:
        """Commit the position read so far for the consumer group (when ``group.id`` is set) and release the
        reader; idempotent."""


class TopicReaders(Protocol):
    """Opens topic readers (implemented by the runtime)."""

    def open(self, topic: str, settings: Mapping[str, str], partition: int = 0,
             start: int | None = None) -> TopicReader:
        """A reader of ``topic``'s ``partition`` with these client settings (``bootstrap.servers`` and others in
        Kafka's dotted names), from offset ``start``; without one, from the position committed for the consumer
        group ``group.id``, else as ``auto.offset.reset`` says (``latest`` unless set)."""
