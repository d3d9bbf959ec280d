"""The iteration order of ``java.util.HashMap`` with ``String`` keys (JDK 17).

Kafka Connect writes task configs to the config topic from a ``HashMap`` (the worker copies the connector's
task config and adds ``task.class``; the herder copies it again), so their JSON keys come out in the order
of the map's hash buckets. Our worker writes them in the same order, so the records are the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable

_LOAD_FACTOR = 0.75
_DEFAULT_CAPACITY = 16


def string_hash(value: str) -> int:
    """``String.hashCode()``: over UTF-16 code units, as an unsigned 32-bit value."""
    h = 0
    data = value.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h


def _spread(h: int) -> int:
    return h ^ (h >> 16)


def _table_size_for(n: int) -> int:
    size = 1
    while size < n:
        size <<= 1
    return size


class JavaHashMap:
    """Just enough of ``HashMap<String, ?>`` to know its iteration order."""

    def __init__(self, capacity: int = _DEFAULT_CAPACITY) -> None:
        self._buckets: list[list[str]] = [[] for _ in range(capacity)]
        self._size = 0

    @classmethod
    def copy_of(cls, keys: list[str]) -> JavaHashMap:
        """``new HashMap<>(map)`` of a map iterating ``keys`` (JDK 17 sizing: ``(int)(s / 0.75f + 1.0f)``)."""
        result = cls(_table_size_for(max(int(len(keys) / _LOAD_FACTOR + 1.0), 1)) if keys else _DEFAULT_CAPACITY)
        result.put_all(keys)
        return result

    def put_all(self, keys: Iterable[str]) -> None:
        for key in keys:
            self.put(key)

    def put(self, key: str) -> None:
        bucket = self._buckets[_spread(string_hash(key)) & (len(self._buckets) - 1)]
        if key in bucket:
            return
        bucket.append(key)
        self._size += 1
        if self._size > len(self._buckets) * _LOAD_FACTOR:
            self._resize()

    def _resize(self) -> None:
        order = self.keys()
        self._buckets = [[] for _ in range(len(self._buckets) * 2)]
        for key in order:  # a resize keeps the relative order of the keys that share a new bucket
            self._buckets[_spread(string_hash(key)) & (len(self._buckets) - 1)].append(key)

    def keys(self) -> list[str]:
        """The keys in iteration order."""
        return [key for bucket in self._buckets for key in bucket]


def task_config_order(task_props: list[str], added: Iterable[str] = ("task.class",)) -> list[str]:
    """The key order of a task config as Kafka Connect stores it: the connector's task config copied into a
    ``HashMap`` with ``added`` keys put, then copied again."""
    first = JavaHashMap.copy_of(task_props)
    first.put_all(added)
    return JavaHashMap.copy_of(first.keys()).keys()
