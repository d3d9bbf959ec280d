"""Prometheus exposition of the worker's metrics with ``prometheus_client`` (this package's only import of it).

The worker's and its tasks' samples (:class:`connect.api.metrics.Metric`) are turned into metric families at each
scrape by a custom collector; the process metrics (``process_*``: CPU seconds, resident memory, open file
descriptors, start time) and the interpreter's (``python_info``, ``python_gc_*``) come from the library's own
collectors. A ``counter`` whose name ends in ``_total`` is exported as a counter; any other counter (Debezium's
``debezium_metrics_TotalNumberOfEventsSeen``) as ``untyped``, as the JMX exporter rules of Debezium's examples
export it, so the sample keeps its name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.metrics_core import Metric as Family
from prometheus_client.registry import Collector

from connect.api.metrics import Metric

CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4  # what generate_latest writes


def _sanitize(name: str) -> str:
    out = "".join(c if c.isalnum() or c in "_:" else "_" for c in name)
    return "_" + out if out[:1].isdigit() else out


def families(metrics: Iterable[Metric]) -> list[Family]:
    """The samples grouped into families (in order of first appearance), typed as described above."""
    grouped: dict[str, Family] = {}
    for metric in metrics:
        name = _sanitize(metric.name)
        family = grouped.get(name)
        if family is None:
            if metric.kind == "counter" and name.endswith("_total"):
                family = Family(name[:-len("_total")], metric.help, "counter")
            else:
                family = Family(name, metric.help, "untyped" if metric.kind != "gauge" else "gauge")
            grouped[name] = family
        labels = {_sanitize(k): str(v) for k, v in sorted(metric.labels.items())}
        family.add_sample(name, labels, float(metric.value))
    return list(grouped.values())


class _WorkerCollector(Collector):
    def __init__(self, source: Callable[[], Iterable[Metric]]) -> None:
        self._source = source

    def collect(self) -> Iterator[Family]:
        yield from families(self._source())


def registry(source: Callable[[], Iterable[Metric]]) -> CollectorRegistry:
    """A registry with the process and interpreter collectors and one reading ``source`` at each scrape."""
    result = CollectorRegistry(auto_describe=False)
    ProcessCollector(registry=result)
    PlatformCollector(registry=result)
    GCCollector(registry=result)
    result.register(_WorkerCollector(source))
    return result


def exposition(reg: CollectorRegistry) -> bytes:
    """The registry in Prometheus' text format 0.0.4."""
    return generate_latest(reg)


def render(metrics: Iterable[Metric]) -> str:
    """Only ``metrics`` (no process metrics) in the text format: for tests and tools."""
    reg = CollectorRegistry(auto_describe=False)
    captured = list(metrics)
    reg.register(_WorkerCollector(lambda: captured))
    return generate_latest(reg).decode("utf-8")
