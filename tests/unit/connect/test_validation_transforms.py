"""Validation of transforms, predicates and converters against replies of a real Kafka Connect 4.3.1 worker.

``data/validate_transforms_java.json`` holds ``PUT /connector-plugins/FileStreamSourceConnector/config/validate``
requests with transforms (Connect's SMTs, Debezium's ExtractNewDocumentState), predicates and converters, and
Kafka Connect 4.3.1's replies (jars from Maven Central, Debezium 3.6.1.Final's jars on its class path; recorded by
``python -m compat.validate_transforms``, documentation texts dropped), plus its ``GET
/connector-plugins?connectorsOnly=false``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connect.runtime import plugins, validation

JAVA = json.loads((Path(__file__).parent / "data" / "validate_transforms_java.json").read_text("utf-8"))
WORKER_DEFAULTS = {"key.converter": "org.apache.kafka.connect.json.JsonConverter",
                   "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                   "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter"}
DELIBERATE = {
    # we check that a transform's predicate alias exists (Java fails the task at start instead)
    ("bad", "transforms.hf.predicate"): 1,
    # we check CloudEventsConverter settings (Debezium's converter declares no ConfigDef)
    ("bad", "value.converter.metadata.source"): 1,
    # we check array.encoding when validating (Debezium only when the task starts)
    ("ends", "transforms.unwrap.array.encoding"): 1,
}


def _alias_entries(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for entry in report["configs"]:
        name = entry["value"]["name"]
        if name.startswith(("transforms.", "predicates.")):
            entry = json.loads(json.dumps(entry))
            if entry["definition"]:
                entry["definition"].pop("documentation", None)
            if name.endswith(".type"):
                entry["value"]["recommended_values"] = None  # Java also lists Debezium's other SMTs
            out[name] = entry
    return out


@pytest.mark.parametrize("case", ["ok", "bad", "ends"])
def test_transform_and_predicate_entries_match_connect(case: str) -> None:
    request, java = JAVA[case]["request"], JAVA[case]["reply"]
    desc = plugins.find_any("FileStreamSourceConnector")
    assert desc is not None
    ours = validation.validate_connector_config(request, desc, worker_defaults=WORKER_DEFAULTS)
    assert ours["groups"] == java["groups"]
    theirs, mine = _alias_entries(java), _alias_entries(ours)
    assert list(mine) == list(theirs)
    for name, entry in theirs.items():
        assert mine[name]["definition"] == entry["definition"], name
        for field in ("value", "recommended_values", "visible"):
            assert mine[name]["value"][field] == entry["value"][field], (name, field)
        extra = DELIBERATE.get((case, name), 0)
        assert len(mine[name]["value"]["errors"]) == len(entry["value"]["errors"]) + extra, \
            (name, mine[name]["value"]["errors"], entry["value"]["errors"])
        if not name.endswith((".regex", ".pattern")) and not extra:  # regex messages are the engine's own
            assert mine[name]["value"]["errors"] == entry["value"]["errors"], name
    deliberate = sum(n for (c, _), n in DELIBERATE.items() if c == case)
    assert ours["error_count"] == java["error_count"] + deliberate


def test_plugin_listing_matches_connect() -> None:
    """Every plugin Kafka Connect 4.3.1 ships (and Debezium's MongoDB connector, SMT and CloudEventsConverter) is
    listed with its type and in Connect's order; the Debezium plugins we do not implement and the sink connectors
    (this worker runs source connectors only) are absent."""
    from rest.plugins import listing

    ours = [(p["class"], p["type"]) for p in listing(connectors_only=False)]
    theirs = [(p["class"], p["type"]) for p in JAVA["plugins"]]
    missing = [p for p in theirs if p not in ours]
    assert all(kind == "sink" or (c.startswith("io.debezium.") and "MongoDbConnector" not in c
                                  and "ExtractNewDocumentState" not in c and "CloudEventsConverter" not in c)
               for c, kind in missing), missing
    assert [p for p in ours if p not in theirs] == []
    assert ours == [p for p in theirs if p in ours]


@pytest.mark.parametrize("name", ["RegexRouter", "org.apache.kafka.connect.transforms.InsertField$Value",
                                  "TopicNameMatches", "CloudEventsConverter", "CloudEvents", "ExtractNewDocumentState",
                                  "io.debezium.converters.CloudEventsConverter", "Filter", "RecordIsTombstone"])
def test_plugin_aliases(name: str) -> None:
    assert plugins.find_any(name) is not None
    assert plugins.find_any("Value") is None and plugins.find_any("InsertField") is None


def test_plugin_config_of_a_transform() -> None:
    desc = plugins.find_any("RegexRouter")
    assert desc is not None
    keys = validation.plugin_config(desc)
    assert [(k["name"], k["required"], k["group"], k["order_in_group"]) for k in keys] == [
        ("regex", True, None, -1), ("replacement", True, None, -1)]
    assert plugins.find(plugins.CONVERTERS, "CloudEvents") is not None
