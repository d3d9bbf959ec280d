"""The latest-state table of a collection in a Delta output: one change per batch (see
:mod:`spark_jobs.delta_output`). A new table is written whole; a small batch's change is one commit of its keys'
rows (:mod:`spark_jobs.delta_replace`); a larger one a ``MERGE INTO``; a batch that widens a column's type
rewrites the table."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from spark_jobs import schema as schemas
from spark_jobs import tables
from spark_jobs.batch import CACHE, SMALL_BATCH_RECORDS, session_conf, table_schema
from spark_jobs.columns import built
from spark_jobs.delta_batches import DeltaOutput, Plan
from spark_jobs.delta_commits import TXN_APP, TXN_VERSION, USER_METADATA, batch_marker, committed
from spark_jobs.delta_replace import (
    NO_POSITION,
    Decision,
    Position,
    abandon,
    begin,
    decide,
    last_write_metric,
    newest,
    replace_keys,
    write_ahead,
)

__all__ = ["STATS_COLUMNS", "TABLE_STATS", "Change", "merge_table"]

log = logging.getLogger(__name__)

# A new table's file statistics, a table property given as a write option (it only counts when the write creates
# the table)
STATS_COLUMNS = "delta.dataSkippingStatsColumns"
# ... and of the latest-state tables: the key a MERGE joins on and the record's coordinates, not the documents'
# fields (set when a table is created, kept in its properties; a reader may widen it with ALTER TABLE)
TABLE_STATS = "_key,_op,_source_ts,_source_ord,_topic,_partition,_offset"
# The MERGE's source is the batch's rows, persisted and read from Kafka at fixed offsets: deterministic, so
# Delta's own copy of it (one more job per MERGE) is not needed.
MATERIALIZE_SOURCE = ("spark.databricks.delta.merge.materializeSource", "none")


Change = tuple[str, int] | None  # ("new" | "merge", rows added to the table) when the write's metrics tell


def rows_written(spark: SparkSession, path: str, written: DataFrame, marker: str) -> int:
    """The rows the last commit of the table at ``path`` (a write named ``marker``) wrote, from its
    ``numOutputRows`` metric read from the commit file on the driver, instead of counting ``written``, the rows it
    wrote, again (two Spark jobs more per new table), or reading the table's history (one more). Counted when the
    commit has no metrics (``spark.databricks.delta.history.metricsEnabled`` off)."""
    rows = last_write_metric(spark, path, marker, "numOutputRows")
    return rows if rows is not None else written.count()


def add_columns(spark: SparkSession, path: str, source: Any) -> None:
    """Evolve the table's schema with the fields the batch adds (an empty append with ``mergeSchema``), outside
    the batch's name and transaction id: those belong to the MERGE (a recovering run finding this commit must not
    take it for the MERGE's); adding the same fields again changes nothing."""
    kept = {key: spark.conf.get(key, None) for key in (TXN_APP, TXN_VERSION, USER_METADATA)}
    for key in kept:
        spark.conf.unset(key)
    try:
        source.limit(0).write.format("delta").mode("append").option("mergeSchema", "true").save(path)
    finally:
        for key, value in kept.items():
            if value is not None:
                spark.conf.set(key, value)


def merge_table(spark: SparkSession, output: DeltaOutput, plan: Plan, topic: str, prepared: Any,
                 stored: str | None, bound: Position | None, top: Position,
                 early: tuple[Decision, Any] | None, *, recovering: bool, gathered: bool = False,
                 fits: bool = False) -> tuple[str, Change, Position | None]:
    """Apply the batch to the latest-state table of ``topic`` from its deciding rows in
    :func:`tables.merge_documents`' shape (``bound``: a source position at or above every stored row's, None when
    not known; ``top``: one at or above every deciding row's, :attr:`Batch.newest`); returns the new parse schema
    (JSON), how many rows the table gained (None when not known: the table was rewritten, or a ``recovering``
    batch found its commit there) and the table's new bound. ``early``: the decision and replacement
    :func:`_begin_replacements` started for this table. ``gathered``: the batch's rows are in one Spark partition
    (:attr:`spark_jobs.batch.Batch.gathered`); ``fits``: its documents fit the ``stored`` parse schema
    (:attr:`spark_jobs.batch.Batch.fitting`), which is then the batch's, not inferred."""
    documents = prepared.where(F.col("op") != "d")
    path = output.table(topic)
    exists = DeltaTable.isDeltaTable(spark, path)
    small = plan.records <= SMALL_BATCH_RECORDS  # its keys are few enough to list
    decision, started = early if early is not None else (None, None)
    if decision is None and exists and small and not recovering:
        # which changes apply needs only the batch's keys and positions: the stored rows of those keys are
        # deleted (deletion vectors) while the parse schema is inferred and the new rows are built
        current = spark.read.format("delta").load(path)
        bound = bound if bound is not None else _stored_newest(current)
        decision = decide(_deciding(prepared), current, bound)
        started = begin(spark, path, decision)
    try:
        step = time.monotonic()
        ahead = None  # the batch's rows written with the stored parse schema (see _write_ahead)
        if small and exists and not recovering and stored is not None and decision is not None \
                and started is not None:
            merged, ahead, wrote = _write_ahead(spark, path, plan, documents, prepared, stored, decision, started,
                                                gathered, fits)
            if wrote and ahead is None:
                # the batch changes the parse schema: the rows written ahead are left to no commit, and the change
                # is a replaceWhere write (as for new columns below)
                log.info("batch %s: table %s: the parse schema changes, the rows written with the stored one are "
                         "left out of the commit", plan.batch, topic)
                abandon(started)
                started = None
                decision = decision if decision.chosen is not None else None  # the keys listed
        elif fits and stored is not None:
            merged = schemas.schema_from_json(stored)
        else:
            merged, _ = table_schema(spark, documents, prepared, stored, plan.fmt)
        log.info("batch %s: table %s: latest events and parse schema in %.1f s", plan.batch, topic,
                 time.monotonic() - step)
        if ahead is not None and decision is not None:
            gained = replace_keys(spark, path, decision, ahead, batch_marker(plan), started, written=True,
                                  gathered=gathered)
            started = None
            return merged.json(), (("merge", gained) if gained is not None else None), _later(bound, top)
        if not exists:
            tables.materialized(documents, merged).write.format("delta").mode("append") \
                .option(STATS_COLUMNS, TABLE_STATS).save(path)
            return merged.json(), ("new", rows_written(spark, path, documents, batch_marker(plan))), top
        if recovering and committed(spark, path, plan):
            log.info("batch %s: table %s already has it", plan.batch, topic)
            return merged.json(), None, None
        source = tables.materialized(prepared, merged)
        current = spark.read.format("delta").load(path)
        if decision is None and (bound is None or recovering):  # not known (an older output), or the table may
            # hold more than the marker says
            bound = _stored_newest(current)
        if not schemas.only_additions(current.schema, source.schema):
            return merged.json(), None, _rewrite(spark, path, topic, current, prepared, documents, merged, bound,
                                                 top)
        if not schemas.only_additions(source.schema, current.schema):
            abandon(started)  # the new columns' commit comes first: the change is then a replaceWhere write
            started = None
            decision = decision if decision is not None and decision.chosen is not None else None  # keys listed
            add_columns(spark, path, source)
            current = spark.read.format("delta").load(path)
        # same types in the same order: no cast in the MERGE (Delta's evolution cast makes null structs
        # structs of nulls)
        conformed = source.select(*_conforming(source.schema, current.schema))
        if small:
            decision = decision if decision is not None else decide(conformed, current, bound)
            gained = replace_keys(spark, path, decision, conformed, batch_marker(plan), started, gathered=gathered)
            started = None
            return merged.json(), (("merge", gained) if gained is not None else None), _later(bound, top)
        return merged.json(), _merge(spark, path, conformed), _later(bound, top)
    finally:
        abandon(started)


def _write_ahead(spark: SparkSession, path: str, plan: Plan, documents: DataFrame, prepared: DataFrame, stored: str,
                 decision: Decision, started: Any, gathered: bool,
                 fits: bool) -> tuple[StructType, DataFrame | None, bool]:
    """The batch's parse schema (:func:`table_schema`, inferred on a thread of its own) and, meanwhile, its rows
    typed with the ``stored`` parse schema and written into the table (not committed: :func:`write_ahead`, for
    the replacement ``started`` of ``decision``). Returns the parse schema, the rows written when it is the
    stored one (the batch's documents fit it: the rows are what the change writes; None otherwise, or when the
    stored schema's rows do not have the table's columns and nothing was written), and whether rows were written.
    At once, the inference's and the typed write's planning and jobs fill each other's idle core: incremental runs
    of 5,082 records alternating in one JVM 1.36 against 1.49 s (medians of the last 4 of 8 rounds, lower in 4 of
    4; benchmarks/results.md 2026-12-02). When the batch's documents ``fits`` the stored schema (known from the
    batch's counts), that is its parse schema: nothing is inferred."""
    parse_schema = schemas.schema_from_json(stored)
    current = spark.read.format("delta").load(path)
    source = tables.materialized(prepared, parse_schema)
    conforms = schemas.only_additions(current.schema, source.schema) and \
        schemas.only_additions(source.schema, current.schema)
    if fits:
        rows = source.select(*_conforming(source.schema, current.schema)) if conforms else None
        if rows is not None:
            write_ahead(decision, rows, started, gathered=gathered)
        return parse_schema, rows, rows is not None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="spark-jobs-inference") as inference:
        inferring = inference.submit(table_schema, spark, documents, prepared, stored, plan.fmt)
        rows = source.select(*_conforming(source.schema, current.schema)) if conforms else None
        if rows is not None:
            write_ahead(decision, rows, started, gathered=gathered)
        merged, _ = inferring.result()
    return merged, rows if merged.json() == parse_schema.json() else None, rows is not None


def _conforming(source: StructType, table: StructType) -> list[Column]:
    """The columns of rows in the ``source`` schema cast to the ``table``'s types, in its order (built once per JVM
    for the two schemas, see :func:`spark_jobs.columns.built`)."""
    return built(("conforming", source.json(), table.json()), lambda: [
        schemas.conform(F.col(f"`{f.name}`"), source[f.name].dataType, f.dataType).alias(f.name)
        for f in table.fields])


def _deciding(prepared: DataFrame) -> DataFrame:
    """The key, op and source position of each of the batch's deciding rows (:func:`tables.merge_documents`'
    shape) under the latest-state table's names."""
    return prepared.select(F.col("key").alias("_key"), F.col("op").alias("_op"),
                           F.timestamp_millis("source_ts_ms").alias("_source_ts"),
                           F.col("source_ord").alias("_source_ord"))


def _merge(spark: SparkSession, path: str, conformed: DataFrame) -> Change:
    """A large batch's ``MERGE INTO`` the table at ``path``; how many rows the table gained (None: not known)."""
    # persisted: the MERGE's jobs (finding the touched files, writing, deletion vectors) read the typed rows
    # from the first one's cache instead of computing their parse again
    conformed = conformed.persist(CACHE)
    # a change older (by source position) than the stored row leaves it as it is: a later run reading a
    # partition that lagged never undoes a newer state
    newer = tables.applies(F.col("s._source_ts"), F.col("s._source_ord"), F.col("t._source_ts"),
                           F.col("t._source_ord"))
    on = F.col("t._key") == F.col("s._key")
    try:
        with session_conf(spark, dict([MATERIALIZE_SOURCE])):
            metrics = (DeltaTable.forPath(spark, path).alias("t").merge(conformed.alias("s"), on)
                       .whenMatchedDelete((F.col("s._op") == "d") & newer).whenMatchedUpdateAll(newer)
                       .whenNotMatchedInsertAll("s._op <> 'd'").execute()).first()
    finally:
        conformed.unpersist()
    if metrics is None:
        return None
    return "merge", int(metrics["num_inserted_rows"]) - int(metrics["num_deleted_rows"])


def _rewrite(spark: SparkSession, path: str, topic: str, current: DataFrame, prepared: DataFrame,
             documents: DataFrame, merged: StructType, bound: Position | None, top: Position) -> Position | None:
    """A column's type widened: the table rewritten with the wider types, every kept row typed again from its
    Extended JSON; returns the table's new bound."""
    log.info("table %s: column types widened, rewriting it", topic)
    kept = tables.materialized(tables.as_documents(current), merged)
    table = tables.merge_tables(kept, prepared, tables.materialized(documents, merged))
    table.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(path)
    return _later(bound, top)


def _stored_newest(table: DataFrame) -> Position | None:
    """The newest source position of a latest-state table's rows (a read of two columns of every row: only when
    the done marker does not tell)."""
    if "_source_ord" not in table.columns:
        return None
    return _max_position(table, F.unix_millis("_source_ts"), F.col("_source_ord"))


def _max_position(rows: DataFrame, ts: Column, order: Column) -> Position:
    """The highest (``ts``, ``order``) of the rows that have a ``ts``."""
    return _position(rows.where(ts.isNotNull()).agg(F.max(F.struct(ts, order))).first())


def _position(row: Any) -> Position:
    """The position in an aggregate's row; :data:`NO_POSITION` when no row had one."""
    top = row[0] if row is not None else None
    return (int(top[0]), None if top[1] is None else int(top[1])) if top is not None else NO_POSITION


def _later(bound: Position | None, top: Position | None) -> Position | None:
    """A table's bound after a batch whose newest position is ``top`` (unknown stays unknown)."""
    if bound is None:
        return None
    return newest([bound, top] if top is not None else [bound])
