"""Single message transforms and predicates (Connect's ``Transformation`` and ``transforms.predicates.Predicate``).

The framework builds one instance per transform alias of a connector config (``transforms=a,b`` with
``transforms.a.type=...``), calls :meth:`Transformation.configure` with the alias's settings (prefix stripped),
then :meth:`Transformation.apply` on every record, in chain order, on the task's thread. A transform returns a new
record (records are immutable: use :func:`new_record`) or None to drop it. Predicates are configured the same way
(``predicates=p``, ``predicates.p.type=...``) and gate a transform with ``transforms.a.predicate=p`` (and
``transforms.a.negate=true``).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from connect.api.config import ConfigDef
from connect.api.data import Schema
from connect.api.records import Header, SourceRecord

__all__ = ["Predicate", "Transformation", "new_record"]

_UNSET: Any = object()


class Transformation(ABC):
    """A single message transform. Stateless between records except for caches."""

    version: ClassVar[str] = "4.3.1"

    def configure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Apply this alias's settings; raise :class:`~connect.api.errors.ConfigError` for a bad one."""

    @abstractmethod
    def apply(self, record: SourceRecord) -> SourceRecord | None:
        """The transformed record, or None to drop it."""

    @abstractmethod
    def config(self) -> ConfigDef:
        """The keys this transform understands (validated through the REST validate endpoint)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; called once when the task stops."""


class Predicate(ABC):
    """A condition on a record that decides whether a transform applies."""

    version: ClassVar[str] = "4.3.1"

    def configure(self, configs: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Apply this alias's settings."""

    @abstractmethod
    def test(self, record: SourceRecord) -> bool:
        """True when the record matches."""

    @abstractmethod
    def config(self) -> ConfigDef:
        """The keys this predicate understands."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""


def new_record(
    record: SourceRecord,
    *,
    topic: str = _UNSET,
    kafka_partition: int | None = _UNSET,
    key_schema: Schema | None = _UNSET,
    key: Any = _UNSET,
    value_schema: Schema | None = _UNSET,
    value: Any = _UNSET,
    timestamp: int | None = _UNSET,
    headers: tuple[Header, ...] = _UNSET,
) -> SourceRecord:
    """A copy of ``record`` with the given parts replaced (Java's ``ConnectRecord.newRecord``); the source
    partition and offset always stay, so the framework commits the original position."""
    changes: dict[str, Any] = {name: value for name, value in (
        ("topic", topic), ("kafka_partition", kafka_partition), ("key_schema", key_schema), ("key", key),
        ("value_schema", value_schema), ("value", value), ("timestamp", timestamp), ("headers", headers),
    ) if value is not _UNSET}
    return dataclasses.replace(record, **changes)
