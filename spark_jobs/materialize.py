"""Materialize the connector's topics: one latest-state Parquet table per collection, a change log partitioned by
date and a rejects table, incrementally (each run reads only the records after the stored offsets).

Python API::

    from spark_jobs.materialize import MaterializeOptions, run
    summary = run(spark, MaterializeOptions("127.0.0.1:9092", "/data/out", pattern=r"demo\\..*"))

Command line (``python -m spark_jobs.materialize --help``; or ``spark-submit --jars <kafka jars>
spark_jobs/materialize.py ...``)::

    python -m spark_jobs.materialize --bootstrap-servers 127.0.0.1:9092 --topics-pattern 'demo\\..*' --output out
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a file by spark-submit: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from spark_jobs import schema as schemas
from spark_jobs import tables
from spark_jobs.decode import FORMATS, decode
from spark_jobs.kafka_source import SparkJobError, offset_ranges, read_range
from spark_jobs.store import OutputStore, State

__all__ = ["MaterializeOptions", "Summary", "main", "run"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MaterializeOptions:
    bootstrap_servers: str
    output: str
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    fmt: str = "auto"
    min_partitions: int | None = None
    kafka_options: dict[str, str] = field(default_factory=dict)


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


def run(spark: SparkSession, options: MaterializeOptions) -> Summary:
    """One incremental run: read the new records, update the tables, commit offsets last."""
    if options.fmt not in FORMATS:
        raise SparkJobError(f"unknown format {options.fmt!r}; expected one of {', '.join(FORMATS)}")
    started = time.monotonic()
    store = OutputStore(options.output)
    state = store.load()
    batch = state.batch + 1
    store.recover(batch)
    ranges = offset_ranges(spark, options.bootstrap_servers, topics=options.topics, pattern=options.pattern,
                           start=state.offsets)
    offsets = {**state.offsets}
    for r in ranges:
        offsets.setdefault(r.topic, {})[str(r.partition)] = r.end
    log.info("batch %s reads %s", batch, ", ".join(f"{r.topic}[{r.partition}] {r.start}..{r.end}" for r in ranges))
    if not any(r.end > r.start for r in ranges):
        return Summary(state.batch, 0, 0, 0, 0, {}, time.monotonic() - started)
    records = read_range(spark, options.bootstrap_servers, ranges, options.min_partitions, options.kafka_options)
    changes = decode(records, options.fmt).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        counts = changes.agg(
            F.count(F.lit(1)).alias("records"), F.count_if(F.col("reason").isNotNull()).alias("rejects"),
            F.count_if(F.col("reason").isNull() & F.col("tombstone")).alias("tombstones")).first()
        assert counts is not None
        tables.rejects(changes, batch).write.parquet(str(store.work / "rejects"))
        tables.change_log(changes).write.partitionBy("topic", "date").parquet(str(store.work / "changes"))
        latest = tables.latest_events(changes).persist(StorageLevel.MEMORY_AND_DISK)
        topics = sorted({r.topic for r in ranges if r.end > r.start})
        new_schemas, rows = dict(state.schemas), {}
        for topic in topics:
            parse_schema, count = _table(spark, store, topic, latest.where(F.col("topic") == topic),
                                         state.schemas.get(topic), options.fmt)
            new_schemas[topic], rows[topic] = parse_schema.json(), count
        latest.unpersist()
    finally:
        changes.unpersist()
    store.commit(State(batch, offsets, new_schemas, options.fmt), topics)
    log.info("batch %s committed to %s", batch, store.root)
    events = counts["records"] - counts["rejects"] - counts["tombstones"]
    return Summary(batch, counts["records"], events, counts["tombstones"], counts["rejects"], rows,
                   time.monotonic() - started)


def _table(spark: SparkSession, store: OutputStore, topic: str, latest: DataFrame,
           stored: str | None, fmt: str) -> tuple[StructType, int]:
    """Stage the new table of ``topic``; returns its parse schema and row count."""
    documents = tables.live_documents(latest)
    inferred = schemas.infer(spark, documents.select("_norm"))
    if fmt == "new-document-state":
        inferred = schemas.without_smt_fields(inferred)
    connect = [r[0] for r in latest.select("connect_schema").where(F.col("connect_schema").isNotNull())
               .distinct().collect()]
    if connect:
        inferred = schemas.mark_connect_types(inferred, connect)
    previous_schema = schemas.schema_from_json(stored) if stored else None
    merged = schemas.merge(previous_schema, inferred) if previous_schema is not None else inferred
    assert isinstance(merged, StructType)
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m spark_jobs.materialize", description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap-servers", required=True, help="Kafka bootstrap servers, host:port[,...]")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--topics", help="comma-separated topic names")
    which.add_argument("--topics-pattern", help=r"regular expression of topic names, e.g. 'demo\..*'")
    parser.add_argument("--output", required=True, help="output folder (tables, change log, rejects, offsets)")
    parser.add_argument("--format", default="auto", choices=FORMATS,
                        help="auto: Debezium envelope (JSON with or without schemas, CloudEvents); "
                             "new-document-state: records flattened by ExtractNewDocumentState")
    parser.add_argument("--min-partitions", type=int,
                        help="Spark's Kafka source minPartitions (default: Spark's default parallelism)")
    parser.add_argument("--master", default=None, help="Spark master when not run by spark-submit (local[2])")
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print N rows of each table afterwards")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from spark_jobs.session import session

    options = MaterializeOptions(
        args.bootstrap_servers, args.output,
        topics=tuple(t.strip() for t in (args.topics or "").split(",") if t.strip()), pattern=args.topics_pattern,
        fmt=args.format, min_partitions=args.min_partitions)
    try:
        spark = session(args.master)
        summary = run(spark, options)
    except SparkJobError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary, flush=True)
    if args.show:
        show(spark, options.output, args.show)
    return 0


def show(spark: SparkSession, output: str, rows: int) -> None:
    """Print each materialized table and the size of the change log."""
    store = OutputStore(output)
    folder = store.root / "tables"
    for path in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.endswith(".old")):
        table = spark.read.parquet(str(path))
        columns = [c for c in table.columns if c not in tables.META_COLUMNS or c == "_op"]
        print(f"\n== table {path.name} ({table.count()} rows)")
        table.select(*columns).orderBy("_id").show(rows, truncate=40)
    if store.changes.is_dir():
        log_table = spark.read.parquet(str(store.changes))
        print(f"== change log: {log_table.count()} events")
        log_table.groupBy("topic", "date", "op").count().orderBy("topic", "date", "op").show(50, truncate=False)


if __name__ == "__main__":
    sys.exit(main())
