"""Number and boolean converters: Kafka's serializers' bytes, optional schemas, Java's error messages."""

from __future__ import annotations

import math
import struct

import pytest

from connect.api.data import Type
from connect.api.errors import DataError
from converters.number import (
    BooleanConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
)


@pytest.mark.parametrize(("cls", "value", "data", "kind"), [
    (ShortConverter, -2, b"\xff\xfe", Type.INT16),
    (IntegerConverter, 2**31 - 1, b"\x7f\xff\xff\xff", Type.INT32),
    (LongConverter, -(2**63), b"\x80" + b"\x00" * 7, Type.INT64),
    (FloatConverter, 1.5, struct.pack(">f", 1.5), Type.FLOAT32),
    (DoubleConverter, -0.1, struct.pack(">d", -0.1), Type.FLOAT64),
    (BooleanConverter, True, b"\x01", Type.BOOLEAN),
])
def test_round_trip(cls: type, value: object, data: bytes, kind: Type) -> None:
    conv = cls()
    conv.configure({}, False)
    assert conv.from_connect_data("t", None, value) == data
    back = conv.to_connect_data("t", data)
    assert back.value == value and back.schema.type is kind and back.schema.optional
    assert conv.from_connect_header("t", "h", None, value) == data
    assert conv.from_connect_data("t", None, None) is None
    assert conv.to_connect_data("t", None).value is None


def test_errors() -> None:
    with pytest.raises(DataError, match=r"Failed to serialize to INT32 \(was class java.lang.String\)"):
        IntegerConverter().from_connect_data("t", None, "1")
    with pytest.raises(DataError, match=r"out of range|Failed to serialize"):
        IntegerConverter().from_connect_data("t", None, 2**31)
    with pytest.raises(DataError, match="Size of data received by LongDeserializer is not 8"):
        LongConverter().to_connect_data("t", b"\x00")
    with pytest.raises(DataError):
        BooleanConverter().to_connect_data("t", b"\x02")
    assert math.isnan(DoubleConverter().to_connect_data("t", struct.pack(">d", math.nan)).value)
