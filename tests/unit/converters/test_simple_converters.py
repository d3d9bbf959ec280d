"""StringConverter, ByteArrayConverter and the converter registry."""

from __future__ import annotations

from decimal import Decimal

import pytest

from connect.api.converter import Converter, HeaderConverter
from connect.api.data import BYTES, INT32, OPTIONAL_BYTES, OPTIONAL_STRING, STRING, SchemaAndValue
from connect.api.errors import ConfigError, DataError
from converters import CONVERTERS, HEADER_CONVERTERS
from converters.bytearray import ByteArrayConverter
from converters.header import SimpleHeaderConverter
from converters.json import JsonConverter
from converters.string import StringConverter


def test_string_converter_writes_text_in_the_configured_encoding() -> None:
    conv = StringConverter()
    conv.configure({}, False)
    assert conv.from_connect_data("t", STRING, "h\u00e9") == "h\u00e9".encode()
    assert conv.from_connect_data("t", INT32, 42) == b"42"
    assert conv.from_connect_data("t", None, Decimal("1.50")) == b"1.50"
    assert conv.from_connect_data("t", STRING, None) is None
    conv.configure({"converter.encoding": "ISO-8859-1"}, True)
    assert conv.from_connect_data("t", STRING, "h\u00e9") == b"h\xe9"
    assert conv.to_connect_data("t", b"h\xe9") == SchemaAndValue(OPTIONAL_STRING, "h\u00e9")
    assert conv.to_connect_data("t", None) == SchemaAndValue(OPTIONAL_STRING, None)
    with pytest.raises(DataError):
        conv.from_connect_data("t", STRING, "\u20ac")


def test_string_converter_rejects_unknown_encodings_and_bad_bytes() -> None:
    conv = StringConverter()
    with pytest.raises(ConfigError):
        conv.configure({"converter.encoding": "no-such-codec"}, False)
    conv.configure({}, False)
    with pytest.raises(DataError):
        conv.to_connect_data("t", b"\xff")


def test_bytearray_converter_passes_bytes_through() -> None:
    conv = ByteArrayConverter()
    conv.configure({}, False)
    assert conv.from_connect_data("t", BYTES, b"\x00\xff") == b"\x00\xff"
    assert conv.from_connect_data("t", None, bytearray(b"ab")) == b"ab"
    assert conv.from_connect_data("t", OPTIONAL_BYTES, None) is None
    assert conv.to_connect_data("t", b"x") == SchemaAndValue(OPTIONAL_BYTES, b"x")
    assert conv.to_connect_data("t", None) == SchemaAndValue(OPTIONAL_BYTES, None)
    with pytest.raises(DataError):
        conv.from_connect_data("t", STRING, b"x")
    with pytest.raises(DataError):
        conv.from_connect_data("t", None, "text")


@pytest.mark.parametrize(("name", "cls"), [
    ("org.apache.kafka.connect.json.JsonConverter", JsonConverter),
    ("JsonConverter", JsonConverter),
    ("converters.json.JsonConverter", JsonConverter),
    ("org.apache.kafka.connect.storage.StringConverter", StringConverter),
    ("StringConverter", StringConverter),
    ("converters.string.StringConverter", StringConverter),
    ("org.apache.kafka.connect.converters.ByteArrayConverter", ByteArrayConverter),
    ("ByteArrayConverter", ByteArrayConverter),
    ("converters.bytearray.ByteArrayConverter", ByteArrayConverter),
])
def test_converter_registry(name: str, cls: type) -> None:
    assert CONVERTERS[name] is cls
    assert isinstance(cls(), Converter)


@pytest.mark.parametrize(("name", "cls"), [
    ("org.apache.kafka.connect.storage.SimpleHeaderConverter", SimpleHeaderConverter),
    ("SimpleHeaderConverter", SimpleHeaderConverter),
    ("converters.header.SimpleHeaderConverter", SimpleHeaderConverter),
    ("org.apache.kafka.connect.storage.StringConverter", StringConverter),
    ("org.apache.kafka.connect.converters.ByteArrayConverter", ByteArrayConverter),
    ("org.apache.kafka.connect.json.JsonConverter", JsonConverter),
])
def test_header_converter_registry(name: str, cls: type) -> None:
    assert HEADER_CONVERTERS[name] is cls
    converter = cls()
    assert isinstance(converter, HeaderConverter)
    converter.configure({})
    schema, value = (BYTES, b"v") if cls is ByteArrayConverter else (STRING, "v")
    written = converter.from_connect_header("t", "k", schema, value)
    assert converter.to_connect_header("t", "k", written).value == value
