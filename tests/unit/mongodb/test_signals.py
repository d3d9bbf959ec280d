"""Parsing Debezium's signals from the signal collection and the Kafka signal topic."""

from __future__ import annotations

import json

import pytest
from bson import ObjectId

from connectors.mongodb.streaming.signals import SignalError, from_document, from_kafka, snapshot_request


def test_a_collection_signal_is_its_first_three_fields() -> None:
    oid = ObjectId()
    signal = from_document({"_id": oid, "type": "execute-snapshot",
                            "payload": '{"data-collections": ["db\\\\.a"], "type": "incremental"}'})
    assert (signal.id, signal.type) == (str(oid), "execute-snapshot")
    request = snapshot_request(signal)
    assert request.kind == "incremental" and request.matching(["db.a", "db.ab", "other.a"]) == ["db.a"]
    nested = from_document({"id": "x", "kind": "log", "data": {"message": "hello"}})
    assert nested.data == {"message": "hello"}
    with pytest.raises(SignalError, match="exactly 3 fields"):
        from_document({"_id": 1, "type": "log"})


def test_kafka_signals_need_the_topic_prefix_as_key() -> None:
    value = json.dumps({"id": "s1", "type": "execute-snapshot",
                        "data": {"data-collections": ["db.c"], "type": "BLOCKING"}}).encode()
    assert from_kafka(b"other", value, "prefix") is None
    signal = from_kafka(b"prefix", value, "prefix")
    assert signal is not None and snapshot_request(signal).kind == "blocking"
    with pytest.raises(SignalError, match="not valid JSON"):
        from_kafka(b"prefix", b"{oops", "prefix")


@pytest.mark.parametrize(("data", "reason"), [
    ({"data-collections": ["db.(unclosed"]}, "invalid data-collections regular expression"),
    ({"data-collections": ["db.c"], "additional-conditions": [{"data-collection": "db.c", "filter": "{bad"}]},
     "malformed additional condition"),
    ({"data-collections": ["db.c"], "additional-conditions": [{"data-collection": "db.c", "filter": "[1]"}]},
     "filter document is expected"),
    ({"data-collections": ["db.c"], "surrogate-key": "sku"}, "surrogate-key is not supported"),
    ({"data-collections": ["db.c"], "type": "sideways"}, "unknown snapshot type"),
    ({}, "needs data-collections"),
])
def test_bad_execute_snapshot_signals_say_why(data: dict[str, object], reason: str) -> None:
    signal = from_kafka(b"p", json.dumps({"id": "1", "type": "execute-snapshot", "data": data}).encode(), "p")
    assert signal is not None
    with pytest.raises(SignalError, match=reason):
        snapshot_request(signal)


def test_additional_conditions_are_filters_per_collection() -> None:
    signal = from_kafka(b"p", json.dumps({"id": "1", "type": "execute-snapshot", "data": {
        "data-collections": ["db\\..*"],
        "additional-conditions": [{"data-collection": "db.c", "filter": '{"v": {"$gte": 5}}'}]}}).encode(), "p")
    assert signal is not None
    request = snapshot_request(signal)
    assert request.condition("db.c") == {"v": {"$gte": 5}} and request.condition("db.d") == {}
