"""A source task's key, value and header converters applied to its records (Connect's ``convertTransformedRecord``
in ``AbstractWorkerSourceTask``): the bytes a record is sent as, through the retry and tolerance operator."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from connect.api.converter import Converter, HeaderConverter
from connect.api.records import SourceRecord
from connect.runtime.error_handling import FAILED, RetryWithToleranceOperator, Stage

__all__ = ["Converters", "RecordConversion"]


@dataclass(frozen=True)
class Converters:
    """The key, value and header converters of one task."""

    key: Converter
    value: Converter
    header: HeaderConverter


class RecordConversion:
    """Converts one task's records, one at a time, on the task thread. It keeps the last headers converted
    (``last_headers``): a poll's records mostly share one headers object, converted once."""

    def __init__(self, converters: Converters, errors: RetryWithToleranceOperator) -> None:
        self.converters = converters
        self._errors = errors
        # (the headers object converted last, its converted list): the prepared rows carry the same object
        self.last_headers: tuple[tuple[Any, ...] | None, list[tuple[str, bytes]]] = (None, [])

    def convert(self, record: SourceRecord) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes]]] | None:
        """Key, value and headers as bytes; None when a converter failed and the record is skipped.

        Each converter is called directly; only one that raised goes through the retry and tolerance operator,
        handed the error of that first attempt (the same retries, counts and reports as running every stage
        inside the operator, without its per-record cost)."""
        topic, conv = record.topic, self.converters
        try:  # the operator's call() inlined for the key and value: two calls fewer per record
            key = conv.key.from_connect_data(topic, record.key_schema, record.key, record.headers)
        except Exception as exc:  # noqa: BLE001 - handed to the operator, which reports or re-raises it
            key = self._retried(Stage.KEY_CONVERTER, conv.key, record.key_schema, record.key, record, exc)
            if key is FAILED:
                return None
        try:
            value = conv.value.from_connect_data(topic, record.value_schema, record.value, record.headers)
        except Exception as exc:  # noqa: BLE001 - handed to the operator, which reports or re-raises it
            value = self._retried(Stage.VALUE_CONVERTER, conv.value, record.value_schema, record.value, record, exc)
            if value is FAILED:
                return None
        if record.headers is self.last_headers[0]:
            return key, value, self.last_headers[1]
        headers = self._errors.call(Stage.HEADER_CONVERTER, conv.header, record, self._convert_headers, record)
        if headers is FAILED:
            return None
        self.last_headers = (record.headers, headers)
        return key, value, headers

    def _retried(self, stage: Stage, converter: Converter, schema: Any, value: Any, record: SourceRecord,
                 first: Exception) -> Any:
        """The converter's call again through the retry and tolerance operator, after ``first`` failed."""
        return self._errors.execute(stage, converter, lambda: converter.from_connect_data(
            record.topic, schema, value, record.headers), record, first)

    def _convert_headers(self, record: SourceRecord) -> list[tuple[str, bytes]]:
        convert = self.converters.header.from_connect_header
        return [(h.key, convert(record.topic, h.key, h.schema, h.value) or b"") for h in record.headers]
