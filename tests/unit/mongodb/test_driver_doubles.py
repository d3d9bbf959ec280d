"""Doubles in Extended JSON as each Debezium release's MongoDB Java driver writes them (recorded by
``python -m compat.debezium.doubles``: edges, every power of ten, random bit patterns; RELAXED and STRICT), against
the compiled writer with the release's ``plus_exponent`` setting.

The recording JVM is Java 17, whose ``Double.toString`` prints a few doubles with more digits than the shortest
that round-trips, or not the closest of the shortest (``1.0E-323`` for ``9.9E-324``; fixed in JDK 19, the
algorithm the writer follows, as Debezium on Java 21 prints them): those rows must spell the same double with at
least as many digits; every other row is byte-identical."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import bson
import pytest

from connectors.mongodb import _extjson
from connectors.mongodb.releases import RELEASES

GOLDEN = Path(__file__).parent / "golden" / "driver_doubles.tsv"


def _rows() -> list[list[str]]:
    return [line.split("\t") for line in GOLDEN.read_text().splitlines() if not line.startswith("#")]


def _value(bits: str) -> float:
    return float(struct.unpack("<d", struct.pack("<Q", int(bits, 16)))[0])


def _digits(number: str) -> str:
    """The significant digits of a Java-printed double (``1.0E-323``: ``10``, ``0.00125``: ``125``)."""
    return number.split("E")[0].replace("-", "").replace(".", "").lstrip("0")


def _jdk17_longer_digits(java: str, ours: str, value: float) -> bool:
    """Whether ``java`` is JDK 17's spelling of the double ``ours`` spells (same value, no fewer digits)."""
    try:
        parsed = json.loads(java)["v"]
    except ValueError:
        return False
    java_number = java.split(": ", 1)[1].rstrip("}")
    ours_number = ours.split(": ", 1)[1].rstrip("}")
    return parsed == value and len(_digits(java_number)) >= len(_digits(ours_number))


@pytest.mark.parametrize("release", list(RELEASES))
def test_the_writer_prints_doubles_as_the_releases_driver(release: str) -> None:
    plus = RELEASES[release].plus_exponent
    column = 1 + 2 * list(RELEASES).index(release)
    rows = _rows()
    assert len(rows) > 4000
    jdk17 = []
    for row in rows:
        value = _value(row[0])
        raw = bson.encode({"v": value})
        for java, ours in ((row[column], _extjson.relaxed(raw, plus)), (row[column + 1], _extjson.strict(raw, plus))):
            if java != ours:
                assert _jdk17_longer_digits(java, ours, value), f"{row[0]} ({value!r}): Java {java}, ours {ours}"
                jdk17.append(row[0])
    assert len(jdk17) < len(rows) // 100, "JDK 17's longer spellings are rare"


def test_the_releases_differ_only_by_the_exponent_sign() -> None:
    for row in _rows():
        assert row[1].replace("E", "E+").replace("E+-", "E-") == row[3], row


def test_the_header_names_the_drivers_and_the_jdk() -> None:
    """The first line says which releases, MongoDB Java drivers and JDK (its ``Double.toString``) recorded it."""
    header = GOLDEN.read_text().splitlines()[0]
    assert header.startswith("# recorded_with: ")
    assert all(f"Debezium {release} (MongoDB Java driver " in header for release in RELEASES)
    assert " on openjdk version " in header or " on java version " in header
