"""The runtime side of :mod:`connect.api.topics`: topic readers backed by kafka-python consumers (used by
Debezium-style Kafka signal channels)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from connect import clients
from connect.api.topics import TopicReader, TopicRecord

log = logging.getLogger(__name__)

CLOSE_TIMEOUT_S = 10.0


class KafkaTopicReader:
    """One partition of one topic, assigned (no group membership), from a given offset or the group's committed
    position; :meth:`close` commits the position for the group, as Debezium's Kafka signal channel does."""

    def __init__(self, topic: str, settings: Mapping[str, str], partition: int, start: int | None) -> None:
        self._group = settings.get("group.id") or None
        self._consumer = clients.consumer({"enable.auto.commit": "false", **settings})
        self._partition = clients.TopicPartition(topic, partition)
        self._consumer.assign([self._partition])
        if start is not None:
            self._consumer.seek(self._partition, max(start, 0))
        elif self._group is None:
            reset = str(settings.get("auto.offset.reset", "latest")).lower()
            if reset == "earliest":
                self._consumer.seek_to_beginning(self._partition)
            else:
                self._consumer.seek_to_end(self._partition)
        # else: the group's committed offset, or auto.offset.reset when it has none
        self._read = False
        self._closed = False

    def poll(self, timeout: float) -> list[TopicRecord]:
        """The records that arrived since the last poll."""
        if self._closed:
            return []
        batches = self._consumer.poll(timeout_ms=int(timeout * 1000))
        records = [TopicRecord(record.offset, record.key, record.value)
                   for batch in batches.values() for record in batch]
        self._read = self._read or bool(records)
        return records

    def close(self) -> None:
        """Commit the position (when there is a group and something was read), close the consumer; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._group is not None and self._read:
                self._consumer.commit(timeout_ms=int(CLOSE_TIMEOUT_S * 1000))
        except Exception as exc:  # noqa: BLE001 - the position is also in the connector's offsets
            log.warning("Could not commit the position of %s for group %s: %s", self._partition, self._group, exc)
        finally:
            self._consumer.close(autocommit=False, timeout_ms=int(CLOSE_TIMEOUT_S * 1000))


class KafkaTopicReaders:
    """Opens :class:`KafkaTopicReader` instances."""

    def open(self, topic: str, settings: Mapping[str, str], partition: int = 0,
             start: int | None = None) -> TopicReader:
        """A reader of ``topic``'s ``partition`` from ``start`` (None: the group's committed position)."""
        return KafkaTopicReader(topic, settings, partition, start)


TOPIC_READERS = KafkaTopicReaders()
