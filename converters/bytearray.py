"""``ByteArrayConverter``: raw bytes, like Java's ``org.apache.kafka.connect.converters.ByteArrayConverter``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect.api.config import ConfigDef
from connect.api.data import OPTIONAL_BYTES, Schema, SchemaAndValue, Type
from connect.api.errors import DataError
from connect.api.records import Header
from converters.config import converter_config_def

__all__ = ["ByteArrayConverter"]

_CONFIG_DEF = converter_config_def()


class ByteArrayConverter:
    """Passes bytes through unchanged; the schema must be BYTES or None. Also a header converter."""

    @classmethod
    def config_def(cls) -> ConfigDef:
        """``converter.type`` only (Java's ``ConverterConfig.newConfigDef()``)."""
        return _CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        """Nothing to configure."""

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: tuple[Header, ...] = ()
    ) -> bytes | None:
        """``value`` itself (bytes, bytearray or memoryview); None stays None."""
        if schema is not None and schema.type is not Type.BYTES:
            raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is None:
            return None
        if isinstance(value, bytes):
            return value
        if isinstance(value, bytearray | memoryview):
            return bytes(value)
        raise DataError(f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}")

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        """The bytes as optional bytes."""
        return SchemaAndValue(OPTIONAL_BYTES, value)

    def from_connect_header(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        """Header form of :meth:`from_connect_data`."""
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, key: str, value: bytes | None) -> SchemaAndValue:
        """Header form of :meth:`to_connect_data`."""
        return self.to_connect_data(topic, value)
