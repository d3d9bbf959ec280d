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

The batches' names in the commits: :mod:`spark_jobs.delta_commits`. The latest-state table costs what the changes
cost (:mod:`spark_jobs.delta_latest`): a small batch (:data:`SMALL_BATCH_RECORDS`) replaces its keys' rows in one
commit, the stored rows' delete started on a thread of its own as soon as the batch is read
(:mod:`spark_jobs.delta_replace`), its new rows typed with the stored parse schema and written while the batch's
parse schema is inferred; a larger one runs a ``MERGE INTO``, which rewrites only the files holding the
keys of the batch. Either way deletion vectors mark the old rows. When a batch widens the type of an existing
column (long + double -> double, conflicting types -> string), the table is rewritten once with the wider types,
from ``_raw``.
"""

from __future__ import annotations

import logging
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from delta.tables import DeltaTable
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

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
)
from spark_jobs.delta_batches import DeltaOutput, Done, Plan
from spark_jobs.delta_commits import batch_options, committed, transaction
from spark_jobs.delta_latest import STATS_COLUMNS, merge_table
from spark_jobs.delta_replace import NO_POSITION, Decision, abandon, begin, lists_files
from spark_jobs.kafka_source import SparkJobError, offset_ranges

__all__ = ["DeltaOutput", "run"]

log = logging.getLogger(__name__)

_DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
_SNAPSHOT_PARTITIONS = "spark.databricks.delta.snapshotPartitions"
# File statistics of the append-only tables: their small columns, not the documents' text (min/max of 1 KB
# strings is most of the cost of writing them, and no query skips files by a document's text)
CHANGES_STATS = "topic,key,op,ts,source_ts,ord,txn_number,partition,offset,kafka_ts"
REJECTS_STATS = "topic,partition,offset,kafka_ts,key,reason,batch"
# A date-partitioned append writes each date's rows through its own open file instead of sorting the batch
# (documents and all) by date first; beyond this many dates in one task Spark sorts again. Set for the whole batch
# (only the change logs are partitioned).
_CONCURRENT_WRITERS = {"spark.sql.maxConcurrentOutputFileWriters": "32"}
# Delta lists a table's files in its checksum files up to this many files (its default: 50), where a small
# batch's change of a latest-state table takes them from (spark_jobs/java's KeyReplacement): a table that gains a
# file each run would otherwise pass 50 after about 45 incremental runs and go back to a log replay each run. A
# checksum file then holds up to ~1 MB (~850 bytes a file). Set for the batch when the session does not set it.
CHECKSUM_FILES = ("spark.databricks.delta.allFilesInCrc.thresholdNumFiles", "1000")
# The fair scheduler pool of the change logs' appends (spark_jobs/fairscheduler.xml, which a session
# spark_jobs.session starts schedules by): under Spark's FIFO scheduling the appends' tasks, submitted first, took
# both cores while the tables' jobs waited, and the tables' skewed stages then ran alone on one core. Full runs of
# 508,090 records in one JVM with fair scheduling, 4 variants rotating (medians of the last 3 of 4 rounds): 6 read
# partitions with the pool 16.6 s, without it 19.4 s; 2 partitions with it 18.3 s, without it 18.8 s
# (benchmarks/results.md 2026-11-30 13:32).
CHANGE_LOG_POOL = "spark_jobs.change_log"


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
                           start=done.offsets, options=options.kafka_options)
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
    """Apply one batch (a small one without adaptive execution, and as its JVM's first without code generation: see
    :func:`small_batch_settings`; its Parquet files written with :data:`PARQUET_WRITE`)."""
    with small_batch_settings(spark, plan.records), \
            session_conf(spark, {**PARQUET_WRITE, **_CONCURRENT_WRITERS, **_checksum_files(spark)}):
        return _apply_batch(spark, options, output, plan, done, recovering=recovering)


def _checksum_files(spark: SparkSession) -> dict[str, str]:
    """:data:`CHECKSUM_FILES` unless the session sets that threshold itself."""
    return {} if spark.conf.get(CHECKSUM_FILES[0], None) is not None else dict([CHECKSUM_FILES])


def _apply_batch(spark: SparkSession, options: MaterializeOptions, output: DeltaOutput, plan: Plan,
                 done: Done, *, recovering: bool) -> tuple[Summary, Done]:
    """Apply one batch. The row count of each table is carried from the last done marker and the writes'
    metrics; when a write may have been skipped as already committed (``recovering``) it is counted instead."""
    log.info("batch %s reads %s", plan.batch,
             ", ".join(f"{r.topic}[{r.partition}] {r.start}..{r.end}" for r in plan.ranges if r.end > r.start))
    counted: Future[Batch] = Future()
    appended: list[Future[None]] = []
    small = plan.records <= SMALL_BATCH_RECORDS

    # The change logs and rejects are appended on a thread of their own while this one counts the batch and updates
    # the tables: each side's driver work (plans, Delta's log and commits) and its skewed or small stages leave a
    # core idle that the other fills. The appends name the batch by write options, not by the session's settings,
    # which the table side changes (see add_columns). Alternating in one JVM against the appends first (7 rounds,
    # medians of the last 6): incremental runs of 5,082 records 7.29 s against 8.19 s, full runs of 508,090 25.6 s
    # against 28.1 s (benchmarks/results.md 2026-11-30 12:30). They start once the batch's rows are defined, before
    # the counts job builds their cache (see read_batch's ``defined``), the rejects, which need the counts, last: a
    # small batch's change log is planned while the counts run and written from the cache as soon as it is built.
    # Incremental runs of 5,082 records alternating in one JVM against starting after the counts: 1.36 against
    # 1.56 s, JVM CPU 2.25 against 2.58 s (medians of the last 4 of 8 rounds, lower in 4 of 4; benchmarks/results.md
    # 2026-12-02 17:51)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="spark-jobs-change-log") as appender:

        def append(changes: DataFrame) -> None:
            appended.append(appender.submit(_append_logs, spark, output, plan, changes, counted, small=small,
                                            recovering=recovering))

        try:
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="spark-jobs-snapshots") as warming:
                warming.submit(_load_snapshots, spark,
                               [output.table(t) for t in sorted({r.topic for r in plan.ranges})], small=small)
                batch = read_batch(spark, options, plan.ranges, plan.fmt, None if recovering else done.positions,
                                   None if recovering else done.schemas, defined=append)
        except BaseException as exc:
            counted.set_exception(exc)  # the appends stop before the rejects; the block waits for them
            raise
        counted.set_result(batch)
        if not appended:  # read_batch gives its rows to ``defined`` once; never a batch without its change log
            append(batch.changes)
        log.info("batch %s: %s records decoded in %.1f s", plan.batch, batch.records,
                 time.monotonic() - batch.started)
        new_schemas, rows, positions = dict(done.schemas), dict(done.rows), dict(done.positions)
        early: dict[str, tuple[Decision, Any]] = {}
        try:
            early = _begin_replacements(spark, output, batch)
            with transaction(spark, plan, recovering=recovering):
                # the deciding rows of every topic, cached once in the MERGE source's shape: a cache of the latest
                # events and then one per topic in that shape built the documents' cache twice (with the hashed
                # positions of tables.last_positions: the full run's latest events and parse schema step 5.5 s of
                # JVM CPU against 7.9 s, medians of 3 interleaved full runs; benchmarks/results.md 2026-11-29)
                latest = tables.merge_documents(
                    tables.latest_events(batch.changes, broadcast=batch.broadcast_positions,
                                         one_partition=batch.one_partition, carried=batch.small))
                if not _read_once(batch, early, recovering=recovering):
                    latest = latest.persist(CACHE)
                try:
                    for topic in batch.topics:
                        step = time.monotonic()
                        new_schemas[topic], change, bound = merge_table(
                            spark, output, plan, topic, latest.where(F.col("topic") == topic),
                            done.schemas.get(topic), done.positions.get(topic), batch.newest.get(topic, NO_POSITION),
                            early.pop(topic, None), recovering=recovering, gathered=batch.gathered,
                            fits=topic in batch.fitting)
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
                for future in appended:  # raises what the appends raised (the block waits for them in any case)
                    future.result()
        finally:
            for _, started in early.values():  # a topic the loop did not reach (it failed before)
                abandon(started)
            for future in appended:  # the cache stays until the appends are done with it
                future.exception()
            batch.release()
    offsets = {topic: dict(partitions) for topic, partitions in done.offsets.items()}
    for r in plan.ranges:
        offsets.setdefault(r.topic, {})[str(r.partition)] = r.end
    committed = Done(plan.batch, plan.app, offsets, new_schemas, rows, positions)
    output.commit(committed)
    log.info("batch %s committed to %s", plan.batch, output.root)
    return batch.summary(plan.batch, {t: n for t, n in rows.items() if t in batch.topics}), committed


def _read_once(batch: Batch, early: dict[str, tuple[Decision, Any]], *, recovering: bool) -> bool:
    """Whether the batch's latest events are read by one job alone: a small batch of one topic whose documents fit
    its stored parse schema (:attr:`Batch.fitting`: no inference reads them) and whose table's change started
    early (the delete needs the batch's keys alone): the typed write of its new rows is the one reader. Caching
    them then costs a columnar copy, its size estimates and its plan, and saves nothing."""
    return batch.small and not recovering and len(batch.topics) == 1 and batch.topics[0] in batch.fitting \
        and batch.topics[0] in early


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


def _append_logs(spark: SparkSession, output: DeltaOutput, plan: Plan, changes: DataFrame, counted: Future[Batch],
                 *, small: bool, recovering: bool) -> None:
    """Append the batch's change log (from its rows ``changes``) and then its rejects (once ``counted`` says there are
    any); a ``recovering`` batch skips a table that has its commit."""
    step = time.monotonic()
    spark.sparkContext.setLocalProperty("spark.scheduler.pool", CHANGE_LOG_POOL)  # this thread's jobs
    named = batch_options(plan, recovering=recovering)
    events = tables.change_log(changes)
    for topic in sorted({r.topic for r in plan.ranges if r.end > r.start}):
        if recovering and committed(spark, output.changes(topic), plan):
            log.info("batch %s: change log of %s already has it", plan.batch, topic)
            continue
        rows = events.where(F.col("topic") == topic)
        if small:
            # one file per date (and its latest-state table's rows one file, see delta_replace.replace_keys) in one
            # task, not one per read partition: each incremental run adds fewer files for later scans, and its
            # writes run fewer tasks. Incremental runs of 5,082 records alternating in one JVM: JVM CPU medians
            # 4.53 against 5.04 s (wall 4.38 against 4.77 s, a loaded machine), 3 files added instead of 6;
            # tables and change logs equal (benchmarks/results.md 2026-12-01 06:50)
            rows = rows.coalesce(1)
        rows.write.format("delta").mode("append").partitionBy("date") \
            .options(**named).option(STATS_COLUMNS, CHANGES_STATS).save(output.changes(topic))
    batch = counted.result()
    if batch.rejects and not (recovering and committed(spark, output.rejects, plan)):
        tables.rejects(batch.changes, plan.batch).write.format("delta").mode("append").options(**named) \
            .option(STATS_COLUMNS, REJECTS_STATS).save(output.rejects)
    log.info("batch %s: change logs and rejects appended in %.1f s", plan.batch, time.monotonic() - step)


def _load_snapshots(spark: SparkSession, paths: list[str], *, small: bool) -> None:
    """Have Delta load the state of each latest-state table at ``paths`` that exists (the list of its files and
    their statistics, a Spark job over its log), as a ``DESCRIBE DETAIL`` does, while the batch is read: the
    table's change needs it (its delete asks for the number of files), and otherwise loaded it then, on the
    critical path. Delta keeps the state with the table's snapshot for the writes that follow. Best effort: a
    failure here is logged, and the write loads the state itself. (Measured against the threads alone: incremental
    runs 5.44 against 5.59 s, medians of 6, the rounds' spread larger; benchmarks/results.md 2026-11-30 12:35.)
    A ``small`` batch's change of a table whose checksum file lists its files does not need the state
    (:func:`spark_jobs.delta_replace.lists_files`): it is not loaded."""
    for path in paths:
        try:
            if DeltaTable.isDeltaTable(spark, path) and not (small and lists_files(spark, path)):
                DeltaTable.forPath(spark, path).detail()  # the command runs here (a command is run eagerly)
        except Exception as exc:  # noqa: BLE001 - only a head start; the writes load what they need themselves
            log.debug("could not load the Delta state of %s ahead of its write: %s", path, exc)


