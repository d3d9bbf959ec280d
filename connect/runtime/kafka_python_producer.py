"""A source task's producer on kafka-python, in the task's process (``producer.client.library=kafka-python``).

The default task producer is librdkafka's (:mod:`connect.runtime.rdkafka_producer`); this one is kept for
settings only kafka-python's client honours. kafka-python builds record batches in Python, under the task's GIL:
expect several times the CPU per record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from connect import clients
from connect.api.errors import RetriableError
from connect.api.metrics import Metric
from connect.runtime.producer_metrics import java_client_samples

if TYPE_CHECKING:
    from connect.runtime.task_contracts import DeliveryCallback


class KafkaPythonProducer:
    """The subset of ``KafkaProducer`` a source task uses (a ``SourceProducer``)."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self._producer = clients.producer(settings)

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: DeliveryCallback | None = None) -> None:
        """Send a record; ``on_done(None, metadata)`` once it is delivered, ``on_done(exception)`` if it failed."""
        try:
            future = self._producer.send(topic, value=value, key=key, headers=headers, partition=partition,
                                         timestamp_ms=timestamp_ms)
        except Exception as exc:
            if getattr(exc, "retriable", False):
                raise RetriableError(str(exc)) from exc
            raise
        if on_done is not None:
            future.add_callback(on_done, None)
            future.add_errback(on_done)

    def metrics(self) -> list[Metric]:
        """kafka-python's producer metrics (the Java producer's names) as Strimzi's rules export them."""
        raw = self._producer.metrics(raw=True) or {}
        return java_client_samples((key.group, key.name, key.tags, metric.value()) for key, metric in raw.items())

    @staticmethod
    def failure(error: Any) -> BaseException:
        """kafka-python fails a record with an exception: returned as is."""
        return error if isinstance(error, BaseException) else RuntimeError(str(error))

    def dispatch(self) -> None:
        """Nothing to do: kafka-python batches by itself."""

    def flush(self, timeout: float | None = None) -> None:
        """Wait for every record sent so far."""
        self._producer.flush(timeout=timeout)

    def close(self, timeout: float | None = None) -> None:
        """Close the producer."""
        self._producer.close(timeout=timeout)
