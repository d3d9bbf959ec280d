"""The worker's metrics, as Kafka Connect's ``connect-worker-metrics``, ``connect-worker-rebalance-metrics``,
``connector-metrics`` and ``connect-coordinator-metrics`` MBeans are named by Strimzi's Prometheus JMX exporter
rules (``packaging/examples/metrics/kafka-connect-metrics.yaml``): ``kafka_connect_worker_*`` (per connector with a
``connector`` label), ``kafka_connect_worker_rebalance_*``, ``kafka_connect_connector_status{connector,status}``
and its ``connector_class``/``connector_type``/``connector_version`` siblings, and
``kafka_connect_coordinator_assigned_connectors``/``_assigned_tasks{clientid}`` (the MBean has a ``client-id``
key, so the rules' generic ``client-id`` rule names it, with the label lower-cased).

String attributes become a sample of value 1 with the string as a label, as those rules do; states are lower case,
as Connect's metrics report them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from connect.api.metrics import Metric
from connect.runtime.producer_metrics import java_client_samples

TASK_STATES = ("running", "paused", "failed", "unassigned", "destroyed", "restarting")
_PROTOCOLS = {"default": "eager", "eager": "eager", "compatible": "compatible", "sessioned": "sessioned"}


@dataclass
class _Startups:
    attempts: int = 0
    successes: int = 0

    def record(self, ok: bool) -> None:
        self.attempts += 1
        self.successes += int(ok)

    def samples(self, kind: str) -> list[Metric]:
        failures = self.attempts - self.successes
        prefix = f"kafka_connect_worker_{kind}_startup_"
        return [Metric(prefix + "attempts_total", self.attempts, kind="counter",
                       help=f"{kind.capitalize()} starts this worker attempted."),
                Metric(prefix + "success_total", self.successes, kind="counter",
                       help=f"{kind.capitalize()} starts that succeeded."),
                Metric(prefix + "failure_total", failures, kind="counter",
                       help=f"{kind.capitalize()} starts that failed."),
                Metric(prefix + "success_percentage", self.successes / self.attempts if self.attempts else 0.0,
                       help=f"Fraction of {kind} starts that succeeded."),
                Metric(prefix + "failure_percentage", failures / self.attempts if self.attempts else 0.0,
                       help=f"Fraction of {kind} starts that failed.")]


@dataclass
class RebalanceMetrics:
    """``connect-worker-rebalance-metrics``: updated by the group coordinator on the herder thread."""

    protocol: str = ""
    leader: str = ""
    epoch: int = -1
    completed: int = 0
    rebalancing: bool = False
    _started: float | None = None
    _last_done: float | None = None
    _times_ms: list[float] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _client_id: str = ""
    _assigned: Callable[[], tuple[int, int]] | None = None

    _client: Callable[[], Iterable[tuple[str, str, Mapping[str, str], float]]] | None = None

    def assigned_to(self, client_id: str, assigned: Callable[[], tuple[int, int]],
                    client: Callable[[], Iterable[tuple[str, str, Mapping[str, str], float]]] | None = None) -> None:
        """Where ``connect-coordinator-metrics`` reads this member's assignment, (connectors, tasks), and ``client``
        the group member's Java-named client metrics (``connect-metrics``, ``connect-node-metrics``,
        ``connect-coordinator-metrics``)."""
        self._client_id, self._assigned, self._client = client_id, assigned, client

    def started(self) -> None:
        """The group began a rebalance."""
        with self._lock:
            if not self.rebalancing:
                self.rebalancing, self._started = True, time.monotonic()

    def completed_with(self, generation: int, leader_url: str, protocol: str) -> None:
        """An assignment was received and applied."""
        now = time.monotonic()
        with self._lock:
            if self._started is not None:
                self._times_ms = [*self._times_ms[-99:], (now - self._started) * 1000]
            self.rebalancing, self._started, self._last_done = False, None, now
            self.epoch, self.leader = generation, leader_url
            self.protocol = _PROTOCOLS.get(protocol, protocol)
            self.completed += 1

    def samples(self) -> list[Metric]:
        with self._lock:
            times, last = list(self._times_ms), self._last_done
            prefix = "kafka_connect_worker_rebalance_"
            result = [
                Metric(prefix + "completed_rebalances_total", self.completed, kind="counter",
                       help="Rebalances this worker completed."),
                Metric(prefix + "rebalancing", float(self.rebalancing), help="1 while a rebalance is under way."),
                Metric(prefix + "epoch", self.epoch, help="The group generation of the last completed rebalance."),
                Metric(prefix + "rebalance_avg_time_ms", sum(times) / len(times) if times else 0.0,
                       help="Average time of a rebalance."),
                Metric(prefix + "rebalance_max_time_ms", max(times) if times else 0.0,
                       help="Longest rebalance."),
                Metric(prefix + "time_since_last_rebalance_ms",
                       (time.monotonic() - last) * 1000 if last is not None else -1.0,
                       help="Time since the last completed rebalance (-1: none yet)."),
            ]
            if self.leader:
                result.append(Metric(prefix + "leader_name", 1.0, {"leader_name": self.leader}, "untyped",
                                     "The URL of the group's leader."))
            if self.protocol:
                result.append(Metric(prefix + "connect_protocol", 1.0, {"connect_protocol": self.protocol},
                                     "untyped", "The Connect protocol the group runs."))
        if self._assigned is not None:
            connectors, tasks = self._assigned()
            labels = {"clientid": self._client_id}
            result += [Metric("kafka_connect_coordinator_assigned_connectors", connectors, labels,
                              help="Connectors assigned to this member of the group."),
                       Metric("kafka_connect_coordinator_assigned_tasks", tasks, labels,
                              help="Tasks assigned to this member of the group.")]
        if self._client is not None:
            result += java_client_samples(self._client(), debezium_connect_metrics=True)
        return result


class WorkerMetrics:
    """The worker's own counts: start-up attempts of connectors and tasks, and the rebalances."""

    def __init__(self) -> None:
        self.connector_startups = _Startups()
        self.task_startups = _Startups()
        self.rebalance: RebalanceMetrics | None = None

    def distributed(self) -> RebalanceMetrics:
        """The rebalance metrics, created when the worker joins a group (standalone workers have none)."""
        if self.rebalance is None:
            self.rebalance = RebalanceMetrics()
        return self.rebalance

    def samples(self, connectors: Mapping[str, ConnectorView], task_count: int) -> list[Metric]:
        """Every worker-level sample; ``connectors`` are the connectors this worker runs."""
        result = [Metric("kafka_connect_worker_connector_count", len(connectors),
                         help="Connectors run in this worker."),
                  Metric("kafka_connect_worker_task_count", task_count, help="Tasks run in this worker."),
                  *self.connector_startups.samples("connector"), *self.task_startups.samples("task")]
        for name, view in sorted(connectors.items()):
            result.extend(view.samples(name))
        if self.rebalance is not None:
            result.extend(self.rebalance.samples())
        return result


@dataclass(frozen=True)
class ConnectorView:
    """What the metrics show of one connector this worker runs."""

    status: str
    connector_class: str
    version: str
    task_states: Iterable[str]

    def samples(self, name: str) -> list[Metric]:
        labels = {"connector": name}
        result = [Metric("kafka_connect_connector_status", 1.0, {**labels, "status": self.status},
                         help="The connector's status (running, paused, stopped, failed, unassigned)."),
                  Metric("kafka_connect_connector_connector_class", 1.0,
                         {**labels, "connector_class": self.connector_class}, help="The connector's class."),
                  Metric("kafka_connect_connector_connector_type", 1.0, {**labels, "connector_type": "source"},
                         help="The connector's type."),
                  Metric("kafka_connect_connector_connector_version", 1.0,
                         {**labels, "connector_version": self.version}, help="The connector's version.")]
        states = list(self.task_states)
        result.append(Metric("kafka_connect_worker_connector_total_task_count", len(states), labels,
                             help="Tasks of the connector in the cluster."))
        for state in TASK_STATES:
            result.append(Metric(f"kafka_connect_worker_connector_{state}_task_count",
                                 sum(1 for s in states if s == state), labels,
                                 help=f"Tasks of the connector that are {state}."))
        return result
