"""Records exchanged between tasks and the framework (Connect's ``SourceRecord`` and ``Header``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableSequence
from dataclasses import dataclass
from typing import Any, overload

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


PreparedRow = tuple[str, Schema | None, bytes | None, Schema | None, bytes | None, Mapping[str, Any] | None,
                    Mapping[str, Any] | None, tuple[Header, ...], Callable[[Any], SourceRecord], Any]
"""A record written ahead by its task (:class:`PreparedRecords`): (topic, key schema, key payload, value schema,
value payload, source partition, source offset, headers, the function that makes its SourceRecord from the row,
anything else that function needs). A prepared record has no Kafka partition or timestamp of its own. A payload is
the JSON a JsonConverter writes after ``"payload":`` in its envelope for that schema and value, the same under every
setting of it but ``replace.null.with.default`` off; None with its schema None: a null key or value (a tombstone's);
None with a schema: the record goes through the converters."""


class PreparedRecords(MutableSequence[SourceRecord]):
    """The records of one poll, some of them prepared: kept as :data:`PreparedRow` (their key's and value's JSON
    written by the task) instead of Connect values, which only a reader needs. Reading a record (indexing,
    iterating) makes its SourceRecord from the row, once: it replaces the row, so every reader of the poll sees
    the same SourceRecords, equal to what the task would have made. A worker whose converters send such payloads
    as they are, with no transformation, sends the rows (``rows``) without making them."""

    __slots__ = ("rows",)

    def __init__(self, records: Iterable[SourceRecord] = ()) -> None:
        self.rows: list[SourceRecord | PreparedRow] = list(records)

    def add(self, row: SourceRecord | PreparedRow) -> None:
        """Add a record or a prepared row."""
        self.rows.append(row)

    def record(self, index: int) -> SourceRecord:
        """The record at ``index`` (made from its row if it is one)."""
        row = self.rows[index]
        if type(row) is tuple:
            made = row[8](row)
            self.rows[index] = made
            return made
        assert isinstance(row, SourceRecord)
        return row

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> SourceRecord: ...

    @overload
    def __getitem__(self, index: slice) -> PreparedRecords: ...

    def __getitem__(self, index: int | slice) -> SourceRecord | PreparedRecords:
        if isinstance(index, slice):
            part = PreparedRecords()
            part.rows = self.rows[index]
            return part
        return self.record(index)

    @overload
    def __setitem__(self, index: int, value: SourceRecord) -> None: ...

    @overload
    def __setitem__(self, index: slice, value: Iterable[SourceRecord]) -> None: ...

    def __setitem__(self, index: int | slice, value: SourceRecord | Iterable[SourceRecord]) -> None:
        if isinstance(index, slice):
            assert not isinstance(value, SourceRecord)
            self.rows[index] = list(value)
        else:
            assert isinstance(value, SourceRecord)
            self.rows[index] = value

    def __delitem__(self, index: int | slice) -> None:
        del self.rows[index]

    def insert(self, index: int, value: SourceRecord) -> None:
        """Insert a record before ``index``."""
        self.rows.insert(index, value)

    def extend(self, values: Iterable[SourceRecord]) -> None:
        """Add records (another PreparedRecords' rows as they are)."""
        if type(values) is PreparedRecords:
            self.rows.extend(values.rows)
        else:
            self.rows.extend(values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PreparedRecords | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __repr__(self) -> str:
        return f"PreparedRecords({list(self)!r})"


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
