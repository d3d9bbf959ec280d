"""``StringConverter``: values as text, like Java's ``org.apache.kafka.connect.storage.StringConverter``."""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from connect.api.config import ConfigDef, ConfigKey, ConfigType
from connect.api.data import OPTIONAL_STRING, Schema, SchemaAndValue
from connect.api.errors import ConfigError, DataError
from connect.api.records import Header
from converters.config import converter_config_def

__all__ = ["StringConverter"]

_CONFIG_DEF = converter_config_def(
    ConfigKey("converter.encoding", ConfigType.STRING, "UTF-8", False, "HIGH",
              "The character set used to encode strings as bytes.", None, -1, "MEDIUM", "Encoding"),
)


class StringConverter:
    """Writes ``str(value)`` in ``converter.encoding`` (default UTF-8) and reads an optional string.

    Also usable as a header converter (Java's class is both), with the same settings.
    """

    def __init__(self) -> None:
        self.encoding = "utf-8"

    @classmethod
    def config_def(cls) -> ConfigDef:
        """Java's ``StringConverterConfig``: ``converter.type`` and ``converter.encoding``."""
        return _CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        """Apply ``converter.encoding`` (any Python codec name, e.g. ``UTF-8``, ``ISO-8859-1``)."""
        encoding = str(configs.get("converter.encoding", "UTF-8")).strip()
        try:
            self.encoding = codecs.lookup(encoding).name
        except LookupError as exc:
            raise ConfigError("converter.encoding", encoding, "unknown encoding") from exc

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: tuple[Header, ...] = ()
    ) -> bytes | None:
        """``str(value)`` encoded; None stays None (a tombstone)."""
        if value is None:
            return None
        text = value if isinstance(value, str) else str(value)
        try:
            return text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise DataError(f"Failed to serialize to a string in {self.encoding}") from exc

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        """The bytes decoded as an optional string."""
        if value is None:
            return SchemaAndValue(OPTIONAL_STRING, None)
        try:
            return SchemaAndValue(OPTIONAL_STRING, value.decode(self.encoding))
        except UnicodeDecodeError as exc:
            raise DataError(f"Failed to deserialize a string in {self.encoding}") from exc

    def from_connect_header(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        """Header form of :meth:`from_connect_data`."""
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, key: str, value: bytes | None) -> SchemaAndValue:
        """Header form of :meth:`to_connect_data`."""
        return self.to_connect_data(topic, value)
