"""JsonConverter tests. ``JAVA`` holds golden vectors recorded from Java's
``org.apache.kafka.connect.json.JsonConverter`` 4.3.1 and stored in ``java_golden.json``; the inputs are the cases of
``java_golden_cases.py`` (re-record with ``python -m compat.record java-converters``). Every golden case's bytes are
compared with the Java output for the same input.
"""

from __future__ import annotations

import json
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
    array_schema,
    date_schema,
    decimal_schema,
    map_schema,
    struct_schema,
    timestamp_schema,
)
from connect.api.errors import ConfigError, DataError
from connect.javalang import double_to_string, float_to_string
from converters.json import JsonConverter
from tests.unit.converters.java_golden_cases import (
    ALL,
    INNER,
    INT8,
    JSON_CASES,
    JSON_CONFIGS,
    all_struct,
)

GOLDEN = json.loads((Path(__file__).parent / "java_golden.json").read_text("utf-8"))["json_converter"]
JAVA: dict[str, bytes | str | None] = {
    name: value.encode() if isinstance(value, str) else value and value["error"] for name, value in GOLDEN.items()
}
"""Java's bytes per case; a ``str`` is the Java exception (class and message), None a tombstone."""
KNOWN_DEVIATIONS = {
    "dec.badscale": "Java rejects a decimal of another scale; we rescale when no digit is lost (1.5 -> 1.50)",
}

GOLDEN_CASES = {name: case for name, case in JSON_CASES.items() if name not in KNOWN_DEVIATIONS}


def converter(schemas: bool = True, decimal: str = "BASE64", replace: bool = True) -> JsonConverter:
    conv = JsonConverter()
    conv.configure({"schemas.enable": str(schemas).lower(), "decimal.format": decimal,
                    "replace.null.with.default": str(replace).lower()}, False)
    return conv


ON = converter()
OFF = converter(schemas=False)
NUMERIC = converter(decimal="NUMERIC")
NO_REPLACE = converter(replace=False)
CONVERTERS = {name: JsonConverter() for name in JSON_CONFIGS}
for _name, _conv in CONVERTERS.items():
    _conv.configure(JSON_CONFIGS[_name], False)


def test_every_golden_case_is_defined() -> None:
    assert list(JSON_CASES) == list(GOLDEN)


@pytest.mark.parametrize("name", list(GOLDEN_CASES))
def test_bytes_match_java(name: str) -> None:
    """Each case of java_golden_cases.py, written by our converter under its config: Java's bytes, or a DataError
    where Java threw one."""
    config, schema, value = GOLDEN_CASES[name]
    conv = CONVERTERS[config]
    expected = JAVA[name]
    if isinstance(expected, str):
        with pytest.raises(DataError):
            conv.from_connect_data("t", schema, value)
    else:
        assert conv.from_connect_data("t", schema, value) == expected


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


def test_decimal_scale_mismatch() -> None:
    # Java rejects any other scale (dec.badscale); we rescale when no digit is lost and reject otherwise.
    assert JAVA["dec.badscale"] == "DataException:Decimal value has mismatching scale for given Decimal schema. " \
        "Schema has scale 2, value has scale 1."
    assert ON.from_connect_data("t", decimal_schema(2), Decimal("123.450")) == JAVA["dec.pos.on"]
    assert ON.from_connect_data("t", decimal_schema(2), Decimal("1.5")) == ON.from_connect_data(
        "t", decimal_schema(2), Decimal("1.50"))
    with pytest.raises(DataError, match="mismatching scale"):
        ON.from_connect_data("t", decimal_schema(2), Decimal("1.234"))
    with pytest.raises(DataError):
        ON.from_connect_data("t", decimal_schema(2), Decimal("NaN"))


def test_logical_values_may_be_given_encoded_or_naive() -> None:
    assert ON.from_connect_data("t", date_schema(), 19723) == JAVA["date.on"]
    assert ON.from_connect_data("t", timestamp_schema(), datetime(2024, 1, 1)) == JAVA["ts.on"]
    assert ON.from_connect_data("t", date_schema(), datetime(2024, 1, 1, tzinfo=UTC)) == JAVA["date.on"]
    with pytest.raises(DataError):
        ON.from_connect_data("t", date_schema(), datetime(2024, 1, 1, 1, tzinfo=UTC))
    with pytest.raises(DataError):
        ON.from_connect_data("t", timestamp_schema(), "2024-01-01")


def test_tombstone_only_without_schema_and_value() -> None:
    assert JAVA["tombstone.off"] is None
    assert OFF.from_connect_data("t", OPTIONAL_STRING, None) == b"null"


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
