"""Converters: Connect data <-> bytes.

* :class:`~converters.json.JsonConverter` (``org.apache.kafka.connect.json.JsonConverter``)
* :class:`~converters.string.StringConverter` (``org.apache.kafka.connect.storage.StringConverter``)
* :class:`~converters.bytearray.ByteArrayConverter` (``org.apache.kafka.connect.converters.ByteArrayConverter``)
* :class:`~converters.header.SimpleHeaderConverter` (``org.apache.kafka.connect.storage.SimpleHeaderConverter``)

:data:`CONVERTERS` and :data:`HEADER_CONVERTERS` map every name a configuration may use for them (the
Java class name, its simple name and our dotted Python path) to the class. Key and value converters
are configured with ``configure(configs, is_key)``, header converters with ``configure(configs)``.
"""

from __future__ import annotations

from converters.bytearray import ByteArrayConverter
from converters.header import SimpleHeaderConverter
from converters.json import JsonConverter
from converters.string import StringConverter

__all__ = [
    "CONVERTERS",
    "HEADER_CONVERTERS",
    "ByteArrayConverter",
    "JsonConverter",
    "SimpleHeaderConverter",
    "StringConverter",
]


def _names(java_package: str, cls: type) -> dict[str, type]:
    """The Java class name, the simple name and the Python path of ``cls``."""
    return {f"{java_package}.{cls.__name__}": cls, cls.__name__: cls, f"{cls.__module__}.{cls.__name__}": cls}


CONVERTERS: dict[str, type] = {
    **_names("org.apache.kafka.connect.json", JsonConverter),
    **_names("org.apache.kafka.connect.storage", StringConverter),
    **_names("org.apache.kafka.connect.converters", ByteArrayConverter),
}
"""Key/value converter classes by every accepted name."""

HEADER_CONVERTERS: dict[str, type] = {
    **_names("org.apache.kafka.connect.storage", SimpleHeaderConverter),
    **_names("org.apache.kafka.connect.json", JsonConverter),
    **_names("org.apache.kafka.connect.storage", StringConverter),
    **_names("org.apache.kafka.connect.converters", ByteArrayConverter),
}
"""Header converter classes by every accepted name."""
