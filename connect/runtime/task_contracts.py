"""What a source task's loop (:mod:`connect.runtime.worker_source_task`) needs of its producer and whom it
tells about its state: the producer's and the delivery callback's protocols, and the status listener the worker
implements."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from connect.api.metrics import Metric
from connect.storage.config_state import ConnectorTaskId


class DeliveryCallback(Protocol):
    """A record's delivery callback: ``error`` None once Kafka acknowledged the record, else the failure (an
    exception, or the client's own error object, which :meth:`SourceProducer.failure` words as one); ``message``
    is whatever else the client passes (librdkafka's message), unused."""

    def __call__(self, error: Any, message: Any = None, /) -> object:
        """Called once per record, on any thread."""


class SourceProducer(Protocol):
    """What the loop needs of a producer (librdkafka's or kafka-python's, in :mod:`connect.runtime`)."""

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: DeliveryCallback | None = None) -> None:
        """Send one record; ``on_done(error)`` (or ``on_done(error, message)``) once Kafka acknowledged it
        (``error`` None) or it failed, on any thread, possibly before ``send`` returns. The producer calls it
        directly, so a record costs one call to acknowledge."""

    def failure(self, error: Any) -> BaseException:
        """The exception for a failure handed to a delivery callback (an exception is returned as is)."""

    def dispatch(self) -> None:
        """Send what was queued by ``send``."""

    def metrics(self) -> list[Metric]:
        """The producer's client metrics (Strimzi's ``kafka_producer_*``)."""

    def flush(self, timeout: float | None = None) -> None:
        """Wait for every record sent so far."""

    def close(self, timeout: float | None = None) -> None:
        """Release the producer."""


class DirectSend(Protocol):
    """A producer's own call that queues one record (librdkafka's ``produce``): topic, value, key, partition (-1:
    the partitioner's), the delivery callback, None, the timestamp (0: none), the headers (None: none). It raises
    where the record is not queued (a full queue, a record too large): the caller then sends it with
    :meth:`SourceProducer.send`, which waits or reports as a send does."""

    def __call__(self, topic: str, value: bytes | None, key: bytes | None, partition: int, on_done: DeliveryCallback,
                 unused: None, timestamp_ms: int, headers: list[tuple[str, bytes]] | None, /) -> object:
        """Queue the record."""


@runtime_checkable
class DirectSending(Protocol):
    """A producer whose records can be queued by its client's own call (:class:`DirectSend`), saving the two
    Python calls of :meth:`SourceProducer.send` per record; its :meth:`SourceProducer.dispatch` then follows a
    poll's records."""

    def direct_send(self) -> DirectSend | None:
        """The call, or None where every record must go through ``send``."""


class TaskStatusListener:
    """Receives a task's state changes (implemented by the worker)."""

    def on_startup(self, task_id: ConnectorTaskId) -> None:
        """The task started."""

    def on_failure(self, task_id: ConnectorTaskId, trace: str) -> None:
        """The task failed; ``trace`` is the formatted exception."""

    def on_shutdown(self, task_id: ConnectorTaskId) -> None:
        """The task stopped."""

    def on_pause(self, task_id: ConnectorTaskId) -> None:
        """The task was paused."""

    def on_resume(self, task_id: ConnectorTaskId) -> None:
        """The task was resumed."""

    def on_topic(self, task_id: ConnectorTaskId, topic: str) -> None:
        """The task produced to ``topic`` for the first time (topic tracking)."""
