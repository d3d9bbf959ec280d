"""The runtime side of :mod:`connect.api.topics`: topic readers backed by kafka-python consumers (used by
Debezium-style Kafka signal channels)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from connect import clients
from connect.api.topics import TopicReader

log = logging.getLogger(__name__)


class KafkaTopicReader:
    """One partition of one topic, read from its end at open time (signals sent before the task started are not
    replayed: they would be acted on twice after a restart)."""

    def __init__(self, topic: str, settings: Mapping[str, str], partition: int) -> None:
        self._consumer = clients.consumer({"enable.auto.commit": "false", **settings})
        self._partition = clients.TopicPartition(topic, partition)
        self._consumer.assign([self._partition])
        self._consumer.seek_to_end(self._partition)
        self._closed = False

    def poll(self, timeout: float) -> list[tuple[bytes | None, bytes | None]]:
        """The records that arrived since the last poll."""
        if self._closed:
            return []
        batches = self._consumer.poll(timeout_ms=int(timeout * 1000))
        return [(record.key, record.value) for batch in batches.values() for record in batch]

    def close(self) -> None:
        """Close the consumer; idempotent."""
        if not self._closed:
            self._closed = True
            self._consumer.close()


class KafkaTopicReaders:
    """Opens :class:`KafkaTopicReader` instances."""

    def open(self, topic: str, settings: Mapping[str, str], partition: int = 0) -> TopicReader:
        """A reader of ``topic``'s ``partition``."""
        return KafkaTopicReader(topic, settings, partition)


TOPIC_READERS = KafkaTopicReaders()
