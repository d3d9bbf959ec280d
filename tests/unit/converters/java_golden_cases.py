"""The input cases of ``java_golden.json``, read by the tests (test_json_converter.py, test_header_converter.py) and by
the recorder that runs them through the real Java classes (``python -m compat.record java-converters``, see
compat/converters_golden.py): Kafka 4.3.1's ``JsonConverter`` (per converter config) and ``SimpleHeaderConverter``
(writing a value, and inferring a schema from header text).

The golden keeps the order below; a case whose Java result is an exception is stored as ``{"error": ...}``.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from connect.api.data import (
    BOOLEAN,
    BYTES,
    FLOAT64,
    INT32,
    INT64,
    OPTIONAL_STRING,
    STRING,
    Schema,
    Struct,
    Type,
    array_schema,
    date_schema,
    decimal_schema,
    map_schema,
    struct_schema,
    time_schema,
    timestamp_schema,
)

INT8 = Schema(Type.INT8)
INT16 = Schema(Type.INT16)
FLOAT32 = Schema(Type.FLOAT32)
OPTIONAL_FLOAT64 = Schema(Type.FLOAT64, optional=True)

JSON_CONFIGS: dict[str, dict[str, str]] = {
    "on": {"schemas.enable": "true", "decimal.format": "BASE64", "replace.null.with.default": "true"},
    "off": {"schemas.enable": "false", "decimal.format": "BASE64", "replace.null.with.default": "true"},
    "num": {"schemas.enable": "true", "decimal.format": "NUMERIC", "replace.null.with.default": "true"},
    "norepl": {"schemas.enable": "true", "decimal.format": "BASE64", "replace.null.with.default": "false"},
}
"""The JsonConverter configs the cases run under, by the short name a case names."""

PRIMITIVES = [
    ("int8", INT8, -128),
    ("int16", INT16, -32768),
    ("int32", INT32, 2**31 - 1),
    ("int64", INT64, -(2**63)),
    ("bool", BOOLEAN, True),
    ("string", STRING, "a\x00\x01\b\t\n\x0b\f\r\x1f\x7f/\u2028\u2029\u00e9\U0001F600\"\\\x80\xa0\ufeff<>&'"),
    ("bytes", BYTES, bytes([0, 1, 2, 255, 254, 62, 63])),
    ("bytes_empty", BYTES, b""),
]
FLOATS32 = [1.5, 0.1, 3.4028235e38, 1.4e-45, 1e7, 9999999.0, 1e-3, 9.99e-4, 123456.79, -0.0, 0.0, 1.17549435e-38,
            16777216.0, 0.3, 2.7182817, 1.0e10, math.nan, math.inf, -math.inf]
FLOATS64 = [1.0, 0.1, 1e10, 1e-5, 1e7, 9999999.0, 9999999.999, 0.001, 0.00099, 1e23, 2e23, 4.9e-324,
            1.7976931348623157e308, -0.0, 0.0, 123456789.123, 1.2345678901234567e19, 100.0, 1e-3 - 1e-19,
            2.2250738585072014e-308, 1.0 / 3, -2.5e-7, 5e-5, 12345678.9, math.nan, math.inf, -math.inf]

INNER = struct_schema([("x", INT32), ("y", OPTIONAL_STRING)], name="inner.Name", optional=True)
ALL = dataclasses.replace(
    struct_schema(
        [
            ("i8", INT8), ("i16", INT16), ("i32", INT32), ("i64", INT64), ("f32", FLOAT32), ("f64", FLOAT64),
            ("b", BOOLEAN), ("s", STRING), ("by", BYTES), ("arr", array_schema(STRING)),
            ("m", map_schema(STRING, INT64, optional=True)), ("mi", map_schema(INT64, INNER)), ("inner", INNER),
            ("dec", decimal_schema(2, optional=True)), ("date", date_schema()), ("time", time_schema()),
            ("ts", timestamp_schema()), ("opt", OPTIONAL_STRING),
            ("defs", Schema(Type.STRING, doc="has default", default="dflt")),
            ("defi", Schema(Type.INT32, optional=True, default=42)),
        ],
        name="ns.All", version=3, doc='doc \u00e9 "q"',
    ),
    parameters={"p1": "v1", "a0": "v0"},
)


def all_struct() -> Struct:
    in1 = Struct(INNER, {"x": 7, "y": "why"})
    in2 = Struct(INNER, {"x": 8, "y": None})
    return Struct(ALL, {
        "i8": 1, "i16": 2, "i32": 3, "i64": 4, "f32": 1.25, "f64": 2.5e-8, "b": False, "s": "str",
        "by": bytes([9, 8, 7]), "arr": ["x", "y"], "m": {"k": 9}, "mi": {5: in2, -1: in1}, "inner": in1,
        "dec": Decimal("-123.45"), "date": date(2024, 1, 1), "time": time(12, 0, 0, 123000),
        "ts": datetime(2024, 1, 1, 0, 0, 0, 123000, tzinfo=UTC),
    })


DEFAULTS = struct_schema([
    ("d", dataclasses.replace(decimal_schema(1), default=Decimal("2.5"))),
    ("dt", dataclasses.replace(date_schema(), default=date(1970, 1, 2))),
    ("tm", dataclasses.replace(time_schema(optional=True), default=time(0, 0, 1))),
    ("t", dataclasses.replace(timestamp_schema(), default=datetime(1970, 1, 1, 0, 0, 0, 5000, tzinfo=UTC))),
    ("by", Schema(Type.BYTES, default=b"\x01")),
    ("f", Schema(Type.FLOAT64, default=1.5)),
    ("arr", dataclasses.replace(array_schema(INT32), default=[1, 2])),
    ("mp", dataclasses.replace(map_schema(STRING, STRING), default={"a": "b"})),
])
FANCY = dataclasses.replace(
    struct_schema([("a", array_schema(map_schema(STRING, OPTIONAL_FLOAT64, optional=True), optional=True))],
                  name='n\u00e9/"x"'),
    doc="line\nbreak\x01",
)
NESTED = struct_schema([("s", struct_schema([("q", INT32)], optional=True))])
REQUIRED = struct_schema([("a", INT32)])


def _json_cases() -> dict[str, tuple[str, Schema | None, Any]]:
    cases: dict[str, tuple[str, Schema | None, Any]] = {}

    def both(name: str, schema: Schema | None, value: Any) -> None:
        cases[f"{name}.on"] = ("on", schema, value)
        cases[f"{name}.off"] = ("off", schema, value)

    for name, schema, value in PRIMITIVES:
        both(name, schema, value)
    for index, value in enumerate(FLOATS32):
        cases[f"float32.{index}"] = ("on", FLOAT32, value)
    for index, value in enumerate(FLOATS64):
        cases[f"float64.{index}"] = ("on", FLOAT64, value)
    cases["float64nan.off"] = ("off", FLOAT64, math.nan)
    both("array_int32", array_schema(INT32), [1, 2, 3])
    both("array_optstr", array_schema(OPTIONAL_STRING, optional=True), ["a", None, "c"])
    both("array_empty", array_schema(INT32), [])
    both("map_str", map_schema(STRING, INT32), {"b": 2, "a": 1})
    both("map_int", map_schema(INT32, STRING), {2: "two", 1: "one"})
    both("map_empty_int", map_schema(INT32, STRING), {})
    both("struct_all", ALL, all_struct())
    cases["struct_all.num"] = ("num", ALL, all_struct())
    cases["struct_all.norepl"] = ("norepl", ALL, all_struct())
    for name, number in [("dec.pos", "123.45"), ("dec.neg", "-123.45"), ("dec.zero", "0.00"), ("dec.128", "1.28"),
                         ("dec.m128", "-1.28")]:
        both(name, decimal_schema(2), Decimal(number))
    both("dec.big", decimal_schema(10), Decimal("12345678901234567890.1234567890"))
    cases["dec.num.pos"] = ("num", decimal_schema(2), Decimal("123.45"))
    cases["dec.num.zero"] = ("num", decimal_schema(2), Decimal("0.00"))
    cases["dec.num.negscale"] = ("num", decimal_schema(-3), Decimal("1E+3"))
    cases["dec.num.small"] = ("num", decimal_schema(9), Decimal("1E-9"))
    cases["dec.num.small8"] = ("num", decimal_schema(8), Decimal("0.00000123"))
    cases["dec.badscale"] = ("on", decimal_schema(2), Decimal("1.5"))
    both("date", date_schema(), date(2024, 1, 1))
    both("date.neg", date_schema(), date(1969, 12, 31))
    both("time", time_schema(), time(12, 0))
    both("ts", timestamp_schema(), datetime(2024, 1, 1, tzinfo=UTC))
    both("ts.neg", timestamp_schema(), datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC))
    both("struct_defaults", DEFAULTS, Struct(DEFAULTS))
    cases["struct_defaults.num"] = ("num", DEFAULTS, Struct(DEFAULTS))
    both("struct_optnested_null", NESTED, Struct(NESTED))
    both("null.optstr", OPTIONAL_STRING, None)
    both("null.reqstr", STRING, None)
    with_default = Schema(Type.STRING, optional=True, default="d")
    both("null.default", with_default, None)
    cases["null.default.norepl"] = ("norepl", with_default, None)
    required_with_default = Schema(Type.INT64, default=5)
    cases["null.reqdefault.norepl"] = ("norepl", required_with_default, None)
    both("null.reqdefault", required_with_default, None)
    both("tombstone", None, None)
    both("null.optstruct", struct_schema([("a", INT32)], name="opt.S", optional=True), None)
    both("struct.missingreq", REQUIRED, Struct(REQUIRED))
    both("schemaless.map", None, {"i": 1, "l": 1234567890123, "d": 1e10, "f": 0.5, "b": True, "n": None, "s": "x\x01",
                                  "by": b"\x01\x02\x03", "list": [1, "two", None, []], "intkeys": {1: "a", 2: [True]},
                                  "empty": {}})
    both("schemaless.list", None, [1, 2.5, "x"])
    both("schemaless.str", None, "hello")
    both("schemaless.int", None, 5)
    both("schemaless.double", None, 1e-7)
    both("schemaless.bool", None, False)
    both("schemaless.struct", None, Struct(INNER, {"x": 7, "y": "why"}))
    both("schemaless.decimal", None, Decimal("1.5"))
    both("schemaless.date", None, datetime(1970, 1, 1, tzinfo=UTC))
    both("schemaless.mixedkeys", None, {"a": 1, 2: 2})
    both("surrogate", STRING, "a\ud800b")
    both("fancy", FANCY, Struct(FANCY, {"a": [{"z": 1e21, "y": None}, None]}))
    return cases


JSON_CASES = _json_cases()
"""Case name -> (JsonConverter config name, schema, value): the section ``json_converter``."""

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SIMPLE = struct_schema([("s", STRING)])
OUTER = struct_schema([("in", SIMPLE), ("dec", decimal_schema(2)), ("d", date_schema()), ("b", BYTES),
                       ("f", FLOAT64), ("l", array_schema(STRING)), ("bool", BOOLEAN)])
HEADER_CASES: dict[str, tuple[Schema | None, Any]] = {
    "null": (OPTIONAL_STRING, None),
    "nullschema_null": (None, None),
    "string": (STRING, 'h\u00e9llo "q"'),
    "int8": (Schema(Type.INT8), -5),
    "int32": (INT32, 42),
    "int64": (INT64, 1234567890123),
    "float32": (Schema(Type.FLOAT32), 1.5),
    "float64": (FLOAT64, 1e10),
    "float64b": (FLOAT64, 0.1),
    "bool": (BOOLEAN, True),
    "bytes": (BYTES, bytes([1, 2, 255])),
    "list": (array_schema(STRING), ["a", "b c", 'd"e']),
    "list_int": (array_schema(INT32), [1, 2]),
    "map": (map_schema(STRING, STRING), {"k": "v", "n": 1}),
    "map_schemaless": (None, {"k": "v", "n": 1}),
    "list_schemaless": (None, [1, "x", None, True]),
    "struct": (INNER, Struct(INNER, {"x": 7, "y": "why"})),
    "struct2": (INNER, Struct(INNER, {"x": 8})),
    "decimal": (decimal_schema(2), Decimal("123.45")),
    "date": (date_schema(), date(2024, 1, 1)),
    "time": (time_schema(), time(12, 0, 0, 123000)),
    "ts": (timestamp_schema(), datetime(2024, 1, 1, 0, 0, 0, 123000, tzinfo=UTC)),
    "string_schemaless": (None, "plain"),
    "int_schemaless": (None, 7),
    "empty": (STRING, ""),
    "list_bytes": (None, [b"\x01\x02", "s"]),
    "list_double": (None, [1.0, 1e10, 0.5]),
    "map_nested": (None, {1: {"a": [1, 2]}, 'k\\"\n': None}),
    "struct_nested": (OUTER, Struct(OUTER, {
        "in": Struct(SIMPLE, {"s": 'q"\\x'}), "dec": Decimal("1.50"), "d": date(1970, 1, 2), "b": b"A", "f": 2.5,
        "l": ["a"], "bool": True})),
    "list_structs": (array_schema(SIMPLE), [Struct(SIMPLE, {"s": "a"})]),
    "string_ctl": (STRING, 'a\n\x01"\\'),
    "decimal_big": (decimal_schema(0), Decimal("1E+3")),
    "decimal_small": (decimal_schema(9), Decimal("1E-9")),
    "ts_neg": (timestamp_schema(), EPOCH - timedelta(milliseconds=1)),
    "float32_small": (Schema(Type.FLOAT32), 1e-5),
    "int16": (Schema(Type.INT16), 300),
    "ts_midnight": (timestamp_schema(), datetime(2024, 1, 1, tzinfo=UTC)),
    "time_zero": (time_schema(), time(0)),
    "date_epoch": (date_schema(), date(1970, 1, 1)),
    "ts_small": (timestamp_schema(), EPOCH + timedelta(milliseconds=5)),
    "ts_old": (timestamp_schema(), EPOCH - timedelta(milliseconds=86400001)),
    "date_nosch": (None, date(1970, 1, 2)),
}
"""Case name -> (schema, value) written by ``SimpleHeaderConverter.fromConnectHeader``: ``simple_header_converter``."""

HEADER_TEXTS: tuple[str, ...] = (
    "hello", "123", "-5", "1234567890123", "99999999999999999999", "1.5", "1e10", "true", "FALSE", "", " ",
    "[1,2,3]", '["a","b"]', '[1,"a"]', '{"a":1,"b":2}', '{"a":"x"}', "[]", "{}", "2024-01-01", "12:00:00.123Z",
    "2024-01-01T00:00:00.123Z", '"quoted"', "a,b", "1.0", "-0.5", "127", "128", "32768", "2147483648", "[1,2",
    "hello world", "0x10", "NaN", "[1,300]", "[1,1.5]", '["a",null]', '{"a":[1]}', "[true,false]", "{1:2}",
    "  123  ", "+5", "[ 1 , 2 ]", '{"a":{"b":1}}', "-0", "00012", "1.5e3", "3.4e39", "1e400", "12:00:00",
    "2024-01-01T00:00:00Z", '"a"', '["a,b","c"]', "[a,b]", "{a:b}", "true ", "0.1", "1.25", "-9223372036854775808",
    "9223372036854775808", "1E-50", "[[1],[2]]", '[{"a":1}]', '{"a":1,"b":"x"}', '[1,"a",null]', "[null]",
    '["a\\"b"]', '"a\\"b"', "True",
)
"""Header texts whose schema and value ``SimpleHeaderConverter.toConnectHeader`` infers: ``header_inference``, each
stored as ``[schema, value]``: ``TYPE|name|optional[|items][|keys,values]`` and ``Class=toString`` (a Date as
``Date=<epoch millis>``)."""
