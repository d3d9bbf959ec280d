"""Change events over MongoDB's 16 MB limit and records over Kafka's size limits, end to end against SecantusDB
and the real Kafka broker.

* ``cursor.oversize.handling.mode=split``: the server splits a large event with ``$changeStreamSplitLargeEvent``
  and the connector joins the fragments into the event an unsplit stream gives (compared with a connector reading
  the same operations unsplit; SecantusDB, unlike MongoDB, hands out an unsplit event over 16 MB, which is what
  makes the comparison possible).
* A record larger than the producer's ``max.request.size`` or the broker's ``message.max.bytes``: the task fails
  with Kafka's error, as Kafka Connect does; with ``errors.tolerance=all`` the record is skipped, logged and
  counted (KIP-779) and the records after it arrive. Nothing is dropped silently.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.mongodb.conftest import create_mongodb_connector, values
from tests.integration.support import Worker, unique

pytestmark = pytest.mark.integration

MB = 1024 * 1024


def _big_update(mongo: Any, db: str) -> tuple[Any, Any]:
    """A 9 MB document, then an update whose event (update description + looked-up document) is over 16 MB,
    then a small insert. Returns the cluster time before the operations and the collection."""
    start = mongo.admin.command("ping")["operationTime"]
    coll = mongo[db]["big"]
    coll.insert_one({"_id": 1, "a": "x" * (9 * MB), "n": 1})
    coll.update_one({"_id": 1}, {"$set": {"a": "y" * (9 * MB), "n": 2}})
    coll.insert_one({"_id": 2, "small": True})
    return start, coll


def _op_time(timestamp: Any) -> str:
    return str(timestamp.time << 32 | timestamp.inc)


def _comparable(value: dict[str, Any]) -> dict[str, Any]:
    source = {k: v for k, v in value["source"].items() if k not in ("name", "ts_us", "ts_ns")}
    return {**value, "source": source, "ts_ms": None}


def test_split_event_is_joined_into_the_unsplit_event(worker: Worker, stack: Any, mongo: Any) -> None:
    db = unique("split")
    start, _ = _big_update(mongo, db)
    got = {}
    for mode in ("split", "fail"):
        prefix = unique(f"ov{mode}")
        create_mongodb_connector(worker, unique(f"oversize-{mode}-"), {
            "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix, "database.include.list": db,
            "capture.start.op.time": _op_time(start), "cursor.oversize.handling.mode": mode,
            # the 9 MB field stays out of Kafka (records stay under the broker's limit); the event still is split
            "field.exclude.list": f"{db}.big.a"})
        got[mode] = values(stack.kafka_bootstrap, f"{prefix}.{db}.big", 3)
    split, unsplit = got["split"], got["fail"]
    assert [v["op"] for v in split] == ["c", "u", "c"]
    assert json.loads(split[1]["after"]) == {"_id": 1, "n": 2}
    assert json.loads(split[1]["updateDescription"]["updatedFields"]) == {"n": 2}
    assert [_comparable(v) for v in split] == [_comparable(v) for v in unsplit]


def _failed_trace(worker: Worker, name: str) -> str:
    status = worker.wait_status(name, lambda s: any(t["state"] == "FAILED" for t in s["tasks"]), timeout=120)
    return str(status["tasks"][0]["trace"])


def test_record_over_kafka_limits_fails_the_task_or_is_skipped(worker: Worker, stack: Any, mongo: Any) -> None:
    db = unique("toolarge")
    start, _ = _big_update(mongo, db)
    base = {"mongodb.connection.string": stack.mongo_uri, "database.include.list": db,
            "capture.start.op.time": _op_time(start), "cursor.oversize.handling.mode": "split"}

    # the producer refuses it (max.request.size, 1 MB by default)
    client_side = unique("toolarge-client-")
    # (the task may fail before it was ever seen RUNNING: the record is waiting for it)
    create_mongodb_connector(worker, client_side, {**base, "topic.prefix": unique("tlc")}, wait_running=False)
    trace = _failed_trace(worker, client_side)
    assert "Unrecoverable exception from producer send callback" in trace, trace
    assert "RecordTooLargeException" in trace and "which is the value of the max.request.size configuration" in trace, \
        trace

    # the broker refuses it (message.max.bytes, 1 MB by default) once the producer lets it through
    broker_side = unique("toolarge-broker-")
    create_mongodb_connector(worker, broker_side, {**base, "topic.prefix": unique("tlb"),
                                                   "producer.override.max.request.size": str(40 * MB)},
                             wait_running=False)
    trace = _failed_trace(worker, broker_side)
    assert "Unrecoverable exception from producer send callback" in trace, trace
    assert "RecordTooLargeException" in trace and "larger than the max message size the server will accept" in trace, \
        trace

    # errors.tolerance=all: the two large records are skipped (logged, counted), the small one arrives
    prefix = unique("tlt")
    tolerant = unique("toolarge-tolerant-")
    create_mongodb_connector(worker, tolerant, {**base, "topic.prefix": prefix, "errors.tolerance": "all",
                                                "errors.log.enable": "true"})
    [only] = values(stack.kafka_bootstrap, f"{prefix}.{db}.big", 1, timeout=120)
    assert json.loads(only["after"]) == {"_id": 2, "small": True}
    assert worker.wait_running(tolerant)
    # the skipped records' position was committed with them: the skip is counted, not silent
    metrics = worker.http.get("/metrics").text
    skipped = [line for line in metrics.splitlines() if "skipped" in line.lower() and tolerant in line
               and not line.startswith("#")]
    assert skipped and float(skipped[0].rsplit(" ", 1)[-1]) >= 2, skipped
