"""What every table format shares in one batch of a run: the options, the decoded change rows of the Kafka
records read, their counts, the parse schema of a collection's documents, and the summary of the run."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from spark_jobs import schema as schemas
from spark_jobs import tables
from spark_jobs.decode import decode, jvm_functions, schema_prefix
from spark_jobs.kafka_source import KafkaRange, read_range

log = logging.getLogger(__name__)

__all__ = ["CACHE", "CODEGEN_CACHE", "PARQUET_WRITE", "PREFIX_SAMPLE", "RAN", "SMALL_BATCH_RECORDS", "TABLE_FORMATS",
           "Batch", "MaterializeOptions", "Summary", "generated_code_pays", "read_batch", "schema_prefixes",
           "session_conf", "small_batch_settings", "table_schema"]

TABLE_FORMATS = ("delta", "parquet")
# Up to this many records a batch's last position per key is broadcast (a row of ~60 bytes per key): beyond it
# the driver would hold too much, and Spark's shuffle join is used.
BROADCAST_RECORDS = 2_000_000
# A batch of up to this many records is a small one. It runs without adaptive query execution, whose re-planning
# between the stages of so small a batch costs more driver time than it saves (benchmarks/results.md,
# 2026-11-28), and, as a JVM's first batch, without Spark's code generation: compiling each plan's generated Java
# with Janino in a new JVM costs more than interpreted expressions for so few rows (an incremental run of 5,082
# records as the command line runs it: 12.1-14.7 s against 10.2-10.3 s; benchmarks/results.md 2026-12-02).
# Later small batches in the JVM (--interval, a notebook's session) run the generated code, whose classes Spark
# keeps (:data:`CODEGEN_CACHE`) and the JIT has compiled: the same plans' classes are not compiled again.
SMALL_BATCH_RECORDS = 25_000
_NO_AQE = {"spark.sql.adaptive.enabled": "false"}
_INTERPRETED = {**_NO_AQE, "spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
# Spark's cache of the classes it generated, JVM-wide (a static setting): its default of 100 is less than a full
# and a small batch generate together (56 each here), so small batches after full ones compiled 44-49 of their
# classes again every run (3.2-3.7 s a run against 2.1-2.5 s with 1,000 entries; benchmarks/results.md
# 2026-12-02). Set in the local sessions (spark_jobs.session); a small batch runs generated code only with it
# (:func:`generated_code_pays`).
CODEGEN_CACHE = ("spark.sql.codegen.cache.maxEntries", "1000")
RAN = "spark_jobs.batch.ran"  # a system property of the JVM once a batch ran in it

# The batch's decoded rows are cached without the columnar cache's compression: its schemes (dictionary, run
# length) do not shrink the documents' text, the bulk of the rows, but gathering their statistics hashes every
# value: decoding and caching 203,090 records took 16 % less JVM CPU without, 5 of 5 interleaved rounds
# (benchmarks/results.md, 2026-11-28 19:36)
_UNCOMPRESSED_CACHE = {"spark.sql.inMemoryColumnarStorage.compressed": "false"}
# Every cache of a run keeps its columnar batches as objects (what ``DataFrame.cache()`` does): PySpark's
# MEMORY_AND_DISK is the serialized level, which writes each batch through Java serialization when it is built
# and reads it back through it at every scan (decoding and caching 508,090 records, then counting them, writing the
# change log and finding the latest events from the cache: medians of 3 interleaved rounds 20.0 s of JVM CPU
# against 21.6 s, lower in 2 of the 3; benchmarks/results.md 2026-11-29)
CACHE = StorageLevel.MEMORY_AND_DISK_DESER
# Parquet writes of a run: a column's dictionary is given up once it holds 16 KB instead of 1 MB. The documents'
# text, the keys and the positions are all but unique: their dictionaries grew to 1 MB (hashing every value) before
# Parquet fell back to plain pages; a column of few values still gets its dictionary. Writing the change log of
# 500,000 events took 4.2 s of JVM CPU against 6.1 s, the new table of 91,910 documents 3.1 s against 3.9 s
# (medians of 3 interleaved rounds; dictionaries off altogether: 4.9 s and 3.3 s; benchmarks/results.md 2026-11-29)
PARQUET_WRITE = {"parquet.dictionary.page.size": "16384"}
# A large batch is read in this many Spark partitions per core (unless ``min_partitions`` says otherwise): tasks a
# third the size let the change logs' appends and the latest-state tables' jobs, which run at once
# (spark_jobs.delta_output), share the cores finely, and the latest events, most of them in the later offsets of
# a topic, spread over several tasks instead of one. Full runs of 508,090 records in one JVM, fair scheduling,
# variants rotating (medians of the last 3 of 4 rounds): 16.6 s against 18.3 s with 2 partitions
# (benchmarks/results.md 2026-11-30 13:32).
LARGE_BATCH_SPLITS = 3
# A large batch of the ``auto`` format decoded without the JVM payload function (which finds the prefix itself)
# first reads the last few records of each topic for their values' schema prefix (:func:`spark_jobs.decode.decode`):
# one small job, which a batch of at most SMALL_BATCH_RECORDS would not win back
PREFIX_SAMPLE = 4


@dataclass(frozen=True)
class MaterializeOptions:
    bootstrap_servers: str
    output: str
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    fmt: str = "auto"
    min_partitions: int | None = None
    kafka_options: dict[str, str] = field(default_factory=dict)
    table_format: str = "delta"


@dataclass(frozen=True)
class Summary:
    """What one run did."""

    batch: int
    records: int
    events: int
    tombstones: int
    rejects: int
    table_rows: dict[str, int]
    seconds: float

    def __str__(self) -> str:
        rows = ", ".join(f"{t}: {n}" for t, n in sorted(self.table_rows.items())) or "none"
        return (f"batch {self.batch}: {self.records} records read, {self.events} change events, "
                f"{self.tombstones} tombstones, {self.rejects} rejected; table rows: {rows} "
                f"({self.seconds:.1f} s)")

    def then(self, later: Summary) -> Summary:
        """This run's work followed by ``later``'s (a recovered batch, then a new one)."""
        return Summary(later.batch, self.records + later.records, self.events + later.events,
                       self.tombstones + later.tombstones, self.rejects + later.rejects,
                       {**self.table_rows, **later.table_rows}, self.seconds + later.seconds)


@dataclass(frozen=True)
class Batch:
    """The decoded change rows of one batch (persisted until :meth:`release`) and their counts."""

    changes: DataFrame
    records: int
    rejects: int
    tombstones: int
    topics: tuple[str, ...]
    started: float
    one_partition: bool = False  # at most one Kafka partition of each topic read (tables.last_positions)
    gathered: bool = False  # every row in one Spark partition (a small batch, see read_batch)
    blocks: Any = None  # the JVM RDD of ``changes``' local checkpoint (see :func:`read_batch`); None: a cache
    # per topic, the newest source position (``ts_ms``, ``ord``) of its rows that decide a key's state (see
    # tables.latest_events; none: no such row has one), found with the counts: at or above the position of every
    # row the batch leaves in a latest-state table
    newest: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    # the topics of a small batch given their tables' bounds (see :func:`read_batch`) none of whose deciding rows
    # is older than that bound: every change the batch makes to their tables applies
    newer: frozenset[str] = frozenset()
    # the topics of a small batch given their stored parse schemas (see :func:`read_batch`) every document of whose
    # deciding rows fits it (:func:`spark_jobs.schema.fits`): the batch's parse schema is the stored one
    fitting: frozenset[str] = frozenset()
    cached: DataFrame | None = None  # the frame persisted, when ``changes`` reads its cache directly (see read_batch)

    @property
    def events(self) -> int:
        return self.records - self.rejects - self.tombstones

    @property
    def broadcast_positions(self) -> bool:
        return self.records <= BROADCAST_RECORDS

    @property
    def small(self) -> bool:
        """At most :data:`SMALL_BATCH_RECORDS` records."""
        return self.records <= SMALL_BATCH_RECORDS

    @property
    def checkpointed(self) -> bool:
        return self.blocks is not None

    def release(self) -> None:
        if self.blocks is not None:  # the checkpoint's blocks belong to its RDD, not to a frame's cache
            self.blocks.unpersist(False)
        else:
            (self.cached if self.cached is not None else self.changes).unpersist()

    def summary(self, batch: int, rows: dict[str, int]) -> Summary:
        return Summary(batch, self.records, self.events, self.tombstones, self.rejects, rows,
                       time.monotonic() - self.started)


@contextmanager
def small_batch_settings(spark: SparkSession, records: int) -> Iterator[None]:
    """Inside, when ``records`` is at most :data:`SMALL_BATCH_RECORDS`: no adaptive query execution, and no code
    generation either unless it pays (:func:`generated_code_pays`). Afterwards the session's own settings are back
    and the JVM has run a batch."""
    try:
        if records > SMALL_BATCH_RECORDS:
            yield
            return
        with session_conf(spark, _NO_AQE if generated_code_pays(spark) else _INTERPRETED):
            yield
    finally:
        spark._jvm.java.lang.System.setProperty(RAN, "true")  # type: ignore[union-attr]


def generated_code_pays(spark: SparkSession) -> bool:
    """Whether a small batch runs Spark's generated code: when its JVM has run a batch already and Spark keeps at
    least :data:`CODEGEN_CACHE` generated classes (see :data:`SMALL_BATCH_RECORDS`)."""
    if spark._jvm.java.lang.System.getProperty(RAN) is None:  # type: ignore[union-attr]
        return False
    kept = spark.conf.get(CODEGEN_CACHE[0], None)
    return kept is not None and kept.isdigit() and int(kept) >= int(CODEGEN_CACHE[1])


@contextmanager
def session_conf(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """``settings`` for the work inside, the session's own values back afterwards."""
    before: dict[str, str | None] = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


def read_batch(spark: SparkSession, options: MaterializeOptions, ranges: Sequence[KafkaRange], fmt: str,
               bounds: Mapping[str, tuple[int, int | None]] | None = None,
               stored: Mapping[str, str] | None = None,
               defined: Callable[[DataFrame], None] | None = None) -> Batch:
    """Read and decode the records of ``ranges``; the change rows are kept for the batch's writes.
    ``defined``: called once with the change rows (:attr:`Batch.changes`) before this returns; for a cached batch
    before the counts job that builds their cache: jobs another thread submits from there share the cache's blocks
    (Spark's block locks: a task waits for the one building a block, then reads it), and their planning overlaps
    the counts.

    ``bounds``: per topic, a source position at or above every row of its latest-state table. For a small batch
    the counts job also counts, per topic with a bound, the rows deciding a key that are older than the bound
    (:func:`tables.applies`): with none, every change the batch makes to that table applies (:attr:`Batch.newer`),
    known before the latest events are found. ``stored``: per topic, its table's parse schema (JSON); for a small
    batch the counts job also counts, per topic with one, the documents that do not surely fit it
    (:func:`spark_jobs.schema.fits`): with none, the batch's parse schema is the stored one (:attr:`Batch.fitting`),
    and no inference job reads the documents again. Incremental runs of 5,082 records alternating in one JVM:
    1.53 against 1.69 s, JVM CPU 2.33 against 2.77 s (medians of the last 4 of 8 rounds, lower in 4 of 4;
    benchmarks/results.md 2026-12-02).

    A large batch on a local master keeps them as a local checkpoint: each row copied once as Spark's binary row,
    where the cache converts the rows into columnar batches and back at every read. Full runs of 1,026,344
    records, alternating in one JVM: 31.1 s against 36.5 s, 50.9 s of JVM CPU against 58.3 s (medians of the last
    3 of 4 rounds, each checkpoint run faster; at 513,172 records, whose cache fits in a 2 GB driver's storage
    memory, no difference: benchmarks/results.md 2026-11-30). A local checkpoint has no
    lineage: a lost executor's blocks cannot be computed again, which on a local master (driver and executor in
    one JVM) costs nothing, so a cluster's batch is cached as before; and a small batch, whose cache costs little,
    keeps the cache's size statistics for Spark's join choices.

    The checkpoint's partitions are then read in reverse order (:func:`reversed_partitions`): the latest events
    of a topic are mostly in its later offsets (the last read partition held ~40 % of the benchmark's latest
    rows), and the stages over them (the latest rows, the parse schema's inference, the table's write) ended with
    that partition's task alone on one core; longest first, the smaller tasks fill the other core. Full runs of
    508,090 records alternating in one JVM: 9.74 s against 10.18 s (medians of the last 6 of 7 rounds, lower in
    5 of 6 pairs; benchmarks/results.md 2026-11-30 23:00).

    A small batch (unless ``min_partitions`` says otherwise) is read into one Spark partition (:attr:`Batch.gathered`):
    its cache then tells Spark that its rows are in one partition, and no stage after it shuffles them (the counts'
    aggregate, the latest events', the new rows gathered into one file); the parallelism is the batch's jobs
    running at once (the change log, the delete, the latest-state table). Incremental runs of 5,082 records
    alternating in one JVM against 2 read partitions: 1.45 against 1.66 s, JVM CPU 2.35 against 2.86 s (medians of
    the last 4 of 8 rounds, lower in 4 of 4; benchmarks/results.md 2026-12-02)."""
    started = time.monotonic()
    large = sum(r.end - r.start for r in ranges) > SMALL_BATCH_RECORDS
    # the JVM payload function passes over the schema member by itself (spark_jobs.decode): no sample read for it
    functions = jvm_functions(spark)  # registered once for the batch's decode and its fit check
    sample = fmt == "auto" and large and not functions
    prefixes = schema_prefixes(spark, options, ranges) if sample else {}
    partitions = options.min_partitions
    if partitions is None and large:
        partitions = LARGE_BATCH_SPLITS * spark.sparkContext.defaultParallelism
    gathered = partitions is None and not large
    records = read_range(spark, options.bootstrap_servers, ranges, 1 if gathered else partitions,
                         options.kafka_options)
    if gathered:
        records = records.coalesce(1)
    checkpoint = large and (spark.sparkContext.master or "").startswith("local")
    with session_conf(spark, _UNCOMPRESSED_CACHE):  # read when the cache's plan is made and its batches built
        decoded = decode(records, fmt, prefixes, functions)
        # built by the first job over it, the counts below
        changes = decoded.localCheckpoint(False, CACHE) if checkpoint else decoded.persist(CACHE)
        blocks = changes._jdf.queryExecution().logical().rdd() if checkpoint else None
        cached = None if checkpoint else changes
        if cached is None:
            changes = reversed_partitions(changes)
        else:
            changes = cache_relation(cached)  # the batch's queries read the cache as a leaf
            if defined is not None:
                defined(changes)
        read = [r.topic for r in ranges if r.end > r.start]
        topics = tuple(sorted(set(read)))
        deciding = F.col("reason").isNull() & tables.decides()
        positioned = deciding & F.col("source_ts_ms").isNotNull()
        bounded = [] if large else [(i, topic, bounds[topic]) for i, topic in enumerate(topics)
                                    if bounds and topic in bounds]
        checked = [] if large or not stored or fmt == "new-document-state" or not functions else [
            (i, topic, stored[topic]) for i, topic in enumerate(topics)
            if topic in stored and schemas.in_order(schemas.schema_from_json(stored[topic]))]
        counts = changes.agg(
            F.count(F.lit(1)).alias("records"), F.count_if(F.col("reason").isNotNull()).alias("rejects"),
            F.count_if(F.col("reason").isNull() & F.col("tombstone")).alias("tombstones"),
            *(F.max(F.when(positioned & (F.col("topic") == topic), F.struct("source_ts_ms", "source_ord")))
              .alias(f"newest{i}") for i, topic in enumerate(topics)),
            *(F.count_if(deciding & (F.col("topic") == topic) & ~tables.applies(
                F.col("source_ts_ms"), F.col("source_ord"), F.lit(bound[0]), F.lit(bound[1]).cast("bigint")))
              .alias(f"older{i}") for i, topic, bound in bounded),
            *(F.count_if(deciding & (F.col("topic") == topic) & F.col("after").isNotNull()
                         & ~schemas.fits(schemas.normalize(F.col("after")), schema))
              .alias(f"misfit{i}") for i, topic, schema in checked)).first()
    assert counts is not None
    newest = {topic: (int(counts[f"newest{i}"][0]),
                      None if counts[f"newest{i}"][1] is None else int(counts[f"newest{i}"][1]))
              for i, topic in enumerate(topics) if counts[f"newest{i}"] is not None}
    newer = frozenset(topic for i, topic, _ in bounded if counts[f"older{i}"] == 0)
    fitting = frozenset(topic for i, topic, _ in checked if counts[f"misfit{i}"] == 0)
    if checkpoint and defined is not None:  # built by the counts' job (a checkpoint's blocks are not shared so)
        defined(changes)
    return Batch(changes, counts["records"], counts["rejects"], counts["tombstones"], topics, started,
                 len(read) == len(topics), gathered, blocks, newest, newer, fitting, cached)


def cache_relation(persisted: DataFrame) -> DataFrame:
    """A frame over the cache of ``persisted`` itself (Spark's ``InMemoryRelation``, a leaf), not over the plan it
    caches; ``persisted`` itself when Spark does not find its cache (or its classes are not the ones looked for).

    Every query over a persisted frame carries the plan it caches (here the batch's decode: a hundred-odd
    expressions) through each step of its analysis, and Spark's cache manager then finds the cached part of it by
    comparing canonicalized plans; a query over the relation itself has a leaf there. The batch's frames (counts,
    change log, keys, latest events) are all built on it. Incremental runs of 5,082 records alternating in one JVM
    (14 rounds): JVM CPU 2.09 against 2.31 s (medians of the last 7), faster in 9 of the 13 rounds after the first,
    the JVM's early small runs most (rounds 2-7: 2.08 / 1.53 / 1.76 / 1.43 / 1.35 / 1.36 s against 2.39 / 1.92 /
    1.68 / 1.56 / 1.79 / 1.46 s; benchmarks/results.md 2026-12-02 18:53)."""
    spark = persisted.sparkSession
    try:
        found = spark._jsparkSession.sharedState().cacheManager().lookupCachedData(persisted._jdf)
        if not found.isDefined():
            return persisted
        relation = found.get().cachedRepresentation()
        return DataFrame(spark._jvm.org.apache.spark.sql.classic.Dataset.ofRows(  # type: ignore[union-attr]
            spark._jsparkSession, relation), spark)
    except Exception as exc:  # noqa: BLE001 - py4j: Spark's internal classes differ; the persisted frame serves
        log.debug("the cache of the batch's rows is read through their plan: %s", exc)
        return persisted


def reversed_partitions(checkpointed: DataFrame) -> DataFrame:
    """``checkpointed`` (a local checkpoint) with its partitions in reverse order (``spark_jobs/java``'s
    ``ReversedPartitions``); as it is when the session's class path does not have that class."""
    jvm = checkpointed.sparkSession._jvm
    try:
        reversed_frame = jvm.spark_jobs.batch.ReversedPartitions.of(checkpointed._jdf)  # type: ignore[union-attr]
    except Exception as exc:  # noqa: BLE001 - py4j: the class is not there (a JavaPackage, not callable) or fails
        log.info("batch partitions kept in offset order: %s", str(exc).splitlines()[0] if str(exc) else exc)
        return checkpointed
    return DataFrame(reversed_frame, checkpointed.sparkSession)


def schema_prefixes(spark: SparkSession, options: MaterializeOptions, ranges: Sequence[KafkaRange]) -> dict[str, str]:
    """Per topic, the :func:`spark_jobs.decode.schema_prefix` most of the last :data:`PREFIX_SAMPLE` records of its
    largest range begin with (a topic whose values have none, e.g. JSON without schemas, has no entry)."""
    largest: dict[str, KafkaRange] = {}
    for r in sorted((r for r in ranges if r.end > r.start), key=lambda r: r.end - r.start):
        largest[r.topic] = r
    if not largest:
        return {}
    sample = [KafkaRange(r.topic, r.partition, max(r.start, r.end - PREFIX_SAMPLE), r.end) for r in largest.values()]
    rows = read_range(spark, options.bootstrap_servers, sample, options.min_partitions, options.kafka_options) \
        .select("topic", F.col("value").cast("string")).collect()
    found: dict[str, Counter[str]] = {}
    for topic, value in rows:
        prefix = schema_prefix(value)
        if prefix is not None:
            found.setdefault(topic, Counter())[prefix] += 1
    return {topic: counts.most_common(1)[0][0] for topic, counts in found.items()}


def table_schema(spark: SparkSession, documents: DataFrame, latest: DataFrame, stored: str | None,
                 fmt: str) -> tuple[StructType, StructType | None]:
    """The parse schema of a collection after this batch (the stored one evolved with the batch's documents:
    fields only added, types only widened) and the stored one (None for a new table)."""
    # a field null in every document of the batch does not widen a stored column (see schemas.infer)
    inferred = schemas.infer(spark, documents.select("_norm"), keep_all_null=stored is None)
    if fmt == "new-document-state":
        inferred = schemas.without_smt_fields(inferred)
    connect = [] if fmt != "new-document-state" else [  # only that format carries the documents' Connect schemas
        r[0] for r in latest.select("connect_schema").where(F.col("connect_schema").isNotNull()).distinct().collect()]
    if connect:
        inferred = schemas.mark_connect_types(inferred, connect)
    previous = schemas.schema_from_json(stored) if stored else None
    merged = schemas.merge(previous, inferred) if previous is not None else inferred
    assert isinstance(merged, StructType)
    return merged, previous
