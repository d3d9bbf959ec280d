"""``--table-format parquet``: plain Parquet folders on a local (or mounted) file system, each run rewriting the
latest-state tables (see :mod:`spark_jobs.store` for the layout and the commit protocol)."""

from __future__ import annotations

import logging
import time

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from spark_jobs import tables
from spark_jobs.batch import (
    CACHE,
    PARQUET_WRITE,
    Batch,
    MaterializeOptions,
    Summary,
    read_batch,
    session_conf,
    table_schema,
)
from spark_jobs.kafka_source import offset_ranges
from spark_jobs.store import OutputStore, State

__all__ = ["run"]

log = logging.getLogger(__name__)


def run(spark: SparkSession, options: MaterializeOptions) -> Summary:
    """One incremental run: read the new records, stage the new tables, commit them and the offsets last."""
    started = time.monotonic()
    store = OutputStore(options.output)
    state = store.load()
    batch_number = state.batch + 1
    store.recover(batch_number)
    ranges = offset_ranges(spark, options.bootstrap_servers, topics=options.topics, pattern=options.pattern,
                           start=state.offsets, options=options.kafka_options)
    offsets = {**state.offsets}
    for r in ranges:
        offsets.setdefault(r.topic, {})[str(r.partition)] = r.end
    log.info("batch %s reads %s", batch_number,
             ", ".join(f"{r.topic}[{r.partition}] {r.start}..{r.end}" for r in ranges))
    if not any(r.end > r.start for r in ranges):
        return Summary(state.batch, 0, 0, 0, 0, {}, time.monotonic() - started)
    batch = read_batch(spark, options, ranges, options.fmt)
    try:
        with session_conf(spark, PARQUET_WRITE):  # its Parquet files written as the Delta tables' are
            new_schemas, rows = _write(spark, store, options, batch, batch_number, state.schemas)
    finally:
        batch.release()
    store.commit(State(batch_number, offsets, new_schemas, options.fmt), list(batch.topics))
    log.info("batch %s committed to %s", batch_number, store.root)
    return batch.summary(batch_number, rows)


def _write(spark: SparkSession, store: OutputStore, options: MaterializeOptions, batch: Batch, batch_number: int,
           stored: dict[str, str]) -> tuple[dict[str, str], dict[str, int]]:
    """Stage the batch's rejects, change log and tables; returns the parse schemas and the tables' row counts."""
    changes = batch.changes
    tables.rejects(changes, batch_number).write.parquet(str(store.work / "rejects"))
    tables.change_log(changes).write.partitionBy("topic", "date").parquet(str(store.work / "changes"))
    latest = tables.latest_events(changes, broadcast=batch.broadcast_positions,
                                  one_partition=batch.one_partition).persist(CACHE)
    new_schemas, rows = dict(stored), {}
    try:
        for topic in batch.topics:
            parse_schema, count = _table(spark, store, topic, latest.where(F.col("topic") == topic),
                                         stored.get(topic), options.fmt)
            new_schemas[topic], rows[topic] = parse_schema.json(), count
    finally:
        latest.unpersist()
    return new_schemas, rows


def _table(spark: SparkSession, store: OutputStore, topic: str, latest: DataFrame,
           stored: str | None, fmt: str) -> tuple[StructType, int]:
    """Stage the new table of ``topic``; returns its parse schema and row count."""
    documents = tables.live_documents(latest)
    merged, previous_schema = table_schema(spark, documents, latest, stored, fmt)
    batch_rows = tables.materialized(documents, merged)
    path = store.table(topic)
    if path.is_dir():
        previous = spark.read.parquet(str(path))
        if previous_schema != merged:  # types widened or fields added: re-type the kept rows from their JSON
            previous = tables.materialized(tables.as_documents(previous), merged)
        table = tables.merge_tables(previous, latest, batch_rows)
    else:
        table = batch_rows
    staged = store.staged_table(topic)
    table.write.parquet(str(staged))
    return merged, spark.read.parquet(str(staged)).count()
