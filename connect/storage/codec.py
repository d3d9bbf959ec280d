"""JSON as Connect's internal converter writes it: compact, no spaces, non-ASCII as raw UTF-8."""

from __future__ import annotations

from typing import Any

import orjson


def dumps(value: Any) -> bytes:
    """Compact JSON bytes, key order preserved."""
    return orjson.dumps(value)


def loads(data: bytes | None) -> Any:
    """Parse JSON bytes; None stays None (a tombstone)."""
    return None if data is None else orjson.loads(data)


def offset_key(connector: str, partition: dict[str, Any]) -> bytes:
    """The offsets-topic key ``[connector, partition]`` exactly as Java Kafka Connect writes it."""
    return dumps([connector, partition])
