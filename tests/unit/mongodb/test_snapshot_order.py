"""The client-side BSON order (``bsonorder``) and the snapshot progress kept in offsets (``snapshot_progress``)."""

from __future__ import annotations

import datetime
import random
import uuid

import pytest
from bson import Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.binary import Binary

from connectors.mongodb.snapshot.bson_order import after_filter, range_filter, sort_key
from connectors.mongodb.snapshot.progress import SnapshotProgress

# Every _id type in the server's order (as SecantusDB and mongod sort them); equal neighbours are grouped.
ORDERED = [
    MinKey(), None, float("nan"), float("-inf"), -5, Int64(1), 2.5, Decimal128("3"), Int64(7), float("inf"),
    "", "a", "b", "é", {}, {"a": 1}, {"a": 1, "b": 0}, {"b": 0}, {"a": "x"}, [1], [1, 2],
    b"z", Binary(b"ab", 0), Binary(b"ab", 5), b"abc", uuid.UUID(int=1),
    ObjectId("000000000000000000000000"), ObjectId("ffffffffffffffffffffffff"), False, True,
    datetime.datetime(1960, 1, 1), datetime.datetime(2020, 1, 1), datetime.datetime(2100, 1, 1),
    Timestamp(1, 1), Timestamp(1, 2), Timestamp(2, 0), Regex("a"), Regex("b"), MaxKey(),
]


def test_sort_key_orders_every_type_like_the_server() -> None:
    shuffled = ORDERED[:]
    random.Random(7).shuffle(shuffled)
    assert [repr(v) for v in sorted(shuffled, key=sort_key)] == [repr(v) for v in ORDERED]


def test_numbers_of_every_width_compare_by_value() -> None:
    assert sort_key(1) == sort_key(Int64(1)) == sort_key(1.0) == sort_key(Decimal128("1.0"))
    assert sort_key(Decimal128("0.1")) > sort_key(0.0999) and sort_key(2**62) < sort_key(Decimal128("1E+19"))
    assert sort_key(float("nan")) < sort_key(float("-inf"))


@pytest.mark.parametrize("value", [5, "b", ObjectId(), None, float("nan"), True, datetime.datetime(2020, 1, 1)])
def test_after_filter_adds_every_later_type(value: object) -> None:
    query = after_filter(value)
    assert query is not None, "every one of these types has a server bound"
    types = [t for clause in query["$or"] for t in (clause["_id"].get("$type") or []) if isinstance(t, str)]
    assert "maxKey" not in types and {"maxKey"} == {c["_id"]["$type"] for c in query["$or"]
                                                     if c["_id"].get("$type") == "maxKey"}
    assert "null" not in types or (value is None and "null" not in types)


def test_after_filter_bounds() -> None:
    assert after_filter(MinKey()) == {"_id": {"$gt": MinKey()}}
    assert after_filter(MaxKey()) == {"_id": {"$in": []}}
    after_5, after_nan = after_filter(5), after_filter(float("nan"))
    assert after_5 is not None and after_5["$or"][0] == {"_id": {"$gt": 5}}
    assert after_nan is not None and after_nan["$or"][0] == {"_id": {"$gte": float("-inf")}}


def test_range_filter_within_one_type_is_a_plain_range() -> None:
    assert range_filter(1, True, 10) == {"_id": {"$gte": 1, "$lt": 10}}
    assert range_filter("a", False, "m") == {"_id": {"$gt": "a", "$lt": "m"}}
    assert range_filter(None, True, None) == {}
    mixed = range_filter(5, True, "m")
    assert mixed is not None and [len(part["$or"]) for part in mixed["$and"]] == [3, 3]
    assert range_filter(Regex("a"), True, None) is None


def test_progress_records_ranges_and_completes_the_collection() -> None:
    progress = SnapshotProgress()
    ranges = progress.plan("db.c", [100, "m"])
    assert [(r.low, r.high) for r in ranges] == [(None, 100), (100, "m"), ("m", None)]
    state, done = progress.emitted("db.c", 1, 150, False)
    restored = SnapshotProgress.decode(state).ranges("db.c")
    assert restored is not None and [(r.started, r.after, r.done) for r in restored] == \
        [(False, None, False), (True, 150, False), (False, None, False)]
    assert restored[1].low == 100 and restored[2].low == "m" and restored[2].high is None
    progress.emitted("db.c", 0, None, True)
    progress.emitted("db.c", 1, None, True)
    state, done = progress.emitted("db.c", 2, "z", True)
    assert done and SnapshotProgress.decode(state).completed("db.c")
    assert SnapshotProgress.decode(state).ranges("db.c") is None


def test_progress_keeps_ids_of_every_type() -> None:
    progress = SnapshotProgress()
    progress.plan("db.c", [uuid.UUID(int=5), ObjectId("0" * 24)])
    state, _ = progress.emitted("db.c", 2, datetime.datetime(2020, 1, 1), False)
    restored = SnapshotProgress.decode(state)
    ranges = restored.ranges("db.c")
    assert ranges is not None and ranges[1].low == uuid.UUID(int=5) and ranges[2].after == datetime.datetime(2020, 1, 1)
    assert restored.started and not restored.completed("db.c")


def test_unreadable_progress_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unreadable"):
        SnapshotProgress.decode("not base64!")
