"""Debezium's streaming metrics of the MongoDB connector (``context=streaming``), kept by the task and rendered
by the worker on ``GET /metrics`` as ``debezium_metrics_<Name>{plugin="mongodb",name=<topic.prefix>,
context="streaming",task=<id>}``.

String-valued JMX attributes (``LastEvent``, ``SourceEventPosition``, ``LastTransactionId``) and the
``CapturedTables`` array have no Prometheus sample: the JMX exporter rules of Debezium's examples export numbers
only (a string attribute without a ``value:`` rule is dropped). With ``internal.advanced.metrics.enable=true``
(Debezium's advanced metrics) the create, update and delete events are also counted per collection, the maps
``NumberOfCreateEventsSeen``/``NumberOfUpdateEventsSeen``/``NumberOfDeleteEventsSeen`` with the collection as the
``table`` label (as the exporter labels a map's keys); MongoDB has no truncate events, so
``NumberOfTruncateEventsSeen`` stays an empty map there as in Debezium.
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from connect.api.metrics import Metric, debezium_metric

OPERATION_METRICS = {"c": "TotalNumberOfCreateEventsSeen", "u": "TotalNumberOfUpdateEventsSeen",
                     "d": "TotalNumberOfDeleteEventsSeen"}
PER_COLLECTION = {"c": "NumberOfCreateEventsSeen", "u": "NumberOfUpdateEventsSeen", "d": "NumberOfDeleteEventsSeen"}
_GAMMA = (1 + 0.01) / (1 - 0.01)  # DDSketch's bucket growth for a relative accuracy of 1 %
_INV_LOG_GAMMA = 1 / math.log(_GAMMA)


class LagSketch:
    """Debezium's quantiles of ``MilliSecondsBehindSource`` (``MilliSecondsBehindSourceP50``/``P95``/``P99``): a
    DDSketch of relative accuracy 1 % (Debezium's ``DDSketches.unboundedDense(0.01)``) of every event's lag since the
    task started. Written under the metrics' lock: one ``log`` per event, the buckets counted in C by ``Counter``."""

    def __init__(self) -> None:
        self._buckets: Counter[int] = Counter()
        self._zeros = 0
        self._count = 0

    def add(self, lags: list[int]) -> None:
        positive = [lag for lag in lags if lag > 0]
        self._zeros += len(lags) - len(positive)
        self._count += len(lags)
        self._buckets.update([math.ceil(math.log(lag) * _INV_LOG_GAMMA) for lag in positive])

    def quantile(self, q: float) -> float | None:
        """The value at quantile ``q`` (None before any event, as Debezium's sketch answers null)."""
        if not self._count:
            return None
        rank = q * (self._count - 1)
        seen = self._zeros
        if rank < seen:
            return 0.0
        index = 0
        for index in sorted(self._buckets):
            seen += self._buckets[index]
            if seen > rank:
                break
        return 2 * _GAMMA ** index / (_GAMMA + 1)


class StreamingMetrics:
    """Counters and gauges updated by the task thread, read by the REST thread."""

    def __init__(self, server: str, task: str, queue_capacity: int, queued: Callable[[], int],
                 queue_bytes: int = 0, queued_bytes: Callable[[], int] = lambda: 0, quantiles: bool = True) -> None:
        """``queue_bytes``: ``max.queue.size.in.bytes`` (0: no byte limit); ``queued_bytes`` reads the bytes queued;
        ``quantiles``: Debezium's ``statistics.metrics.enabled``, the lag's quantiles (:class:`LagSketch`)."""
        self._sketch = LagSketch() if quantiles else None
        self._queue_bytes = queue_bytes
        self._queued_bytes = queued_bytes
        self._server = server
        self._task = task
        self._queue_capacity = queue_capacity
        self._queued = queued
        self._lock = threading.Lock()
        self.connected = False
        self.counts = {name: 0 for name in ("TotalNumberOfEventsSeen", "NumberOfEventsFiltered",
                                            "NumberOfErroneousEvents", "NumberOfDisconnects",
                                            "NumberOfPrimaryElections", "NumberOfEmptyPolls",
                                            "NumberOfCommittedTransactions", *OPERATION_METRICS.values())}
        # skip.messages.without.change is refused here (never true): Debezium leaves this counter at -1 then
        self.counts["NumberOfUnchangedEventsSkipped"] = -1
        self.per_collection: dict[tuple[str, str], int] = {}  # (operation, "db.collection") -> events
        self._last_event_ms = 0
        self._last_empty_poll_ms = 0  # how long the last poll without an event took, as Debezium measures it
        self._last_poll_ms = 0  # how long the last poll that returned events took
        self._behind: int | None = None
        self._behind_min: int | None = None
        self._behind_max: int | None = None
        self._behind_sum = 0
        self._behind_n = 0

    def events(self, ops: list[str], source_ts_ms: list[int], namespaces: list[str] | None = None) -> None:
        """Data events were emitted by one poll: each one's operation and ``source.ts_ms`` (0: unknown), in
        order, and with the advanced metrics each one's ``db.collection``. Counted together, at the poll's end (one
        clock read and one lock per poll, not per event)."""
        now = time.time_ns() // 1_000_000
        stamps = [ts for ts in source_ts_ms if ts]
        with self._lock:
            counts = self.counts
            counts["TotalNumberOfEventsSeen"] += len(ops)
            for op, name in OPERATION_METRICS.items():
                counts[name] += ops.count(op)
            if namespaces is not None:
                per = self.per_collection
                for op, ns in zip(ops, namespaces, strict=True):
                    if op in PER_COLLECTION:
                        per[(op, ns)] = per.get((op, ns), 0) + 1
            self._last_event_ms = now
            if stamps:
                newest, oldest = max(stamps), min(stamps)
                self._behind = max(now - stamps[-1], 0)
                fastest, slowest = max(now - newest, 0), max(now - oldest, 0)
                self._behind_min = fastest if self._behind_min is None else min(self._behind_min, fastest)
                self._behind_max = slowest if self._behind_max is None else max(self._behind_max, slowest)
                self._behind_sum += (len(stamps) * now - sum(stamps) if newest <= now
                                     else sum(max(now - ts, 0) for ts in stamps))
                self._behind_n += len(stamps)
                if self._sketch is not None:
                    self._sketch.add([now - ts for ts in stamps])

    def count(self, name: str, amount: int = 1) -> None:
        """Add to one of the counters (filtered, erroneous, disconnects, ...)."""
        with self._lock:
            self.counts[name] = self.counts.get(name, 0) + amount

    def poll(self, empty: bool, took_ms: int = 0) -> None:
        """A poll of the change stream returned after ``took_ms`` (``empty``: without an event); Debezium's
        ``LastEmptyPollTime``/``LastSourceEventPollTime`` are such durations, not times of day."""
        with self._lock:
            if empty:
                self._last_empty_poll_ms = took_ms
                self.counts["NumberOfEmptyPolls"] += 1
            else:
                self._last_poll_ms = took_ms

    def queue_values(self) -> dict[str, float]:
        """The queue attributes (Debezium's snapshot and streaming contexts both show the one queue)."""
        queued = self._queued()
        return {"QueueTotalCapacity": float(self._queue_capacity),
                "QueueRemainingCapacity": float(max(self._queue_capacity - queued, 0)),
                "MaxQueueSizeInBytes": float(self._queue_bytes), "CurrentQueueSizeInBytes": float(self._queued_bytes())}

    def samples(self) -> list[Metric]:
        now = time.time_ns() // 1_000_000
        with self._lock:
            values: dict[str, float] = {name: float(v) for name, v in self.counts.items()}
            values["Connected"] = 1.0 if self.connected else 0.0
            values["MilliSecondsSinceLastEvent"] = float(now - self._last_event_ms) if self._last_event_ms else -1.0
            values["MilliSecondsBehindSource"] = float(self._behind) if self._behind is not None else -1.0
            values["MilliSecondsBehindSourceMinValue"] = float(self._behind_min or 0)
            values["MilliSecondsBehindSourceMaxValue"] = float(self._behind_max or 0)
            values["MilliSecondsBehindSourceAverageValue"] = (self._behind_sum / self._behind_n
                                                              if self._behind_n else 0.0)
            values["LastEmptyPollTime"] = float(self._last_empty_poll_ms)
            values["LastSourceEventPollTime"] = float(self._last_poll_ms)
            if self._sketch is not None:
                for name, q in (("MilliSecondsBehindSourceP50", 0.5), ("MilliSecondsBehindSourceP95", 0.95),
                                ("MilliSecondsBehindSourceP99", 0.99)):
                    quantile = self._sketch.quantile(q)
                    if quantile is not None:  # null in Debezium before the first event: no sample
                        values[name] = quantile
            per_collection = sorted(self.per_collection.items())
        values.update(self.queue_values())
        counters = set(self.counts)
        result = [debezium_metric(name, value, plugin="mongodb", server=self._server, context="streaming",
                                  task=self._task, kind="counter" if name in counters else "gauge")
                  for name, value in sorted(values.items())]
        for (op, ns), count in per_collection:
            metric = debezium_metric(PER_COLLECTION[op], count, plugin="mongodb", server=self._server,
                                     context="streaming", task=self._task, kind="counter")
            result.append(replace(metric, labels={**metric.labels, "table": ns}))
        return result
