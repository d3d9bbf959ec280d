"""Connect's built-in SMTs and predicates, and Debezium's ExtractNewDocumentState, against the real Java classes.

``smt_golden.json`` holds each case's config and input records with what Kafka Connect 4.3.1's
``connect-transforms`` (and Debezium 3.6.1.Final) produced for them, recorded by
``tests/tooling/java_golden/record.py``. Records and results are JsonConverter envelopes, so equal strings mean
equal topics, partitions, timestamps, schemas (names, versions, optionality, defaults), values and headers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from connect.api.errors import ConnectError
from connect.runtime import plugins
from tests.unit.transforms.golden import load, record, record_json

CASES = load("transforms/smt_golden.json")
DEVIATIONS = {
    # Debezium fails the whole record on arrays mixing BSON types; we encode such an array as a struct of
    # _0, _1, ... (what array.encoding=document gives) so heterogeneous documents never fail the task.
    "Array elements with different Bson types are not supported",
}


def _instance(case: dict[str, Any]) -> Any:
    kind = plugins.PREDICATES if case["kind"] == "predicate" else plugins.TRANSFORMATIONS
    desc = plugins.find(kind, case["class"])
    assert desc is not None, case["class"]
    instance = plugins.load(desc)()
    instance.configure(case["config"])
    return instance


def _ours(instance: Any, kind: str, rec: dict[str, Any]) -> Any:
    if kind == "predicate":
        return instance.test(record(rec))
    try:
        return record_json(instance.apply(record(rec)))
    except ConnectError as exc:
        return {"error": str(exc)}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_matches_java(case: dict[str, Any]) -> None:
    instance = _instance(case)
    for index, (rec, expected) in enumerate(zip(case["records"], case["java"]["results"], strict=True)):
        ours = _ours(instance, case["kind"], rec)
        if isinstance(expected, dict) and "error" in expected:
            if any(d in expected["error"] for d in DEVIATIONS):
                assert not (isinstance(ours, dict) and "error" in ours), f"record {index}: {ours}"
            else:
                assert isinstance(ours, dict) and "error" in ours, f"record {index}: Java failed with " \
                    f"{expected['error']}, we gave {ours}"
            continue
        assert _comparable(ours) == _comparable(expected), f"record {index}"


def _comparable(result: Any) -> Any:
    """Schemaless maps come out of Java's HashMaps in hash order: compare those envelopes as parsed JSON."""
    if not isinstance(result, dict):
        return result
    out = dict(result)
    for part in ("key", "value"):
        text = out.get(part)
        if isinstance(text, str) and text.startswith('{"schema":null,'):
            out[part] = json.loads(text)
    out["headers"] = [[k, json.loads(v) if isinstance(v, str) and v.startswith('{"schema":null,') else v]
                      for k, v in out.get("headers", [])]
    return out
