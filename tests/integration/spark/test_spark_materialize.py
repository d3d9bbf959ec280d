"""The materialization job against the real stack: our worker's MongoDB connector captures SecantusDB changes
into real Kafka, Spark's real Kafka source reads them, the tables must equal the MongoDB collection."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from bson import Int64, ObjectId
from delta.tables import DeltaTable
from pyspark.sql import functions as F

from spark_jobs import batch as spark_batch
from spark_jobs import delta_commits, delta_latest, delta_output
from spark_jobs.batch import TABLE_FORMATS, session_conf
from spark_jobs.kafka_source import SparkJobError
from spark_jobs.materialize import MaterializeOptions, main, run
from spark_jobs.store import OutputStore
from stack.procs import REPO_ROOT
from tests.integration.spark.workload import (
    change_log,
    document,
    items_connector,
    mixed_writes,
    produce,
    rejects,
    stored_table,
    table_frame,
    wait_records,
    without,
)
from tests.integration.support import Worker, read_to_end, unique
from tests.unit.spark.support import (
    change_event,
    cloud_event,
    json_records,
    mongo_documents,
    new_document_state,
)

pytestmark = pytest.mark.integration

# The mixed changes after the snapshot: 3,000 in `make test`, 10,000 in `make test-long` (one write at a time to
# SecantusDB, captured by two connectors: the 10,000 took about 5 minutes of the suite's 60)
MIXED_CHANGES = int(os.environ.get("SPARK_E2E_CHANGES", "3000"))


@pytest.mark.timeout(1500)  # 10,000 writes to SecantusDB, their capture and Spark: over 10 minutes on a busy machine
def test_snapshot_then_mixed_changes_in_every_format(spark: Any, worker: Worker, stack: Any, mongo: Any,
                                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot of 300 documents then MIXED_CHANGES inserts, updates, replaces and deletes: the tables of three
    formats equal the collection, the change log has one row per event. The runs take the large-batch path (as
    10,000 changes in three topics did) whatever the count."""
    monkeypatch.setattr(spark_batch, "SMALL_BATCH_RECORDS", 1_000)
    monkeypatch.setattr(delta_latest, "SMALL_BATCH_RECORDS", 1_000)
    db = unique("spark_e2e_")
    items = mongo[db]["items"]
    rng = random.Random(7)
    snapshot = [document(rng) for _ in range(300)]
    items.insert_many(snapshot)
    live = [doc["_id"] for doc in snapshot]
    with_schemas = items_connector(worker, stack.mongo_uri, db, unique("sa"))
    schemaless = items_connector(worker, stack.mongo_uri, db, unique("sb"), {
        "key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"})
    # writes made while a snapshot copies may show up twice (as Debezium's): let the snapshots finish first, so
    # the change log can be counted exactly
    wait_records(stack.kafka_bootstrap, with_schemas, len(snapshot))
    wait_records(stack.kafka_bootstrap, schemaless, len(snapshot))
    records = len(snapshot) + mixed_writes(items, MIXED_CHANGES, seed=8, live=live)
    wait_records(stack.kafka_bootstrap, with_schemas, records)
    wait_records(stack.kafka_bootstrap, schemaless, records)

    # The same records reshaped as CloudEvents and flattened ones (test_spark_formats has the worker write them).
    raw = read_to_end(stack.kafka_bootstrap, with_schemas)
    cloudevents, flattened = unique("ce."), unique("flat.")
    produce(stack.kafka_bootstrap, cloudevents, [(key, cloud_event(value)) for key, value in raw])
    produce(stack.kafka_bootstrap, flattened,
            [r for r in (new_document_state(key, value) for key, value in raw) if r is not None])

    expected = mongo_documents(items.find())
    assert len(expected) == len(live)
    output = tmp_path / "out"
    summary = run(spark, MaterializeOptions(stack.kafka_bootstrap, str(output),
                                            topics=(with_schemas, schemaless, cloudevents)))
    assert summary.rejects == 0
    assert summary.events == 3 * (len(snapshot) + MIXED_CHANGES)
    for topic in (with_schemas, schemaless, cloudevents):
        assert stored_table(spark, output, topic) == expected, topic
    log = change_log(spark, output, (with_schemas, schemaless, cloudevents))
    counts = {r["topic"]: r["count"] for r in log.groupBy("topic").count().collect()}
    assert counts == dict.fromkeys((with_schemas, schemaless, cloudevents), len(snapshot) + MIXED_CHANGES)
    assert log.where(F.col("topic") == with_schemas).select("partition", "offset").distinct().count() == \
        len(snapshot) + MIXED_CHANGES
    ops = {r["op"]: r["count"] for r in log.where(F.col("topic") == with_schemas).groupBy("op").count().collect()}
    assert ops["r"] == len(snapshot) and set(ops) == {"r", "c", "u", "d"}

    flat_output = tmp_path / "flat"
    run(spark, MaterializeOptions(stack.kafka_bootstrap, str(flat_output), topics=(flattened,),
                                  fmt="new-document-state"))
    flat = stored_table(spark, flat_output, flattened)
    # The SMT writes Decimal128 as text and regex / BSON timestamps in its own shapes: compare the rest.
    assert without(flat, ("price", "pattern", "stamp")) == without(expected, ("price", "pattern", "stamp"))
    assert {k: Decimal(d["price"]).normalize() for k, d in flat.items() if "price" in d} == \
        {k: d["price"] for k, d in expected.items() if "price" in d}


# The mixed changes before each of the three incremental runs (700 until the suite neared its 60 minutes)
STEP_CHANGES = 350


@pytest.mark.timeout(1500)
def test_three_incremental_runs_and_a_killed_run_equal_one_full_run(spark: Any, worker: Worker, stack: Any,
                                                                     mongo: Any, tmp_path: Path) -> None:
    """On both table formats, from the same writes (the workload is most of the time: one capture, two jobs)."""
    db = unique("spark_inc_")
    items = mongo[db]["items"]
    rng = random.Random(11)
    snapshot = [document(rng) for _ in range(100)]
    items.insert_many(snapshot)
    live = [doc["_id"] for doc in snapshot]
    topic = items_connector(worker, stack.mongo_uri, db, unique("si"))
    records = len(snapshot)
    wait_records(stack.kafka_bootstrap, topic, records)  # the snapshot is done: every later write is one event
    # Types widened run after run on two documents the mixed writes leave alone: n int32 (the workload's), then
    # int64 in run 2 and a double in run 3; shape a scalar in runs 1-2, a document on one of them in run 3
    widen = [ObjectId(), ObjectId()]
    items.insert_many([{"_id": widen[0], "n": 1, "shape": 5}, {"_id": widen[1], "n": 2, "shape": 7}])
    records += 2
    widening: list[list[tuple[ObjectId, dict[str, Any]]]] = [
        [], [(widen[0], {"n": Int64(2**40)})], [(widen[0], {"n": 2.5}), (widen[1], {"shape": {"x": 1, "l": ["a"]}})]]
    column_types = [("bigint", "bigint"), ("bigint", "bigint"), ("double", "string")]
    before_kill: dict[str, Any] = {}
    for step in range(3):
        records += mixed_writes(items, STEP_CHANGES, seed=100 + step, live=live)
        if step == 2:  # a field no document had before: the schema evolves
            items.update_one({"_id": live[0]}, {"$set": {"late_field": {"deep": [1, 2]}}})
            records += 1
        for _id, fields in widening[step]:
            items.update_one({"_id": _id}, {"$set": fields})
            records += 1
        wait_records(stack.kafka_bootstrap, topic, records)
        for table_format in TABLE_FORMATS:
            incremental, killed = tmp_path / table_format / "incremental", tmp_path / table_format / "killed"
            summary = run(spark, MaterializeOptions(stack.kafka_bootstrap, str(incremental), topics=(topic,),
                                                    table_format=table_format))
            assert summary.batch == step + 1 and summary.rejects == 0, table_format
            types = dict(table_frame(spark, incremental, topic, table_format).dtypes)
            assert (types["n"], types["shape"]) == column_types[step], (table_format, step)
            if step == 0:
                run(spark, MaterializeOptions(stack.kafka_bootstrap, str(killed), topics=(topic,),
                                              table_format=table_format))
                before_kill[table_format] = _widened(spark, killed, topic, table_format)
    expected = mongo_documents(items.find())
    events = len(snapshot) + 2 + 3 * STEP_CHANGES + 1 + 3
    for table_format in TABLE_FORMATS:
        _check_incremental_and_killed(spark, stack.kafka_bootstrap, tmp_path / table_format, topic, table_format,
                                      expected, events, before_kill[table_format], widen)


def _check_incremental_and_killed(spark: Any, bootstrap: str, folder: Path, topic: str, table_format: str,
                                  expected: dict[Any, dict[str, Any]], events: int, before_kill: Any,
                                  widen: list[ObjectId]) -> None:
    """The incremental and full runs' tables on ``table_format``, then the killed run's recovery."""
    incremental, killed, full = folder / "incremental", folder / "killed", folder / "full"
    run(spark, MaterializeOptions(bootstrap, str(full), topics=(topic,), table_format=table_format))
    assert _widened(spark, incremental, topic, table_format) == _widened(spark, full, topic, table_format) == \
        expected, table_format
    frame = table_frame(spark, incremental, topic, table_format)
    assert "late_field" in frame.columns and frame.count() == frame.where(F.col("_raw").isNotNull()).count()
    assert {r["_id"]: json.loads(r["_raw"])["n"] for r in frame.where(F.col("_id").isin(*map(str, widen))).collect()} \
        == {str(widen[0]): 2.5, str(widen[1]): 2}  # the Extended JSON as the connector wrote it
    changes = [change_log(spark, out, [topic], table_format).count() for out in (incremental, full)]
    assert changes[0] == changes[1] == events, table_format  # one row per change event

    if table_format == "delta":
        # The second run of ``killed`` is killed (SIGKILL of its process group) right after it wrote its batch
        # plan, the next one right after its change-log commit: the table is always one committed state, and
        # the run after them applies the batch exactly once.
        batches = killed / "_batches"
        _kill_mid_run(bootstrap, killed, topic, table_format, lambda: (batches / "00000002.plan.json").exists())
        assert _widened(spark, killed, topic) in (before_kill, expected)
        second_log_commit = killed / "changes" / topic / "_delta_log" / f"{1:020d}.json"
        _kill_mid_run(bootstrap, killed, topic, table_format, second_log_commit.exists)
        assert not (batches / "00000002.done.json").exists()
    else:
        # The second run is killed once it stages its change log: the committed table stays readable, and the
        # next run undoes the staging and applies the batch once
        _kill_mid_run(bootstrap, killed, topic, table_format, (killed / "_work" / "changes").exists)
        assert _widened(spark, killed, topic, table_format) == before_kill
        assert OutputStore(killed).load().batch == 1
    summary = run(spark, MaterializeOptions(bootstrap, str(killed), topics=(topic,), table_format=table_format))
    assert summary.batch == 2
    assert _widened(spark, killed, topic, table_format) == expected, table_format
    log = change_log(spark, killed, [topic], table_format)
    assert log.count() == log.select("partition", "offset").distinct().count() == changes[1], table_format


def _widened(spark: Any, output: Path, topic: str, table_format: str = "delta") -> dict[Any, dict[str, Any]]:
    """The table's documents, with the JSON text of its ``shape`` column (a scalar and a document: string)
    parsed (5 == 5.0 for the comparison with MongoDB's documents)."""
    docs = stored_table(spark, output, topic, table_format)
    return {k: {**d, "shape": json.loads(d["shape"])} if isinstance(d.get("shape"), str) else d
            for k, d in docs.items()}


def _kill_mid_run(bootstrap: str, output: Path, topic: str, table_format: str, ready: Callable[[], bool]) -> None:
    cmd = [sys.executable, "-m", "spark_jobs.materialize", "--bootstrap-servers", bootstrap, "--topics", topic,
           "--output", str(output), "--table-format", table_format, "--master", "local[1]"]
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    try:
        deadline = time.monotonic() + 300
        while not ready():
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "the run never reached the point to kill it at"
            time.sleep(0.02)
        assert proc.poll() is None
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


@pytest.mark.timeout(900)
def test_delta_tables_on_s3a_follow_the_collection_run_after_run(spark: Any, worker: Worker, stack: Any, mongo: Any,
                                                                  s3_bucket: str) -> None:
    db = unique("spark_s3_")
    items = mongo[db]["items"]
    rng = random.Random(31)
    snapshot = [document(rng) for _ in range(100)]
    items.insert_many(snapshot)
    live = [doc["_id"] for doc in snapshot]
    topic = items_connector(worker, stack.mongo_uri, db, unique("s3"))
    records = len(snapshot)
    wait_records(stack.kafka_bootstrap, topic, records)
    output = f"{s3_bucket}/{unique('out')}"
    for step in range(2):
        records += mixed_writes(items, 300, seed=40 + step, live=live)
        if step == 1:  # a field no document had before: the table's schema evolves on S3 too
            items.update_one({"_id": live[0]}, {"$set": {"late_field": {"deep": [1, 2]}}})
            records += 1
        wait_records(stack.kafka_bootstrap, topic, records)
        summary = run(spark, MaterializeOptions(stack.kafka_bootstrap, output, topics=(topic,)))
        assert summary.batch == step + 1 and summary.rejects == 0
        assert stored_table(spark, output, topic) == mongo_documents(items.find())
    log = change_log(spark, output, [topic])
    assert log.count() == log.select("offset").distinct().count() == len(snapshot) + 2 * 300 + 1


@pytest.mark.parametrize("table_format", ["delta", "parquet"])
def test_bad_records_go_to_the_rejects_table_and_the_job_goes_on(spark: Any, stack: Any, tmp_path: Path,
                                                                 table_format: str) -> None:
    topic = unique("bad.")
    good = [r for _, r in json_records([change_event("insert", "db", "c", {"_id": n, "a": n}) for n in range(3)])]
    key = good[0][0]
    insert = good[1][1]
    assert insert is not None
    unknown_op = insert.replace(b'"op":"c"', b'"op":"z"')
    produce(stack.kafka_bootstrap, topic, [good[0], (key, b"{oops"), (key, b'{"some": "other app"}'),
                                           (key, unknown_op), good[2]])
    output = tmp_path / "out"
    summary = run(spark, MaterializeOptions(stack.kafka_bootstrap, str(output), topics=(topic,),
                                            table_format=table_format))
    assert summary.rejects == 3 and summary.events == 2
    rejected = {r["offset"]: (r["topic"], r["partition"], r["reason"], r["value"])
                for r in rejects(spark, output, table_format).collect()}
    assert rejected == {
        1: (topic, 0, "value is not valid JSON", "{oops"),
        2: (topic, 0, "not a Debezium change event (no op, payload or CloudEvents envelope)", '{"some": "other app"}'),
        3: (topic, 0, "unknown op 'z'", unknown_op.decode()),
    }
    assert sorted(stored_table(spark, output, topic, table_format)) == ["0.0", "2.0"]


@pytest.mark.parametrize("table_format", TABLE_FORMATS)
def test_a_later_runs_older_change_does_not_undo_a_newer_row(spark: Any, stack: Any, tmp_path: Path,
                                                              table_format: str) -> None:
    """Across runs the source position ts_ms/ord decides, as within a run: a change that reaches Kafka after a
    newer one of its key (e.g. written to a partition that lagged) neither replaces nor deletes (its tombstone
    neither) the newer row a previous run stored; newer changes of the next run still apply."""
    topic = unique("order.")
    # created in source order: each change_event is one source position later than the one before
    w_insert = change_event("insert", "db", "c", {"_id": 4, "v": "w"})
    z_insert = change_event("insert", "db", "c", {"_id": 3, "v": "z1"})
    x_old = change_event("update", "db", "c", {"_id": 1, "v": "old"}, updated={"v": "old"})
    y_delete = change_event("delete", "db", "c", key=2)
    x_new = change_event("replace", "db", "c", {"_id": 1, "v": "new"})
    y_insert = change_event("insert", "db", "c", {"_id": 2, "v": "new"})
    z_update = change_event("update", "db", "c", {"_id": 3, "v": "z2"}, updated={"v": "z2"})
    w_delete = change_event("delete", "db", "c", key=4)
    output = tmp_path / "out"
    options = MaterializeOptions(stack.kafka_bootstrap, str(output), topics=(topic,), table_format=table_format)
    produce(stack.kafka_bootstrap, topic, [r for _, r in json_records([w_insert, z_insert, x_new, y_insert])])
    assert run(spark, options).batch == 1
    assert stored_table(spark, output, topic, table_format) == mongo_documents(
        [{"_id": 1, "v": "new"}, {"_id": 2, "v": "new"}, {"_id": 3, "v": "z1"}, {"_id": 4, "v": "w"}])
    late = json_records([x_old, y_delete, z_update, w_delete])
    assert sum(value is None for _, (_, value) in late) == 2  # the deletes' tombstones, older too for y
    produce(stack.kafka_bootstrap, topic, [r for _, r in late])
    summary = run(spark, options)
    assert summary.batch == 2 and summary.events == 4
    assert stored_table(spark, output, topic, table_format) == mongo_documents(
        [{"_id": 1, "v": "new"}, {"_id": 2, "v": "new"}, {"_id": 3, "v": "z2"}])
    assert change_log(spark, output, [topic], table_format).count() == 8  # every change is in the log


class _Killed(Exception):
    """Stands for a run killed at that point: nothing after it runs (the done marker is never written)."""


@contextmanager
def _old_transaction(spark: Any, plan: Any, *, recovering: bool) -> Iterator[None]:
    """How earlier versions wrote a batch: every write an idempotent transaction, no batch in userMetadata."""
    with session_conf(spark, {delta_commits.TXN_APP: plan.app, delta_commits.TXN_VERSION: str(plan.batch)}):
        yield


def _old_batch_options(plan: Any, *, recovering: bool) -> dict[str, str]:
    """... and the change log's appends, which name the batch by write options."""
    return {"txnAppId": plan.app, "txnVersion": str(plan.batch)}


@pytest.mark.parametrize("written_as", ["userMetadata", "txn"])
@pytest.mark.parametrize("killed_after", ["change log", "table"])
def test_a_recovering_batch_finds_its_commits_and_writes_each_table_once(
        spark: Any, stack: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written_as: str,
        killed_after: str) -> None:
    """Batch 2 is stopped once its change log is committed (or its table too), as the current version writes
    it (the batch named in the commits' userMetadata, no transaction) or as earlier versions did (an idempotent
    transaction, nothing in userMetadata). The next run finds the commits in the tables' history (or Delta finds
    the transaction) and applies the batch to the other tables only: one change-log row per event."""
    topic = unique("recover.")
    options = MaterializeOptions(stack.kafka_bootstrap, str(tmp_path / "out"), topics=(topic,))
    first = [change_event("insert", "db", "c", {"_id": n, "v": n}) for n in range(20)]
    produce(stack.kafka_bootstrap, topic, [r for _, r in json_records(first)])
    assert run(spark, options).batch == 1
    second = [change_event("update", "db", "c", {"_id": n, "v": -n}, updated={"v": -n}) for n in range(10)]
    second += [change_event("insert", "db", "c", {"_id": 100, "v": 100, "late": "x"}),
               change_event("delete", "db", "c", key=19)]
    produce(stack.kafka_bootstrap, topic, [r for _, r in json_records(second)])

    with monkeypatch.context() as patch:
        if written_as == "txn":
            patch.setattr(delta_output, "transaction", _old_transaction)
            patch.setattr(delta_output, "batch_options", _old_batch_options)

        def killed(*args: Any, **kwargs: Any) -> Any:
            raise _Killed

        if killed_after == "change log":
            patch.setattr(delta_output, "merge_table", killed)
        else:
            patch.setattr(delta_output.DeltaOutput, "commit", killed)
        with pytest.raises(_Killed):
            run(spark, options)
    batches = tmp_path / "out" / "_batches"
    assert (batches / "00000002.plan.json").exists() and not (batches / "00000002.done.json").exists()
    changes = f"{tmp_path / 'out'}/changes/{topic}"
    last = DeltaTable.forPath(spark, changes).history(1).first()
    assert last is not None
    commit = (tmp_path / "out" / "changes" / topic / "_delta_log" / f"{last['version']:020d}.json").read_text()
    if written_as == "userMetadata":  # the batch named, no transaction: only the history lookup can find it
        assert json.loads(last["userMetadata"])["spark_jobs"]["batch"] == 2 and '"txn"' not in commit
    else:
        assert last["userMetadata"] is None and '"txn"' in commit
    versions = {path: DeltaTable.forPath(spark, path).history(1).first()["version"]  # type: ignore[index]
                for path in (changes, f"{tmp_path / 'out'}/tables/{topic}")}

    summary = run(spark, options)
    assert summary.batch == 2 and summary.table_rows == {topic: 20}
    log = change_log(spark, tmp_path / "out", [topic])
    assert log.count() == log.select("partition", "offset").distinct().count() == 32
    assert (batches / "00000002.done.json").exists()
    expected = [{"_id": n, "v": -n if n < 10 else n} for n in range(19)] + [{"_id": 100, "v": 100, "late": "x"}]
    assert stored_table(spark, tmp_path / "out", topic) == mongo_documents(expected)
    after = {path: DeltaTable.forPath(spark, path).history(1).first()["version"]  # type: ignore[index]
             for path in versions}
    assert after[changes] == versions[changes]  # the change log was not written again
    table_path = f"{tmp_path / 'out'}/tables/{topic}"
    if killed_after == "table" and written_as == "userMetadata":
        assert after[table_path] == versions[table_path]  # nor the table, found by its commit
    elif killed_after == "change log":
        assert after[table_path] > versions[table_path]


def test_missing_topic_and_unreachable_broker_fail_with_one_message(spark: Any, stack: Any, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    missing = unique("missing.")
    code = main(["--bootstrap-servers", stack.kafka_bootstrap, "--topics", missing, "--output", str(tmp_path / "a"),
                 "--master", "local[2]"])
    assert code == 2
    assert capsys.readouterr().err.strip() == f"error: topic(s) {missing} do not exist on {stack.kafka_bootstrap}"
    code = main(["--bootstrap-servers", stack.kafka_bootstrap, "--topics-pattern", r"nothing\.matches\..*",
                 "--output", str(tmp_path / "b"), "--master", "local[2]"])
    assert code == 2 and "no topic on" in capsys.readouterr().err
    dead = "127.0.0.1:1"
    started = time.monotonic()
    code = main(["--bootstrap-servers", dead, "--topics", "x", "--output", str(tmp_path / "c"), "--master", "local[2]"])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: Kafka broker {dead} unreachable") and "\n" not in err
    assert time.monotonic() - started < 60
    # the user's API timeout bounds the wait; an unreachable broker is retriable (runs at an interval try again),
    # a missing topic is not
    started = time.monotonic()
    with pytest.raises(SparkJobError, match=f"Kafka broker {dead} unreachable: .* within 2 s") as unreachable:
        run(spark, MaterializeOptions(dead, str(tmp_path / "d"), topics=("x",),
                                      kafka_options={"kafka.default.api.timeout.ms": "2000"}))
    assert unreachable.value.retriable and time.monotonic() - started < 30
    with pytest.raises(SparkJobError, match="do not exist") as absent:
        run(spark, MaterializeOptions(stack.kafka_bootstrap, str(tmp_path / "e"), topics=(missing,)))
    assert not absent.value.retriable
