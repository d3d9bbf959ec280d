"""``_extjson.StreamRows`` makes a run of plain data events (their bytes) into the prepared rows that
``ChangeEventConverter.prepare_scanned`` makes one by one: the same tuples, item for item; where it cannot (no plan,
the Python path, a value out of the written range, something that is not an event's bytes) it stops at that event
and says why, having taken the events before it."""

from __future__ import annotations

from typing import Any

import bson
import pytest
from bson import Timestamp

from connect.api.records import PreparedRecords
from connectors.mongodb import _extjson
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.releases import RELEASES
from connectors.mongodb.streaming.capture import (
    ROWS_DONE,
    ROWS_MADE,
    ROWS_NO_PLAN,
    ROWS_PYTHON,
    ROWS_PYTHON_PATH,
    ROWS_SKIP,
)
from connectors.mongodb.streaming.raw_events import RawEvent
from tests.unit.mongodb.test_envelope_writer import NOW, change_events, documents
from tests.unit.mongodb.test_fetcher_batches import RAW
from tests.unit.mongodb.test_scanned_events import DECODER, more_events, scannable


def _converter(release: str = "3.6.3.Final", tombstones: bool = True) -> ChangeEventConverter:
    return ChangeEventConverter(topic_prefix='pre"fix', run_id="r", clock_ms=lambda: NOW, written_payloads=True,
                                tombstones_on_delete=tombstones, release=RELEASES[release])


def _plain_events() -> list[bytes]:
    return [bson.encode(e) for e in [*change_events(), *more_events()] if scannable(e)]


def _all_rows(rows: _extjson.StreamRows, events: ChangeEventConverter, raws: list[Any],
              namespaces: list[str] | None = None) -> tuple[PreparedRecords, list[str], list[int], list[int]]:
    """Run over ``raws``, planning as ``StreamCapture._plan`` does (nothing filtered) and taking an event that
    must take the Python path with ``prepare_scanned``; returns the rows, ops, stamps and where it stopped."""
    records, ops, stamps, stops = PreparedRecords(), list[str](), list[int](), list[int]()
    index = 0
    context = events.rows_context(DECODER.decode)
    while index < len(raws):
        index, status, filtered, _ = rows.run(raws, index, records.rows, ops, stamps, namespaces, context)
        assert filtered == 0
        if status == ROWS_DONE:
            break
        stops.append(status)
        scanned = _extjson.scan_event(raws[index], events.plus_exponent)
        assert scanned is not None
        if status == ROWS_NO_PLAN:
            plan = events.stream_plan(scanned[1], scanned[2], scanned[0], scanned[7] is not None)
            kind = ROWS_PYTHON if plan is None else ROWS_MADE
            rows.plan(scanned[1], scanned[2], scanned[0], scanned[7] is not None, kind, *(plan or ()))
            continue
        if events.prepare_scanned(scanned, DECODER.decode, records):
            ops.append(scanned[0])
            stamps.append(scanned[10] or scanned[8] * 1000)
        index += 1
    return records, ops, stamps, stops


@pytest.mark.parametrize("release", list(RELEASES))
@pytest.mark.parametrize("tombstones", [True, False])
def test_a_run_makes_the_rows_prepare_scanned_makes(release: str, tombstones: bool) -> None:
    raws = _plain_events()
    events = _converter(release, tombstones)
    expected = PreparedRecords()
    for raw in raws:
        scanned = _extjson.scan_event(raw, events.plus_exponent)
        assert scanned is not None
        events.prepare_scanned(scanned, DECODER.decode, expected)  # declined where a payload cannot be written
    rows = _extjson.StreamRows(events.plus_exponent)
    made, ops, stamps, stops = _all_rows(rows, events, raws)
    assert made.rows == expected.rows  # the same tuples: topic, schemas, payloads, offset, headers, function, made
    assert len(made.rows) > 40 and ROWS_PYTHON_PATH in stops  # the event beyond the written range
    events_made = sum(type(row) is tuple and row[3] is not None for row in made.rows)  # not the tombstones
    assert len(ops) == len(stamps) == events_made
    assert list(made) == list(expected)  # and the same records where read
    again, _, _, stops = _all_rows(rows, events, raws)  # planned now: only the Python path stops it
    assert ROWS_NO_PLAN not in stops and list(again) == list(expected)


def _event(n: int, **fields: Any) -> bytes:
    doc = documents()[0]
    event = {"_id": {"_data": f"82{n:04d}"}, "operationType": "insert", "ns": {"db": "db", "coll": "c"},
             "documentKey": {"_id": n}, "fullDocument": doc, "clusterTime": Timestamp(1_795_265_284, n)}
    return bson.encode({**event, **fields})


def test_a_run_stops_where_it_must_and_says_why() -> None:
    events = _converter()
    rows = _extjson.StreamRows(events.plus_exponent)
    context = events.rows_context(DECODER.decode)
    plan = events.stream_plan("db", "c", "c", False)
    assert plan is not None
    raws: list[Any] = [_event(1), _event(2)]
    out: list[Any] = []
    assert rows.run(raws, 0, out, [], [], None, context) == (0, ROWS_NO_PLAN, 0, None)
    rows.plan("db", "c", "c", False, ROWS_MADE, *plan)
    rows.plan("db", "skipped", "c", False, ROWS_SKIP)
    rows.plan("db", "python", "c", False, ROWS_PYTHON)
    raws = [_event(1), _event(2, ns={"db": "db", "coll": "skipped"}), _event(3), {"__position__": 1},
            _event(4), _event(5, ns={"db": "db", "coll": "python"}), _event(6),
            RawEvent(_event(7), RAW), _event(8, operationType="drop")]
    ops: list[str] = []
    stamps: list[int] = []
    namespaces: list[str] = []
    index, status, filtered, last = rows.run(raws, 0, out, ops, stamps, namespaces, context)
    assert (index, status, filtered) == (3, ROWS_DONE, 1)  # stopped at the position marker
    assert last == (1_795_265_284, 3, _extjson.scan_event(raws[2])[3])  # type: ignore[index]
    assert [row[6]["ord"] for row in out] == [1, 3] and ops == ["c", "c"] and namespaces == ["db.c", "db.c"]
    assert stamps == [1_795_265_284_000] * 2
    assert rows.run(raws, 4, out, ops, stamps, None, context)[:3] == (5, ROWS_PYTHON_PATH, 0)
    assert rows.run(raws, 6, out, ops, stamps, None, context)[:3] == (7, ROWS_DONE, 0)  # a RawEvent, not bytes
    assert rows.run(raws, 8, out, ops, stamps, None, context)[:3] == (8, ROWS_PYTHON_PATH, 0)  # not a data event
    assert rows.run(raws, 9, out, ops, stamps, None, context) == (9, ROWS_DONE, 0, None)
    assert len(out) == 4 and len(ops) == 4 and len(namespaces) == 2
    with pytest.raises(ValueError, match="parts"):
        rows.plan("db", "c", "u", True, ROWS_MADE, *plan)  # an insert's parts have a hole less than an update's


def test_plain_events_are_the_raw_events_a_run_reads() -> None:
    raws: list[Any] = [RawEvent(_event(1), RAW), RawEvent(_event(2), RAW), RawEvent(_event(3, lsid={"id": 1}), RAW),
                       RawEvent(_event(4), RAW), {"__position__": 1}]
    found = _extjson.plain_events(raws, 0, "_RawBSONDocument__raw")
    assert found == [raws[0].raw, raws[1].raw] and all(type(raw) is bytes for raw in found)
    assert _extjson.plain_events(raws, 2, "_RawBSONDocument__raw") == []  # in a session: decoded
    assert _extjson.plain_events(raws, 3, "raw") == [raws[3].raw]  # up to the marker
    assert _extjson.plain_events(raws, 5, "raw") == []
