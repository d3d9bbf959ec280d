"""ExtractNewDocumentState's compiled path: the JsonConverter payload of the new value written straight from the
``after`` Extended JSON by the ``_extjson`` extension (``native/src/unwrap.rs``), without building the Connect value.

The schema is still inferred here in Python (:mod:`.schema_inference`), once per document *shape*, and compiled
into a :class:`DocumentPlan` the extension follows. The transform hands the payload on in a
:class:`~connect.api.data.LazyStruct`, whose values the Python path builds only if someone reads them; so the Python
path stays the reference (``tests/unit/transforms/test_document_writer.py`` compares both on the goldens and on
random documents). Whatever the extension does not cover it declines, and the transform takes the Python path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import orjson

from connect.api.data import DATE_NAME, DECIMAL_NAME, TIME_NAME, TIMESTAMP_NAME, Schema, Type
from connectors.mongodb import _extjson
from connectors.mongodb.envelope_writer import INT_BOUNDS
from connectors.mongodb.transforms.schema_inference import REGEX_SCHEMA, SchemaInference, parse_with_shape

__all__ = ["DocumentWriter"]

DocumentPlan = _extjson.DocumentPlan

_SCALARS: Final = {Type.STRING: "string", Type.INT32: "int32", Type.INT64: "int64", Type.FLOAT64: "double",
                   Type.BOOLEAN: "boolean", Type.BYTES: "bytes"}
_PLAIN_TYPES: Final = {Type.STRING: str, Type.BOOLEAN: bool, **{kind: int for kind in INT_BOUNDS}}
_MAX_PLANS: Final = 2000
_LOGICAL: Final = frozenset((DATE_NAME, DECIMAL_NAME, TIME_NAME, TIMESTAMP_NAME))


def plan_spec(schema: Schema) -> tuple[Any, ...]:
    """The spec of an inferred schema that :class:`DocumentPlan` compiles (see ``native/src/unwrap.rs``)."""
    if schema.name == REGEX_SCHEMA.name:
        return ("regex",)
    if schema.type is Type.STRUCT:
        return ("struct", tuple((f.name, plan_spec(f.schema)) for f in schema.fields))
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        return ("array", plan_spec(schema.value_schema))
    if schema.name == TIMESTAMP_NAME:
        return ("timestamp",)
    kind = _SCALARS.get(schema.type)
    if kind is None or schema.name is not None:
        raise ValueError(f"not an inferred schema: {schema}")
    return (kind,)


def extra_members(extra: Sequence[tuple[str, Schema, Any]]) -> str | None:
    """The JSON members (``"name":value,...``) of fields added after the document's, when their JSON does not
    depend on the converter's settings (plain strings, booleans, in-range ints, or nulls without a default);
    None otherwise."""
    if not extra:
        return ""
    members: dict[str, Any] = {}
    for name, schema, value in extra:
        if schema.name in _LOGICAL:  # other names (io.debezium.data.Enum...) do not change the JSON of a value
            return None
        if value is None:
            if schema.default is not None or not schema.optional:
                return None
        else:
            expected = _PLAIN_TYPES.get(schema.type)
            if expected is None or type(value) is not expected:
                return None
            bound = INT_BOUNDS.get(schema.type)
            if bound is not None and isinstance(value, int) and not -bound <= value < bound:
                return None
        members[name] = value
    if len(members) != len(extra):
        return None
    text = orjson.dumps(members).decode()
    if "\\u00" in text or not text.isascii():  # leave Jackson's escapes to the converter's own writer
        return None
    return text[1:-1]


class DocumentWriter:
    """The compiled documents of one transform: shape -> plan, per record name."""

    def __init__(self, inference: SchemaInference) -> None:
        self.inference = inference
        self._plans: dict[str, dict[bytes, Any]] = {}

    def write(self, after: str, name: str, tail: str) -> tuple[Schema, bytes] | None:
        """The inferred schema of the document ``after`` and the JsonConverter payload of its value with the members
        ``tail`` appended; None when the extension declines it."""
        plans = self._plans.get(name)
        if plans is None:
            plans = self._plans[name] = {}
        found = _extjson.unwrap_document(after, plans, tail)
        if found is None:
            return None
        shape, plan, payload = found
        if plan is None:
            document, python_shape = parse_with_shape(after)
            schema = self.inference.top_schema(document, name, python_shape)
            if len(plans) >= _MAX_PLANS:
                plans.clear()
            plans[shape] = DocumentPlan(plan_spec(schema), schema)
            found = _extjson.unwrap_document(after, plans, tail)
            if found is None or found[1] is None:
                return None
            shape, plan, payload = found
        assert plan is not None and payload is not None
        return plan.owner, payload
