"""The JVM functions reading a Debezium value's payload and its key's id (``spark_jobs/java``,
:data:`spark_jobs.decode.PAYLOAD_FUNCTION`, :data:`spark_jobs.decode.KEY_FUNCTION`) give what ``from_json`` gives
for the plain cases, and null for every other text (which the decode then parses as before): the decoded change
rows are the same with them and without them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pyspark.sql import functions as F

from spark_jobs import decode as decoding
from spark_jobs.decode import KEY_FUNCTION, KEY_SCHEMA, PAYLOAD_FUNCTION, VALUE_SCHEMA, decode, jvm_functions
from tests.unit.spark.support import change_event, json_records

SCHEMA = {"type": "struct", "fields": [{"type": "string", "optional": True, "field": "after"}], "optional": False}
SOURCE = {"version": "3.6.3.Final", "connector": "mongodb", "name": "bench", "ts_ms": 1795219496007,
          "snapshot": "false", "db": "shop", "sequence": None, "ts_us": 1795219496007000,
          "collection": "customers", "ord": 8, "lsid": None, "txnNumber": None, "wallTime": 1795219496007}


def _value(payload: Any, *, schema: bool = True, compact: bool = True, ascii_only: bool = False) -> str:
    envelope = {"schema": SCHEMA, "payload": payload} if schema else {"payload": payload}
    return json.dumps(envelope, separators=(",", ":") if compact else (", ", ": "), ensure_ascii=ascii_only)


def _payload(**changes: Any) -> dict[str, Any]:
    payload = {"before": None, "after": '{"_id": 1,"name": "a"}', "updateDescription": None, "source": SOURCE,
               "op": "c", "ts_ms": 1796040940857, "transaction": None}
    payload.update(changes)
    return payload


UPDATE = {"removedFields": ["gone", "also.gone"], "updatedFields": '{"score": 4.5}', "truncatedArrays": None}
TAKEN = [
    _value(_payload()),
    _value(_payload(), schema=False),
    _value(_payload(), compact=False),
    _value(_payload(op="u", updateDescription=UPDATE)),
    _value(_payload(op="u", updateDescription={"removedFields": [], "updatedFields": None})),
    _value(_payload(op="u", updateDescription={"removedFields": ["a", None]})),
    _value(_payload(op="d", after=None)),
    _value(_payload(op="r", source={**SOURCE, "snapshot": "true", "lsid": "x", "txnNumber": 3})),
    _value(_payload(after='{"s": "quote \\" back\\\\slash new\\nline tab\\t"}')),
    _value(_payload(after='{"s": "é ü 中文 😀"}')),  # raw UTF-8 of 2, 3 and 4 bytes
    _value(_payload(after='{"s": "é 中 😀 \\u0001"}'), ascii_only=True),  # \u escapes, a surrogate pair
    _value(_payload(ts_ms=-5, source={**SOURCE, "ord": 0})),
    _value(_payload(source=None, op=None, ts_ms=None)),
    _value({"after": "{}"}),
    _value(_payload(extra={"nested": [1, 2.5e3, -0.5, True, False, None, {"a": "b"}, []], "n": "x"})),
    '{"payload":{"op":"c","after":"{}"},"schema":{"type":"struct"}}',  # schema after payload
]
LEFT = [
    _value(None),  # payload null
    _value(_payload(op=1)),  # a number where a string is expected
    _value(_payload(ts_ms="5")),  # a string where a long is expected
    _value(_payload(ts_ms=1.5)),
    _value(_payload(ts_ms=12345678901234567890)),  # beyond a long
    _value(_payload(after={"_id": 1})),  # an object where a string is expected
    _value(_payload(source="s")),
    _value(_payload(updateDescription={"truncatedArrays": [{"field": "a", "size": 1}]})),
    _value(_payload(updateDescription={"removedFields": [1]})),
    '{"schema":{},"payload":{"op":"c"},"op":"u"}',  # another top-level member
    '{"payload":{"op":"c"},"payload":{"op":"u"}}',  # a duplicate member
    '{"payload":{"op":"c","op":"u"}}',
    '{"payload":{"op":"c"}} trailing',
    '{"payload":{"op":"c"}',  # cut short
    '{"payload":{"op":"raw\x01control"}}',
    '{"payload":{"op":"lone \\ud800 surrogate"}}',
    '{"payload":{"op":"bad \\x escape"}}',
    '{"payload":{"ts_ms":012}}',  # a leading zero: not JSON
    '{"payload":{"op":"c","x":nul}}',
    '{"payload":{"op":"c","x":[1,]}}',
    '{"before":null,"after":"{}","op":"c"}',  # the envelope without schemas: no payload member
    '{"specversion":"1.0","iodebeziumop":"c","data":{"after":"{}"}}',  # CloudEvents
    "not json at all",
    "",
]


KEYS_TAKEN = [
    '{"schema":{"type":"struct","fields":[]},"payload":{"id":"{\\"$oid\\": \\"65f0c0ffee00000000000001\\"}"}}',
    '{"id":"x"}',
    '{"payload":{"id":"a"},"id":"b"}',
    '{"payload":null,"id":"b"}',
    '{"payload":{"other":1},"id":"b"}',
    '{"schema":null,"payload":{"id":"\u00e9 new\\nline"}}',
    '{ "id" : "spaced", "more": [1, {"a": null}] }',
]
KEYS_LEFT = ['{"payload":{"id":5}}', '{"id":{"a":1}}', '{"payload":"x"}', "{}", '{"payload":{"id":null}}',
             '{"id":"x"} trailing', "plain text", '{"id":"a","id":"b"}', '{"payload":{"id":"a","id":"b"}}', "[1]", ""]


@pytest.fixture(scope="module")
def registered(spark: Any) -> Any:
    assert jvm_functions(spark), "the jar of spark_jobs/java is on the test session's class path"
    return spark


@pytest.mark.parametrize("text", TAKEN + LEFT)
def test_the_function_gives_from_jsons_payload_or_nothing(registered: Any, text: str) -> None:
    frame = registered.createDataFrame([(text,)], "text string")
    row = frame.select(F.call_function(PAYLOAD_FUNCTION, F.col("text")).alias("fast"),
                       F.from_json("text", VALUE_SCHEMA, {"allowNonNumericNumbers": "true", "mode": "PERMISSIVE"})
                       ["payload"].alias("parsed")).first()
    assert row is not None
    if text in TAKEN:
        assert row["fast"] is not None
        assert row["fast"] == row["parsed"]
    else:
        assert row["fast"] is None


@pytest.mark.parametrize("text", KEYS_TAKEN + KEYS_LEFT)
def test_the_key_function_gives_from_jsons_id_or_nothing(registered: Any, text: str) -> None:
    frame = registered.createDataFrame([(text,)], "text string")
    parsed = F.from_json("text", KEY_SCHEMA, {"allowNonNumericNumbers": "true", "mode": "PERMISSIVE"})
    row = frame.select(F.call_function(KEY_FUNCTION, F.col("text")).alias("fast"),
                       F.coalesce(parsed["payload"]["id"], parsed["id"]).alias("parsed")).first()
    assert row is not None
    if text in KEYS_TAKEN:
        assert row["fast"] is not None
        assert row["fast"] == row["parsed"]
    else:
        assert row["fast"] is None


def test_values_after_the_first_are_read_past_the_schema_prefix_it_had(registered: Any) -> None:
    prefix = _value(_payload()).split('"payload"')[0]  # {"schema":<S>,
    other = json.dumps({"schema": {"type": "struct", "fields": []}, "payload": _payload(op="u")},
                       separators=(",", ":"))
    values = [(_value(_payload()), True),
              (_value(_payload(op="u", updateDescription=UPDATE)), True),  # the same prefix: read after it
              (prefix + '"schema":{},"payload":' + json.dumps(_payload()) + "}", False),  # a second schema member
              (prefix + '"payload":{"op":"c"}} tail', False),
              (prefix + "}", False),
              (other, True),  # another schema: read whole, its prefix kept
              (prefix + '"payload":null}', False),
              (_value(_payload(op="d", after=None)), True)]
    frame = registered.createDataFrame([(n, text) for n, (text, _) in enumerate(values)], "n int, text string")
    rows = frame.coalesce(1).select(  # one partition: one copy of the function reads the values in order
        "n", F.call_function(PAYLOAD_FUNCTION, F.col("text")).alias("fast"),
        F.from_json("text", VALUE_SCHEMA, {"allowNonNumericNumbers": "true", "mode": "PERMISSIVE"})["payload"]
        .alias("parsed")).orderBy("n").collect()
    for row, (text, taken) in zip(rows, values, strict=True):
        assert (row["fast"] == row["parsed"] and row["fast"] is not None) if taken else row["fast"] is None, text


def test_invalid_utf8_is_left_to_from_json(registered: Any) -> None:
    for raw in (b'{"payload":{"op":"\xff"}}', b'{"payload":{"op":"\xc0\xaf"}}', b'{"payload":{"op":"\xed\xa0\x80"}}',
                b'{"payload":{"op":"\xe4\xb8"}}'):
        frame = registered.createDataFrame([(bytearray(raw),)], "value binary")
        row = frame.select(F.call_function(PAYLOAD_FUNCTION, F.col("value").cast("string"))).first()
        assert row is not None and row[0] is None, raw


def _rows(spark: Any, values: list[str | None], prefixes: dict[str, str] | None = None) -> list[Any]:
    keys = [*KEYS_TAKEN, *KEYS_LEFT]
    rows = [(bytearray(keys[n % len(keys)].encode()), bytearray(v.encode()) if v is not None else None, "t", 0, n,
             None) for n, v in enumerate(values)]
    frame = spark.createDataFrame(rows, "key binary, value binary, topic string, partition int, offset long, "
                                        "timestamp timestamp")
    return sorted(decode(frame, "auto", prefixes).collect(), key=lambda r: r["offset"])


def test_decoded_rows_are_the_same_with_the_function_and_without(registered: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    records = json_records([
        change_event("insert", "shop", "customers", {"_id": 1, "name": "a", "tags": ["x", "y"]}),
        change_event("update", "shop", "customers", {"_id": 1, "name": "b\n\"quoted\""}, updated={"name": "b"}),
        change_event("delete", "shop", "customers", key=1),
    ])
    produced = [value.decode() if value is not None else None for _, (_, value) in records]
    values: list[str | None] = [*produced, *TAKEN, *LEFT]
    prefix = decoding.schema_prefix(produced[0])
    assert prefix is not None
    for prefixes in (None, {"t": prefix}):
        fast = _rows(registered, values, prefixes)
        monkeypatch.setattr(decoding, "jvm_functions", lambda spark: False)
        parsed = _rows(registered, values, prefixes)
        monkeypatch.undo()
        assert fast == parsed
        assert [r["op"] for r in fast[:len(produced)]] == ["c", "u", "d", None]  # the tombstone has none
