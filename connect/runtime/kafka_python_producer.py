"""A source task's producer on kafka-python, in the task's process (``producer.client.library=kafka-python``).

The default task producer is librdkafka's (:mod:`connect.runtime.rdkafka_producer`); this one is kept for
settings only kafka-python's client honours. kafka-python builds record batches in Python, under the task's GIL:
expect several times the CPU per record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from connect import clients
from connect.api.errors import RetriableError


class KafkaPythonProducer:
    """The subset of ``KafkaProducer`` a source task uses (a ``SourceProducer``)."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self._producer = clients.producer(settings)

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None,
             on_done: Callable[[BaseException | None], Any] | None = None) -> None:
        """Send a record; ``on_done(result)`` once it is delivered (None) or failed (the exception)."""
        try:
            future = self._producer.send(topic, value=value, key=key, headers=headers, partition=partition,
                                         timestamp_ms=timestamp_ms)
        except Exception as exc:
            if getattr(exc, "retriable", False):
                raise RetriableError(str(exc)) from exc
            raise
        if on_done is not None:
            future.add_both(on_done)

    def dispatch(self) -> None:
        """Nothing to do: kafka-python batches by itself."""

    def flush(self, timeout: float | None = None) -> None:
        """Wait for every record sent so far."""
        self._producer.flush(timeout=timeout)

    def close(self, timeout: float | None = None) -> None:
        """Close the producer."""
        self._producer.close(timeout=timeout)
