"""``connect.javalang`` against what the JVM prints: ``Double.toString`` and ``Float.toString`` (JDK 19+, here
Temurin 25's jshell: the cases below, and ``data/javalang_golden.txt`` printed by
``compat/jshell/javalang_golden.jsh``, re-recorded by ``python -m compat.record javalang``, its first line naming
the JDK), ``String.valueOf``/``AbstractMap.toString``/``AbstractCollection.toString``, and ``HashMap`` iteration
order (JDK 17)."""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import pytest

from connect.javalang import (
    JavaHashMap,
    collection_to_string,
    double_to_string,
    float_to_string,
    map_to_string,
    string_hash,
    task_config_order,
    value_of,
)

GOLDEN = Path(__file__).parent / "data" / "javalang_golden.txt"
MIN_VALUE = 5e-324


@pytest.mark.parametrize(("value", "expected"), [
    (0.0, "0.0"), (-0.0, "-0.0"), (math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity"),
    (MIN_VALUE, "4.9E-324"), (-MIN_VALUE, "-4.9E-324"),
    (2 * MIN_VALUE, "9.9E-324"),  # JDK 17: 1.0E-323
    (1e-5, "1.0E-5"), (1e-4, "1.0E-4"), (1e-3, "0.001"), (9.99e-4, "9.99E-4"), (2e-3, "0.002"),
    (1e7, "1.0E7"), (9999999.0, "9999999.0"), (9999999.999999998, "9999999.999999998"), (12345678.9, "1.23456789E7"),
    (1.0, "1.0"), (42.0, "42.0"), (100.0, "100.0"), (-3e15, "-3.0E15"), (123456789.123, "1.23456789123E8"),
    (0.1, "0.1"), (1 / 3, "0.3333333333333333"),
    (1e23, "1.0E23"),  # JDK 17: 9.999999999999999E22
    (1.7976931348623157e308, "1.7976931348623157E308"), (2.2250738585072014e-308, "2.2250738585072014E-308"),
])
def test_double_to_string(value: float, expected: str) -> None:
    assert double_to_string(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    (0.1, "0.1"), (16777217.0, "1.6777216E7"), (1e39, "Infinity"), (1e-5, "1.0E-5"), (1.401298464324817e-45, "1.4E-45"),
    (3.4028234663852886e38, "3.4028235E38"), (1e10, "1.0E10"), (0.3, "0.3"), (1 / 3, "0.33333334"), (-0.0, "-0.0"),
    (1e7, "1.0E7"), (9999999.0, "9999999.0"),
])
def test_float_to_string(value: float, expected: str) -> None:
    assert float_to_string(value) == expected


def test_double_and_float_to_string_match_the_golden_file() -> None:
    mismatches = []
    header, *lines = GOLDEN.read_text().splitlines()
    assert header.startswith("# recorded_with: ")  # the JDK that printed it
    for line in lines:
        kind, bits, expected = line.split(" ")
        if kind == "D":
            got = double_to_string(struct.unpack(">d", int(bits, 16).to_bytes(8, "big"))[0])
        else:
            got = float_to_string(struct.unpack(">f", int(bits, 16).to_bytes(4, "big"))[0])
        if got != expected:
            mismatches.append((kind, bits, expected, got))
    assert not mismatches


def test_map_and_collection_to_string() -> None:
    # jshell: a LinkedHashMap with these entries prints the same; List.toString likewise
    entries: dict[str, Any] = {"name": "c", "file": None, "x": 1e-5, "ok": True, "l": ["a", "b"]}
    assert map_to_string(entries) == "{name=c, file=null, x=1.0E-5, ok=true, l=[a, b]}"
    assert map_to_string({}) == "{}"
    assert collection_to_string([1e-5, True, None, "x", 3]) == "[1.0E-5, true, null, x, 3]"
    assert value_of(None) == "null" and value_of(False) == "false" and value_of(("a",)) == "[a]"
    assert value_of({"k": 7}) == "{k=7}" and value_of(-0.0) == "-0.0"


def test_string_hash_is_javas() -> None:
    assert string_hash("") == 0
    assert string_hash("task.class") == 0xB1F1F6A0 or string_hash("task.class") == (
        sum(ord(c) * 31 ** (len("task.class") - 1 - i) for i, c in enumerate("task.class")) & 0xFFFFFFFF)
    assert string_hash("a") == 97 and string_hash("ab") == 97 * 31 + 98
    assert string_hash("\U0001F600") == (0xD83D * 31 + 0xDE00)  # UTF-16 surrogate pair, as Java sees it


def test_task_config_order_matches_kafka_connect_4_3_on_jdk17() -> None:
    # task-<c>-0 records written by Kafka Connect 4.3.1 on JDK 17 for a FileStreamSourceConnector
    # (tests/integration/test_internal_topics_java.py compares whole records live)
    props = ["connector.class", "file", "topic", "tasks.max", "name"]
    assert task_config_order(props) == ["connector.class", "file", "task.class", "tasks.max", "name", "topic"]
    props = ["connector.class", "file", "topic", "tasks.max", "batch.size", "name"]
    assert task_config_order(props) == ["connector.class", "file", "task.class", "tasks.max", "batch.size", "name",
                                        "topic"]


def test_resizes_keep_every_key_once() -> None:
    keys = [f"key.{n}" for n in range(100)]
    table = JavaHashMap()
    table.put_all(keys + keys[:10])
    assert sorted(table.keys()) == sorted(keys)
    assert sorted(task_config_order(keys)) == sorted([*keys, "task.class"])
