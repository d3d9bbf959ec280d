"""MongoDB's sort order of BSON values, on the client: a Python sort key for any ``_id`` and the query filter
of "every ``_id`` after this one".

The order is the server's (``canonicalizeBSONType``): MinKey < null < numbers < strings/symbols < objects < arrays
< binary < ObjectId < booleans < dates < timestamps < regexes < DBPointer < code < code with scope < MaxKey.
Numbers compare by value across int32/int64/double/Decimal128 (NaN first); strings by their UTF-8 bytes (which
is code-point order); objects field by field (type rank, then name, then value); binaries by length, then
subtype, then bytes.

A query operator such as ``$gt`` only matches values of its own type class (type bracketing), so "after ``v``"
is ``$gt v`` within ``v``'s class OR-ed with ``$type`` for every later class.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
import uuid
from collections.abc import Mapping
from typing import Any

from bson import DBRef, Decimal128, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.binary import Binary
from bson.code import Code

MIN_KEY, NULL, NUMBER, STRING, OBJECT, ARRAY, BINARY, OBJECT_ID, BOOLEAN, DATE, TIMESTAMP, REGEX, DBPOINTER, \
    CODE, CODE_WITH_SCOPE, MAX_KEY = range(16)

_TYPE_NAMES: dict[int, tuple[str, ...]] = {
    NULL: ("null", "undefined"), NUMBER: ("double", "int", "long", "decimal"), STRING: ("string", "symbol"),
    OBJECT: ("object",), ARRAY: ("array",), BINARY: ("binData",), OBJECT_ID: ("objectId",), BOOLEAN: ("bool",),
    DATE: ("date",), TIMESTAMP: ("timestamp",), REGEX: ("regex",), DBPOINTER: ("dbPointer",),
    CODE: ("javascript",), CODE_WITH_SCOPE: ("javascriptWithScope",), MAX_KEY: ("maxKey",),
}


def type_rank(value: Any) -> int:
    """The canonical type class of a BSON value, as the server orders them."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int | float | Decimal128 | decimal.Decimal):
        return NUMBER
    if isinstance(value, str):
        return STRING
    if isinstance(value, DBRef | Mapping):
        return OBJECT
    if isinstance(value, list | tuple):
        return ARRAY
    if isinstance(value, bytes | uuid.UUID):
        return BINARY
    if isinstance(value, ObjectId):
        return OBJECT_ID
    if isinstance(value, datetime.datetime):
        return DATE
    if isinstance(value, Timestamp):
        return TIMESTAMP
    if isinstance(value, Regex | re.Pattern):
        return REGEX
    if isinstance(value, Code):
        return CODE if value.scope is None else CODE_WITH_SCOPE
    if isinstance(value, MinKey):
        return MIN_KEY
    if isinstance(value, MaxKey):
        return MAX_KEY
    raise TypeError(f"unsupported BSON value {value!r} of type {type(value).__name__}")


def sort_key(value: Any) -> tuple[Any, ...]:
    """A tuple that orders like the server orders ``value`` (equal for values the server treats as equal)."""
    rank = type_rank(value)
    if rank in (MIN_KEY, NULL, MAX_KEY):
        return (rank,)
    if rank == NUMBER:
        return (rank, *_number_key(value))
    if rank == STRING:
        return (rank, value)
    if rank == OBJECT:
        items = value.as_doc().items() if isinstance(value, DBRef) else value.items()
        return (rank, tuple((type_rank(v), k, sort_key(v)) for k, v in items))
    if rank == ARRAY:
        return (rank, tuple(sort_key(v) for v in value))
    if rank == BINARY:
        return (rank, *_binary_key(value))
    if rank == OBJECT_ID:
        return (rank, value.binary)
    if rank == BOOLEAN:
        return (rank, bool(value))
    if rank == DATE:
        return (rank, _date_millis(value))
    if rank == TIMESTAMP:
        return (rank, value.time, value.inc)
    if rank == REGEX:
        return (rank, str(value.pattern), _flags(value))
    return (rank, str(value), sort_key(dict(value.scope)) if value.scope is not None else ())


def _number_key(value: Any) -> tuple[int, Any]:
    number: Any = value.to_decimal() if isinstance(value, Decimal128) else value
    if isinstance(number, float | decimal.Decimal) and (number != number):  # NaN sorts before every number
        return (0, 0)
    if isinstance(number, float) and math.isinf(number):
        return (1, decimal.Decimal("Infinity") if number > 0 else decimal.Decimal("-Infinity"))
    return (1, number)


def _binary_key(value: Any) -> tuple[int, int, bytes]:
    if isinstance(value, uuid.UUID):
        return (16, 4, value.bytes)
    subtype = value.subtype if isinstance(value, Binary) else 0
    return (len(value), subtype, bytes(value))


def _date_millis(value: datetime.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    delta = value - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def _flags(value: Any) -> str:
    return str(value.flags)


NO_SERVER_BOUND = frozenset((REGEX, DBPOINTER, CODE, CODE_WITH_SCOPE))
"""Types a range cannot be bounded by on the server (a regex cannot be a ``$gt`` operand): never split points;
a resume point of such a type is skipped to by the client."""


def after_filter(value: Any, field: str = "_id", inclusive: bool = False) -> dict[str, Any] | None:
    """The filter matching every ``field`` value after ``value`` (or equal, when ``inclusive``) in the server's
    sort order; None when the server cannot bound it (see :data:`NO_SERVER_BOUND`)."""
    rank = type_rank(value)
    if rank in NO_SERVER_BOUND:
        return None
    if rank == MIN_KEY:
        return {} if inclusive else {field: {"$gt": MinKey()}}
    if rank == MAX_KEY:
        return {field: {"$type": "maxKey"}} if inclusive else {field: {"$in": []}}
    later = [name for r, names in _TYPE_NAMES.items() if r > rank and r != MAX_KEY for name in names]
    clauses: list[dict[str, Any]] = []
    if rank == NUMBER and _number_key(value)[0] == 0:
        clauses.append({field: {"$gte": float("-inf")}})  # every number but NaN
        if inclusive:
            clauses.append({field: value})
    elif rank == NULL:
        if inclusive:
            clauses.append({field: {"$type": ["null", "undefined"]}})
    else:
        clauses.append({field: {"$gte" if inclusive else "$gt": value}})
    clauses.append({field: {"$type": later}})
    clauses.append({field: {"$type": "maxKey"}})
    return {"$or": clauses}


def before_filter(value: Any, field: str = "_id") -> dict[str, Any] | None:
    """The filter matching every ``field`` value strictly before ``value`` in the server's sort order."""
    rank = type_rank(value)
    if rank in NO_SERVER_BOUND:
        return None
    if rank == MIN_KEY:
        return {field: {"$in": []}}
    if rank == MAX_KEY:
        return {field: {"$lt": MaxKey()}}
    earlier = [name for r, names in _TYPE_NAMES.items() if MIN_KEY < r < rank for name in names]
    clauses: list[dict[str, Any]] = [{field: {"$type": "minKey"}}]
    if earlier:
        clauses.append({field: {"$type": earlier}})
    if rank == NUMBER and _number_key(value)[0] == 1:
        clauses.append({field: float("nan")})  # NaN sorts first but does not match $lt
    if rank != NULL and not (rank == NUMBER and _number_key(value)[0] == 0):
        clauses.append({field: {"$lt": value}})
    return {"$or": clauses}


def range_filter(low: Any, low_inclusive: bool, high: Any, field: str = "_id") -> dict[str, Any] | None:
    """``low`` (exclusive unless ``low_inclusive``; None: unbounded) to ``high`` (exclusive; None: unbounded);
    None when a bound cannot be expressed. Within one type class it is a plain ``$gt(e)``/``$lt`` range."""
    if low is not None and high is not None and type_rank(low) == type_rank(high) \
            and type_rank(low) not in NO_SERVER_BOUND | {MIN_KEY, NULL, MAX_KEY} \
            and not (type_rank(low) == NUMBER and _number_key(low)[0] == 0):
        return {field: {"$gte" if low_inclusive else "$gt": low, "$lt": high}}
    parts = []
    if low is not None:
        parts.append(after_filter(low, field, low_inclusive))
    if high is not None:
        parts.append(before_filter(high, field))
    if any(part is None for part in parts):
        return None
    if not parts:
        return {}
    return parts[0] if len(parts) == 1 else {"$and": parts}


def within(value: Any, low: Any, high: Any) -> bool:
    """Whether ``low <= value <= high`` in the server's order."""
    key = sort_key(value)
    return sort_key(low) <= key <= sort_key(high)


__all__ = ["after_filter", "before_filter", "range_filter", "sort_key", "type_rank", "within"]
