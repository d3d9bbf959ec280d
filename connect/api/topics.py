"""Reading a Kafka topic from a plugin (what Debezium's Kafka signal channel needs), without importing a Kafka
client: the runtime offers :class:`TopicReaders` on the task context, the task opens a :class:`TopicReader`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol


class TopicReader(Protocol):
    """Records of one topic partition, from the end of the partition at the time it was opened."""

    def poll(self, timeout: float) -> list[tuple[bytes | None, bytes | None]]:
        """``(key, value)`` of the records that arrived, waiting at most ``timeout`` seconds for the first."""

    def close(self) -> None:
        """Release the reader; idempotent."""


class TopicReaders(Protocol):
    """Opens topic readers (implemented by the runtime)."""

    def open(self, topic: str, settings: Mapping[str, str], partition: int = 0) -> TopicReader:
        """A reader of ``topic``'s ``partition`` with these client settings (``bootstrap.servers`` and others in
        Kafka's dotted names)."""
