"""Records exchanged between tasks and the framework (Connect's ``SourceRecord`` and ``Header``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect.api.data import Schema


@dataclass(frozen=True, slots=True)
class Header:
    """One record header: a key, an optional schema and a value."""

    key: str
    schema: Schema | None
    value: Any


@dataclass(slots=True)
class SourceRecord:
    """A record produced by a source task.

    A value: never changed once made (``dataclasses.replace`` gives a changed copy, as Connect's
    ``newRecord``). Not declared frozen only because a frozen dataclass's ``__init__`` sets each field through
    ``object.__setattr__``, which made building one cost several times more; a source task builds one or two per
    change event.

    ``source_partition`` and ``source_offset`` are maps of primitives; the framework stores the offset
    under ``[connector name, source_partition]`` once the record and every earlier record of the same
    partition have been acknowledged by Kafka. Both may be None (Connect allows it: a record that moves no
    position, such as a Debezium notification): such a record commits no offset.
    """

    source_partition: Mapping[str, Any] | None
    source_offset: Mapping[str, Any] | None
    topic: str
    kafka_partition: int | None
    key_schema: Schema | None
    key: Any
    value_schema: Schema | None
    value: Any
    timestamp: int | None = None
    headers: tuple[Header, ...] = ()


def describe(record: SourceRecord) -> str:
    """Java's ``SourceRecord.toString`` (for error messages and logs)."""
    headers = ", ".join(f"ConnectHeader(key={h.key}, value={h.value!r}, schema={h.schema})" for h in record.headers)
    return (f"SourceRecord{{sourcePartition={_text(record.source_partition)}, "
            f"sourceOffset={_text(record.source_offset)}}} ConnectRecord{{topic='{record.topic}', "
            f"kafkaPartition={record.kafka_partition}, key={record.key!r}, keySchema={record.key_schema}, "
            f"value={record.value!r}, valueSchema={record.value_schema}, timestamp={record.timestamp}, "
            f"headers=ConnectHeaders(headers=[{headers}])}}")


def _text(entries: Mapping[str, Any] | None) -> str:
    return "null" if entries is None else str(dict(entries))
