"""``--table-format delta`` (the default): Delta Lake tables on any Hadoop path, updated in place, exactly once.

Layout under ``--output`` (``file:``, ``s3a:``, ... or a local path)::

    tables/<topic>/     latest state of each collection: one commit per batch, keyed on ``_key``
    changes/<topic>/    change log of each collection: append-only, partitioned by ``date``
    rejects/            records that could not be used, with the reason
    _batches/           the batch log: <n>.plan.json before batch n writes, <n>.done.json after

Exactly once: batch ``n`` first writes its plan (the Kafka offsets ``[start, end)`` it reads, fixed for good),
then makes its Delta writes (the change logs and rejects on one thread, the latest-state tables on another, the
two sides filling each other's idle core), each commit naming the batch in its ``userMetadata`` (``{"spark_jobs":
{"app": <the output's application id>, "batch": n}}``), and last the done marker with the offsets and parse
schemas. A run that finds a plan without its done marker (the run before was killed) reads exactly the same records
again and, table by table, looks for the batch's commit in the table's history: a table that has it is left alone, the
others get the batch, so every table gets each batch once. Only then does it read what is new. Outputs written by
earlier versions named the batch by an idempotent transaction (``txnAppId`` = the application id, ``txnVersion``
= ``n``) instead: a recovering batch's writes carry that transaction too, so Delta itself skips a write committed
that way. A batch that is not recovering writes without the transaction: its plan was written by this run after
the last done marker, so no table can hold it yet, and Delta's check of the transaction (``Snapshot.transactions``,
a state reconstruction job per write in Delta 4.0) found nothing every time.

The latest-state table costs what the changes cost: a small batch (:data:`SMALL_BATCH_RECORDS`) replaces its keys'
rows in one ``replaceWhere`` commit after deciding from the stored keys and positions which changes apply
(:mod:`spark_jobs.delta_replace`); a larger one runs a ``MERGE INTO``, which rewrites only the files holding the
keys of the batch. Either way deletion vectors mark the old rows. When a batch widens the type of an existing
column (long + double -> double, conflicting types -> string), the table is rewritten once with the wider types,
from ``_raw``.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from spark_jobs import schema as schemas
from spark_jobs import tables
from spark_jobs.batch import (
    CACHE,
    PARQUET_WRITE,
    SMALL_BATCH_RECORDS,
    Batch,
    MaterializeOptions,
    Summary,
    read_batch,
    session_conf,
    small_batch_settings,
    table_schema,
)
from spark_jobs.delta_batches import DeltaOutput, Done, Plan
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
)
from spark_jobs.kafka_source import SparkJobError, offset_ranges

__all__ = ["DeltaOutput", "run"]

log = logging.getLogger(__name__)

_TXN_APP = "spark.databricks.delta.write.txnAppId"
_TXN_VERSION = "spark.databricks.delta.write.txnVersion"
_USER_METADATA = "spark.databricks.delta.commitInfo.userMetadata"
_MARKER = "spark_jobs"  # the key of a batch's name in its commits' userMetadata
# A recovering batch looks for its commits among a table's last commits first, then (not found, and no earlier
# batch's commit met on the way) in the whole history
_HISTORY_LOOKBACK = 16
_DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
_SNAPSHOT_PARTITIONS = "spark.databricks.delta.snapshotPartitions"
# A new table's file statistics, a table property given as a write option (it only counts when the write creates
# the table)
_STATS_COLUMNS = "delta.dataSkippingStatsColumns"
# File statistics of the append-only tables: their small columns, not the documents' text (min/max of 1 KB
# strings is most of the cost of writing them, and no query skips files by a document's text)
CHANGES_STATS = "topic,key,op,ts,source_ts,ord,txn_number,partition,offset,kafka_ts"
REJECTS_STATS = "topic,partition,offset,kafka_ts,key,reason,batch"
# ... and of the latest-state tables: the key a MERGE joins on and the record's coordinates, not the documents'
# fields (set when a table is created, kept in its properties; a reader may widen it with ALTER TABLE)
TABLE_STATS = "_key,_op,_source_ts,_source_ord,_topic,_partition,_offset"
# A date-partitioned append writes each date's rows through its own open file instead of sorting the batch
# (documents and all) by date first; beyond this many dates in one task Spark sorts again. Set for the whole batch
# (only the change logs are partitioned).
_CONCURRENT_WRITERS = {"spark.sql.maxConcurrentOutputFileWriters": "32"}
# The fair scheduler pool of the change logs' appends (spark_jobs/fairscheduler.xml, which a session
# spark_jobs.session starts schedules by): under Spark's FIFO scheduling the appends' tasks, submitted first, took
# both cores while the tables' jobs waited, and the tables' skewed stages then ran alone on one core. Full runs of
# 508,090 records in one JVM with fair scheduling, 4 variants rotating (medians of the last 3 of 4 rounds): 6 read
# partitions with the pool 16.6 s, without it 19.4 s; 2 partitions with it 18.3 s, without it 18.8 s
# (benchmarks/results.md 2026-11-30 13:32).
CHANGE_LOG_POOL = "spark_jobs.change_log"
# The MERGE's source is the batch's rows, persisted and read from Kafka at fixed offsets: deterministic, so
# Delta's own copy of it (one more job per MERGE) is not needed.
_MATERIALIZE_SOURCE = ("spark.databricks.delta.merge.materializeSource", "none")


def run(spark: SparkSession, options: MaterializeOptions) -> Summary:
    """Finish a batch a killed run left, then read and apply what is new."""
    started = time.monotonic()
    extensions = spark.conf.get("spark.sql.extensions", "") or ""
    if _DELTA_EXTENSION not in extensions:
        raise SparkJobError(f"Delta tables need the Spark session built with spark.sql.extensions="
                            f"{_DELTA_EXTENSION} (and spark.sql.catalog.spark_catalog="
                            "org.apache.spark.sql.delta.catalog.DeltaCatalog)")
    # new tables get deletion vectors: a MERGE then marks the rows it replaces instead of copying their files
    spark.conf.set("spark.databricks.delta.properties.defaults.enableDeletionVectors", "true")
    if spark.conf.get(_SNAPSHOT_PARTITIONS, None) is None:  # Delta's default, 50 tasks per log replay, is for clusters
        spark.conf.set(_SNAPSHOT_PARTITIONS, str(max(2, spark.sparkContext.defaultParallelism)))
    output = DeltaOutput(spark, options.output)
    done, pending = output.state()
    summary: Summary | None = None
    if pending is not None:
        log.info("batch %s of %s did not finish: applying it again", pending.batch, output.root)
        summary, done = _apply(spark, options, output, pending, done, recovering=True)
    ranges = offset_ranges(spark, options.bootstrap_servers, topics=options.topics, pattern=options.pattern,
                           start=done.offsets)
    if any(r.end > r.start for r in ranges):
        plan = Plan(done.batch + 1, done.app or f"spark_jobs.materialize-{uuid.uuid4()}", options.fmt,
                    tuple(ranges))
        output.begin(plan)
        later, done = _apply(spark, options, output, plan, done, recovering=False)
        summary = later if summary is None else summary.then(later)
    if summary is None:
        return Summary(done.batch, 0, 0, 0, 0, {}, time.monotonic() - started)
    return summary


def _apply(spark: SparkSession, options: MaterializeOptions, output: DeltaOutput, plan: Plan,
           done: Done, *, recovering: bool) -> tuple[Summary, Done]:
    """Apply one batch (a small one without code generation, see :func:`small_batch_settings`; its Parquet files
    written with :data:`PARQUET_WRITE`)."""
    with small_batch_settings(spark, sum(r.end - r.start for r in plan.ranges)), \
            session_conf(spark, {**PARQUET_WRITE, **_CONCURRENT_WRITERS}):
        return _apply_batch(spark, options, output, plan, done, recovering=recovering)


def _apply_batch(spark: SparkSession, options: MaterializeOptions, output: DeltaOutput, plan: Plan,
                 done: Done, *, recovering: bool) -> tuple[Summary, Done]:
    """Apply one batch. The row count of each table is carried from the last done marker and the writes'
    metrics; when a write may have been skipped as already committed (``recovering``) it is counted instead."""
    log.info("batch %s reads %s", plan.batch,
             ", ".join(f"{r.topic}[{r.partition}] {r.start}..{r.end}" for r in plan.ranges if r.end > r.start))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="spark-jobs-snapshots") as warming:
        warming.submit(_load_snapshots, spark, [output.table(t) for t in sorted({r.topic for r in plan.ranges})])
        batch = read_batch(spark, options, plan.ranges, plan.fmt, None if recovering else done.positions)
    log.info("batch %s: %s records decoded in %.1f s", plan.batch, batch.records, time.monotonic() - batch.started)
    new_schemas, rows, positions = dict(done.schemas), dict(done.rows), dict(done.positions)
    early: dict[str, tuple[Decision, Any]] = {}
    try:
        early = _begin_replacements(spark, output, batch)
        # The change logs and rejects are appended on a thread of their own while this one updates the tables:
        # each side's driver work (plans, Delta's log and commits) and its skewed or small stages leave a core idle
        # that the other fills. The appends name the batch by write options, not by the session's settings, which
        # the table side changes (see _add_columns). Alternating in one JVM against the appends first (7 rounds,
        # medians of the last 6): incremental runs of 5,082 records 7.29 s against 8.19 s, full runs of 508,090
        # 25.6 s against 28.1 s (benchmarks/results.md 2026-11-30 12:30)
        with _transaction(spark, plan, recovering=recovering), \
                ThreadPoolExecutor(max_workers=1, thread_name_prefix="spark-jobs-change-log") as appender:
            appended = appender.submit(_append_logs, spark, output, plan, batch, recovering=recovering)
            # the deciding rows of every topic, cached once in the MERGE source's shape: a cache of the latest
            # events and then one per topic in that shape built the documents' cache twice (with the hashed
            # positions of tables.last_positions: the full run's latest events and parse schema step 5.5 s of JVM
            # CPU against 7.9 s, medians of 3 interleaved full runs; benchmarks/results.md 2026-11-29)
            latest = tables.merge_documents(
                tables.latest_events(batch.changes, broadcast=batch.broadcast_positions,
                                     one_partition=batch.one_partition)).persist(CACHE)
            try:
                for topic in batch.topics:
                    step = time.monotonic()
                    new_schemas[topic], change, bound = _merge_table(
                        spark, output, plan, topic, latest.where(F.col("topic") == topic), done.schemas.get(topic),
                        done.positions.get(topic), batch.newest.get(topic, NO_POSITION), early.pop(topic, None),
                        recovering=recovering)
                    if bound is None:
                        positions.pop(topic, None)
                    else:
                        positions[topic] = bound
                    known = rows.get(topic)
                    if change is not None and change[0] == "new" and not recovering:
                        rows[topic] = change[1]
                    elif change is not None and known is not None and not recovering:
                        rows[topic] = known + change[1]
                    else:
                        rows[topic] = spark.read.format("delta").load(output.table(topic)).count()
                    log.info("batch %s: table %s merged in %.1f s", plan.batch, topic, time.monotonic() - step)
            finally:
                latest.unpersist()
            appended.result()  # raises what the appends raised (leaving the block waits for them in any case)
    finally:
        for _, started in early.values():  # a topic the loop did not reach (it failed before)
            abandon(started)
        batch.release()
    offsets = {topic: dict(partitions) for topic, partitions in done.offsets.items()}
    for r in plan.ranges:
        offsets.setdefault(r.topic, {})[str(r.partition)] = r.end
    committed = Done(plan.batch, plan.app, offsets, new_schemas, rows, positions)
    output.commit(committed)
    log.info("batch %s committed to %s", plan.batch, output.root)
    return batch.summary(plan.batch, {t: n for t, n in rows.items() if t in batch.topics}), committed


def _begin_replacements(spark: SparkSession, output: DeltaOutput, batch: Batch) -> dict[str, tuple[Decision, Any]]:
    """Start, per latest-state table none of whose changes in the batch is older than its rows
    (:attr:`Batch.newer`), the delete of the stored rows of the batch's keys (:func:`delta_replace.begin`, a
    semi-join with the keys of the batch's deciding rows) right after the batch is read, while the latest events
    are found, the parse schema is inferred and the new rows are built: that work needs the keys alone.
    Incremental runs of 5,082 records alternating in one JVM: 1.72 s against 1.98 s with the keys collected and
    listed in the delete's predicate (medians of the last 11 of 12 rounds, lower in 10 of 11 pairs), and that one
    ~0.05 s against the delete started after the latest events (benchmarks/results.md 2026-12-01 02:27)."""
    early: dict[str, tuple[Decision, Any]] = {}
    deciding = tables.usable(batch.changes).where(tables.decides())
    for topic in sorted(batch.newer):
        path = output.table(topic)
        decision = Decision.every_key()
        keys = deciding.where(F.col("topic") == topic).select("key")
        started = begin(spark, path, decision, keys) if DeltaTable.isDeltaTable(spark, path) else None
        if started is not None:
            early[topic] = (decision, started)
    return early


def _rows_written(spark: SparkSession, path: str, written: DataFrame, marker: str) -> int:
    """The rows the last commit of the table at ``path`` (a write named ``marker``) wrote, from its
    ``numOutputRows`` metric read from the commit file on the driver, instead of counting ``written``, the rows it
    wrote, again (two Spark jobs more per new table), or reading the table's history (one more). Counted when the
    commit has no metrics (``spark.databricks.delta.history.metricsEnabled`` off)."""
    rows = last_write_metric(spark, path, marker, "numOutputRows")
    return rows if rows is not None else written.count()


def _add_columns(spark: SparkSession, path: str, source: Any) -> None:
    """Evolve the table's schema with the fields the batch adds (an empty append with ``mergeSchema``), outside
    the batch's name and transaction id: those belong to the MERGE (a recovering run finding this commit must not
    take it for the MERGE's); adding the same fields again changes nothing."""
    kept = {key: spark.conf.get(key, None) for key in (_TXN_APP, _TXN_VERSION, _USER_METADATA)}
    for key in kept:
        spark.conf.unset(key)
    try:
        source.limit(0).write.format("delta").mode("append").option("mergeSchema", "true").save(path)
    finally:
        for key, value in kept.items():
            if value is not None:
                spark.conf.set(key, value)


def batch_marker(plan: Plan) -> str:
    """The ``userMetadata`` of the commits of ``plan``'s batch."""
    return json.dumps({_MARKER: {"app": plan.app, "batch": plan.batch}}, sort_keys=True)


def _marked_batch(user_metadata: str | None, app: str) -> int | None:
    """The batch of ``app`` a commit's ``userMetadata`` names (None: another writer's commit, or none)."""
    if not user_metadata or _MARKER not in user_metadata:
        return None
    try:
        named = json.loads(user_metadata)[_MARKER]
        return int(named["batch"]) if named["app"] == app else None
    except (ValueError, TypeError, KeyError):
        return None


def committed(spark: SparkSession, path: str, plan: Plan) -> bool:
    """Whether the Delta table at ``path`` has a commit of ``plan``'s batch (named in its ``userMetadata``, see
    :func:`batch_marker`). The newest commits are read first; the search stops at a commit of an earlier batch of
    the same output (a batch's commits come after its predecessor's, whose done marker its plan follows)."""
    if not DeltaTable.isDeltaTable(spark, path):
        return False
    table = DeltaTable.forPath(spark, path)
    for limit in (_HISTORY_LOOKBACK, None):
        history = table.history(limit) if limit is not None else table.history()
        rows = history.select("userMetadata").collect()  # newest first
        for row in rows:
            batch = _marked_batch(row[0], plan.app)
            if batch == plan.batch:
                return True
            if batch is not None and batch < plan.batch:
                return False
        if limit is None or len(rows) < limit:
            return False
    return False


@contextmanager
def _transaction(spark: SparkSession, plan: Plan, *, recovering: bool) -> Iterator[None]:
    """Every Delta commit inside names ``plan``'s batch in its ``userMetadata`` (a session conf, which the
    DataFrame writes and MERGE both honour; the change logs' appends, on a thread of their own, give the same as
    write options, :func:`_batch_options`). A ``recovering`` batch's writes are also Delta idempotent
    transactions for (``plan.app``, ``plan.batch``): a write an earlier version committed under that transaction
    is skipped by Delta. A new batch's are not: no table can hold it yet (its plan was written by this run, after
    the last done marker), and with a transaction Delta 4.0 reconstructs the table's state to check it at every
    write (a "Compute snapshot" job; it does not take the transactions from the ``.crc``)."""
    settings = {_USER_METADATA: batch_marker(plan)}
    if recovering:
        settings.update({_TXN_APP: plan.app, _TXN_VERSION: str(plan.batch)})
    with session_conf(spark, settings):
        yield


def _append_logs(spark: SparkSession, output: DeltaOutput, plan: Plan, batch: Batch, *, recovering: bool) -> None:
    """Append the batch's rejects and change log; a ``recovering`` batch skips a table that has its commit."""
    step = time.monotonic()
    spark.sparkContext.setLocalProperty("spark.scheduler.pool", CHANGE_LOG_POOL)  # this thread's jobs
    named = _batch_options(plan, recovering=recovering)
    if batch.rejects and not (recovering and committed(spark, output.rejects, plan)):
        tables.rejects(batch.changes, plan.batch).write.format("delta").mode("append").options(**named) \
            .option(_STATS_COLUMNS, REJECTS_STATS).save(output.rejects)
    changes = tables.change_log(batch.changes)
    for topic in batch.topics:
        if recovering and committed(spark, output.changes(topic), plan):
            log.info("batch %s: change log of %s already has it", plan.batch, topic)
            continue
        changes.where(F.col("topic") == topic).write.format("delta").mode("append").partitionBy("date") \
            .options(**named).option(_STATS_COLUMNS, CHANGES_STATS).save(output.changes(topic))
    log.info("batch %s: change logs and rejects appended in %.1f s", plan.batch, time.monotonic() - step)


def _load_snapshots(spark: SparkSession, paths: list[str]) -> None:
    """Have Delta load the state of each latest-state table at ``paths`` that exists (the list of its files and
    their statistics, a Spark job over its log), as a ``DESCRIBE DETAIL`` does, while the batch is read: the
    table's change needs it (its delete asks for the number of files), and otherwise loaded it then, on the
    critical path. Delta keeps the state with the table's snapshot for the writes that follow. Best effort: a
    failure here is logged, and the write loads the state itself. (Measured against the threads alone: incremental
    runs 5.44 against 5.59 s, medians of 6, the rounds' spread larger; benchmarks/results.md 2026-11-30 12:35.)"""
    for path in paths:
        try:
            if DeltaTable.isDeltaTable(spark, path):
                DeltaTable.forPath(spark, path).detail().select("numFiles").first()
        except Exception as exc:  # noqa: BLE001 - only a head start; the writes load what they need themselves
            log.debug("could not load the Delta state of %s ahead of its write: %s", path, exc)


def _batch_options(plan: Plan, *, recovering: bool) -> dict[str, str]:
    """The write options that name ``plan``'s batch in a commit, as :func:`_transaction` does for the session
    (a write option wins over the session's setting)."""
    named = {"userMetadata": batch_marker(plan)}
    if recovering:
        named.update({"txnAppId": plan.app, "txnVersion": str(plan.batch)})
    return named


Change = tuple[str, int] | None  # ("new" | "merge", rows added to the table) when the write's metrics tell


def _merge_table(spark: SparkSession, output: DeltaOutput, plan: Plan, topic: str, prepared: Any,
                 stored: str | None, bound: Position | None, top: Position,
                 early: tuple[Decision, Any] | None, *, recovering: bool) -> tuple[str, Change, Position | None]:
    """Apply the batch to the latest-state table of ``topic`` from its deciding rows in
    :func:`tables.merge_documents`' shape (``bound``: a source position at or above every stored row's, None when
    not known; ``top``: one at or above every deciding row's, :attr:`Batch.newest`); returns the new parse schema
    (JSON), how many rows the table gained (None when not known: the table was rewritten, or a ``recovering``
    batch found its commit there) and the table's new bound. ``early``: the decision and replacement
    :func:`_begin_replacements` started for this table."""
    documents = prepared.where(F.col("op") != "d")
    path = output.table(topic)
    exists = DeltaTable.isDeltaTable(spark, path)
    small = sum(r.end - r.start for r in plan.ranges) <= SMALL_BATCH_RECORDS  # its keys are few enough to list
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
        merged, _ = table_schema(spark, documents, prepared, stored, plan.fmt)
        log.info("batch %s: table %s: latest events and parse schema in %.1f s", plan.batch, topic,
                 time.monotonic() - step)
        if not exists:
            tables.materialized(documents, merged).write.format("delta").mode("append") \
                .option(_STATS_COLUMNS, TABLE_STATS).save(path)
            return merged.json(), ("new", _rows_written(spark, path, documents, batch_marker(plan))), top
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
            _add_columns(spark, path, source)
            current = spark.read.format("delta").load(path)
        # same types in the same order: no cast in the MERGE (Delta's evolution cast makes null structs
        # structs of nulls)
        conformed = source.select(*(schemas.conform(F.col(f"`{f.name}`"), source.schema[f.name].dataType,
                                                    f.dataType).alias(f.name) for f in current.schema.fields))
        if small:
            decision = decision if decision is not None else decide(conformed, current, bound)
            gained = replace_keys(spark, path, decision, conformed, batch_marker(plan), started)
            started = None
            return merged.json(), (("merge", gained) if gained is not None else None), _later(bound, top)
        return merged.json(), _merge(spark, path, conformed), _later(bound, top)
    finally:
        abandon(started)


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
        with session_conf(spark, dict([_MATERIALIZE_SOURCE])):
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
