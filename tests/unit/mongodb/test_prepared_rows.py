"""A poll's prepared rows (``ChangeEventConverter.prepare_scanned`` into a ``PreparedRecords``) sent as written by
``WorkerSourceTask._send_rows`` give Kafka the bytes, topics, headers and committed offsets the same records give
through the converters, under every JsonConverter setting; a failed or retried send behaves as a record's; and the
rows read as the records they stand for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import bson
import pytest
from bson.raw_bson import RawBSONDocument

from connect.api.errors import RetriableError
from connect.api.records import PreparedRecords, SourceRecord
from connect.runtime.error_handling import ErrorHandlingConfig
from connect.runtime.offsets import OffsetReader
from connect.runtime.task_contracts import DeliveryCallback, DirectSend, TaskStatusListener
from connect.runtime.worker_source_task import Converters, WorkerSourceTask
from connect.storage.config_state import ConnectorTaskId
from connectors.mongodb import _extjson
from connectors.mongodb.event_converter import ChangeEventConverter
from connectors.mongodb.releases import RELEASES
from converters.header import SimpleHeaderConverter
from converters.json import JsonConverter
from tests.unit.connect.support import IdleTask, QuietProducer, offset_store
from tests.unit.mongodb.test_envelope_writer import NOW, change_events, documents
from tests.unit.mongodb.test_scanned_events import DECODER, more_events, scannable

Sent = tuple[str, bytes | None, bytes | None, list[tuple[str, bytes]], int | None, int | None]


class _Recording(QuietProducer):
    """Keeps what it is sent; acknowledges at once, or fails the delivery of the ``fail``-th record, or raises a
    retriable error at the ``refuse``-th send (once)."""

    def __init__(self, fail: int | None = None, refuse: int | None = None) -> None:
        self.sent: list[Sent] = []
        self.fail, self.refuse = fail, refuse

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None, on_done: DeliveryCallback | None = None) -> None:
        assert on_done is not None
        if self.refuse == len(self.sent):
            self.refuse = None
            raise RetriableError("queue full")
        self.sent.append((topic, key, value, list(headers), partition, timestamp_ms))
        on_done(RuntimeError("refused by the broker") if self.fail == len(self.sent) - 1 else None)


def _converters(settings: dict[str, str]) -> Converters:
    key, value = JsonConverter(), JsonConverter()
    key.configure(settings, True)
    value.configure(settings, False)
    return Converters(key, value, SimpleHeaderConverter())


def _runner(tmp_path: Path, settings: dict[str, str], producer: _Recording,
            errors: ErrorHandlingConfig | None = None) -> WorkerSourceTask:
    return WorkerSourceTask(ConnectorTaskId("conn", 0), IdleTask(), {}, _converters(settings), producer,
                            offset_store(tmp_path), TaskStatusListener(), flush_interval_ms=60_000,
                            flush_timeout_ms=5_000, errors=errors)


def _polls(release: str = "3.6.3.Final", tombstones: bool = True) -> list[PreparedRecords]:
    """The scannable test events in polls of 7, prepared as a capture prepares them (a heartbeat-like plain record
    at the end of each poll, as ``StreamCapture.take`` appends one)."""
    events = ChangeEventConverter(topic_prefix='pre"fix', run_id="r", clock_ms=lambda: NOW, written_payloads=True,
                                  tombstones_on_delete=tombstones, release=RELEASES[release])
    polls, batch = [], PreparedRecords()
    for change in [*change_events(), *more_events()]:
        if not scannable(change):
            continue
        raw = bson.encode(change)
        scanned = _extjson.scan_event(raw, events.plus_exponent)
        assert scanned is not None
        events.prepare_scanned(scanned, DECODER.decode, batch)  # declined where no converter can write it
        if len(batch) >= 7:
            batch.append(SourceRecord({"server_id": 'pre"fix'}, {"sec": 1, "ord": -1}, "__heartbeat", None, None,
                                      None, None, b"beat"))
            polls.append(batch)
            batch = PreparedRecords()
    return [*polls, batch]


def _plain(polls: list[PreparedRecords]) -> list[list[SourceRecord]]:
    """The same polls as lists of the records the rows stand for (made from copies: the polls keep their rows)."""
    copies = []
    for poll in polls:
        copy = PreparedRecords()
        copy.rows = list(poll.rows)
        copies.append(list(copy))
    return copies


def _committed(runner: WorkerSourceTask, tmp_path: Path) -> Any:
    runner._commit_offsets()
    return OffsetReader("conn", offset_store(tmp_path)).offset({"server_id": 'pre"fix'})


@pytest.mark.parametrize("release", list(RELEASES))
@pytest.mark.parametrize("tombstones", [True, False])
@pytest.mark.parametrize("settings", [{}, {"schemas.enable": "false"}, {"replace.null.with.default": "false"},
                                      {"schemas.enable": "false", "replace.null.with.default": "false"}])
def test_rows_sent_as_written_are_the_records_converted(tmp_path: Path, release: str, tombstones: bool,
                                                        settings: dict[str, str]) -> None:
    polls = _polls(release, tombstones)
    plain = _plain(polls)
    assert sum(type(row) is tuple for poll in polls for row in poll.rows) > 60
    rows_producer, records_producer = _Recording(), _Recording()
    tolerant = ErrorHandlingConfig(tolerance_all=True)  # a delete without documentKey: no key to convert
    rows_runner = _runner(tmp_path / "rows", settings, rows_producer, tolerant)
    records_runner = _runner(tmp_path / "records", settings, records_producer, tolerant)
    for poll, records in zip(polls, plain, strict=True):
        assert not rows_runner._send(poll)
        assert not records_runner._send(records)
    assert rows_producer.sent == records_producer.sent
    assert rows_runner.task_metrics.dropped == records_runner.task_metrics.dropped > 0
    assert len(rows_producer.sent) == sum(map(len, plain)) - rows_runner.task_metrics.dropped
    assert _committed(rows_runner, tmp_path / "rows") == _committed(records_runner, tmp_path / "records")
    assert rows_runner.task_metrics.written == records_runner.task_metrics.written == len(rows_producer.sent)
    sent_as_written = settings.get("replace.null.with.default") != "false"
    # sent as written, the rows were never made into records; else they were read as records
    assert any(type(row) is tuple for poll in polls for row in poll.rows) is sent_as_written


@pytest.mark.parametrize("settings", [{}, {"schemas.enable": "false"}, {"replace.null.with.default": "false"}])
def test_snapshot_rows_sent_as_written_are_the_records_converted(tmp_path: Path, settings: dict[str, str]) -> None:
    events = ChangeEventConverter(topic_prefix='pre"fix', run_id="r", clock_ms=lambda: NOW, written_payloads=True)
    rows, records = PreparedRecords(), []
    for marker, offset in (("true", {"initsync": True}), ("last", {"sec": 5, "ord": 1}),
                           ("incremental", {"sec": 1_700_000_000, "ord": 3, "resume_token": "x"})):
        for doc in documents():
            for given in (doc, RawBSONDocument(bson.encode(doc)), bson.encode(doc)):
                row = events.snapshot_row(given, "db", "coll é", offset, marker)
                assert type(row) is tuple
                rows.add(row)
                records.append(events.snapshot_record(given, "db", "coll é", offset, marker))
    rows_producer, records_producer = _Recording(), _Recording()
    assert not _runner(tmp_path / "rows", settings, rows_producer)._send(rows)
    assert not _runner(tmp_path / "records", settings, records_producer)._send(records)
    assert rows_producer.sent == records_producer.sent and len(rows_producer.sent) == len(records)
    assert rows == records


def test_a_row_whose_delivery_failed_fails_the_task_as_its_record(tmp_path: Path) -> None:
    poll = _polls()[0]
    producer = _Recording(fail=2)
    runner = _runner(tmp_path, {}, producer)
    runner._send(poll)
    assert isinstance(runner._send_error, RuntimeError)
    assert type(poll.rows[2]) is tuple  # the failed delivery made its own record from the row, not the poll's


def test_a_row_skipped_on_failure_with_tolerance_all_keeps_its_offset(tmp_path: Path) -> None:
    poll = _polls()[0]
    last_offset = dict(poll[len(poll) - 1].source_offset or {})
    producer = _Recording(fail=1)
    runner = _runner(tmp_path, {}, producer, ErrorHandlingConfig(tolerance_all=True))
    assert not runner._send(poll)
    assert runner._send_error is None
    assert runner.task_metrics.dropped == 1 and runner.task_metrics.written == len(poll) - 1
    assert _committed(runner, tmp_path) == last_offset  # past the skipped record: the poll's last


def test_a_retried_send_resends_the_rest_of_the_poll(tmp_path: Path) -> None:
    polls = _polls()
    expected = _Recording()
    _runner(tmp_path / "once", {}, expected)._send(_plain(polls)[0])
    producer = _Recording(refuse=3)
    runner = _runner(tmp_path / "retried", {}, producer)
    left = runner._send(polls[0])
    assert len(left) == len(polls[0]) - 3 and type(left) is PreparedRecords
    assert not runner._send(left)
    assert producer.sent == expected.sent


class _Direct(_Recording):
    """A producer with its client's own call (``direct_send``), as librdkafka's: it queues a row's record by
    itself, but refuses the ``full``-th with BufferError (a full queue), which ``send`` then takes; ``dispatch``
    counted."""

    def __init__(self, full: int) -> None:
        super().__init__()
        self.full, self.direct, self.dispatched = full, 0, 0

    def direct_send(self) -> DirectSend:
        def produce(topic: str, value: bytes | None, key: bytes | None, partition: int, on_done: DeliveryCallback,
                    unused: None, timestamp_ms: int, headers: list[tuple[str, bytes]] | None, /) -> None:
            assert unused is None and partition == -1 and timestamp_ms == 0
            if len(self.sent) == self.full:
                self.full = -1
                raise BufferError("Local: Queue full")
            self.direct += 1
            self.sent.append((topic, key, value, list(headers or []), None, None))
            on_done(None)
        return produce

    def dispatch(self) -> None:
        self.dispatched += 1


def test_rows_go_to_the_producers_own_call_and_to_send_where_it_refuses_them(tmp_path: Path) -> None:
    polls = _polls()
    expected = _Recording()
    tolerant = ErrorHandlingConfig(tolerance_all=True)  # a delete without documentKey: no key to convert
    records = _runner(tmp_path / "records", {}, expected, tolerant)
    for plain in _plain(polls):
        assert not records._send(plain)
    producer = _Direct(full=3)
    runner = _runner(tmp_path / "direct", {}, producer, tolerant)
    for poll in polls:
        assert not runner._send(poll)
    assert producer.sent == expected.sent
    rows = sum(type(row) is tuple for poll in polls for row in poll.rows)
    assert producer.direct == rows - 1 and producer.dispatched >= len(polls)  # the refused one went through send
    assert _committed(runner, tmp_path / "direct") == _committed(records, tmp_path / "records")


def test_prepared_records_read_as_the_records_they_stand_for() -> None:
    poll = _polls()[0]
    plain = _plain([poll])[0]
    rest = poll[1:]
    assert type(rest) is PreparedRecords and type(rest.rows[0]) is tuple  # a slice keeps the rows
    joined = PreparedRecords()
    joined.extend(rest)
    assert joined.rows == rest.rows  # and so does extending by another poll
    first = poll[0]
    assert poll[0] is first and type(poll.rows[0]) is SourceRecord  # made once, then kept
    joined.extend([first])
    assert joined == [*plain[1:], plain[0]] and rest == plain[1:]
    assert poll == plain and len(poll) == len(plain) and poll != plain[:-1]
    joined[0] = first
    assert joined[0] is first
