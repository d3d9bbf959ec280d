"""The one order in Debezium's records that changes from one run to the next without any data changing: entries of
a notification's ``additional_data`` whose keys share a ``java.util.HashMap`` bucket. Fixed here (:func:`canonical`)
for the recorder, which writes the goldens so (re-recording reproduces them), and for the test, which compares ours
so; every other byte stays as written.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ADDITIONAL_DATA = re.compile(r'"additional_data":(\{[^{}]*\})')


def _java_hash_bucket(key: str, table: int) -> int:
    """The bucket of ``key`` in a ``java.util.HashMap`` of ``table`` buckets (``String.hashCode``, spread)."""
    h = 0
    for unit in _utf16_units(key):
        h = (31 * h + unit) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (table - 1)


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-be")
    return [int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2)]


def java_map_order(entries: dict[str, Any]) -> dict[str, Any]:
    """``entries`` as Debezium wrote them but for entries next to each other whose keys share a bucket of an
    8-bucket ``java.util.HashMap`` (``String.hashCode``, spread), put in key order. Those are the ones whose order
    changes from one run of Debezium to the next: an incremental snapshot's notifications iterate a HashMap of 8
    buckets (what ``new HashMap<>(map)`` makes of their 5 entries) filled from a ``Map.of``, whose order is salted
    per JVM (JDK 17: from ``System.nanoTime()``), so ``data_collections``, ``last_processed_key`` and ``status``
    (all in bucket 7) come out in any order; every other entry keeps its place."""
    items = list(entries.items())
    ordered: list[tuple[str, Any]] = []
    at = 0
    while at < len(items):
        end = at + 1
        while end < len(items) and _java_hash_bucket(items[end][0], 8) == _java_hash_bucket(items[at][0], 8):
            end += 1
        ordered += sorted(items[at:end])
        at = end
    return dict(ordered)


def canonical(record: dict[str, Any]) -> dict[str, Any]:
    """A notification with its ``additional_data`` entries in :func:`java_map_order`, in the bytes and the parsed
    value: the order Debezium leaves to chance is fixed, the rest stays as written. The recorder writes goldens so
    (re-recording reproduces them) and the test compares ours so. Other records are returned as they are."""
    raw = record.get("raw_value")
    if raw is None or '"additional_data":' not in raw:
        return record

    def ordered(match: re.Match[str]) -> str:
        return '"additional_data":' + json.dumps(java_map_order(json.loads(match[1])), separators=(",", ":"),
                                                 ensure_ascii=False)

    def parsed(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: java_map_order(v) if k == "additional_data" and isinstance(v, dict) else parsed(v)
                    for k, v in value.items()}
        return value
    return {**record, "value": parsed(record.get("value")), "raw_value": _ADDITIONAL_DATA.sub(ordered, raw)}
