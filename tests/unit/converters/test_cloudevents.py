"""CloudEventsConverter against Debezium 3.6.1.Final's own converter, and parsed by the CloudEvents Python SDK.

``cloudevents_golden.json`` holds, per converter config, the MongoDB records (Debezium's own records from
``tests/unit/mongodb/data/debezium_records_golden.jsonl`` plus heterogeneous documents, a delete with its tombstone
and a heartbeat) with the bytes Debezium's ``io.debezium.converters.CloudEventsConverter`` wrote for each, recorded
by ``tests/tooling/java_golden/record.py`` (header-mode cases ran Connect's HeaderFrom first, in Java too).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from cloudevents.core.bindings.kafka import KafkaMessage, from_structured
from cloudevents.core.formats.json import JSONFormat
from cloudevents.v1.kafka import KafkaMessage as V1KafkaMessage
from cloudevents.v1.kafka import from_structured as v1_from_structured

from connect.api.errors import ConfigError, DataError
from converters.cloudevents import CloudEventsConverter
from tests.unit.transforms.golden import load, record

CASES = load("converters/cloudevents_golden.json")


def _converter(config: dict[str, str]) -> CloudEventsConverter:
    conv = CloudEventsConverter()
    conv.configure(config, False)
    return conv


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bytes_match_debezium(case: dict[str, Any]) -> None:
    conv = _converter(case["config"])
    for index, (rec, expected) in enumerate(zip(case["records"], case["java"]["results"], strict=True)):
        source = record(rec)
        if isinstance(expected, dict):
            with pytest.raises(DataError):
                conv.from_connect_data(source.topic, source.value_schema, source.value, source.headers)
            continue
        ours = conv.from_connect_data(source.topic, source.value_schema, source.value, source.headers)
        assert (None if ours is None else ours.decode("utf-8")) == expected, f"record {index}"


def _events(config: dict[str, str]) -> list[bytes]:
    conv = _converter(config)
    out = []
    for rec in CASES[0]["records"]:
        source = record(rec)
        value = conv.from_connect_data(source.topic, source.value_schema, source.value, source.headers)
        if value is not None:
            out.append(value)
    assert len(out) >= 15
    return out


def _check(attributes: Mapping[str, Any], data: Any, schemas: bool) -> None:
    assert attributes["specversion"] == "1.0"
    assert attributes["type"] == "io.debezium.connector.mongodb.DataChangeEvent"
    assert attributes["source"] == "/debezium/mongodb/fulfillment"
    assert attributes["id"].startswith("name:fulfillment;ts:")
    payload = data["payload"] if schemas else data
    assert set(payload) == {"before", "after", "updateDescription"}


@pytest.mark.parametrize("config", [{}, {"json.schemas.enable": "false"}], ids=["schemas", "no_schemas"])
def test_sdk_parses_structured_mode(config: dict[str, str]) -> None:
    """The SDK's Kafka binding (v1 API) reads every event, Debezium's extension attributes included."""
    for value in _events(config):
        event = v1_from_structured(V1KafkaMessage(headers={}, key=None, value=value))
        attributes = event.get_attributes()
        _check(attributes, event.get_data(), not config)
        assert attributes["iodebeziumop"] in ("c", "u", "d")
        assert attributes["iodebeziumcollection"] in ("customers", "c$1 x.y", "things")


def test_strict_sdk_parses_events_without_extensions() -> None:
    """The SDK's strict 2.x core refuses extension names with capitals, and Debezium itself writes two of them
    (``iodebeziumtxnNumber``, ``iodebeziumwallTime``: see ``test_bytes_match_debezium``); without the extension
    attributes the strict parser accepts every event."""
    for value in _events({"extension.attributes.enable": "false"}):
        event = from_structured(KafkaMessage(headers={}, key=None, value=value), JSONFormat())
        _check(event.get_attributes(), event.get_data(), True)
        time = event.get_time()
        assert time is not None and time.year >= 2024


def test_reads_back_what_it_wrote() -> None:
    conv = _converter({})
    source = record(CASES[0]["records"][0])
    written = conv.from_connect_data(source.topic, source.value_schema, source.value)
    event = conv.to_connect_data(source.topic, written).value
    assert event["iodebeziumcollection"] == "customers"
    assert event["data"].values["after"] == source.value.values["after"]


@pytest.mark.parametrize("config", [
    {"serializer.type": "avro"}, {"data.serializer.type": "xml"}, {"metadata.source": "body"},
    {"metadata.source": "value,id:invent"},
])
def test_bad_config(config: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        _converter(config)


def test_not_json_is_refused() -> None:
    with pytest.raises(DataError):
        _converter({}).to_connect_data("t", json.dumps({"a": 1}).encode())


def test_source_fields_named_like_other_attributes() -> None:
    """A source block with fields ``op`` and ``txid``: their extensions replace the attributes of those names in
    place (a map's semantics, as Debezium's), never written twice."""
    from connect.api.data import INT64, OPTIONAL_STRING, STRING, Struct, struct_schema

    source_schema = struct_schema([("name", STRING), ("ts_ms", INT64), ("op", OPTIONAL_STRING),
                                   ("txid", OPTIONAL_STRING)], name="custom.Source")
    schema = struct_schema([("after", OPTIONAL_STRING), ("source", source_schema), ("op", STRING)],
                           name="p.d.c.Envelope")
    value = Struct(schema, {"after": "{}", "op": "c",
                            "source": Struct(source_schema, {"name": "p", "ts_ms": 5, "op": "x", "txid": "t"})})
    event = json.loads(_converter({}).from_connect_data("t", schema, value) or b"")
    assert list(event)[:7] == ["id", "source", "specversion", "type", "time", "datacontenttype", "iodebeziumop"]
    assert event["iodebeziumop"] == "x" and event["iodebeziumtxid"] is None
    assert list(event).count("iodebeziumop") == 1
    text = (_converter({}).from_connect_data("t", schema, value) or b"").decode()
    assert text.count('"iodebeziumop"') == 1 and text.count('"iodebeziumtxid"') == 1
