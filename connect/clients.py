"""The Kafka client seam: the only runtime module (with ``connect.storage``) that imports kafka-python.

Connect-style settings use dotted Java names (``batch.size``); :func:`client_kwargs` turns them into
kafka-python keyword arguments and drops, with a warning, the ones kafka-python does not know.
"""

from __future__ import annotations

import logging
import random
import struct
from collections.abc import Mapping
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError
from kafka.partitioner import Partitioner

log = logging.getLogger(__name__)

__all__ = [
    "KafkaAdminClient",
    "KafkaConsumer",
    "KafkaError",
    "KafkaProducer",
    "KeyHashPartitioner",
    "NewTopic",
    "TopicAlreadyExistsError",
    "TopicPartition",
    "admin",
    "client_kwargs",
    "consumer",
    "producer",
    "source_task_producer",
]

_JAVA_ONLY = {"key.serializer", "value.serializer", "key.deserializer", "value.deserializer"}
_INT_KEYS = {
    "batch_size", "linger_ms", "delivery_timeout_ms", "max_block_ms", "max_request_size", "retries",
    "request_timeout_ms", "max_in_flight_requests_per_connection", "retry_backoff_ms", "metadata_max_age_ms",
    "fetch_max_bytes", "max_partition_fetch_bytes", "max_poll_records", "fetch_min_bytes", "fetch_max_wait_ms",
    "session_timeout_ms", "heartbeat_interval_ms", "connections_max_idle_ms", "bootstrap_timeout_ms",
    "receive_buffer_bytes", "send_buffer_bytes", "reconnect_backoff_ms", "reconnect_backoff_max_ms",
}
_INT_MAX = 2**31 - 1


def _coerce(key: str, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if key in _INT_KEYS:
        return min(int(value), _INT_MAX)
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    if key == "acks":
        return value if value == "all" else int(value)
    if key == "bootstrap_servers":
        return [s.strip() for s in value.split(",") if s.strip()]
    return value


_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 hash (``Utils.murmur2``), a word at a time: several times faster than kafka-python's
    byte loop, which cost about 60 µs per record key."""
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK
    whole = length & ~3
    for (k,) in struct.iter_unpack("<I", data[:whole]):
        k = (k * _M) & _MASK
        k ^= k >> 24
        h = ((h * _M) & _MASK) ^ ((k * _M) & _MASK)
    extra = length & 3
    if extra >= 3:
        h ^= data[whole + 2] << 16
    if extra >= 2:
        h ^= data[whole + 1] << 8
    if extra >= 1:
        h = ((h ^ data[whole]) * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    return h ^ (h >> 15)


class KeyHashPartitioner(Partitioner):  # type: ignore[misc]
    """Java's partitioning for keyed records (murmur2 of the key bytes, positive, modulo the partition count),
    with a shortcut for single-partition topics; records without a key go to a random partition."""

    def partition(self, topic: str, key: Any, serialized_key: bytes | None, value: Any,
                  serialized_value: bytes | None, cluster: Any) -> int:
        partitions: set[int] | None = cluster.partitions_for_topic(topic)
        if not partitions:
            raise ValueError(f"Topic {topic} not found in the cluster metadata")
        if len(partitions) == 1:
            return next(iter(partitions))
        ordered = sorted(partitions)
        if serialized_key is None:
            available: set[int] = cluster.available_partitions_for_topic(topic) or set()
            return random.choice(sorted(available) if available else ordered)
        return ordered[(murmur2(serialized_key) & 0x7FFFFFFF) % len(ordered)]


def client_kwargs(settings: Mapping[str, Any], known: Mapping[str, Any]) -> dict[str, Any]:
    """Translate dotted Connect/Java client settings into kafka-python kwargs known to ``known``."""
    result: dict[str, Any] = {}
    for key, value in settings.items():
        if key in _JAVA_ONLY:
            continue
        py_key = key.replace(".", "_")
        if py_key == "max_in_flight_requests_per_connection" or py_key in known:
            result[py_key] = _coerce(py_key, value)
        else:
            log.debug("Ignoring client setting %s: not supported by kafka-python", key)
    return result


def producer(settings: Mapping[str, Any]) -> KafkaProducer:
    """A byte-array producer configured from dotted settings, with Java's key partitioning."""
    kwargs = client_kwargs(settings, KafkaProducer.DEFAULT_CONFIG)
    kwargs.setdefault("partitioner", KeyHashPartitioner())
    return KafkaProducer(**kwargs)


def source_task_producer_settings(bootstrap: str, client_id: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Kafka Connect's source-task producer settings, then ``overrides`` (``producer.*`` keys)."""
    settings: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "client.id": client_id,
        "acks": "all",
        "max.in.flight.requests.per.connection": 1,
        "enable.idempotence": False,
        "delivery.timeout.ms": _INT_MAX,
        # Java's 16 KiB batches cost kafka-python about 3x the CPU per record (a sender wake-up per record);
        # larger batches change no semantics. Override with producer.* / producer.override.*.
        "batch.size": 1_048_576,
        "linger.ms": 5,  # Kafka 4.x's default (KIP-1030); with 1 MiB batches a backlog fills them before it expires
        "retries": _INT_MAX,
    }
    settings.update(overrides)
    return settings


def source_task_producer(bootstrap: str, client_id: str, overrides: Mapping[str, Any]) -> KafkaProducer:
    """A producer with Kafka Connect's source-task defaults, then ``overrides`` (``producer.*`` keys)."""
    return producer(source_task_producer_settings(bootstrap, client_id, overrides))


def consumer(settings: Mapping[str, Any]) -> KafkaConsumer:
    """A group-less byte-array consumer configured from dotted settings."""
    kwargs = client_kwargs(settings, KafkaConsumer.DEFAULT_CONFIG)
    kwargs.setdefault("enable_auto_commit", False)
    kwargs.setdefault("group_id", None)
    return KafkaConsumer(**kwargs)


def admin(settings: Mapping[str, Any]) -> KafkaAdminClient:
    """An admin client configured from dotted settings."""
    return KafkaAdminClient(**client_kwargs(settings, KafkaAdminClient.DEFAULT_CONFIG))
