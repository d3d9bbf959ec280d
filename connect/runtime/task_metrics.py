"""One source task's metrics, as Kafka Connect's ``connector-task-metrics``, ``source-task-metrics`` and
``task-error-metrics`` MBean groups name them after Strimzi's Prometheus JMX exporter rules
(``kafka_connect_connector_task_*``, ``kafka_connect_source_task_*``, ``kafka_connect_task_error_*``, each with the
labels ``connector`` and ``task``; the status as ``kafka_connect_connector_task_status{status="running"} 1``).

An exactly-once task (:mod:`connect.runtime.exactly_once`) also has KIP-618's ``transaction-size-avg``/``-min``/
``-max`` (records per committed transaction), which Connect registers for ``ExactlyOnceWorkerSourceTask`` only.

The task thread records poll batches and offset commits, the producer's thread counts acknowledged records (one
integer increment: the hot path pays nothing more) and the worker sets the state. Rates, averages and maxima are
over the last :data:`WINDOW_S` seconds, as Connect's two 30-second samples; totals and ratios since the task
started. Readers (the ``/metrics`` handler) take a consistent enough view without a lock: every field is one word
written by one thread.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Mapping

from connect.api.metrics import Metric

WINDOW_S = 60.0
STATES = ("unassigned", "running", "paused", "failed", "destroyed", "restarting")


class _Window:
    """Values recorded over the last ``WINDOW_S`` seconds, for ``-avg`` and ``-max``."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._values: deque[tuple[float, float]] = deque()
        self._lock = threading.Lock()

    def record(self, value: float) -> None:
        now = self._clock()
        with self._lock:
            self._values.append((now, value))
            self._trim(now)

    def _trim(self, now: float) -> None:
        while self._values and self._values[0][0] < now - WINDOW_S:
            self._values.popleft()

    def _current(self) -> list[float]:
        with self._lock:
            self._trim(self._clock())
            return [v for _, v in self._values]

    def stats(self) -> tuple[float, float]:
        """(average, maximum); NaN for both when nothing was recorded in the window, as Connect reports."""
        average, _minimum, maximum = self.spread()
        return average, maximum

    def spread(self) -> tuple[float, float, float]:
        """(average, minimum, maximum); NaN for each when nothing was recorded in the window."""
        values = self._current()
        if not values:
            return float("nan"), float("nan"), float("nan")
        return sum(values) / len(values), min(values), max(values)


class _Rate:
    """A per-second rate of a growing total, from the totals seen over the last ``WINDOW_S`` seconds."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._points: deque[tuple[float, int]] = deque([(clock(), 0)])
        self._lock = threading.Lock()

    def rate(self, total: int) -> float:
        now = self._clock()
        with self._lock:
            while len(self._points) > 1 and self._points[1][0] <= now - WINDOW_S:
                self._points.popleft()
            start, base = self._points[0]
            if now - self._points[-1][0] >= 1.0:
                self._points.append((now, total))
        elapsed = now - start
        return (total - base) / elapsed if elapsed > 0 else 0.0


class TaskMetrics:
    """The counters of one :class:`~connect.runtime.worker_source_task.WorkerSourceTask`."""

    def __init__(self, connector: str, task: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.labels = {"connector": connector, "task": str(task)}
        self._clock = clock
        self.state = "unassigned"
        self._state_since = clock()
        self._time_in: dict[str, float] = {}
        self.polled = 0
        self.written = 0
        self.dropped = 0
        self._batch_sizes = _Window(clock)
        self._poll_times = _Window(clock)
        self._commit_times = _Window(clock)
        self.commits_ok = 0
        self.commits_failed = 0
        self._poll_rate = _Rate(clock)
        self._write_rate = _Rate(clock)
        self._active = _Window(clock)
        self._transaction_sizes: _Window | None = None  # an exactly-once task's only

    # --- recording -------------------------------------------------------------------------------
    def set_state(self, state: str) -> None:
        """The task's state as Connect's ``TaskStatus.State``, lower case."""
        now = self._clock()
        self._time_in[self.state] = self._time_in.get(self.state, 0.0) + now - self._state_since
        self.state, self._state_since = state, now

    def poll_batch(self, size: int, seconds: float) -> None:
        """``poll()`` returned ``size`` records after ``seconds`` (empty polls count towards the time only)."""
        self.polled += size
        if size:
            self._batch_sizes.record(size)
        self._poll_times.record(seconds * 1000)
        self._active.record(self.active())

    def offset_commit(self, seconds: float, ok: bool) -> None:
        """An offset flush ended, successfully or not."""
        self._commit_times.record(seconds * 1000)
        if ok:
            self.commits_ok += 1
        else:
            self.commits_failed += 1

    def track_transactions(self) -> None:
        """This task commits transactions (exactly-once): its samples include the transaction sizes from now on."""
        if self._transaction_sizes is None:
            self._transaction_sizes = _Window(self._clock)

    def transaction_committed(self, size: int) -> None:
        """A transaction of ``size`` records (dropped records not counted, as Connect's) was committed."""
        if self._transaction_sizes is not None:
            self._transaction_sizes.record(size)

    def active(self) -> int:
        """Records polled and not yet acknowledged, dropped by a transform or skipped."""
        return max(self.polled - self.written - self.dropped, 0)

    # --- reading ---------------------------------------------------------------------------------
    def _ratios(self) -> tuple[float, float]:
        now = self._clock()
        spent = dict(self._time_in)
        spent[self.state] = spent.get(self.state, 0.0) + now - self._state_since
        total = sum(spent.values())
        if total <= 0:
            return 0.0, 0.0
        return spent.get("running", 0.0) / total, spent.get("paused", 0.0) / total

    def samples(self, errors: Mapping[str, float]) -> list[Metric]:
        """Every sample of the task's groups; ``errors`` holds the error handler's counts (``task-error-metrics``
        attribute names, dashes as underscores)."""
        labels = self.labels
        running, paused = self._ratios()
        batch_avg, batch_max = self._batch_sizes.stats()
        poll_avg, poll_max = self._poll_times.stats()
        commit_avg, commit_max = self._commit_times.stats()
        active_avg, active_max = self._active.stats()
        commits = self.commits_ok + self.commits_failed

        def gauge(family: str, value: float, help: str) -> Metric:
            return Metric(family, value, labels, "gauge", help)

        def counter(family: str, value: float, help: str) -> Metric:
            return Metric(family, value, labels, "counter", help)

        task = "kafka_connect_connector_task_"
        source = "kafka_connect_source_task_"
        result = [
            Metric(task + "status", 1.0, {**labels, "status": self.state}, "gauge",
                   "The task's status (unassigned, running, paused, failed, restarting)."),
            gauge(task + "running_ratio", running, "Fraction of time the task spent running."),
            gauge(task + "pause_ratio", paused, "Fraction of time the task spent paused."),
            gauge(task + "batch_size_avg", batch_avg, "Average size of the batches the task polled."),
            gauge(task + "batch_size_max", batch_max, "Largest batch the task polled."),
            gauge(task + "offset_commit_avg_time_ms", commit_avg, "Average time of an offset commit."),
            gauge(task + "offset_commit_max_time_ms", commit_max, "Longest offset commit."),
            gauge(task + "offset_commit_success_percentage", self.commits_ok / commits if commits else 0.0,
                  "Fraction of the task's offset commits that succeeded."),
            gauge(task + "offset_commit_failure_percentage", self.commits_failed / commits if commits else 0.0,
                  "Fraction of the task's offset commits that failed."),
            counter(source + "source_record_poll_total", self.polled,
                    "Records polled from the source, before transformations."),
            gauge(source + "source_record_poll_rate", self._poll_rate.rate(self.polled),
                  "Records polled per second."),
            counter(source + "source_record_write_total", self.written,
                    "Records written to Kafka and acknowledged, after transformations."),
            gauge(source + "source_record_write_rate", self._write_rate.rate(self.written),
                  "Records written to Kafka per second."),
            gauge(source + "poll_batch_avg_time_ms", poll_avg, "Average time to poll a batch of records."),
            gauge(source + "poll_batch_max_time_ms", poll_max, "Longest poll of a batch of records."),
            gauge(source + "source_record_active_count", self.active(),
                  "Records polled but not yet written to Kafka."),
            gauge(source + "source_record_active_count_avg", active_avg,
                  "Average of the records polled but not yet written."),
            gauge(source + "source_record_active_count_max", active_max,
                  "Most records polled but not yet written."),
        ]
        helps = {"total_record_errors": "Records that failed in the transform and converter stages.",
                 "total_record_failures": "Failed attempts at a record operation (retries included).",
                 "total_records_skipped": "Records skipped because of errors (errors.tolerance=all).",
                 "total_retries": "Retried record operations.",
                 "total_errors_logged": "Errors logged (errors.log.enable).",
                 "deadletterqueue_produce_requests": "Records sent to a dead letter queue (source tasks: none).",
                 "deadletterqueue_produce_failures": "Failed dead letter queue writes (source tasks: none).",
                 "last_error_timestamp": "Time of the last error, in ms since the epoch (0: none)."}
        result.extend(gauge(f"kafka_connect_task_error_{name}", float(errors.get(name, 0)), text)
                      for name, text in helps.items())
        if self._transaction_sizes is not None:
            size_avg, size_min, size_max = self._transaction_sizes.spread()
            result += [
                gauge(source + "transaction_size_avg", size_avg,
                      "Average number of records in the transactions the task committed."),
                gauge(source + "transaction_size_min", size_min,
                      "Number of records in the smallest transaction the task committed."),
                gauge(source + "transaction_size_max", size_max,
                      "Number of records in the largest transaction the task committed."),
            ]
        return result
