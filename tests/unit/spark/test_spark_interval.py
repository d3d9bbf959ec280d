"""Runs at an interval (spark_jobs.schedule): the loop's timing, its stop, its errors; the command line's checks."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import pytest

from spark_jobs.batch import MaterializeOptions, Summary
from spark_jobs.kafka_source import SparkJobError
from spark_jobs.materialize import main
from spark_jobs.schedule import run_every, stop_on_signals

OPTIONS = MaterializeOptions("127.0.0.1:9092", "out", topics=("t",))


def _summary(batch: int) -> Summary:
    return Summary(batch, 1, 1, 0, 0, {"t": batch}, 0.0)


class _Waits(threading.Event):
    """A stop event that records the waits asked of it and returns at once (the clock is the test's)."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None
        self.waits.append(timeout)
        return self.is_set()


def test_runs_start_an_interval_apart_until_stopped() -> None:
    stop, now, reports = _Waits(), [100.0], list[Summary]()
    durations = [2.0, 15.0, 4.0]  # the second run takes longer than the interval

    def runner(spark: Any, options: MaterializeOptions) -> Summary:
        batch = len(reports) + 1
        now[0] += durations[batch - 1]
        if batch == 3:
            stop.set()  # as a signal during the third run: it finishes and is reported
        return _summary(batch)

    runs = run_every(None, OPTIONS, 10.0, stop, runner, reports.append, clock=lambda: now[0])  # type: ignore[arg-type]
    assert runs == 3 and [r.batch for r in reports] == [1, 2, 3]
    # until 10 s after the first run's start; none after the long run (the next starts at once); after the third
    # the wait returns at once, the stop being set
    assert stop.waits == [8.0, 6.0]


def test_an_unreachable_broker_is_tried_again_at_the_next_interval(caplog: pytest.LogCaptureFixture) -> None:
    stop, now, outcomes, reports = _Waits(), [0.0], ["unreachable", "unreachable", "done"], list[Summary]()

    def runner(spark: Any, options: MaterializeOptions) -> Summary:
        now[0] += 1.0
        if outcomes.pop(0) == "unreachable":
            raise SparkJobError("Kafka broker b:9092 unreachable: no answer to topic listing within 15 s",
                                retriable=True)
        stop.set()
        return _summary(1)

    runs = run_every(None, OPTIONS, 5.0, stop, runner, reports.append, clock=lambda: now[0])  # type: ignore[arg-type]
    assert runs == 1 and [r.batch for r in reports] == [1]
    assert stop.waits == [4.0, 4.0, 4.0]  # each failed run waited its interval like a done one
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        "run failed, trying again in 5 s: Kafka broker b:9092 unreachable: no answer to topic listing within 15 s"] * 2


def test_a_failing_run_ends_the_loop_with_its_error() -> None:
    def runner(spark: Any, options: MaterializeOptions) -> Summary:
        raise RuntimeError("broker gone")

    with pytest.raises(RuntimeError, match="broker gone"):
        run_every(None, OPTIONS, 1.0, threading.Event(), runner, lambda _: None)  # type: ignore[arg-type]

    def missing(spark: Any, options: MaterializeOptions) -> Summary:
        raise SparkJobError("topic(s) t do not exist on b:9092")  # not retriable: the loop ends

    with pytest.raises(SparkJobError, match="do not exist"):
        run_every(None, OPTIONS, 1.0, threading.Event(), missing, lambda _: None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive"):
        run_every(None, OPTIONS, 0, threading.Event(), runner, lambda _: None)  # type: ignore[arg-type]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_asks_the_loop_to_stop_and_the_handlers_come_back(signum: int) -> None:
    before = signal.getsignal(signum)
    stop = threading.Event()
    with stop_on_signals(stop):
        os.kill(os.getpid(), signum)
        assert stop.wait(5)
    assert signal.getsignal(signum) == before


def test_a_second_sigint_interrupts_as_before() -> None:
    stop = threading.Event()
    with pytest.raises(KeyboardInterrupt), stop_on_signals(stop):
        os.kill(os.getpid(), signal.SIGINT)
        assert stop.wait(5)
        os.kill(os.getpid(), signal.SIGINT)  # handled in this thread before its next step
        pytest.fail("the second SIGINT did not interrupt")


@pytest.mark.parametrize(("argv", "message"), [
    (["--interval", "0"], "--interval must be a positive number of seconds, not 0"),
    (["--interval", "-5"], "--interval must be a positive number of seconds"),
    (["--interval", "10", "--show", "5"], "--show prints the tables after a single run"),
])
def test_bad_intervals_are_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--bootstrap-servers", "127.0.0.1:9092", "--topics", "t", "--output", "o", *argv])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
