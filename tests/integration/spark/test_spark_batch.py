"""A large batch's decoded rows on a local master: read in several partitions per core, kept as a local checkpoint
(rows copied once, no columnar cache), the same rows and counts as the decode itself, its blocks released after the
batch, and the tables a run builds from it equal to the collection; a small batch's cached rows handed out before
its counts, read by another thread's job from the same cache."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from spark_jobs import batch as batches
from spark_jobs.batch import MaterializeOptions, read_batch, schema_prefixes
from spark_jobs.decode import CHANGE_COLUMNS, decode
from spark_jobs.delta_replace import newest
from spark_jobs.kafka_source import offset_ranges, read_range
from spark_jobs.materialize import run
from tests.integration.spark.workload import produce, stored_table
from tests.integration.support import unique
from tests.unit.spark.support import change_event, json_records, mongo_documents

pytestmark = pytest.mark.integration


def test_a_small_batch_gives_its_rows_before_the_counts_to_jobs_of_another_thread(
        spark: Any, stack: Any, tmp_path: Path) -> None:
    topic = unique("small.")
    events = [change_event("insert", "db", "c", {"_id": n, "v": n}) for n in range(6)]
    produce(stack.kafka_bootstrap, topic, [*(r for _, r in json_records(events)), (b"k", b"{oops")])
    options = MaterializeOptions(stack.kafka_bootstrap, str(tmp_path / "out"), topics=(topic,))
    ranges = offset_ranges(spark, stack.kafka_bootstrap, topics=(topic,))
    with ThreadPoolExecutor(max_workers=1) as other:
        submitted: list[Future[list[Any]]] = []
        batch = read_batch(spark, options, ranges, "auto",
                           defined=lambda changes: submitted.append(other.submit(changes.collect)))
        assert len(submitted) == 1 and batch.gathered and not batch.checkpointed
        # the rows are read from the cache as a leaf of their queries' plans, not through the decode's plan
        assert batch.cached is not None and batch.changes is not batch.cached
        assert batch.changes._jdf.queryExecution().analyzed().getClass().getSimpleName() == "InMemoryRelation"
        # the other thread's job and the counts' job share the cache the first of them built
        assert sorted(submitted[0].result(timeout=120)) == sorted(batch.changes.collect())
    assert (batch.records, batch.rejects, batch.events) == (7, 1, 6)
    kept = _persistent(spark)
    batch.release()
    assert len(kept - _persistent(spark)) == 1  # its cache released


def _persistent(spark: Any) -> set[int]:
    return {int(rdd_id) for rdd_id in spark.sparkContext._jsc.getPersistentRDDs()}


def test_a_large_batch_is_a_local_checkpoint_with_the_decoded_rows_and_is_released(
        spark: Any, stack: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    topic = unique("large.")
    events = [change_event("insert", "db", "c", {"_id": n, "v": n}) for n in range(12)]
    events += [change_event("update", "db", "c", {"_id": n, "v": -n}, updated={"v": -n}) for n in range(4)]
    events.append(change_event("delete", "db", "c", key=11))
    records = [r for _, r in json_records(events)]
    produce(stack.kafka_bootstrap, topic, [*records, (records[0][0], b"{oops")])
    options = MaterializeOptions(stack.kafka_bootstrap, str(tmp_path / "out"), topics=(topic,))
    ranges = offset_ranges(spark, stack.kafka_bootstrap, topics=(topic,))
    monkeypatch.setattr(batches, "SMALL_BATCH_RECORDS", 5)  # this batch of 19 records is a large one

    kept = _persistent(spark)
    defined: list[Any] = []
    batch = read_batch(spark, options, ranges, "auto", defined=defined.append)
    assert batch.checkpointed and _persistent(spark) - kept
    assert defined == [batch.changes]  # once, after the counts' job made the checkpoint
    # the checkpoint is made by the counts' job, read through its partitions in reverse order
    assert batch.blocks.isCheckpointed()
    first = batch.changes.select(F.spark_partition_id().alias("p"), "offset").groupBy("p").agg(
        F.min("offset").alias("first")).orderBy("p").first()
    assert first is not None and first["first"] > 0  # partition 0 holds the last offsets
    # read in LARGE_BATCH_SPLITS partitions per core (the topic's one partition split by offsets)
    parallelism = spark.sparkContext.defaultParallelism
    assert batch.changes.rdd.getNumPartitions() == batches.LARGE_BATCH_SPLITS * parallelism
    assert (batch.records, batch.rejects, batch.tombstones, batch.events) == (19, 1, 1, 17)
    prefixes = schema_prefixes(spark, options, ranges)
    decoded = decode(read_range(spark, stack.kafka_bootstrap, ranges), "auto", prefixes)
    rows = decoded.select(*CHANGE_COLUMNS).collect()
    assert sorted(batch.changes.collect()) == sorted(rows)
    # the newest position of the rows that decide a key's state, found with the counts
    deciding = [(r["source_ts_ms"], r["source_ord"]) for r in rows if r["reason"] is None and not r["tombstone"]
                and (r["op"] in ("c", "r", "d") or r["after"] is not None)]
    assert batch.newest == {topic: newest(deciding)} and batch.newest[topic][0] > 0
    batch.release()
    assert _persistent(spark) == kept

    summary = run(spark, options)
    assert (summary.records, summary.events, summary.rejects) == (19, 17, 1)
    assert _persistent(spark) == kept
    expected = [{"_id": n, "v": -n if n < 4 else n} for n in range(11)]
    assert stored_table(spark, tmp_path / "out", topic) == mongo_documents(expected)
