"""Shared by the golden tests: records to and from the JsonConverter envelopes of the Java fixtures
(``tests/tooling/java_golden/record.py`` records them; read its docstring to re-record)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from connect.api.records import Header, SourceRecord
from converters.json import JsonConverter

UNIT = Path(__file__).resolve().parents[1]


def load(relative: str) -> list[dict[str, Any]]:
    """The cases of one fixture file (after its ``recorded_with``: the Kafka, Debezium and JDK versions)."""
    fixture: dict[str, Any] = json.loads((UNIT / relative).read_text("utf-8"))
    assert set(fixture["recorded_with"]) == {"kafka_connect", "debezium", "java"}
    cases: list[dict[str, Any]] = fixture["cases"]
    return cases


def envelope_converter(is_key: bool = False) -> JsonConverter:
    conv = JsonConverter()
    conv.configure({"schemas.enable": "true"}, is_key)
    return conv


KEYS, VALUES = envelope_converter(True), envelope_converter(False)


def read(text: str | None, conv: JsonConverter = VALUES) -> tuple[Any, Any]:
    if text is None:
        return None, None
    data = conv.to_connect_data("t", text.encode("utf-8"))
    return data.schema, data.value


def write(schema: Any, value: Any, conv: JsonConverter = VALUES) -> str | None:
    out = conv.from_connect_data("t", schema, value)
    return None if out is None else out.decode("utf-8")


def record(case_record: dict[str, Any]) -> SourceRecord:
    """A SourceRecord from a fixture record."""
    key_schema, key = read(case_record.get("key"), KEYS)
    value_schema, value = read(case_record.get("value"))
    headers = tuple(Header(name, *read(text)) for name, text in case_record.get("headers", []))
    return SourceRecord({"p": 0}, {"o": 0}, case_record["topic"], case_record.get("partition"), key_schema, key,
                        value_schema, value, case_record.get("timestamp"), headers)


def record_json(rec: SourceRecord | None) -> dict[str, Any] | None:
    """A record as Golden.java writes it."""
    if rec is None:
        return None
    return {"topic": rec.topic, "partition": rec.kafka_partition, "timestamp": rec.timestamp,
            "key": write(rec.key_schema, rec.key, KEYS), "value": write(rec.value_schema, rec.value),
            "headers": [[h.key, write(h.schema, h.value)] for h in rec.headers]}
