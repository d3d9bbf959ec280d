"""Prometheus text rendering of metric samples."""

from __future__ import annotations

import math

from connect.api.metrics import Metric, debezium_metric
from rest.prometheus import render


def test_families_grouped_with_help_type_and_sorted_escaped_labels() -> None:
    text = render([
        debezium_metric("TotalNumberOfEventsSeen", 3, plugin="mongodb", server="srv", context="streaming", task=0,
                        kind="counter", help="Events seen"),
        Metric("up", 1.0),
        debezium_metric("TotalNumberOfEventsSeen", 4.5, plugin="mongodb", server='a"b\\c', context="streaming",
                        task=1, kind="counter"),
    ])
    assert text.splitlines() == [
        "# HELP debezium_metrics_TotalNumberOfEventsSeen Events seen",
        "# TYPE debezium_metrics_TotalNumberOfEventsSeen counter",
        'debezium_metrics_TotalNumberOfEventsSeen{context="streaming",name="srv",plugin="mongodb",task="0"} 3',
        'debezium_metrics_TotalNumberOfEventsSeen{context="streaming",name="a\\"b\\\\c",plugin="mongodb",task="1"} 4.5',
        "# TYPE up gauge",
        "up 1",
    ]


def test_special_values_and_names() -> None:
    text = render([Metric("1bad-name", math.nan), Metric("inf", math.inf), Metric("neg", -math.inf)])
    assert "_1bad_name NaN" in text and "inf +Inf" in text and "neg -Inf" in text
    assert render([]) == ""
