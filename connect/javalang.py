"""Java behaviours that leak into bytes and messages Connect writes, in one place:

* ``Double.toString`` and ``Float.toString`` (:func:`double_to_string`, :func:`float_to_string`): how Jackson
  writes a double, how Connect's messages and ``ConfigValueInfo`` show one, how the MongoDB driver's JSON writer
  prints one. The JDK 19+ algorithm (shortest digits that round back, at least two of them), which JDK 17 does
  not quite follow: it prints a handful of values with one digit too many (``1.0E23`` as
  ``9.999999999999999E22``, ``9.9E-324`` as ``1.0E-323``); that is not reproduced.
* ``String.valueOf`` of the Java counterpart of a Python value, and ``AbstractMap.toString`` /
  ``AbstractCollection.toString`` (:func:`value_of`, :func:`map_to_string`, :func:`collection_to_string`):
  ``{a=1, b=null}``, ``[x, y]``.
* The iteration order of ``java.util.HashMap`` with ``String`` keys (JDK 17, :class:`JavaHashMap`): Kafka Connect
  writes task configs to the config topic from a ``HashMap`` (the worker copies the connector's task config and
  adds ``task.class``; the herder copies it again), so their JSON keys come out in the order of the map's hash
  buckets. Our worker writes them in the same order, so the records are the same bytes.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Mapping
from typing import Any, Final

# --------------------------------------------------------------------------------------------------
# Double.toString, Float.toString
# --------------------------------------------------------------------------------------------------

_NON_FINITE: Final = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_F32: Final = struct.Struct(">f")


def _java_text(digits: str, point: int) -> str:
    """Java's layout of ``0.<digits> * 10**point``: plain in [1e-3, 1e7), else ``d.dddE<n>``."""
    if -2 <= point <= 7:
        if point <= 0:
            return "0." + "0" * -point + digits
        if point >= len(digits):
            return digits + "0" * (point - len(digits)) + ".0"
        return digits[:point] + "." + digits[point:]
    return digits[0] + "." + (digits[1:] or "0") + "E" + str(point - 1)


def _shortest_digits(text: str) -> tuple[str, int]:
    """Split a positive Python float repr into significant digits and decimal point position."""
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    all_digits = whole + fraction
    significant = all_digits.lstrip("0")
    point = len(whole) + int(exponent or 0) - (len(all_digits) - len(significant))
    return significant.rstrip("0") or "0", point


def double_to_string(value: float) -> str:
    """``Double.toString(value)`` (JDK 19+): ``1.0``, ``1.0E7``, ``1.0E-5``, ``-0.0``, ``NaN``, ``-Infinity``.

    Java picks the shortest decimal that rounds back to the value, except that a one-digit result is
    replaced by the closest two-digit decimal (``4.9E-324`` rather than ``5E-324``); plain notation for
    magnitudes in [1e-3, 1e7), computerized scientific notation otherwise.
    """
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:  # Java's plain range, where Python's repr has the same digits and layout
        return repr(value)
    if not math.isfinite(value):
        return _NON_FINITE[repr(value)]
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits, point = _shortest_digits(repr(magnitude))
    if len(digits) == 1:
        digits, point = _shortest_digits(f"{magnitude:.1e}")
    return ("-" if value < 0 else "") + _java_text(digits, point)


def _as_float32(value: float) -> float:
    try:
        rounded: float = _F32.unpack(_F32.pack(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return rounded


def float_to_string(value: float) -> str:
    """``Float.toString((float) value)`` (JDK 19+): the shortest digits that identify the float32."""
    value = _as_float32(value)
    if not math.isfinite(value) or value == 0.0:
        return double_to_string(value)
    magnitude = abs(value)
    for precision in range(2, 10):  # at least two digits, as in double_to_string
        text = f"{magnitude:.{precision - 1}e}"
        if _as_float32(float(text)) == magnitude:
            break
    sign = "-" if value < 0 else ""
    return sign + _java_text(*_shortest_digits(text))


# --------------------------------------------------------------------------------------------------
# String.valueOf, AbstractMap.toString, AbstractCollection.toString
# --------------------------------------------------------------------------------------------------


def value_of(value: Any) -> str:
    """``String.valueOf`` of the Java counterpart of ``value``: ``null``, ``true``/``false``, a float as a
    ``Double``, a list/tuple as a ``List``, a mapping as a ``Map``, anything else as ``str()`` does."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return double_to_string(value)
    if isinstance(value, list | tuple):
        return collection_to_string(value)
    if isinstance(value, Mapping):
        return map_to_string(value)
    return str(value)


def collection_to_string(items: Iterable[Any]) -> str:
    """``AbstractCollection.toString``: ``[a, b]``."""
    return "[" + ", ".join(value_of(item) for item in items) + "]"


def map_to_string(entries: Mapping[Any, Any]) -> str:
    """``AbstractMap.toString``: ``{k1=v1, k2=null}``, in the mapping's iteration order."""
    return "{" + ", ".join(f"{value_of(k)}={value_of(v)}" for k, v in entries.items()) + "}"


# --------------------------------------------------------------------------------------------------
# HashMap iteration order
# --------------------------------------------------------------------------------------------------

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


def hash_map_to_string(entries: Mapping[str, Any]) -> str:
    """``HashMap.toString`` of a copy of ``entries`` (``new HashMap<>(map)``): what Connect prints for a config
    it has passed through its config transformer."""
    order = JavaHashMap.copy_of(list(entries)).keys()
    return map_to_string({key: entries[key] for key in order})


def task_config_order(task_props: list[str], added: Iterable[str] = ("task.class",)) -> list[str]:
    """The key order of a task config as Kafka Connect stores it: the connector's task config copied into a
    ``HashMap`` with ``added`` keys put, then copied again."""
    first = JavaHashMap.copy_of(task_props)
    first.put_all(added)
    return JavaHashMap.copy_of(first.keys()).keys()
