"""JsonConverter both ways against Java's (connect-json 4.3.1), over a corpus of every Connect type and logical type,
nested structs, arrays, maps with string and non-string keys, nulls and defaults, under five converter configs.

``json_roundtrip_golden.json`` (recorded by ``tests/tooling/java_golden/record.py``) holds per case: the input as a
schema+payload envelope, the converter config, and what Java did with it: ``bytes`` (``fromConnectData``), ``read``
(``toConnectData`` of those bytes, described type by type) and ``again`` (``fromConnectData`` of what was read).
We must write the same bytes, read them back to the same schema and values, and write those again identically.
"""

from __future__ import annotations

import base64
import json
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

import pytest

from connect.api.data import Schema, Struct, Type
from connect.javalang import double_to_string, float_to_string
from converters.json import JsonConverter, java_big_decimal, timestamp_millis
from tests.unit.transforms.golden import load, read

CASES = load("converters/json_roundtrip_golden.json")


def describe(schema: Schema | None, value: Any) -> Any:
    """What Golden.java's ``describeValue`` writes for a Java value of ``schema``."""
    if value is None:
        return None
    if isinstance(value, Struct):
        return {"struct": {f.name: describe(f.schema, value.values.get(f.name)) for f in value.schema.fields}}
    if isinstance(value, dict):
        keys = schema.key_schema if schema else None
        values = schema.value_schema if schema else None
        return {"map": [[describe(keys, k), describe(values, v)] for k, v in value.items()]}
    if isinstance(value, list):
        return {"array": [describe(schema.value_schema if schema else None, v) for v in value]}
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode()}
    if isinstance(value, Decimal):
        return {"decimal": java_big_decimal(value)}
    if isinstance(value, datetime):
        return {"date_ms": timestamp_millis(value)}
    if isinstance(value, date):
        return {"date_ms": (value - date(1970, 1, 1)).days * 86_400_000}
    if isinstance(value, time):
        return {"date_ms": ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000}
    if isinstance(value, bool):
        return {"boolean": value}
    if isinstance(value, float):
        if schema is not None and schema.type is Type.FLOAT32:
            return {"float": float_to_string(value)}
        return {"double": double_to_string(value)}
    if isinstance(value, int):
        return {"int": value}
    return {"string": str(value)}


def _sort_maps(node: Any) -> Any:
    """Schemaless maps come out of Java's HashMaps in hash order; compare them as sets of entries."""
    if isinstance(node, dict):
        if "map" in node and len(node) == 1:
            return {"map": sorted((_sort_maps(e) for e in node["map"]), key=json.dumps)}
        return {k: _sort_maps(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_sort_maps(v) for v in node]
    return node


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_both_directions_match_java(case: dict[str, Any]) -> None:
    java = case["java"]
    assert "error" not in java, java
    schema, value = read(case["input"])
    conv = JsonConverter()
    conv.configure(case["config"], False)
    written = conv.from_connect_data("t", schema, value)
    # Java reads JSON objects into HashMaps: maps come back (and are written again) in hash order
    hashed = schema is None or '"type":"map"' in case["input"]
    schemaless = hashed or case["config"].get("schemas.enable") == "false"
    assert written is not None
    if hashed:
        assert json.loads(written) == json.loads(java["bytes"])
    else:
        assert written.decode("utf-8") == java["bytes"]
    back = conv.to_connect_data("t", java["bytes"].encode("utf-8"))
    ours = {"schema": None if back.schema is None else json.loads(conv.as_json_schema(back.schema)),
            "value": describe(back.schema, back.value)}
    if schemaless:
        assert _sort_maps(ours) == _sort_maps(java["read"])
    else:
        assert ours == java["read"]
    again = conv.from_connect_data("t", back.schema, back.value)
    assert again is not None
    if schemaless:
        assert json.loads(again) == json.loads(java["again"])
    else:
        assert again.decode("utf-8") == java["again"]
