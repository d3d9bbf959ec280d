"""The signal position and the incremental snapshot's state go on each record as it is made: a record made before a
chunk's close watermark must not claim the chunk done, or a crash after committing it would lose the chunk's reads."""

from __future__ import annotations

from typing import Any

from connect.api.records import SourceRecord
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.position import SIGNAL_OFFSET_KEY
from connectors.mongodb.snapshot.incremental import IncrementalSnapshot
from connectors.mongodb.snapshot.incremental_state import PRIMARY_KEY
from connectors.mongodb.streaming.signal_dispatch import SignalDispatcher, SignalSettings


class _Incremental(IncrementalSnapshot):
    """A running incremental snapshot whose state is its ``position``: all that stamping reads."""

    def __init__(self) -> None:  # no super().__init__(): a stand-in, no client, no queue
        self.position = "before-chunk"
        self._outbox = []  # no notifications

    @property
    def running(self) -> bool:
        return True

    @property
    def idle(self) -> bool:
        return False

    def state(self, current_after: Any = None) -> dict[str, Any]:
        return {PRIMARY_KEY: self.position}


def _record(offset: dict[str, Any]) -> SourceRecord:
    return SourceRecord({"server_id": "p"}, offset, "p.db.c", None, None, None, None, None)


def _dispatcher() -> tuple[SignalDispatcher, _Incremental]:
    settings = SignalSettings("p", None, None, {}, 1000, 1024)
    events = ChangeEventConverter(topic_prefix="p", run_id="r")
    dispatcher = SignalDispatcher(None, settings, events, "c|task-0", list, None, None)
    incremental = _Incremental()
    dispatcher.incremental = incremental
    return dispatcher, incremental


def test_records_carry_the_state_of_when_they_were_made() -> None:
    dispatcher, incremental = _dispatcher()
    dispatcher._signal_offset = 7
    records = [_record({"sec": 1})]
    dispatcher.stamp(records)  # a streamed change before the close watermark
    records.append(_record({"sec": 2, PRIMARY_KEY: "read-3"}))  # an r record with its own position
    dispatcher.stamp(records, 1)
    incremental.position = "chunk-done"
    records.append(_record({"sec": 3}))
    dispatcher.stamp(records, 2)
    assert [dict(r.source_offset or {}) for r in records] == [
        {"sec": 1, PRIMARY_KEY: "before-chunk", SIGNAL_OFFSET_KEY: 7},
        {"sec": 2, PRIMARY_KEY: "read-3", SIGNAL_OFFSET_KEY: 7},
        {"sec": 3, PRIMARY_KEY: "chunk-done", SIGNAL_OFFSET_KEY: 7},
    ]
    assert dispatcher.after_batch(records) == records  # no later state is put on the batch as a whole


def test_nothing_to_stamp_leaves_records_alone() -> None:
    dispatcher, _ = _dispatcher()
    dispatcher.incremental = None
    records = [_record({"sec": 1})]
    dispatcher.stamp(records)
    assert dict(records[0].source_offset or {}) == {"sec": 1}


def test_an_event_needs_the_dispatcher_only_while_it_has_something_to_do_with_it() -> None:
    settings = SignalSettings("p", "db.signals", None, {}, 1000, 1024)
    dispatcher = SignalDispatcher(None, settings, ChangeEventConverter(topic_prefix="p", run_id="r"), "c|task-0",
                                  list, None, None)
    assert dispatcher.passive("db", "c")  # idle: no snapshot, no Kafka signal position
    assert not dispatcher.passive("db", "signals")  # a signal (or a watermark)
    dispatcher._signal_offset = 3
    assert not dispatcher.passive("db", "c")  # the Kafka signal position is stamped on every record
    dispatcher, _ = _dispatcher()
    assert not dispatcher.passive("db", "c")  # a running incremental snapshot watches every event
