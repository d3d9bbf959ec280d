"""``GET /metrics``: Prometheus text with the worker's counts and each source task's record counters."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.integration.support import Worker, create_connector, unique

pytestmark = pytest.mark.integration


def _sample(text: str, family: str, **labels: str) -> float | None:
    for line in text.splitlines():
        if not line.startswith(family + "{"):
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line[len(family):line.rindex("}")]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_metrics_count_the_records_a_task_wrote(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = unique("metrics-"), unique("met"), unique("metdb_")
    config = {"connector.class": "MongoDbConnector", "mongodb.connection.string": stack.mongo_uri,
              "topic.prefix": prefix, "collection.include.list": f"{db}.c"}
    create_connector(worker, name, config)
    mongo[db].c.insert_many([{"_id": n} for n in range(25)])
    deadline = time.monotonic() + 60
    written = None
    while time.monotonic() < deadline:
        response = worker.http.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        written = _sample(response.text, "kafka_connect_source_task_metrics_source_record_write_total",
                          connector=name, task="0")
        if written is not None and written >= 25:
            break
        time.sleep(0.3)
    assert written == 25
    text = worker.http.get("/metrics").text
    assert "# TYPE kafka_connect_source_task_metrics_source_record_write_total counter" in text
    assert (_sample(text, "kafka_connect_connect_worker_metrics_task_count") or 0) >= 1
