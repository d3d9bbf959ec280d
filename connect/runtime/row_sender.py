"""A poll's prepared rows (:class:`connect.api.records.PreparedRecords`) sent as written: a row's key and value are
its task's JSON payloads inside the converters' envelopes (``JsonConverter.written_envelope``), the same bytes that
converting its SourceRecord gives, without making that record. Used by :class:`WorkerSourceTask` only where nothing
could tell the difference (see :func:`written_envelopes` and the task's checks)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from connect.api.records import PreparedRecords, SourceRecord
from connect.runtime.offsets import SubmittedRecord, SubmittedRecords
from connect.runtime.record_conversion import Converters, RecordConversion
from connect.runtime.task_contracts import DirectSend

__all__ = ["Envelope", "RowSender", "written_envelopes"]

Envelope = Callable[[Any], tuple[bytes, bytes] | None]
"""A converter's ``written_envelope``: the bytes before and after a written payload of a schema (None: the converter
does not wrap payloads of that schema)."""


def written_envelopes(converters: Converters) -> tuple[Envelope, Envelope] | None:
    """The key and value converters' ``written_envelope``, None unless both have one."""
    key, value = getattr(converters.key, "written_envelope", None), getattr(converters.value, "written_envelope", None)
    return None if key is None or value is None else (key, value)


class RowSender:
    """Sends prepared rows for one task, on its thread.

    ``owner`` is the task every submitted record reports its delivery to (``submitted.done``); ``topics`` the
    task's set of topics written, ``on_topic`` called for a new one; ``produce`` the task's send of a record's
    bytes through the producer's ``send`` (False: refused for now), ``send_records`` its send of SourceRecords."""

    def __init__(self, envelopes: tuple[Envelope, Envelope], submitted: SubmittedRecords, direct: DirectSend | None,
                 conversion: RecordConversion, owner: object, topics: set[str], on_topic: Callable[[str], None],
                 produce: Callable[[SubmittedRecord, str, bytes | None, bytes | None, list[tuple[str, bytes]],
                                    int | None, int | None], bool],
                 send_records: Callable[[Sequence[SourceRecord]], Sequence[SourceRecord]]) -> None:
        self._envelopes = envelopes
        self._submitted = submitted
        self._direct = direct
        self._conversion = conversion
        self._owner = owner
        self._topics = topics
        self._on_topic = on_topic
        self._produce = produce
        self._send_records = send_records

    def send(self, batch: PreparedRecords) -> Sequence[SourceRecord]:
        """Send ``batch`` in order; return the records not sent because of a retriable error. A row goes through
        the producer's own call where it has one (librdkafka's produce, without ``produce``'s and ``send``'s
        calls), else, and where that call refused it, through ``produce``. A row that does not fit (a schema a
        converter does not wrap, headers other than the last ones converted) and a plain record are sent by
        ``send_records`` as records, one by one."""
        key_envelope, value_envelope = self._envelopes
        rows, submit, produce, topics, conversion = batch.rows, self._submitted.submit, self._produce, self._topics, \
            self._conversion
        direct, owner = self._direct, self._owner
        key_schema: Any = self
        value_schema: Any = self
        key_around: tuple[bytes, bytes] | None = None
        value_around: tuple[bytes, bytes] | None = None
        for index in range(len(rows)):  # by index: a row may be replaced by its record while sent
            row = rows[index]
            if type(row) is tuple:
                topic, k_schema, k_payload, v_schema, v_payload, partition, offset, headers, _, _ = row
                if k_schema is not key_schema:
                    key_schema, key_around = k_schema, None if k_schema is None else key_envelope(k_schema)
                if v_schema is not value_schema:
                    value_schema, value_around = v_schema, None if v_schema is None else value_envelope(v_schema)
                # a null key or value (no payload) only where the record's is null (no schema)
                key_fits = key_around is not None if k_payload is not None else k_schema is None
                value_fits = value_around is not None if v_payload is not None else v_schema is None
                last_headers = conversion.last_headers
                if key_fits and value_fits and headers is last_headers[0]:
                    key = None if key_around is None or k_payload is None else \
                        key_around[0] + k_payload + key_around[1]
                    value = None if value_around is None or v_payload is None else \
                        value_around[0] + v_payload + value_around[1]
                    if topic not in topics:
                        topics.add(topic)
                        self._on_topic(topic)
                    submitted = submit(partition, offset)
                    submitted.record = row  # type: ignore[attr-defined]  # the task's in-flight record type
                    submitted.task = owner  # type: ignore[attr-defined]
                    if direct is not None:
                        try:
                            direct(topic, value, key, -1, submitted.done,  # type: ignore[attr-defined]
                                   None, 0, last_headers[1] or None)
                            continue
                        except Exception:  # noqa: BLE001 - not queued: send() waits for room or reports it
                            pass
                    if not produce(submitted, topic, key, value, last_headers[1], None, None):
                        return batch[index:]
                    continue
            if self._send_records([batch.record(index)]):  # a retriable failure: this record and the rest again
                return batch[index:]
        return []
