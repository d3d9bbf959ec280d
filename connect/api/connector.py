"""Connectors and their context (Connect's ``Connector`` / ``SourceConnector``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from enum import Enum
from typing import Any, ClassVar, Protocol

from connect.api.config import ConfigDef, ConfigValue


class ExactlyOnceSupport(Enum):
    """Whether a source connector can run with exactly-once delivery (KIP-618's ``ExactlyOnceSupport``)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(Enum):
    """Whether a source connector's tasks can define their own transactions (``transaction.boundary=connector``)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorContext(Protocol):
    """What the framework offers a running connector."""

    def request_task_reconfiguration(self) -> None:
        """Ask the framework to call ``task_configs`` again (for example when shards change)."""

    def raise_error(self, error: Exception) -> None:
        """Fail the connector with ``error``."""


class SourceConnector(ABC):
    """A source connector: validates its config and splits the work into task configs.

    The framework calls :meth:`start` once with the connector config, :meth:`task_configs` after
    start and whenever reconfiguration is requested, and :meth:`stop` once. None of them may block
    for long: long-running work belongs in tasks.
    """

    version: ClassVar[str] = "0.1.0"

    def initialize(self, context: ConnectorContext) -> None:
        """Called once, before :meth:`start`."""
        self.context = context

    @abstractmethod
    def start(self, props: Mapping[str, str]) -> None:
        """Start with the connector config."""

    @abstractmethod
    def task_class(self) -> type:
        """The :class:`~connect.api.task.SourceTask` subclass that runs this connector's tasks."""

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        """At most ``max_tasks`` task configs."""

    @abstractmethod
    def stop(self) -> None:
        """Release what :meth:`start` acquired."""

    @abstractmethod
    def config(self) -> ConfigDef:
        """The keys this connector understands."""

    def validate(self, props: Mapping[str, str]) -> list[ConfigValue]:
        """Validate ``props``; the default checks them against :meth:`config`."""
        return self.config().validate(props)

    def exactly_once_support(self, props: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """Whether the connector, with ``props``, delivers exactly once when the worker enables it: its tasks' source
        offsets alone must tell where to resume. None (the default) means "not declared", as Java's null."""
        return None

    def can_define_transaction_boundaries(self, props: Mapping[str, str]) -> ConnectorTransactionBoundaries:
        """Whether the tasks use their ``transaction_context`` (``transaction.boundary=connector``)."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(self, props: Mapping[str, str], offsets: Mapping[tuple[tuple[str, Any], ...], Any]) -> bool:
        """Called before the framework alters or resets (offset None) this connector's offsets while it is
        STOPPED. Raise :class:`~connect.api.errors.ConnectError` to refuse; return True when the connector
        manages no offsets elsewhere, so the new offsets are the whole truth."""
        return False
