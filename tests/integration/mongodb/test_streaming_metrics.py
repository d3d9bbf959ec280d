"""Debezium's streaming metrics of the MongoDB task on the worker's ``GET /metrics`` (Prometheus text),
``debezium_metrics_<Name>{plugin="mongodb",name=<topic.prefix>,context="streaming",task="0"}``."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.integration.mongodb.conftest import create_mongodb_connector
from tests.integration.support import Worker, read_topic, unique

pytestmark = pytest.mark.integration


def _samples(text: str, prefix: str) -> dict[str, float]:
    found = {}
    for line in text.splitlines():
        match = re.match(r"^debezium_metrics_(\w+)\{([^}]*)\} (\S+)$", line)
        if match is None:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2)))
        if labels == {"plugin": "mongodb", "name": prefix, "context": "streaming", "task": "0"}:
            found[match.group(1)] = float(match.group(3))
    return found


def test_streaming_metrics(worker: Worker, stack: Any, mongo: Any) -> None:
    prefix, db = unique("m"), unique("metrics")
    create_mongodb_connector(worker, unique("metrics-"), {"mongodb.connection.string": stack.mongo_uri,
                                                          "topic.prefix": prefix, "collection.include.list": f"{db}.c",
                                                          "max.queue.size": "4096"})
    mongo[db]["c"].insert_many([{"_id": i} for i in range(10)])
    mongo[db]["c"].update_one({"_id": 1}, {"$set": {"x": 1}})
    mongo[db]["c"].delete_one({"_id": 2})
    mongo[db]["filtered"].insert_many([{"_id": i} for i in range(4)])
    read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.c", 13)
    deadline, values = time.monotonic() + 30, {}
    while time.monotonic() < deadline:
        values = _samples(worker.http.get("/metrics").text, prefix)
        if values.get("NumberOfEventsFiltered", 0) >= 4:
            break
        time.sleep(0.5)
    assert values["TotalNumberOfEventsSeen"] == 12
    assert values["TotalNumberOfCreateEventsSeen"] == 10
    assert values["TotalNumberOfUpdateEventsSeen"] == 1
    assert values["TotalNumberOfDeleteEventsSeen"] == 1
    assert values["NumberOfEventsFiltered"] >= 4
    assert values["Connected"] == 1
    assert values["QueueTotalCapacity"] == 4096
    assert 0 <= values["QueueRemainingCapacity"] <= 4096
    assert 0 <= values["MilliSecondsBehindSource"] < 60_000
    assert values["NumberOfDisconnects"] == 0
    assert values["MilliSecondsSinceLastEvent"] >= 0
