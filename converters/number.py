"""Number and boolean converters (``org.apache.kafka.connect.converters.IntegerConverter``, ``LongConverter``,
``ShortConverter``, ``FloatConverter``, ``DoubleConverter``, ``BooleanConverter``): the big-endian bytes of Kafka's
``IntegerSerializer`` & co. and an optional schema of the type. They are header converters too."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any, ClassVar

from connect.api.config import ConfigDef
from connect.api.data import Schema, SchemaAndValue, Type
from connect.api.errors import DataError
from connect.api.records import Header
from converters.config import converter_config_def

__all__ = ["BooleanConverter", "DoubleConverter", "FloatConverter", "IntegerConverter", "LongConverter",
           "ShortConverter"]

_CONFIG_DEF = converter_config_def()
_JAVA_CLASS = {bool: "java.lang.Boolean", int: "java.lang.Long", float: "java.lang.Double", str: "java.lang.String",
               bytes: "[B", dict: "java.util.HashMap", list: "java.util.ArrayList"}


class _NumberConverter:
    """One fixed-width type; subclasses set the struct format, the schema and the Java names."""

    FORMAT: ClassVar[struct.Struct]
    SCHEMA: ClassVar[Schema]
    TYPE_NAME: ClassVar[str]
    DESERIALIZER: ClassVar[str]

    @classmethod
    def config_def(cls) -> ConfigDef:
        """``converter.type`` only (Java's ``NumberConverterConfig`` and ``BooleanConverterConfig``)."""
        return _CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        """No settings besides ``converter.type``."""

    def _check(self, value: Any) -> Any:
        return value

    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: tuple[Header, ...] = ()
    ) -> bytes | None:
        """The serialized value; None stays None."""
        if value is None:
            return None
        try:
            return self.FORMAT.pack(self._check(value))
        except (struct.error, TypeError, ValueError) as exc:
            kind = _JAVA_CLASS.get(type(value), type(value).__name__)
            raise DataError(f"Failed to serialize to {self.TYPE_NAME} (was class {kind}): ") from exc

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        """The deserialized value with the optional schema of the type."""
        if value is None:
            return SchemaAndValue(self.SCHEMA, None)
        if len(value) != self.FORMAT.size:
            raise DataError(f"Failed to deserialize {self.TYPE_NAME}: Size of data received by {self.DESERIALIZER} "
                            f"is not {self.FORMAT.size}")
        return SchemaAndValue(self.SCHEMA, self.FORMAT.unpack(value)[0])

    def from_connect_header(self, topic: str, key: str, schema: Schema | None, value: Any) -> bytes | None:
        """Header form of :meth:`from_connect_data`."""
        return self.from_connect_data(topic, schema, value)

    def to_connect_header(self, topic: str, key: str, value: bytes | None) -> SchemaAndValue:
        """Header form of :meth:`to_connect_data`."""
        return self.to_connect_data(topic, value)


class _IntegralConverter(_NumberConverter):
    def _check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(type(value).__name__)
        return value


class _FloatingConverter(_NumberConverter):
    def _check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, float | int):
            raise TypeError(type(value).__name__)
        return float(value)


class ShortConverter(_IntegralConverter):
    """int16, 2 bytes."""

    FORMAT = struct.Struct(">h")
    SCHEMA = Schema(Type.INT16, optional=True)
    TYPE_NAME = "INT16"
    DESERIALIZER = "ShortDeserializer"


class IntegerConverter(_IntegralConverter):
    """int32, 4 bytes."""

    FORMAT = struct.Struct(">i")
    SCHEMA = Schema(Type.INT32, optional=True)
    TYPE_NAME = "INT32"
    DESERIALIZER = "IntegerDeserializer"


class LongConverter(_IntegralConverter):
    """int64, 8 bytes."""

    FORMAT = struct.Struct(">q")
    SCHEMA = Schema(Type.INT64, optional=True)
    TYPE_NAME = "INT64"
    DESERIALIZER = "LongDeserializer"


class FloatConverter(_FloatingConverter):
    """float32, 4 bytes IEEE 754."""

    FORMAT = struct.Struct(">f")
    SCHEMA = Schema(Type.FLOAT32, optional=True)
    TYPE_NAME = "FLOAT32"
    DESERIALIZER = "FloatDeserializer"


class DoubleConverter(_FloatingConverter):
    """float64, 8 bytes IEEE 754."""

    FORMAT = struct.Struct(">d")
    SCHEMA = Schema(Type.FLOAT64, optional=True)
    TYPE_NAME = "FLOAT64"
    DESERIALIZER = "DoubleDeserializer"


class BooleanConverter(_NumberConverter):
    """boolean, 1 byte (0 or 1)."""

    FORMAT = struct.Struct(">?")
    SCHEMA = Schema(Type.BOOLEAN, optional=True)
    TYPE_NAME = "BOOLEAN"
    DESERIALIZER = "BooleanDeserializer"

    def _check(self, value: Any) -> Any:
        if not isinstance(value, bool):
            raise TypeError(type(value).__name__)
        return value

    def to_connect_data(self, topic: str, value: bytes | None) -> SchemaAndValue:
        """1 byte: 0 is false, 1 is true, anything else an error."""
        if value is not None and len(value) == 1 and value[0] > 1:
            raise DataError("Failed to deserialize BOOLEAN: Unexpected byte received by BooleanDeserializer: "
                            f"{value[0]}")
        return super().to_connect_data(topic, value)
