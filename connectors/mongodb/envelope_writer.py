"""A snapshot record's JsonConverter payload written without building its Connect value.

Every ``r`` record of a snapshot read in the same millisecond has the same envelope but for its ``after`` string:
the payload's bytes around ``after`` (``before``, ``updateDescription``, the ``source`` block, ``op``, ``ts_ms``,
``transaction``) are written once (:func:`payload_around`), and each record's payload is those two parts with the
document's ``after`` between them, quoted by the compiled writer (``_extjson.strict_quoted``). The record's value
is a :class:`~connect.api.data.LazyStruct` holding that payload: JsonConverter sends it as it is, anything else
(a transform, another converter, the snapshot's own marker change) reads the values, built then.

The parts are only written when their JSON is the same under every JsonConverter setting (strings, booleans,
in-range integers, nulls of optional fields without a default, structs of those): otherwise :func:`payload_around`
says None and the record is built as a plain Struct. ``tests/unit/mongodb/test_envelope_writer.py`` compares the
payload with JsonConverter's writing of the built values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from connect.api.data import Schema, Type
from connectors.mongodb import _extjson

__all__ = ["HOLE", "payload_around"]

HOLE: Final = object()
"""The value whose place :func:`payload_around` leaves open."""

_INT_BOUNDS: Final[dict[Type, int]] = {Type.INT8: 2**7, Type.INT16: 2**15, Type.INT32: 2**31, Type.INT64: 2**63}


def payload_around(schema: Schema, values: Mapping[str, Any]) -> tuple[bytes, bytes] | None:
    """The JsonConverter payload of a struct of ``schema`` holding ``values`` (nested structs as mappings), cut
    where the one value :data:`HOLE` goes: (before it, after it). None when a value's JSON could depend on the
    converter's settings or is not a plain one, or when no value, or more than one, is :data:`HOLE`."""
    parts: list[str] = []
    out: list[str] = []
    if not _write_struct(schema, values, out, parts):
        return None
    if len(parts) != 1:
        return None
    return parts[0].encode(), "".join(out).encode()


def _write_struct(schema: Schema, values: Mapping[str, Any], out: list[str], parts: list[str]) -> bool:
    if schema.type is not Type.STRUCT:
        return False
    out.append("{")
    for index, field in enumerate(schema.fields):
        if index:
            out.append(",")
        out.append(_extjson.jackson_string(field.name))
        out.append(":")
        if not _write(field.schema, values.get(field.name), out, parts):
            return False
    out.append("}")
    return True


def _write(schema: Schema, value: Any, out: list[str], parts: list[str]) -> bool:
    if value is HOLE:
        parts.append("".join(out))
        out.clear()
        return schema.type is Type.STRING
    if value is None:  # a default would replace it under replace.null.with.default (the converter's setting)
        if schema.default is not None or not schema.optional:
            return False
        out.append("null")
        return True
    if schema.type is Type.STRUCT:
        return isinstance(value, Mapping) and _write_struct(schema, value, out, parts)
    if schema.type is Type.STRING and type(value) is str:
        out.append(_extjson.jackson_string(value))
        return True
    if schema.type is Type.BOOLEAN and type(value) is bool:
        out.append("true" if value else "false")
        return True
    bound = _INT_BOUNDS.get(schema.type)
    if bound is not None and type(value) is int and -bound <= value < bound and schema.name is None:
        out.append(str(value))
        return True
    return False
