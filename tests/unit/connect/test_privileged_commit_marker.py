"""A privileged (transactional) write to the config topic returns once its commit marker is in the log: the broker
answers the commit before it writes the marker, and a plain write right after (the target state of a stop, after
its empty task set) must land after the marker, as in Java Connect."""

from __future__ import annotations

from typing import Any

from kafka import TopicPartition

from connect.storage.kafka import KafkaConfigStore
from connect.storage.kafka_log import KafkaLog


class _Message:
    def __init__(self, offset: int) -> None:
        self._offset = offset

    def offset(self) -> int:
        return self._offset

    def partition(self) -> int:
        return 0


class _Writer:
    """A transactional producer whose records get offsets from ``first`` on, delivered at the commit."""

    def __init__(self, first: int, events: list[str]) -> None:
        self.next, self.events = first, events
        self.callbacks: list[Any] = []

    def init_transactions(self, timeout: float) -> None:
        pass

    def begin_transaction(self) -> None:
        self.events.append("begin")

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: Any = None) -> None:
        self.callbacks.append((on_done, self.next))
        self.next += 1

    def commit_transaction(self, timeout: float) -> None:
        for on_done, offset in self.callbacks:
            on_done(None, _Message(offset))
        self.callbacks = []
        self.events.append("commit")

    def close(self, timeout: float | None = None) -> None:
        pass


class _Log:
    topic = "configs"

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def wait_stable_past(self, partition: int, offset: int, timeout: float, interrupt: Any = None) -> bool:
        self.events.append(f"stable past {partition}/{offset}")
        return True


def _store(events: list[str]) -> KafkaConfigStore:
    store = KafkaConfigStore("configs", {"bootstrap.servers": "unused:9092"}, lambda: _Writer(4, events))
    store._log = _Log(events)  # type: ignore[assignment]
    store.claim_write_privileges()
    return store


def test_a_privileged_write_waits_for_its_commit_marker() -> None:
    events: list[str] = []
    store = _store(events)
    assert store._send_privileged([(b"connector-a", None), (b"target-state-a", None)]) == 5
    assert events == ["begin", "commit", "stable past 0/5"]


def test_an_empty_transaction_has_no_marker_to_wait_for() -> None:
    events: list[str] = []
    store = _store(events)
    assert store._send_privileged([]) == -1  # the empty task set of a stop: no record, no marker
    assert events == ["begin", "commit"]


class _Ends:
    """``end_offsets`` of a ``read_committed`` consumer: the last stable offsets, one answer per call."""

    def __init__(self, answers: list[int]) -> None:
        self.answers = answers
        self.calls = 0

    def end_offsets(self, tps: list[TopicPartition], timeout_ms: int) -> dict[TopicPartition, int]:
        self.calls += 1
        return {tps[0]: self.answers[min(self.calls, len(self.answers)) - 1]}

    def close(self) -> None:
        pass


def _log(answers: list[int]) -> tuple[KafkaLog, _Ends]:
    log = KafkaLog("configs", {"bootstrap.servers": "unused:9092"}, lambda *_: None)
    ends = _Ends(answers)
    log._ends = ends
    log._stable = ends
    return log, ends


def test_the_log_waits_until_the_last_stable_offset_passes_the_transaction() -> None:
    log, ends = _log([6, 6, 7, 8])  # the transaction's last record at 6, its marker at 7
    assert log.wait_stable_past(0, 6, 5)
    assert ends.calls == 3


def test_the_wait_for_the_marker_is_bounded_and_interruptible() -> None:
    log, _ = _log([6])
    assert not log.wait_stable_past(0, 6, 0.05)
    log, ends = _log([6])
    assert not log.wait_stable_past(0, 6, 30, lambda: "cut off")
    assert ends.calls == 1
    log, _ = _log([7])
    log._ends = None  # stopped
    assert not log.wait_stable_past(0, 6, 30)
