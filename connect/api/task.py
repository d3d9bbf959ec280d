"""Source tasks and their context (Connect's ``SourceTask`` and ``OffsetStorageReader``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from connect.api.metrics import Metric
from connect.api.records import SourceRecord
from connect.api.topics import TopicReaders


class OffsetStorageReader(Protocol):
    """Reads the last committed offsets of this connector."""

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        """The committed offset of ``partition``, or None."""


class TransactionContext(Protocol):
    """Lets a task end its transactions itself (``transaction.boundary=connector``, KIP-618's
    ``TransactionContext``); the runtime acts on a request once the current batch (or ``record``) was sent."""

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commit after the current batch, or right after ``record`` when given."""

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Abort the open transaction after the current batch, or right after ``record`` (it is aborted too)."""


class SourceTaskContext(Protocol):
    """What the framework offers a running source task."""

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Reader of the committed offsets."""

    @property
    def task_id(self) -> int:
        """This task's number within its connector."""

    @property
    def connector_name(self) -> str:
        """The connector's name."""

    @property
    def topic_readers(self) -> TopicReaders | None:
        """Opens readers of Kafka topics (signal channels), or None where the runtime offers none."""

    @property
    def transaction_context(self) -> TransactionContext | None:
        """The task's transaction context when the connector defines its transaction boundaries, else None."""

    @property
    def values_go_to_json_converter(self) -> bool:
        """Whether the task's record values reach a JsonConverter untouched (no transformation, that value
        converter): a value may then be a :class:`~connect.api.data.LazyStruct` whose payload is already written,
        where building its values for anything else would be wasted work. A hint: any value stays correct."""


class SourceTask(ABC):
    """A source task: runs on its own thread and returns records from :meth:`poll`.

    ``poll`` must return within about a second (return None or ``[]`` when nothing is available) so
    that the framework can pause or stop the task; ``stop`` is called from another thread and must
    only signal the polling thread, never wait for it.
    """

    version: ClassVar[str] = "0.1.0"

    def initialize(self, context: SourceTaskContext) -> None:
        """Called once, before :meth:`start`."""
        self.context = context

    @abstractmethod
    def start(self, props: Mapping[str, str]) -> None:
        """Start with the task config."""

    @abstractmethod
    def poll(self) -> Sequence[SourceRecord] | None:
        """The next records, or None when there are none right now (a list, or a
        :class:`~connect.api.records.PreparedRecords` whose rows the worker may send as written)."""

    def commit(self) -> None:  # noqa: B027 - optional hook
        """Called after offsets were flushed to the offset store."""

    def commit_record(self, record: SourceRecord) -> None:  # noqa: B027 - optional hook
        """Called when Kafka acknowledged ``record`` (or a transform dropped it)."""

    def metrics(self) -> list[Metric]:
        """The task's current metric values (called from other threads; must be cheap and not block)."""
        return []

    @abstractmethod
    def stop(self) -> None:
        """Signal :meth:`poll` to return; must not block."""
