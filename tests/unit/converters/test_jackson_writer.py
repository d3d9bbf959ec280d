"""The compiled writer (``converters._jackson``) against the pure-Python reference (``dumps_reference``): random
JSON-ready trees with text of every kind of character, 64-bit ints, pre-serialized JSON, and what it refuses."""

from __future__ import annotations

import random
from typing import Any

import pytest

from converters.json_writer import RawText, dumps_jackson, dumps_reference

POOLS = [(0x20, 0x7E)] * 6 + [(0x00, 0x1F), (0x7F, 0xFF), (0x100, 0x2FFF), (0x3000, 0xD7FF), (0xE000, 0xFFFF),
                              (0x10000, 0x10FFFF)]


def _text(rng: random.Random) -> str:
    chars = []
    for _ in range(rng.randint(0, 30)):
        lo, hi = rng.choice(POOLS)
        chars.append(chr(rng.randint(lo, hi)))
    chars += rng.sample(['"', "\\", "\n", "\t", "\b", "\f", "\r", "/", "\u2028", "😀", "é", "\\u001f"], k=3)
    rng.shuffle(chars)
    return "".join(chars)


def _tree(rng: random.Random, depth: int) -> tuple[Any, Any]:
    """A tree for the compiled writer and the same for the reference (raw text as bytes / RawText)."""
    pick = rng.random()
    if depth > 0 and pick < 0.2:
        pairs = [(_text(rng), _tree(rng, depth - 1)) for _ in range(rng.randint(0, 6))]
        return {k: v[0] for k, v in pairs}, {k: v[1] for k, v in pairs}
    if depth > 0 and pick < 0.35:
        items = [_tree(rng, depth - 1) for _ in range(rng.randint(0, 6))]
        return [i[0] for i in items], [i[1] for i in items]
    if pick < 0.6:
        text = _text(rng)
        return text, text
    if pick < 0.8:
        number = rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randint(-(2**63), 2**63 - 1), rng.randint(-99, 99)])
        return number, number
    if pick < 0.9:
        raw = rng.choice([b"1.0E10", b"-0.0", b"4.9E-324", b'{"a":[1,"x"]}', b"123.456"])
        return raw, RawText(raw)
    flag = rng.choice([True, False, None])
    return flag, flag


@pytest.mark.parametrize("seed", range(20))
def test_random_trees_match_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        fast, reference = _tree(rng, 4)
        assert dumps_jackson(fast) == dumps_reference(reference)


@pytest.mark.parametrize("tree", ["\ud800", {"a": "x\udfff"}, 2**63, [-(2**63) - 1], 1.5, {1: 2}, {"a": object()}])
def test_what_only_the_reference_writes_is_refused(tree: Any) -> None:
    with pytest.raises((ValueError, TypeError, OverflowError)):
        dumps_jackson(tree)


def _outcome(write: Any) -> Any:
    try:
        return write()
    except Exception as exc:  # noqa: BLE001 - both writers must fail alike
        return f"{type(exc).__name__}: {exc}"


def test_compiled_encoder_matches_the_python_encoders() -> None:
    import dataclasses
    from datetime import UTC, date, datetime, time
    from decimal import Decimal

    from connect.api.data import (
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
    from converters.json_writer import Options, native_encoder, nullable

    inner = struct_schema([("s", OPTIONAL_STRING), ("n", Schema(Type.INT32, True, default=7))], optional=True)
    schema = struct_schema([
        ("i8", Schema(Type.INT8)), ("i16", Schema(Type.INT16, True)), ("i32", Schema(Type.INT32, True)),
        ("i64", Schema(Type.INT64, True)), ("f32", Schema(Type.FLOAT32, True)), ("f64", Schema(Type.FLOAT64, True)),
        ("b", Schema(Type.BOOLEAN, True, default=True)), ("s", STRING), ("bytes", Schema(Type.BYTES, True)),
        ("arr", array_schema(OPTIONAL_STRING, optional=True)), ("m", map_schema(STRING, STRING, optional=True)),
        ("inner", inner), ("inners", array_schema(inner, optional=True)), ("dec", decimal_schema(2, optional=True)),
        ("d", date_schema(optional=True)), ("t", time_schema(optional=True)), ("ts", timestamp_schema(optional=True)),
        ("dflt", Schema(Type.STRING, True, default="x")),
    ], name="every")
    twin = dataclasses.replace(inner)  # equal, not identical
    rng = random.Random(11)
    choices: dict[str, list[Any]] = {
        "i8": [1, -128, 127, 128, None, True, "1"], "i16": [None, 2**15 - 1, -(2**15) - 1, 3],
        "i32": [None, 2**31 - 1, 2**31, 5.0], "i64": [None, 2**63 - 1, 2**63, -(2**63)],
        "f32": [None, 1.5, 3, float("nan"), 1e40], "f64": [None, 1e-7, float("inf"), 2, True],
        "b": [None, True, False, 1], "s": ["é\U0001F600\x00\"", None, 5, "\ud800"],
        "bytes": [None, b"\x00\xff", bytearray(b"ab"), "x"], "arr": [None, ["a", None], ("t",), [1], "no"],
        "m": [None, {"k": "v"}, {"k": None}, {1: "v"}], "dec": [None, Decimal("1.25"), Decimal("1.255")],
        "inner": [None, Struct(inner, {"s": "a"}), Struct(twin, {"s": "b", "n": 1}), Struct(schema), {"s": 1}],
        "inners": [None, [Struct(inner, {"s": "x"}), None], [Struct(twin)]],
        "d": [None, date(2024, 1, 2), 5], "t": [None, time(1, 2, 3, 4000), "x"],
        "ts": [None, datetime(2024, 1, 1, tzinfo=UTC), 17, datetime(2024, 1, 1)], "dflt": [None, "y"],
    }
    for numeric, replace in ((False, True), (True, False)):
        native = native_encoder(schema, Options(numeric, replace, bytes))
        assert native is not None
        python = nullable(schema, Options(numeric, replace, bytes))
        reference = nullable(schema, Options(numeric, replace, RawText))
        written = 0
        for _ in range(400):
            value = Struct(schema)
            value.values = {name: rng.choice(options if rng.random() < 0.05 else options[:2])
                            for name, options in choices.items() if rng.random() < 0.95}
            expected = _converted(lambda v, p=python: dumps_jackson(p(v)), reference, value)
            assert _converted(native.encode, reference, value) == expected
            written += isinstance(expected, bytes)
        assert written > 100
        assert _converted(native.encode, reference, None) == \
            _converted(lambda v, p=python: dumps_jackson(p(v)), reference, None)


def _converted(write: Any, reference: Any, value: Any) -> Any:
    """JsonConverter's outcome: what the compiled writers refuse goes to the reference writer."""
    try:
        return write(value)
    except (ValueError, TypeError, OverflowError):
        return _outcome(lambda: dumps_reference(reference(value)))
    except Exception as exc:  # noqa: BLE001 - both writers must fail alike
        return f"{type(exc).__name__}: {exc}"
