"""The Kafka client seam: the only runtime module (with ``connect.storage``) that imports kafka-python.

Connect-style settings use dotted Java names (``batch.size``, ``sasl.jaas.config``); :func:`client_kwargs`
(:mod:`connect.kafka_clients.settings`) turns them into kafka-python keyword arguments, security included, and
warns about or refuses the ones it cannot apply.
"""

from __future__ import annotations

import logging
import random
import re
import struct
import time
from collections.abc import Mapping
from typing import Any

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import KafkaError, SaslAuthenticationFailedError, TopicAlreadyExistsError
from kafka.partitioner import Partitioner

from connect.api.errors import ConnectError
from connect.kafka_clients.settings import client_kwargs

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
    "connected_admin",
    "consumer",
    "producer",
]

_INT_MAX = 2**31 - 1
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


def consumer(settings: Mapping[str, Any]) -> KafkaConsumer:
    """A group-less byte-array consumer configured from dotted settings."""
    kwargs = client_kwargs(settings, KafkaConsumer.DEFAULT_CONFIG)
    kwargs.setdefault("enable_auto_commit", False)
    kwargs.setdefault("group_id", None)
    return KafkaConsumer(**kwargs)


def admin(settings: Mapping[str, Any]) -> KafkaAdminClient:
    """An admin client configured from dotted settings."""
    return KafkaAdminClient(**client_kwargs(settings, KafkaAdminClient.DEFAULT_CONFIG))


class _BootstrapFailures(logging.Handler):
    """Catches kafka-python's "Bootstrap connection to <node> failed: <error>" records (it retries forever)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last: BaseException | None = None
        self.fatal: BaseException | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("Bootstrap connection to") and isinstance(record.args, tuple) \
                and len(record.args) > 1 and isinstance(record.args[1], BaseException):
            self.last = record.args[1]
            if self.fatal is None and _fatal(self.last):
                self.fatal = self.last


def _fatal(exc: BaseException | None) -> bool:
    """An error retrying will not fix: refused credentials, an untrusted or mismatched certificate."""
    if exc is None:
        return False
    text = str(exc)
    return isinstance(exc, SaslAuthenticationFailedError) or ("Handshake failed" in text
                                                              and "CERTIFICATE" in text.upper()) \
        or re.search(r"OAuth token endpoint \S+ answered 4\d\d", text) is not None


def connected_admin(settings: Mapping[str, Any], timeout: float = 60.0) -> KafkaAdminClient:
    """An admin client that reached the cluster; a refused login or certificate fails at once, and anything
    else after ``timeout`` seconds, with a one-line :class:`ConnectError` naming Kafka's error."""
    kwargs = client_kwargs(settings, KafkaAdminClient.DEFAULT_CONFIG)
    where = f"Kafka at {settings.get('bootstrap.servers')} (security.protocol={kwargs['security_protocol']}" + (
        f", sasl.mechanism={kwargs['sasl_mechanism']})" if kwargs.get("sasl_mechanism") else ")")
    catcher = _BootstrapFailures()
    manager_log = logging.getLogger("kafka.net.manager")
    manager_log.addHandler(catcher)
    deadline = time.monotonic() + timeout
    try:
        while True:
            attempt = min(2.0, max(deadline - time.monotonic(), 0.5))
            try:
                return KafkaAdminClient(**{**kwargs, "bootstrap_timeout_ms": int(attempt * 1000)})
            except KafkaError as exc:
                cause = catcher.fatal or catcher.last or exc
                if _fatal(cause) or time.monotonic() >= deadline:
                    detail = " ".join(str(cause).split())
                    raise ConnectError(f"Cannot reach {where}: {detail}") from exc
    finally:
        manager_log.removeHandler(catcher)
