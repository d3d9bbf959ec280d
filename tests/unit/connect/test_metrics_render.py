"""Prometheus exposition of metric samples through prometheus_client, typed as the JMX exporter rules type them."""

from __future__ import annotations

import math

from connect.api.metrics import Metric, debezium_metric
from rest.prometheus import registry, render


def test_families_grouped_with_help_type_and_escaped_labels() -> None:
    text = render([
        debezium_metric("TotalNumberOfEventsSeen", 3, plugin="mongodb", server="srv", context="streaming", task=0,
                        kind="counter", help="Events seen"),
        Metric("up", 1.0),
        debezium_metric("TotalNumberOfEventsSeen", 4.5, plugin="mongodb", server='a"b\\c', context="streaming",
                        task=1, kind="counter"),
        Metric("kafka_connect_worker_task_startup_attempts_total", 2, kind="counter", help="Attempts"),
    ])
    assert text.splitlines() == [
        "# HELP debezium_metrics_TotalNumberOfEventsSeen Events seen",
        "# TYPE debezium_metrics_TotalNumberOfEventsSeen untyped",
        'debezium_metrics_TotalNumberOfEventsSeen{context="streaming",name="srv",plugin="mongodb",task="0"} 3.0',
        'debezium_metrics_TotalNumberOfEventsSeen{context="streaming",name="a\\"b\\\\c",plugin="mongodb",task="1"} 4.5',
        "# HELP up ",
        "# TYPE up gauge",
        "up 1.0",
        "# HELP kafka_connect_worker_task_startup_attempts_total Attempts",
        "# TYPE kafka_connect_worker_task_startup_attempts_total counter",
        "kafka_connect_worker_task_startup_attempts_total 2.0",
    ]


def test_special_values_and_names() -> None:
    text = render([Metric("1bad-name", math.nan), Metric("inf", math.inf), Metric("neg", -math.inf)])
    assert "_1bad_name NaN" in text and "inf +Inf" in text and "neg -Inf" in text
    assert render([]) == ""


def test_registry_adds_the_process_metrics() -> None:
    from rest.prometheus import exposition

    text = exposition(registry(lambda: [Metric("kafka_connect_worker_connector_count", 1)])).decode()
    for family in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                   "process_start_time_seconds", "kafka_connect_worker_connector_count"):
        assert f"\n{family} " in text or text.startswith(f"{family} ") or f"\n{family}{{" in text, family
