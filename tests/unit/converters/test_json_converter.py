"""JsonConverter tests. ``JAVA`` holds golden vectors recorded from Java's
``org.apache.kafka.connect.json.JsonConverter`` 4.3.1 (Temurin 25; run through a throwaway Maven
project) and stored in ``java_golden.json``. Every test that writes bytes compares them with the
Java output for the same input.
"""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from connect.api.data import (
    BOOLEAN,
    BYTES,
    FLOAT64,
    INT32,
    INT64,
    OPTIONAL_STRING,
    STRING,
    Schema,
    SchemaAndValue,
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
from connect.api.errors import ConfigError, DataError
from connect.javalang import double_to_string, float_to_string
from converters.json import JsonConverter

GOLDEN = json.loads((Path(__file__).parent / "java_golden.json").read_text("utf-8"))["json_converter"]
JAVA: dict[str, bytes | str | None] = {
    name: value.encode() if isinstance(value, str) else value and value["error"] for name, value in GOLDEN.items()
}
"""Java's bytes per case; a ``str`` is the Java exception (class and message), None a tombstone."""

INT8 = Schema(Type.INT8)
INT16 = Schema(Type.INT16)
FLOAT32 = Schema(Type.FLOAT32)
OPTIONAL_FLOAT64 = Schema(Type.FLOAT64, optional=True)


def converter(schemas: bool = True, decimal: str = "BASE64", replace: bool = True) -> JsonConverter:
    conv = JsonConverter()
    conv.configure({"schemas.enable": str(schemas).lower(), "decimal.format": decimal,
                    "replace.null.with.default": str(replace).lower()}, False)
    return conv


ON = converter()
OFF = converter(schemas=False)
NUMERIC = converter(decimal="NUMERIC")
NO_REPLACE = converter(replace=False)


def check(name: str, conv: JsonConverter, schema: Schema | None, value: Any) -> None:
    expected = JAVA[name]
    if isinstance(expected, str):
        with pytest.raises(DataError):
            conv.from_connect_data("t", schema, value)
    else:
        assert conv.from_connect_data("t", schema, value) == expected


def check_both(name: str, schema: Schema | None, value: Any) -> None:
    check(name + ".on", ON, schema, value)
    check(name + ".off", OFF, schema, value)


# ---------------------------------------------------------------------------------------------- primitives

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


@pytest.mark.parametrize(("name", "schema", "value"), PRIMITIVES, ids=[p[0] for p in PRIMITIVES])
def test_primitives_match_java(name: str, schema: Schema, value: Any) -> None:
    check_both(name, schema, value)


FLOATS32 = [1.5, 0.1, 3.4028235e38, 1.4e-45, 1e7, 9999999.0, 1e-3, 9.99e-4, 123456.79, -0.0, 0.0, 1.17549435e-38,
            16777216.0, 0.3, 2.7182817, 1.0e10, math.nan, math.inf, -math.inf]
FLOATS64 = [1.0, 0.1, 1e10, 1e-5, 1e7, 9999999.0, 9999999.999, 0.001, 0.00099, 1e23, 2e23, 4.9e-324,
            1.7976931348623157e308, -0.0, 0.0, 123456789.123, 1.2345678901234567e19, 100.0, 1e-3 - 1e-19,
            2.2250738585072014e-308, 1.0 / 3, -2.5e-7, 5e-5, 12345678.9, math.nan, math.inf, -math.inf]


@pytest.mark.parametrize(("index", "value"), list(enumerate(FLOATS32)))
def test_float32_matches_java(index: int, value: float) -> None:
    check(f"float32.{index}", ON, FLOAT32, value)


@pytest.mark.parametrize(("index", "value"), list(enumerate(FLOATS64)))
def test_float64_matches_java(index: int, value: float) -> None:
    check(f"float64.{index}", ON, FLOAT64, value)


def test_nan_without_schemas_is_a_quoted_string() -> None:
    check("float64nan.off", OFF, FLOAT64, math.nan)


@pytest.mark.parametrize(("value", "text"), [
    (1.0, "1.0"), (1e10, "1.0E10"), (1e-5, "1.0E-5"), (123.456, "123.456"), (1e7, "1.0E7"), (9999999.5, "9999999.5"),
    (0.001, "0.001"), (0.000999, "9.99E-4"), (-1.5e300, "-1.5E300"), (1e21, "1.0E21"), (12345.0, "12345.0"),
])
def test_java_double_text(value: float, text: str) -> None:
    assert double_to_string(value) == text


def test_java_float_rounds_to_float32_first() -> None:
    assert float_to_string(0.1) == "0.1"
    assert float_to_string(16777217.0) == "1.6777216E7"
    assert float_to_string(1e39) == "Infinity"


# ---------------------------------------------------------------------------------------------- containers


def test_arrays_match_java() -> None:
    check_both("array_int32", array_schema(INT32), [1, 2, 3])
    check_both("array_optstr", array_schema(OPTIONAL_STRING, optional=True), ["a", None, "c"])
    check_both("array_empty", array_schema(INT32), [])


def test_maps_match_java() -> None:
    check_both("map_str", map_schema(STRING, INT32), {"b": 2, "a": 1})
    check_both("map_int", map_schema(INT32, STRING), {2: "two", 1: "one"})
    check_both("map_empty_int", map_schema(INT32, STRING), {})


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


def test_struct_with_every_type_matches_java() -> None:
    check_both("struct_all", ALL, all_struct())
    check("struct_all.num", NUMERIC, ALL, all_struct())
    check("struct_all.norepl", NO_REPLACE, ALL, all_struct())


def test_schema_with_unicode_name_and_control_characters_in_doc() -> None:
    fancy = dataclasses.replace(
        struct_schema([("a", array_schema(map_schema(STRING, OPTIONAL_FLOAT64, optional=True), optional=True))],
                      name='n\u00e9/"x"'),
        doc="line\nbreak\x01",
    )
    check_both("fancy", fancy, Struct(fancy, {"a": [{"z": 1e21, "y": None}, None]}))


# ---------------------------------------------------------------------------------------------- logical types


@pytest.mark.parametrize(("name", "value"), [
    ("dec.pos", Decimal("123.45")), ("dec.neg", Decimal("-123.45")), ("dec.zero", Decimal("0.00")),
    ("dec.128", Decimal("1.28")), ("dec.m128", Decimal("-1.28")),
])
def test_decimal_base64_matches_java(name: str, value: Decimal) -> None:
    check_both(name, decimal_schema(2), value)


def test_decimal_edge_cases_match_java() -> None:
    check_both("dec.big", decimal_schema(10), Decimal("12345678901234567890.1234567890"))
    check("dec.num.pos", NUMERIC, decimal_schema(2), Decimal("123.45"))
    check("dec.num.zero", NUMERIC, decimal_schema(2), Decimal("0.00"))
    check("dec.num.negscale", NUMERIC, decimal_schema(-3), Decimal("1E+3"))
    check("dec.num.small", NUMERIC, decimal_schema(9), Decimal("1E-9"))
    check("dec.num.small8", NUMERIC, decimal_schema(8), Decimal("0.00000123"))


def test_decimal_scale_mismatch() -> None:
    # Java rejects any other scale; we rescale when no digit is lost and reject otherwise.
    assert ON.from_connect_data("t", decimal_schema(2), Decimal("123.450")) == JAVA["dec.pos.on"]
    assert ON.from_connect_data("t", decimal_schema(2), Decimal("1.5")) == ON.from_connect_data(
        "t", decimal_schema(2), Decimal("1.50"))
    with pytest.raises(DataError, match="mismatching scale"):
        ON.from_connect_data("t", decimal_schema(2), Decimal("1.234"))
    with pytest.raises(DataError):
        ON.from_connect_data("t", decimal_schema(2), Decimal("NaN"))


def test_date_time_timestamp_match_java() -> None:
    check_both("date", date_schema(), date(2024, 1, 1))
    check_both("date.neg", date_schema(), date(1969, 12, 31))
    check_both("time", time_schema(), time(12, 0))
    check_both("ts", timestamp_schema(), datetime(2024, 1, 1, tzinfo=UTC))
    check_both("ts.neg", timestamp_schema(), datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC))


def test_logical_values_may_be_given_encoded_or_naive() -> None:
    assert ON.from_connect_data("t", date_schema(), 19723) == JAVA["date.on"]
    assert ON.from_connect_data("t", timestamp_schema(), datetime(2024, 1, 1)) == JAVA["ts.on"]
    assert ON.from_connect_data("t", date_schema(), datetime(2024, 1, 1, tzinfo=UTC)) == JAVA["date.on"]
    with pytest.raises(DataError):
        ON.from_connect_data("t", date_schema(), datetime(2024, 1, 1, 1, tzinfo=UTC))
    with pytest.raises(DataError):
        ON.from_connect_data("t", timestamp_schema(), "2024-01-01")


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


def test_defaults_of_every_kind_match_java() -> None:
    check_both("struct_defaults", DEFAULTS, Struct(DEFAULTS))
    check("struct_defaults.num", NUMERIC, DEFAULTS, Struct(DEFAULTS))


# ---------------------------------------------------------------------------------------------- nulls


def test_null_handling_matches_java() -> None:
    nested = struct_schema([("s", struct_schema([("q", INT32)], optional=True))])
    check_both("struct_optnested_null", nested, Struct(nested))
    check_both("null.optstr", OPTIONAL_STRING, None)
    check_both("null.reqstr", STRING, None)
    with_default = Schema(Type.STRING, optional=True, default="d")
    check_both("null.default", with_default, None)
    check("null.default.norepl", NO_REPLACE, with_default, None)
    required_with_default = Schema(Type.INT64, default=5)
    check_both("null.reqdefault", required_with_default, None)
    check("null.reqdefault.norepl", NO_REPLACE, required_with_default, None)
    check_both("null.optstruct", struct_schema([("a", INT32)], name="opt.S", optional=True), None)
    required = struct_schema([("a", INT32)])
    check_both("struct.missingreq", required, Struct(required))


def test_tombstone_only_without_schema_and_value() -> None:
    check_both("tombstone", None, None)
    assert OFF.from_connect_data("t", OPTIONAL_STRING, None) == b"null"


# ---------------------------------------------------------------------------------------------- schemaless


def test_schemaless_values_match_java() -> None:
    value: dict[object, object] = {"i": 1, "l": 1234567890123, "d": 1e10, "f": 0.5, "b": True, "n": None, "s": "x\x01",
             "by": b"\x01\x02\x03", "list": [1, "two", None, []], "intkeys": {1: "a", 2: [True]}, "empty": {}}
    check_both("schemaless.map", None, value)
    check_both("schemaless.list", None, [1, 2.5, "x"])
    check_both("schemaless.str", None, "hello")
    check_both("schemaless.int", None, 5)
    check_both("schemaless.double", None, 1e-7)
    check_both("schemaless.bool", None, False)
    check_both("schemaless.mixedkeys", None, {"a": 1, 2: 2})


def test_schemaless_rejects_what_java_rejects() -> None:
    check_both("schemaless.struct", None, Struct(INNER, {"x": 7, "y": "why"}))
    check_both("schemaless.decimal", None, Decimal("1.5"))
    check_both("schemaless.date", None, datetime(1970, 1, 1, tzinfo=UTC))


def test_lone_surrogate_is_escaped_like_jackson() -> None:
    check_both("surrogate", STRING, "a\ud800b")


# ---------------------------------------------------------------------------------------------- type errors


@pytest.mark.parametrize(("schema", "value"), [
    (INT32, "1"), (INT32, True), (INT8, 128), (INT64, 2**63), (STRING, 1), (BOOLEAN, 1), (BYTES, "x"),
    (FLOAT64, "1.0"), (array_schema(INT32), {1}), (map_schema(STRING, INT32), [1]), (INNER, {"x": 1}),
])
def test_values_that_do_not_match_the_schema_raise_data_error(schema: Schema, value: Any) -> None:
    with pytest.raises(DataError):
        ON.from_connect_data("t", schema, value)


def test_struct_of_another_schema_is_rejected() -> None:
    other = struct_schema([("x", INT32)])
    with pytest.raises(DataError, match="Mismatching schema"):
        ON.from_connect_data("t", INNER, Struct(other, {"x": 1}))


def test_int_is_accepted_for_floats() -> None:
    assert OFF.from_connect_data("t", FLOAT64, 3) == b"3.0"


# ---------------------------------------------------------------------------------------------- reading


def _java_reads_as_zero(data: bytes | str | None) -> bool:
    """Java reads "NaN", "Infinity" and -0.0 back as 0.0 (see test_json_roundtrip_golden.py)."""
    return isinstance(data, bytes) and data.endswith((b':"NaN"}', b'Infinity"}', b":-0.0}"))


@pytest.mark.parametrize("name", [n for n, v in JAVA.items() if ((isinstance(v, bytes) and n.endswith((".on", ".num")))
                                  or n.startswith(("float32.", "float64."))) and not _java_reads_as_zero(v)])
def test_java_output_reads_back_and_rewrites_identically(name: str) -> None:
    conv = NUMERIC if name.endswith(".num") else ON
    data = JAVA[name]
    assert isinstance(data, bytes)
    read = conv.to_connect_data("t", data)
    assert conv.from_connect_data("t", read.schema, read.value) == data


def test_round_trip_restores_every_type() -> None:
    original = all_struct()
    for conv in (ON, NUMERIC):
        read = conv.to_connect_data("t", conv.from_connect_data("t", ALL, original))
        assert read.schema == ALL
        names = [f.name for f in ALL.fields]
        assert [read.value.get(name) for name in names] == [original.get(name) for name in names]


def test_logical_types_read_as_python_values() -> None:
    read = ON.to_connect_data("t", ON.from_connect_data("t", ALL, all_struct()))
    assert read.value.get("dec") == Decimal("-123.45")
    assert read.value.get("date") == date(2024, 1, 1)
    assert read.value.get("time") == time(12, 0, 0, 123000)
    assert read.value.get("ts") == datetime(2024, 1, 1, 0, 0, 0, 123000, tzinfo=UTC)
    assert read.value.get("mi") == {5: Struct(INNER, {"x": 8, "y": None}), -1: Struct(INNER, {"x": 7, "y": "why"})}


def test_numeric_decimal_reads_exactly() -> None:
    read = NUMERIC.to_connect_data("t", NUMERIC.from_connect_data("t", decimal_schema(20), Decimal("0." + "1" * 20)))
    assert read.value == Decimal("0." + "1" * 20)


def test_schemaless_reading() -> None:
    assert OFF.to_connect_data("t", b'{"a":1,"b":[1.5,true,null],"c":{"d":"e"}}') == SchemaAndValue(
        None, {"a": 1, "b": [1.5, True, None], "c": {"d": "e"}})
    assert ON.to_connect_data("t", b'{"schema":null,"payload":[1,2]}') == SchemaAndValue(None, [1, 2])


def test_reading_nulls() -> None:
    assert ON.to_connect_data("t", None) == SchemaAndValue(None, None)
    assert OFF.to_connect_data("t", b"null") == SchemaAndValue(None, None)
    read = ON.to_connect_data("t", b'{"schema":{"type":"string","optional":true,"default":"d"},"payload":null}')
    assert read.value == "d"
    read = NO_REPLACE.to_connect_data("t", b'{"schema":{"type":"string","optional":true,"default":"d"},"payload":null}')
    assert read.value is None
    with pytest.raises(DataError, match="Invalid null value"):
        ON.to_connect_data("t", b'{"schema":{"type":"string","optional":false},"payload":null}')


@pytest.mark.parametrize("data", [
    b'{"payload":1}', b'{"schema":null,"payload":1,"extra":2}', b"[1]", b"not json",
    b'{"schema":{"type":"nope"},"payload":1}', b'{"schema":{"optional":true},"payload":1}',
    b'{"schema":{"type":"int32","optional":false},"payload":"1"}',
    b'{"schema":{"type":"bytes","optional":false},"payload":"***"}',
    b'{"schema":{"type":"struct","fields":[{"type":"int32"}]},"payload":{}}',
    b'{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},"payload":{"1":1}}',
])
def test_malformed_input_raises_data_error(data: bytes) -> None:
    with pytest.raises(DataError):
        ON.to_connect_data("t", data)


def test_equal_schemas_read_back_as_one_object() -> None:
    data = ON.from_connect_data("t", INNER, Struct(INNER, {"x": 1}))
    assert ON.to_connect_data("t", data).schema is ON.to_connect_data("t", data).schema


# ---------------------------------------------------------------------------------------------- fast path


def test_fast_path_matches_the_reference_writer() -> None:
    from converters.json_writer import Options, RawText, dumps_reference, nullable

    texts = ["plain", "é\U0001F600\u2028", "\\u001f \\\\u0000", "ctl\x00\x1f\x7f", 'q"\\', "/<>&", "\U0010FFFF"]
    nested = struct_schema([("s", STRING), ("arr", array_schema(STRING)), ("m", map_schema(STRING, STRING)),
                            ("inner", struct_schema([("t", OPTIONAL_STRING), ("f", FLOAT64)], optional=True))])
    for text in texts:
        value = Struct(nested, {"s": text, "arr": [text, text[::-1]], "m": {text: text},
                                "inner": Struct(nested.fields[3].schema, {"t": text, "f": 1e-9})})
        for numeric in (False, True):
            reference = dumps_reference(nullable(nested, Options(numeric, True, RawText))(value))
            conv = converter(schemas=False, decimal="NUMERIC" if numeric else "BASE64")
            assert conv.from_connect_data("t", nested, value) == reference
            assert OFF.to_connect_data("t", reference).value == {
                "s": text, "arr": [text, text[::-1]], "m": {text: text}, "inner": {"t": text, "f": 1e-9}}


def test_schema_json_is_cached_per_schema_object() -> None:
    conv = converter()
    conv.configure({"schemas.cache.size": "2"}, False)
    schemas = [struct_schema([("a", INT32)], name=f"s{i}") for i in range(3)]
    first = conv.as_json_schema(schemas[0])
    assert conv.as_json_schema(schemas[0]) is first
    conv.as_json_schema(schemas[1])
    conv.as_json_schema(schemas[2])
    assert conv.as_json_schema(schemas[0]) is not first  # evicted, rebuilt
    assert conv.as_json_schema(schemas[0]) == first


# ---------------------------------------------------------------------------------------------- configuration


def test_configuration_defaults_and_validation() -> None:
    conv = JsonConverter()
    conv.configure({}, True)
    assert (conv.schemas_enabled, conv.replace_null, conv.cache_size) == (True, True, 1000)
    conv.configure({"schemas.enable": False, "decimal.format": "numeric"}, False)
    assert conv.from_connect_data("t", decimal_schema(2), Decimal("1.00")) == b"1.00"
    for bad in ({"schemas.enable": "yes"}, {"decimal.format": "HEX"}, {"schemas.cache.size": "many"}):
        with pytest.raises(ConfigError):
            conv.configure(bad, False)


def test_equal_schema_objects_share_the_cached_json() -> None:
    conv = converter()
    def build() -> Schema:
        return struct_schema([("a", INT32), ("b", array_schema(STRING))], name="same")
    first, second = build(), build()
    assert first is not second
    assert conv.as_json_schema(second) is conv.as_json_schema(first)
    assert conv.from_connect_data("t", second, Struct(first, {"a": 1, "b": []})) == \
        b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"},{"type":"array",' \
        b'"items":{"type":"string","optional":false},"optional":false,"field":"b"}],"optional":false,"name":"same"},' \
        b'"payload":{"a":1,"b":[]}}'
