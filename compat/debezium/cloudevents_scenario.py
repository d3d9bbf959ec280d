"""The CloudEvents golden scenario: the streaming scenario's operations (:func:`compat.debezium.harness.run_operations`)
with the record values written by Debezium's ``io.debezium.converters.CloudEventsConverter`` (structured mode,
JSON envelope, JSON data with its schema: the converter's defaults, which ours honours) and the keys by the worker's
JsonConverter.

    python -m compat.debezium.golden --scenario cloudevents --release 3.6.3.Final

Besides what :func:`compat.debezium.harness.raw_text` replaces, the envelope's run-specific values are replaced in
the bytes (:func:`scrub`): the ``ts``/``ord`` parts of ``id``, ``time``, and the extension attributes holding times,
the cluster-time increment and the session (``iodebeziumtsms``, ``iodebeziumord``, ``iodebeziumlsid``...).
Records that are not change events (tombstones, transaction metadata) are written as null by both converters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from compat.debezium import harness

CONVERTER = "io.debezium.converters.CloudEventsConverter"
PLUGIN_JARS_LEFT_OUT = ("jackson-",)
"""With its own Jackson jars in the plugin directory (what Maven resolves for the connector), Debezium's converter
cannot load on Connect 4.3: its static initialiser looks ``JsonConverter.convertToConnect`` up by reflection with
the plugin's ``JsonNode`` class, while ``JsonConverter`` comes from the runtime with the runtime's ("Failed to
statically initialize plugin class", ``NoSuchMethodException``; POST /connectors answers 500). The runtime holds
the same Jackson release (2.21.2), so the plugin uses the runtime's."""
RECORDS = 25
_VARYING = (
    (re.compile(r'"id":"name:([^;"]*);ts:-?\d+;ord:-?\d+"'), r'"id":"name:\1;ts:0;ord:0"'),
    (re.compile(r'"time":"[^"]*"'), r'"time":"<time>"'),
    (re.compile(r'"(iodebezium(?:tsms|tsus|tsns|wallTime|txnNumber|ord))":("?)-?\d+\2'), r'"\1":\g<2>0\2'),
    (re.compile(r'"iodebeziumlsid":"(?:[^"\\]|\\.)*"'), r'"iodebeziumlsid":"<lsid>"'),
)


def config(mongo_uri: str, prefix: str, start_op_time: int) -> dict[str, str]:
    """The streaming scenario's config with CloudEvents record values."""
    return {**harness.connector_config(mongo_uri, prefix, start_op_time), "value.converter": CONVERTER,
            "value.converter.serializer.type": "json", "value.converter.data.serializer.type": "json"}


def scrub(record: dict[str, Any]) -> dict[str, Any]:
    """A record with the CloudEvents envelope's run-specific values replaced in its value bytes (and its parsed
    value re-read from them)."""
    raw = record["raw_value"]
    if raw is None:
        return record
    for pattern, replacement in _VARYING:
        raw = pattern.sub(replacement, raw)
    return {**record, "value": json.loads(raw), "raw_value": raw}


def capture(client: Any, bootstrap: str, prefix: str, create: Callable[[dict[str, str]], None],
            mongo_uri: str) -> list[dict[str, Any]]:
    """Run the streaming operations, then a connector made by ``create(config)`` from before them; the records."""
    start = client.admin.command("ping")["operationTime"]
    harness.run_operations(client)
    create(config(mongo_uri, prefix, harness.op_time(start)))
    return [scrub(r) for r in harness.read_records(bootstrap, prefix, RECORDS, quiet=5)]
