"""The record key's ``id`` as :func:`spark_jobs.decode.decode` reads it: the byte-comparison path of
:func:`spark_jobs.decode.plain_key_id` gives what a JSON parse gives, and leaves every other key to the parse."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyspark.sql import functions as F

from spark_jobs.decode import plain_key_id

SCHEMA = {"type": "struct", "fields": [{"type": "string", "optional": False, "field": "id"}], "optional": False,
          "name": "shop.customers.Key"}


def _with_schema(key_id: Any) -> str:
    return json.dumps({"schema": SCHEMA, "payload": {"id": key_id}}, separators=(",", ":"), ensure_ascii=False)


def _without_schema(key_id: Any) -> str:
    return json.dumps({"id": key_id}, separators=(",", ":"), ensure_ascii=False)


PLAIN = [
    _with_schema('{"$oid": "65f0c0ffee00000000000001"}'),
    _without_schema('{"$oid": "65f0c0ffee00000000000001"}'),
    _with_schema('"a string id"'),
    _with_schema('{"$numberLong": "12"}'),
    _with_schema("é and ünïcode"),
    '{"schema":null,"payload":{"id":"x"}}',
]
PARSED = [
    _with_schema('"back\\\\slash"'),  # an escaped backslash
    _with_schema("new\nline"),  # \n
    _with_schema("tab\there"),
    json.dumps({"id": "\u00e9"}),  # \u00e9 (ensure_ascii)
    _with_schema('quote " and \\ both'),
    '{"schema": {}, "payload": {"id": "spaced"}}',  # not compact
    '{"schema":{},"payload":{"id":"x","more":"y"}}',
    '{"id":"a","b":"c"}',
    '{"schema":{},"payload":{"id":"x"},"extra":1}',
    '{"id":"raw\x01control"}',  # not JSON: the raw text, as the parse gives
    "not json at all",
]


def _expected(text: str) -> str:
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    payload = parsed.get("payload")
    if isinstance(payload, dict) and isinstance(payload.get("id"), str):
        return str(payload["id"])
    return str(parsed["id"]) if isinstance(parsed.get("id"), str) else text


@pytest.mark.parametrize("text", PLAIN + PARSED)
def test_the_fast_path_gives_what_the_parse_gives(spark: Any, text: str) -> None:
    frame = spark.createDataFrame([(bytearray(text.encode()),)], "key binary")
    row = frame.select(plain_key_id(F.col("key").cast("string")).alias("fast")).first()
    assert row is not None
    if text in PLAIN:
        assert row["fast"] == _expected(text)
    else:
        assert row["fast"] is None  # left to the JSON parse


def test_decode_keys_equal_the_parsed_ones(spark: Any) -> None:
    from spark_jobs.decode import decode

    value = json.dumps({"payload": {"op": "c", "after": "{}", "ts_ms": 1, "source": {"ts_ms": 1, "ord": 1}}})
    rows = [(bytearray(text.encode()), bytearray(value.encode()), "t", 0, n, None)
            for n, text in enumerate(PLAIN + PARSED)]
    frame = spark.createDataFrame(rows, "key binary, value binary, topic string, partition int, offset long, "
                                        "timestamp timestamp")
    keys = {r["offset"]: r["key"] for r in decode(frame).select("offset", "key").collect()}
    assert keys == {n: _expected(text) for n, text in enumerate(PLAIN + PARSED)}
