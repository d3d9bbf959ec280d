"""Runs at a fixed interval in one process (``python -m spark_jobs.materialize --interval SECONDS``).

A run started by the command line in a new JVM pays the JVM's start-up and warm-up every time (a new JVM's
incremental run of 5,082 records takes several times what the same run takes in a JVM that has run before:
benchmarks/results.md); run after run in one session, each batch costs what its changes cost. Like Structured
Streaming's processing-time trigger, a run starts ``interval`` seconds after the previous one started, at once when
that one took longer. Each run is one batch with the exactly-once guarantees of a single run (a process killed at
any point leaves a batch the next run finishes). The loop ends between runs when ``stop`` is set (the command line
sets it on SIGTERM or SIGINT: the run under way finishes and commits first), or when a run fails, unless its error
is a retriable :class:`~spark_jobs.kafka_source.SparkJobError` (a broker that did not answer the offsets' listing,
before anything was read): that is logged and the next run, an interval later, tries again, keeping the warm JVM.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from pyspark.sql import SparkSession

from spark_jobs.batch import MaterializeOptions, Summary
from spark_jobs.kafka_source import SparkJobError

__all__ = ["run_every", "stop_on_signals"]

log = logging.getLogger(__name__)


def run_every(spark: SparkSession, options: MaterializeOptions, interval: float, stop: threading.Event,
              runner: Callable[[SparkSession, MaterializeOptions], Summary],
              report: Callable[[Summary], None] = print, clock: Callable[[], float] = time.monotonic) -> int:
    """Run ``runner`` every ``interval`` seconds (start to start, by ``clock``) until ``stop`` is set; ``report``
    gets each run's summary. Returns the number of runs done; a run's error is raised (the runs before it are
    committed), a retriable one logged and the run tried again at the next interval."""
    if interval <= 0:
        raise ValueError(f"the interval must be a positive number of seconds, not {interval}")
    runs = 0
    while not stop.is_set():
        started = clock()
        try:
            summary = runner(spark, options)
        except SparkJobError as exc:
            if not exc.retriable:
                raise
            log.warning("run failed, trying again in %.0f s: %s", interval, exc)
        else:
            runs += 1
            report(summary)
        wait = started + interval - clock()
        if wait > 0:
            stop.wait(wait)
    log.info("stopped after %s run(s)", runs)
    return runs


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """Inside: SIGTERM and SIGINT set ``stop`` (a second one of them stops at once, as before); the previous
    handlers back afterwards. Main thread only."""
    signals = (signal.SIGTERM, signal.SIGINT)
    previous = {sig: signal.getsignal(sig) for sig in signals}

    def handle(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():  # asked twice: do what the signal did before
            before = previous[signal.Signals(signum)]
            if callable(before):
                before(signum, frame)
            elif before != signal.SIG_IGN:
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)
            return
        log.info("%s received: stopping after the run under way", signal.Signals(signum).name)
        stop.set()

    for sig in signals:
        signal.signal(sig, handle)
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)
