"""Every PromQL query of the chart's Grafana dashboard names only series (and labels) the worker exports after a
demo-like run: a real worker, a real MongoDB connector that snapshots a collection and then streams changes."""

from __future__ import annotations

import time
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.helm.dashboard import SCRAPE_LABELS, load, parse, queries, selected
from tests.integration.support import Worker, create_connector, read_topic, unique

pytestmark = pytest.mark.integration


def test_every_dashboard_query_names_exported_series(worker: Worker, stack: Any, mongo: Any) -> None:
    name, prefix, db = unique("dash-"), unique("dash"), unique("dashdb_")
    mongo[db].orders.insert_many([{"_id": n, "item": "snapshot"} for n in range(10)])
    create_connector(worker, name, {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
                                    "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
                                    "collection.include.list": f"{db}.orders", "offset.flush.interval.ms": "500"})
    mongo[db].orders.insert_many([{"_id": n, "item": "streamed"} for n in range(10, 20)])
    mongo[db].orders.update_one({"_id": 1}, {"$set": {"item": "changed"}})
    read_topic(stack.kafka_bootstrap, f"{prefix}.{db}.orders", 21)
    labels: dict[str, set[str]] = {}
    deadline = time.monotonic() + 90  # the producer's statistics come every 30 s (metrics.sample.window.ms)
    while time.monotonic() < deadline:
        labels = {}
        for family in text_string_to_metric_families(worker.http.get("/metrics").text):
            for sample in family.samples:
                labels.setdefault(sample.name, set()).update(sample.labels)
        if "kafka_connect_connector_task_offset_commit_avg_time_ms" in labels \
                and "debezium_metrics_MilliSecondsBehindSource" in labels \
                and "kafka_producer_request_latency_avg" in labels:
            break
        time.sleep(0.5)
    checked = 0
    for title, expr in queries(load()):
        for series, used in selected(parse(expr)):
            assert series in labels, f"{title}: {expr} names {series}, which the worker does not export"
            missing = used - labels[series] - SCRAPE_LABELS
            assert not missing, f"{title}: {series} has no label {missing}"
            checked += 1
    assert checked >= 40
