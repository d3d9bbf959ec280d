"""The incremental snapshot's offset keys against what Debezium 3.6.1 wrote.

``data/debezium_incremental_offsets.jsonl`` holds source offsets the real Debezium 3.6.1 MongoDB connector (on
Apache Kafka Connect 4.3.1, against SecantusDB) committed in the middle of incremental snapshots of seven
collections of 3,000 documents, ``incremental.snapshot.chunk.size`` 20, ``_id``s of type int, long, string,
ObjectId, double, Decimal128 (odd ``i``: ``i.5``, even: ``-iE-3``) and UUID (binary subtype 4,
``c5a0f0c1-e4b0-4a1b-8000-<i as 12 hex digits>``), the int one with an additional condition; read back from the
offsets topic, each connector with its own signal collection. Re-recorded by ``python -m compat.record
incremental-offsets`` (``compat/debezium/incremental_offsets.py``).
"""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path
from typing import Any

import bson
import pytest
from bson import Binary, Decimal128, Int64, ObjectId

from connectors.mongodb.snapshot import incremental_state as debezium_state
from connectors.mongodb.snapshot import java_serialization as javaser
from connectors.mongodb.snapshot.incremental_state import Progress, SnapshotState

SAMPLES = [row for row in (json.loads(line) for line in (Path(__file__).parent / "data" /
                                                         "debezium_incremental_offsets.jsonl").read_text().splitlines())
           if "recorded_with" not in row]  # the first line says which Debezium and Connect recorded them
EXPECTED: dict[str, tuple[type, Any]] = {  # connector -> (type of the key, the largest _id)
    "cints": (int, 2999), "clongs": (Int64, Int64(10**12 + 2999)), "cstrings": (str, "k002999"),
    "coids": (ObjectId, ObjectId("65a0f0c1e4b0a1b200000bb7")), "cdoubles": (float, 2999.5),
    "cdecimals": (Decimal128, Decimal128("2999.5")),
    "cuuids": (uuid.UUID, uuid.UUID("c5a0f0c1-e4b0-4a1b-8000-000000000bb7")),
}


@pytest.mark.parametrize("sample", SAMPLES, ids=[s["connector"] for s in SAMPLES])
def test_debezium_offsets_are_read_and_written_back_byte_for_byte(sample: dict[str, Any]) -> None:
    offset = sample["offset"]
    kind, maximum = EXPECTED[sample["connector"]]
    state = debezium_state.decode(offset)
    assert state is not None and len(state.queue) == 1
    first = state.queue[0]
    assert first.ns == f"incr.{sample['connector'][1:]}"
    assert first.started and type(first.after) is kind and first.has_max and first.maximum == maximum
    assert type(first.maximum) is kind
    assert state.correlation_id == f"sig-{sample['connector'][1:]}" and not state.paused
    written = debezium_state.encode(state)
    for key in (debezium_state.PRIMARY_KEY, debezium_state.MAXIMUM_KEY, debezium_state.CORRELATION_KEY):
        assert written[key] == offset[key]
    assert json.loads(written[debezium_state.COLLECTIONS_KEY]) == json.loads(offset[debezium_state.COLLECTIONS_KEY])
    assert debezium_state.OUR_KEY not in written


def test_the_additional_condition_keeps_debeziums_parentheses() -> None:
    offset = next(s["offset"] for s in SAMPLES if s["connector"] == "cints")
    state = debezium_state.decode(offset)
    assert state is not None and state.queue[0].condition == {"v": {"$gte": 5}}
    assert debezium_state.encode(state)[debezium_state.COLLECTIONS_KEY] == offset[debezium_state.COLLECTIONS_KEY]


@pytest.mark.parametrize("value", [0, -7, 2**31 - 1, Int64(5), 2**40, 0.5, float("-inf"), "", "Grüße, 東京, 😀, \x00",
                                   "x" * 70_000, ObjectId("65a0f0c1e4b0a1b2c3d4e5f6"), Decimal128("-0"),
                                   Decimal128("NaN"), Decimal128("-Infinity"), Decimal128("1E+6144"),
                                   Decimal128("-1.000000000000000000000000000000001E-6143"),
                                   uuid.UUID(int=0), uuid.UUID(int=2**128 - 1),
                                   uuid.UUID("7fffffff-0000-4000-8000-000000000001")])
def test_java_serialization_round_trip(value: Any) -> None:
    text = javaser.dumps([value])
    back = javaser.loads(text)
    assert back == [value] and type(back[0]) is (Int64 if isinstance(value, int) and not -2**31 <= value < 2**31
                                                   else type(value))


def test_a_uuid_binary_is_written_as_a_java_uuid() -> None:
    value = uuid.UUID("c5a0f0c1-e4b0-4a1b-8000-000000000bb7")
    assert javaser.dumps([Binary(value.bytes, 4)]) == javaser.dumps([value])
    assert javaser.loads(javaser.dumps([Binary(value.bytes, 4)])) == [value]
    with pytest.raises(javaser.Unrepresentable):
        javaser.dumps([Binary(value.bytes, 3)])  # the legacy subtype: Debezium has no Java form for it either


def test_a_null_key_is_a_serialized_null() -> None:
    assert javaser.dumps(None) == "aced000570" and javaser.loads("aced000570") is None
    state = debezium_state.decode({debezium_state.COLLECTIONS_KEY: '[{"incremental_snapshot_collections_id":"d.c",'
                                   '"incremental_snapshot_collections_additional_condition":null}]',
                                   debezium_state.PRIMARY_KEY: "aced000570",
                                   debezium_state.MAXIMUM_KEY: "aced000570"})
    assert state == SnapshotState((Progress("d.c"),))


def test_queued_collections_after_the_first_and_the_pause_flag() -> None:
    state = SnapshotState((Progress("d.a", {}, True, 10, True, 99), Progress("d.b", {"x": 1})), paused=True)
    written = debezium_state.encode(state)
    assert json.loads(written[debezium_state.COLLECTIONS_KEY]) == [
        {"incremental_snapshot_collections_id": "d.a", "incremental_snapshot_collections_additional_condition": None},
        {"incremental_snapshot_collections_id": "d.b",
         "incremental_snapshot_collections_additional_condition": '({"x": 1})'}]
    assert debezium_state.OUR_KEY in written  # the pause flag has no Debezium key
    assert debezium_state.decode(written) == state
    without_ours = {k: v for k, v in written.items() if k != debezium_state.OUR_KEY}
    assert debezium_state.decode(without_ours) == SnapshotState(state.queue, paused=False)


def test_an_id_without_a_java_form_stays_in_our_key_only() -> None:
    state = SnapshotState((Progress("d.c", {}, True, {"a": 1}, True, {"a": 9}),))
    written = debezium_state.encode(state)
    assert set(written) == {debezium_state.OUR_KEY}
    assert debezium_state.decode(written) == state


def test_offsets_of_earlier_versions_are_still_read() -> None:
    legacy = base64.b64encode(bson.encode({"v": 1, "paused": False, "queue": [
        {"ns": "d.c", "condition": {"v": 1}, "after": 41, "max": 99}, {"ns": "d.e", "condition": {}}]})).decode()
    state = debezium_state.decode({"sec": 1, "incremental_snapshot_progress": legacy})
    assert state == SnapshotState((Progress("d.c", {"v": 1}, True, 41, True, 99), Progress("d.e")))


@pytest.mark.parametrize("class_name", ["org.bson.types.Decimal128", "java.util.Date"])
def test_an_unreadable_debezium_position_restarts_the_collection(class_name: str) -> None:
    # an object of the class with no fields: a Decimal128 without its two longs, or a class we have no reader for
    name = class_name.encode()
    stream = bytes.fromhex("aced0005757200135b4c6a6176612e6c616e672e4f626a6563743b90ce589f1073296c0200007870000000"
                           "0173") + bytes((0x72, 0, len(name))) + name + bytes.fromhex("0000000000000001020000787000")
    offset = {debezium_state.COLLECTIONS_KEY: '[{"incremental_snapshot_collections_id":"d.c"}]',
              debezium_state.PRIMARY_KEY: stream.hex()}
    with pytest.raises(javaser.Unrepresentable):
        javaser.loads(stream.hex())
    assert debezium_state.decode(offset) == SnapshotState((Progress("d.c"),))
    assert debezium_state.decode({"sec": 1}) is None
