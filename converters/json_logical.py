"""Connect's logical types as :class:`~converters.json.JsonConverter` writes and reads them (Java's ``Date``,
``Time``, ``Timestamp`` and ``Decimal``): days, milliseconds and unscaled two's-complement integers, and back."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any, Final

from connect.api.data import Schema
from connect.api.errors import DataError

__all__ = [
    "date_days",
    "date_from_days",
    "decimal_scale",
    "java_big_decimal",
    "time_from_millis",
    "time_millis",
    "timestamp_from_millis",
    "timestamp_millis",
    "twos_complement",
    "unscaled_value",
]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_DAY: Final = date(1970, 1, 1).toordinal()
_MS_PER_DAY: Final = 86_400_000


def decimal_scale(schema: Schema) -> int:
    """The ``scale`` parameter of a Decimal schema."""
    try:
        return int((schema.parameters or {})["scale"])
    except (KeyError, ValueError) as exc:
        raise DataError("Invalid Decimal schema: scale parameter not found.") from exc


def unscaled_value(value: Any, scale: int) -> int:
    """The unscaled integer of ``value`` at ``scale``; rescales only when no digit is lost."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = Decimal(value)
    if not isinstance(value, Decimal) or not value.is_finite():
        raise DataError(f"Invalid type for Decimal, expected decimal.Decimal but was {type(value).__name__}")
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    shift = -scale - int(exponent)
    if shift < 0:
        unscaled *= 10**-shift
    elif shift > 0:
        unscaled, remainder = divmod(unscaled, 10**shift)
        if remainder:
            raise DataError(f"Decimal value has mismatching scale for given Decimal schema. Schema has scale {scale},"
                            f" value has scale {-int(exponent)}.")
    return -unscaled if sign else unscaled


def twos_complement(number: int) -> bytes:
    """``BigInteger.toByteArray()``: minimal big-endian two's complement, at least one byte."""
    magnitude_bits = (number if number >= 0 else ~number).bit_length()  # Java's bitLength()
    return number.to_bytes(magnitude_bits // 8 + 1, "big", signed=True)


def date_days(value: Any) -> int:
    """Connect's Date encoding: days since the epoch (a datetime must be a UTC midnight)."""
    if isinstance(value, datetime):
        millis = timestamp_millis(value)
        if millis % _MS_PER_DAY:
            raise DataError("Kafka Connect Date type should not have any time fields set to non-zero values.")
        return millis // _MS_PER_DAY
    if isinstance(value, date):
        return value.toordinal() - _EPOCH_DAY
    return _logical_int(value, "Date", "datetime.date")


def time_millis(value: Any) -> int:
    """Connect's Time encoding: milliseconds since midnight (UTC when the time is aware)."""
    if isinstance(value, time):
        offset = value.utcoffset() or timedelta(0)
        millis = ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
        return (millis - offset // timedelta(milliseconds=1)) % _MS_PER_DAY
    return _logical_int(value, "Time", "datetime.time")


def timestamp_millis(value: Any) -> int:
    """Connect's Timestamp encoding: milliseconds since the epoch (a naive datetime counts as UTC)."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return (aware - _EPOCH) // timedelta(milliseconds=1)
    return _logical_int(value, "Timestamp", "datetime.datetime")


def _logical_int(value: Any, kind: str, expected: str) -> int:
    """Logical values may also be given already encoded, as plain ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DataError(f"Invalid type for {kind}, expected {expected} but was {type(value).__name__}")


def date_from_days(days: int) -> date:
    """The Date read back: days since the epoch -> ``datetime.date``."""
    return date.fromordinal(days + _EPOCH_DAY)


def time_from_millis(millis: int) -> time:
    """The Time read back: milliseconds since midnight -> ``datetime.time``."""
    if not 0 <= millis < _MS_PER_DAY:
        raise DataError("Time values must use number of milliseconds greater than 0 and less than 86400000")
    seconds, ms = divmod(millis, 1000)
    minutes, second = divmod(seconds, 60)
    hour, minute = divmod(minutes, 60)
    return time(hour, minute, second, ms * 1000)


def timestamp_from_millis(millis: int) -> datetime:
    """The Timestamp read back: milliseconds since the epoch -> an aware UTC ``datetime``."""
    return _EPOCH + timedelta(milliseconds=millis)


def java_big_decimal(value: Decimal) -> str:
    """``BigDecimal.toString()``: Python's ``str`` follows the same rules, bar the sign of zero."""
    return str(value.copy_abs()) if value.is_zero() else str(value)
