"""Golden file: the scripted operations of ``compat.debezium.harness`` (every event type, every BSON type, key
types, a replace, a multi-collection transaction with provide.transaction.metadata, documents over and under
cursor.oversize.skip.threshold) captured by our connector
give the same keys and values, schemas included, as the real Debezium 3.6.1 connector did on Kafka Connect 4.3.1
against SecantusDB, apart from times, cluster-time increments, session ids and the version string.

The golden file ``golden/debezium.jsonl`` is recorded by ``python -m compat.debezium.golden`` (re-run it after
changing the operations or the pinned Debezium version)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compat.debezium import harness
from tests.integration.mongodb.conftest import client
from tests.integration.support import Worker, create_connector

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden" / "debezium.jsonl"


def test_same_records_as_debezium(worker: Worker, stack: Any, secantus_factory: Any) -> None:
    expected = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    server = secantus_factory()
    with client(server.uri) as mongo:
        start = mongo.admin.command("ping")["operationTime"]
        harness.run_operations(mongo)
    config = harness.connector_config(server.uri, "golden", harness.op_time(start))
    create_connector(worker, "golden", config, wait_running=False)
    got = harness.read_records(stack.kafka_bootstrap, "golden", len(expected), quiet=5)
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected, strict=True):
        assert ours == theirs
