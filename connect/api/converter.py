"""Converters turn Connect data into bytes for Kafka and back (Connect's ``Converter``).

A converter class may declare its settings with a ``config_def()`` class method returning a
:class:`~connect.api.config.ConfigDef` (Java's ``Converter.config()``); the worker validates a connector's
``<kind>.converter.*`` keys against it. A converter without one has no settings to validate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from connect.api.data import Schema, SchemaAndValue
from connect.api.records import Header


@runtime_checkable
class Converter(Protocol):
    """Key and value converter. ``configure`` is called once, before any conversion."""

    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None:
        """Apply the converter's own settings (prefix already stripped)."""

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: tuple[Header, ...] = ()
    ) -> bytes | None:
        """Serialize ``value``; None means a tombstone (null record value)."""

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        """Deserialize bytes read from Kafka."""


@runtime_checkable
class HeaderConverter(Protocol):
    """Serializes header values (Connect's ``HeaderConverter``)."""

    def configure(self, configs: Mapping[str, Any]) -> None:
        """Apply the converter's own settings (prefix already stripped)."""

    def from_connect_header(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        """Serialize one header value."""

    def to_connect_header(self, topic: str, key: str, value: bytes | None) -> SchemaAndValue:
        """Deserialize one header value."""
