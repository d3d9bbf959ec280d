"""MongoDB Extended JSON writers that reproduce, byte for byte, what Debezium 3.x produces with the Java
driver's ``JsonWriter`` (``org.mongodb:bson`` 5.x).

Three flavours are used by Debezium's MongoDB connector:

* :func:`strict` - Extended JSON v1 STRICT mode with Debezium's "compact" settings (``indent=true``, empty indent
  and newline strings): ``": "`` after a name, ``,`` between members and array items. Used for ``after`` /
  ``before`` and for the ``lsid`` of transactional events.
* :func:`relaxed_key` - Extended JSON v2 RELAXED with the same compact settings, for one value: the document key
  ``id`` (Debezium writes ``{"_": <id>}`` and strips the wrapper).
* :func:`relaxed` - v2 RELAXED with the driver's default settings (``", "`` between members), used for
  ``updateDescription.updatedFields``.

Input values are what pymongo decodes: ``dict``/``SON``, ``list``, ``str``, ``int`` (int32) and
:class:`bson.int64.Int64`, ``float``, ``bool``, ``None``, ObjectId, ``datetime`` (naive = UTC) or
:class:`bson.datetime_ms.DatetimeMS`, Decimal128, Binary / ``bytes`` / ``uuid.UUID``, Regex / ``re.Pattern``,
Timestamp, MinKey, MaxKey, Code, DBRef. A plain ``int`` outside the int32 range is written as an int64.

Strings follow the Java writer: ``"`` ``\\`` and ``\\b \\f \\n \\r \\t`` get short escapes; every other character
whose Unicode general category is not a letter (except modifier letters), number, space separator, punctuation or
symbol is written as ``\\uXXXX`` (lower-case hex) - that includes controls, format characters, combining marks,
private use, unassigned code points and, because Java strings are UTF-16, every non-BMP character as two
surrogate escapes. Doubles use Java's ``Double.toString`` layout (shortest round-trip digits as in JDK 19+); with
``plus_exponent`` (Debezium 3.6.3's driver 5.9) a non-negative exponent gets a sign: ``1.0E+300``.
"""

from __future__ import annotations

import base64
import datetime as _dt
import re
import unicodedata
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from bson.binary import Binary
from bson.code import Code
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef
from bson.decimal128 import Decimal128
from bson.int64 import Int64
from bson.max_key import MaxKey
from bson.min_key import MinKey
from bson.objectid import ObjectId
from bson.regex import Regex
from bson.son import SON
from bson.timestamp import Timestamp

from connect.javalang import double_to_string

__all__ = ["datetime_millis", "java_double", "java_string", "relaxed", "relaxed_key", "strict"]

# --------------------------------------------------------------------------------------------------------------
# Strings

# Unicode general categories the Java writer emits unescaped (java.lang.Character types).
_RAW_CATEGORIES = frozenset(
    ("Lu", "Ll", "Lt", "Lo", "Nd", "Nl", "No", "Zs", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So")
)
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped_bmp_class() -> str:
    """A regex character class of every BMP character the Java writer escapes (plus all non-BMP characters)."""
    ranges: list[str] = []
    start = -1
    for cp in range(0x10001):
        escaped = cp < 0x10000 and (chr(cp) in _SHORT_ESCAPES or unicodedata.category(chr(cp)) not in _RAW_CATEGORIES)
        if escaped and start < 0:
            start = cp
        elif not escaped and start >= 0:
            ranges.append(_range_token(start, cp - 1))
            start = -1
    ranges.append(_range_token(0x10000, 0x10FFFF))
    return "[" + "".join(ranges) + "]"


def _range_token(first: int, last: int) -> str:
    """One ``a-b`` element of a regex character class using ``\\uXXXX``/``\\UXXXXXXXX`` escapes."""
    def esc(cp: int) -> str:
        return f"\\u{cp:04x}" if cp < 0x10000 else f"\\U{cp:08x}"
    return esc(first) if first == last else f"{esc(first)}-{esc(last)}"


_NEEDS_ESCAPE = re.compile(_escaped_bmp_class())


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group()
    short = _SHORT_ESCAPES.get(ch)
    if short is not None:
        return short
    cp = ord(ch)
    if cp < 0x10000:
        return f"\\u{cp:04x}"
    cp -= 0x10000
    return f"\\u{0xD800 | (cp >> 10):04x}\\u{0xDC00 | (cp & 0x3FF):04x}"


def java_string(value: str) -> str:
    """``value`` as a quoted JSON string escaped exactly like the Java driver's JsonWriter."""
    if _NEEDS_ESCAPE.search(value) is None:
        return '"' + value + '"'
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, value) + '"'


_NAME_CACHE_MAX = 20_000  # quoted member names cached per flavour (field names repeat)


# --------------------------------------------------------------------------------------------------------------
# Numbers

_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1
_INF = float("inf")
_NINF = float("-inf")


java_double = double_to_string
"""``Double.toString(value)`` (JDK 19+), as the driver's writer prints a double: ``1.0``, ``1.0E7``, ``NaN``..."""


def _int_strict(value: int) -> str:
    if _INT32_MIN <= value <= _INT32_MAX:
        return str(value)
    return '{"$numberLong": "' + str(value) + '"}'


def _int64_strict(value: int) -> str:
    return '{"$numberLong": "' + str(int(value)) + '"}'


def _int_relaxed(value: int) -> str:
    return str(int(value))


def _double_relaxed(value: float) -> str:
    if 1e-3 <= value < 1e7 or -1e7 < value <= -1e-3:
        return repr(value)
    if value != value or value in (_INF, _NINF):
        return '{"$numberDouble": "' + java_double(value) + '"}'
    return java_double(value)


def _plus(encode: Callable[[float], str]) -> Callable[[float], str]:
    """``encode`` with a ``+`` before a non-negative exponent (``1.0E+300``, as the Java driver 5.9 writes it)."""
    def signed(value: float) -> str:
        text = encode(value)
        return text.replace("E", "E+", 1) if "E" in text and "E-" not in text else text
    return signed


# --------------------------------------------------------------------------------------------------------------
# Dates

_EPOCH_NAIVE = _dt.datetime(1970, 1, 1)
_EPOCH_AWARE = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_ONE_MS = _dt.timedelta(milliseconds=1)
_MAX_ISO_MS = 253402300799999  # 9999-12-31T23:59:59.999Z


def datetime_millis(value: _dt.datetime | DatetimeMS) -> int:
    """Milliseconds since the epoch of a BSON datetime as pymongo decodes it (naive datetimes are UTC)."""
    if isinstance(value, DatetimeMS):
        return int(value)
    if value.tzinfo is None or value.utcoffset() is None:
        return (value - _EPOCH_NAIVE) // _ONE_MS
    return (value - _EPOCH_AWARE) // _ONE_MS


def _date_strict(value: _dt.datetime | DatetimeMS) -> str:
    return '{"$date": ' + str(datetime_millis(value)) + "}"


def _iso_millis(millis: int) -> str:
    """ISO-8601 UTC text with the fraction trimmed of trailing zeros (Java ISO_OFFSET_DATE_TIME)."""
    when = _EPOCH_NAIVE + _dt.timedelta(milliseconds=millis)
    text = (f"{when.year:04d}-{when.month:02d}-{when.day:02d}T"
            f"{when.hour:02d}:{when.minute:02d}:{when.second:02d}")
    fraction = millis % 1000
    if fraction:
        text += "." + f"{fraction:03d}".rstrip("0")
    return text + "Z"


def _date_relaxed(value: _dt.datetime | DatetimeMS) -> str:
    if type(value) is _dt.datetime and value.tzinfo is None and value.year >= 1970:  # the usual pymongo value
        text = value.isoformat(timespec="seconds")
        fraction = value.microsecond // 1000
        if fraction:
            text += "." + f"{fraction:03d}".rstrip("0")
        return '{"$date": "' + text + 'Z"}'
    millis = datetime_millis(value)
    if 0 <= millis <= _MAX_ISO_MS:
        return '{"$date": "' + _iso_millis(millis) + '"}'
    return '{"$date": {"$numberLong": "' + str(millis) + '"}}'


# --------------------------------------------------------------------------------------------------------------
# Other scalar BSON types


def _oid(value: ObjectId) -> str:
    return '{"$oid": "' + str(value) + '"}'


def _decimal(value: Decimal128) -> str:
    return '{"$numberDecimal": "' + str(value) + '"}'


def _binary_parts(value: bytes | Binary | uuid.UUID) -> tuple[str, str]:
    """(base64 text, two upper-case hex digits of the subtype)."""
    if isinstance(value, uuid.UUID):
        return base64.b64encode(value.bytes).decode("ascii"), "04"
    subtype = value.subtype if isinstance(value, Binary) else 0
    return base64.b64encode(value).decode("ascii"), f"{subtype:02X}"


def _binary_strict(value: bytes | Binary | uuid.UUID) -> str:
    data, subtype = _binary_parts(value)
    return '{"$binary": "' + data + '","$type": "' + subtype + '"}'


def _regex_parts(value: Regex[Any] | re.Pattern[Any]) -> tuple[str, str]:
    """(pattern, options) with the options letters in bson's order (i, l, m, s, u, x)."""
    pattern = value.pattern
    if isinstance(pattern, bytes):
        pattern = pattern.decode("utf-8")
    flags = value.flags
    if isinstance(flags, str):  # Regex built by hand with a string of flags
        flags = Regex(pattern, flags).flags
    options = "".join(letter for bit, letter in _REGEX_FLAGS if flags & bit)
    return pattern, options


_REGEX_FLAGS = ((re.IGNORECASE, "i"), (re.LOCALE, "l"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.UNICODE, "u"),
                (re.VERBOSE, "x"))


def _regex_strict(value: Regex[Any] | re.Pattern[Any]) -> str:
    pattern, options = _regex_parts(value)
    return '{"$regex": ' + java_string(pattern) + ',"$options": "' + options + '"}'


def _min_key(_: MinKey) -> str:
    return '{"$minKey": 1}'


def _max_key(_: MaxKey) -> str:
    return '{"$maxKey": 1}'


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _null(_: None) -> str:
    return "null"


# --------------------------------------------------------------------------------------------------------------
# Writers

Encoder = Callable[[Any], str]


class _Flavour:
    """One Extended JSON flavour, built as closures for speed (this is the connector's hot path).

    ``sep`` separates members and array items; ``relaxed_mode`` selects v2 RELAXED instead of v1 STRICT forms;
    ``plus``: doubles as the Java driver 5.9 writes them (:func:`_plus`).
    """

    __slots__ = ("array", "document", "value")

    def __init__(self, sep: str, relaxed_mode: bool, plus: bool = False) -> None:
        scalars: dict[type, Encoder] = {
            bool: _bool, type(None): _null, ObjectId: _oid, Decimal128: _decimal, MinKey: _min_key, MaxKey: _max_key,
        }
        double: Callable[[float], str] = _double_relaxed if relaxed_mode else java_double
        double = _plus(double) if plus else double
        if relaxed_mode:
            scalars.update({int: _int_relaxed, Int64: _int_relaxed, float: double,
                            _dt.datetime: _date_relaxed, DatetimeMS: _date_relaxed})
        else:
            scalars.update({int: _int_strict, Int64: _int64_strict, float: double,
                            _dt.datetime: _date_strict, DatetimeMS: _date_strict})
        names: dict[Any, str] = {}
        search = _NEEDS_ESCAPE.search
        get_scalar = scalars.get

        def member(key: Any) -> str:
            prefix = names.get(key)
            if prefix is None:
                prefix = java_string(key if isinstance(key, str) else str(key)) + ": "
                if len(names) >= _NAME_CACHE_MAX:
                    names.clear()
                names[key] = prefix
            return prefix

        def value(item: Any) -> str:
            kind = type(item)
            if kind is str:
                return '"' + item + '"' if search(item) is None else java_string(item)
            if kind is dict or kind is SON:
                return document(item)
            encode = get_scalar(kind)
            if encode is not None:
                return encode(item)
            if kind is list:
                return array(item)
            return special(item)

        def document(doc: Mapping[Any, Any]) -> str:
            # The common types are inlined: a Python call per value would dominate the cost.
            parts: list[str] = []
            append = parts.append
            for key, item in doc.items():
                prefix = names.get(key)
                if prefix is None:
                    prefix = member(key)
                kind = type(item)
                if kind is str:
                    append(prefix + ('"' + item + '"' if search(item) is None else java_string(item)))
                elif kind is int and -2147483648 <= item <= 2147483647:  # int32: plain in every flavour
                    append(prefix + str(item))
                elif kind is dict or kind is SON:
                    append(prefix + document(item))
                else:
                    encode = get_scalar(kind)
                    append(prefix + (encode(item) if encode is not None else value(item)))
            return "{" + sep.join(parts) + "}"

        def array(items: list[Any] | tuple[Any, ...]) -> str:
            parts: list[str] = []
            append = parts.append
            for item in items:
                kind = type(item)
                if kind is str:
                    append('"' + item + '"' if search(item) is None else java_string(item))
                elif kind is dict or kind is SON:
                    append(document(item))
                else:
                    encode = get_scalar(kind)
                    append(encode(item) if encode is not None else value(item))
            return "[" + sep.join(parts) + "]"

        def special(item: Any) -> str:
            return _special(item, value, document, array, sep, relaxed_mode, scalars)

        self.value: Encoder = value
        self.document: Callable[[Mapping[Any, Any]], str] = document
        self.array: Callable[[list[Any] | tuple[Any, ...]], str] = array


def _special(item: Any, value: Encoder, document: Callable[[Mapping[Any, Any]], str],
             array: Callable[[list[Any] | tuple[Any, ...]], str], sep: str, relaxed_mode: bool,
             scalars: Mapping[type, Encoder]) -> str:
    """The less common types and subclasses of the common ones."""
    if isinstance(item, Code):  # before str: Code is a str subclass
        text = '{"$code": ' + java_string(str(item))
        if item.scope is not None:
            text += sep + '"$scope": ' + document(item.scope)
        return text + "}"
    if isinstance(item, Mapping):
        return document(item)
    if isinstance(item, (list, tuple)):
        return array(item)
    if isinstance(item, (bytes, Binary, uuid.UUID)):
        return _binary_relaxed(item, sep) if relaxed_mode else _binary_strict(item)
    if isinstance(item, (Regex, re.Pattern)):
        return _regex_relaxed(item, sep) if relaxed_mode else _regex_strict(item)
    if isinstance(item, Timestamp):
        return '{"$timestamp": {"t": ' + str(item.time) + sep + '"i": ' + str(item.inc) + "}}"
    if isinstance(item, DBRef):
        return document(item.as_doc())
    for base in (bool, Int64, int, float, str, _dt.datetime):  # subclasses of the scalar types
        if isinstance(item, base):
            return java_string(str(item)) if base is str else scalars[base](item)
    raise TypeError(f"cannot encode object of type {type(item).__name__} as Extended JSON")


def _binary_relaxed(item: bytes | Binary | uuid.UUID, sep: str) -> str:
    data, subtype = _binary_parts(item)
    return '{"$binary": {"base64": "' + data + '"' + sep + '"subType": "' + subtype + '"}}'


def _regex_relaxed(item: Regex[Any] | re.Pattern[Any], sep: str) -> str:
    pattern, options = _regex_parts(item)
    return '{"$regularExpression": {"pattern": ' + java_string(pattern) + sep + '"options": "' + options + '"}}'


_STRICT = {plus: _Flavour(",", relaxed_mode=False, plus=plus) for plus in (False, True)}
_RELAXED_COMPACT = {plus: _Flavour(",", relaxed_mode=True, plus=plus) for plus in (False, True)}
_RELAXED_DEFAULT = {plus: _Flavour(", ", relaxed_mode=True, plus=plus) for plus in (False, True)}


def strict(doc: Mapping[str, Any], plus_exponent: bool = False) -> str:
    """Extended JSON v1 STRICT, Debezium compact style (``after``/``before``/``lsid``)."""
    return _STRICT[plus_exponent].document(doc)


def relaxed_key(value: Any, plus_exponent: bool = False) -> str:
    """One value (the document ``_id``) as v2 RELAXED, Debezium compact style (the key ``id``)."""
    return _RELAXED_COMPACT[plus_exponent].value(value)


def relaxed(doc: Mapping[str, Any], plus_exponent: bool = False) -> str:
    """Extended JSON v2 RELAXED with the driver's default layout (``updateDescription.updatedFields``)."""
    return _RELAXED_DEFAULT[plus_exponent].document(doc)
