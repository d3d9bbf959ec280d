"""Metrics a plugin exposes (the values Debezium publishes over JMX), rendered by the worker for Prometheus.

A task returns its current values from :meth:`~connect.api.task.SourceTask.metrics`; the worker renders them
on ``GET /metrics`` in Prometheus' text format. Names are whole Prometheus family names (for Debezium's,
``debezium_metrics_<JmxName>``) and labels are the task's own (Debezium's: ``plugin``, ``name``,
``context``, ``task``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

MetricKind = Literal["gauge", "counter", "untyped"]
"""A ``counter`` is exported as such when its name ends in ``_total``; otherwise as ``untyped``, as the JMX
exporter rules of Debezium's examples export Debezium's counters (``debezium_metrics_TotalNumberOfEventsSeen``)."""


@dataclass(frozen=True)
class Metric:
    """One sample: a family name, its labels and the current value."""

    name: str
    value: float
    labels: Mapping[str, str] = field(default_factory=dict)
    kind: MetricKind = "gauge"
    help: str = ""


def debezium_metric(jmx_name: str, value: float, *, plugin: str, server: str, context: str, task: int | str,
                    kind: MetricKind = "gauge", help: str = "") -> Metric:
    """A Debezium metric as Debezium's Prometheus JMX exporter rules name it."""
    labels = {"plugin": plugin, "name": server, "context": context, "task": str(task)}
    return Metric(f"debezium_metrics_{jmx_name}", value, labels, kind, help)
