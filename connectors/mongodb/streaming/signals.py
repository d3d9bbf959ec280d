"""Debezium's signals: read from the signal collection (``signal.data.collection``, as insert events of the change
stream) and from the Kafka signal topic (``signal.kafka.topic``, records keyed by ``topic.prefix``).

A signal is ``(id, type, data)``. In the collection these are the first three fields of the inserted document
(``data`` a sub-document or a JSON string); on the topic the record value is ``{"id", "type", "data"}``.
A signal that cannot be parsed or acted on is logged with the reason and ignored: streaming goes on.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bson import json_util

log = logging.getLogger(__name__)

LOG = "log"
EXECUTE_SNAPSHOT = "execute-snapshot"
STOP_SNAPSHOT = "stop-snapshot"
PAUSE_SNAPSHOT = "pause-snapshot"
RESUME_SNAPSHOT = "resume-snapshot"
KNOWN = (LOG, EXECUTE_SNAPSHOT, STOP_SNAPSHOT, PAUSE_SNAPSHOT, RESUME_SNAPSHOT)


class SignalError(ValueError):
    """A signal that cannot be acted on; the message says why."""


@dataclass(frozen=True)
class Signal:
    """One signal: its id, type and data."""

    id: str
    type: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SnapshotRequest:
    """A parsed ``execute-snapshot`` (or ``stop-snapshot``) signal."""

    patterns: tuple[re.Pattern[str], ...]
    kind: str  # incremental | blocking
    conditions: Mapping[str, Mapping[str, Any]]  # pattern text -> filter document
    correlation_id: str

    def matching(self, collections: list[str]) -> list[str]:
        """The ``db.collection`` names among ``collections`` that a pattern matches (full match)."""
        return [ns for ns in collections if any(p.fullmatch(ns) for p in self.patterns)]

    def condition(self, ns: str) -> Mapping[str, Any]:
        """The additional condition of ``ns`` ({} when none)."""
        for pattern, condition in self.conditions.items():
            if re.fullmatch(pattern, ns):
                return condition
        return {}


def _data(raw: Any) -> Mapping[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json_util.loads(raw)
        except ValueError as exc:
            raise SignalError(f"the signal data is not valid JSON: {exc}") from exc
        if isinstance(parsed, Mapping):
            return parsed
    raise SignalError("the signal data must be a JSON object")


def from_document(doc: Mapping[str, Any]) -> Signal:
    """A signal from an inserted signal-collection document: its first three fields are id, type, data."""
    values = list(doc.values())
    if len(values) != 3:
        raise SignalError(f"a signal document has exactly 3 fields (id, type, data), this one has {len(values)}")
    signal_id = values[0]
    return Signal(str(signal_id.binary.hex() if hasattr(signal_id, "binary") else signal_id), str(values[1]),
                  _data(values[2]))


def from_kafka(key: bytes | None, value: bytes | None, topic_prefix: str) -> Signal | None:
    """A signal from a record of the signal topic; None when its key is not ``topic.prefix`` (not for us)."""
    if key is None or key.decode("utf-8", "replace") != topic_prefix:
        return None
    try:
        body = json.loads(value or b"")
    except ValueError as exc:
        raise SignalError(f"the signal record is not valid JSON: {exc}") from exc
    if not isinstance(body, dict) or "type" not in body:
        raise SignalError("the signal record must be a JSON object with id, type and data")
    return Signal(str(body.get("id", "")), str(body["type"]), _data(body.get("data")))


def snapshot_request(signal: Signal) -> SnapshotRequest:
    """The collections, type and conditions of an ``execute-snapshot``/``stop-snapshot`` signal."""
    data = signal.data
    collections = data.get("data-collections") or []
    if isinstance(collections, str):
        collections = [collections]
    if signal.type == EXECUTE_SNAPSHOT and not collections:
        raise SignalError("execute-snapshot needs data-collections")
    patterns = []
    for text in collections:
        try:
            patterns.append(re.compile(str(text), re.IGNORECASE))
        except re.error as exc:
            raise SignalError(f"invalid data-collections regular expression {text!r}: {exc}") from exc
    kind = str(data.get("type") or "incremental").lower()
    if kind not in ("incremental", "blocking"):
        raise SignalError(f"unknown snapshot type {kind!r} (incremental or blocking)")
    if data.get("surrogate-key"):
        raise SignalError("surrogate-key is not supported by the MongoDB connector: chunks are always by _id")
    conditions: dict[str, Mapping[str, Any]] = {}
    for entry in data.get("additional-conditions") or []:
        if not isinstance(entry, Mapping) or "data-collection" not in entry:
            raise SignalError(f"an additional condition needs data-collection and filter: {entry!r}")
        conditions[str(entry["data-collection"])] = _condition(entry.get("filter"))
    if data.get("additional-condition"):  # the older single form, for every collection of the signal
        condition = _condition(data["additional-condition"])
        for text in collections:
            conditions.setdefault(str(text), condition)
    return SnapshotRequest(tuple(patterns), kind, conditions, signal.id)


def _condition(raw: Any) -> Mapping[str, Any]:
    if isinstance(raw, Mapping):
        return raw
    try:
        parsed = json_util.loads(str(raw))
    except ValueError as exc:
        raise SignalError(f"malformed additional condition {raw!r}: {exc}") from exc
    if not isinstance(parsed, Mapping):
        raise SignalError(f"malformed additional condition {raw!r}: a MongoDB filter document is expected")
    return parsed
