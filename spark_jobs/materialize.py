"""Materialize the connector's topics: one latest-state table per collection, a change log partitioned by date and
a rejects table, incrementally (each run reads only the records after the stored offsets): Delta Lake tables
updated with MERGE, exactly once, on any Hadoop path (:mod:`spark_jobs.delta_output`, the default), or plain
Parquet folders on a local path (``--table-format parquet``, :mod:`spark_jobs.parquet_output`).

Python API::

    from spark_jobs.materialize import MaterializeOptions, run
    summary = run(spark, MaterializeOptions("127.0.0.1:9092", "/data/out", pattern=r"demo\\..*"))

Command line (``python -m spark_jobs.materialize --help``; or ``spark-submit --jars <kafka jars>
spark_jobs/materialize.py ...``)::

    python -m spark_jobs.materialize --bootstrap-servers 127.0.0.1:9092 --topics-pattern 'demo\\..*' --output out

``--interval SECONDS`` runs again and again in the same process (:mod:`spark_jobs.schedule`).
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from pathlib import Path

if __package__ in (None, ""):  # run as a file by spark-submit: make the package importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pyspark.sql import DataFrame, SparkSession

from connect.config.properties import load_properties
from spark_jobs import delta_output, parquet_output, schedule, tables
from spark_jobs.batch import TABLE_FORMATS, MaterializeOptions, Summary
from spark_jobs.decode import FORMATS
from spark_jobs.hadoop_fs import qualified
from spark_jobs.kafka_source import SparkJobError, check_kafka_options
from spark_jobs.store import OutputStore

__all__ = ["MaterializeOptions", "Summary", "main", "run"]

log = logging.getLogger(__name__)


def run(spark: SparkSession, options: MaterializeOptions) -> Summary:
    """One incremental run: read the new records, update the tables, commit offsets with them."""
    if options.fmt not in FORMATS:
        raise SparkJobError(f"unknown format {options.fmt!r}; expected one of {', '.join(FORMATS)}")
    check_kafka_options(options.kafka_options)
    if options.table_format == "delta":
        return delta_output.run(spark, options)
    if options.table_format == "parquet":
        if not qualified(options.output).startswith("file:"):
            raise SparkJobError(f"--table-format parquet writes to a local path only, not {options.output}; "
                                "use the delta table format for other file systems")
        return parquet_output.run(spark, options)
    raise SparkJobError(f"unknown table format {options.table_format!r}; expected one of {', '.join(TABLE_FORMATS)}")


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
    parser.add_argument("--table-format", default="delta", choices=TABLE_FORMATS,
                        help="delta (default): Delta Lake tables updated with MERGE, exactly once, on any Hadoop "
                             "path; parquet: plain Parquet folders rewritten each run, local paths only")
    parser.add_argument("--min-partitions", type=int,
                        help="Spark's Kafka source minPartitions (default: Spark's default parallelism, three "
                             "times that for a batch of more than 25,000 records)")
    parser.add_argument("--kafka-properties", metavar="FILE",
                        help="a Kafka client properties file (as Kafka's tools' --command-config): security.protocol, "
                             "sasl.*, ssl.* and other settings of the run's consumers and Admin client")
    parser.add_argument("--kafka-property", action="append", default=[], metavar="KEY=VALUE",
                        help="one Kafka client property, e.g. security.protocol=SASL_SSL (repeatable; wins over "
                             "--kafka-properties)")
    parser.add_argument("--interval", type=float, metavar="SECONDS",
                        help="run again every SECONDS (start to start) in this process until SIGTERM or SIGINT, "
                             "each run one exactly-once batch (default: one run)")
    parser.add_argument("--master", default=None, help="Spark master when not run by spark-submit (local[2])")
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print N rows of each table afterwards")
    return parser


def _kafka_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """The Kafka client properties of the command line as options of Spark's Kafka source (``kafka.<key>``)."""
    properties: dict[str, str] = {}
    if args.kafka_properties:
        try:
            properties.update(load_properties(args.kafka_properties))
        except OSError as exc:
            parser.error(f"--kafka-properties: cannot read {args.kafka_properties}: {exc.strerror or exc}")
    for item in args.kafka_property:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            parser.error(f"--kafka-property expects KEY=VALUE, not {item!r}")
        properties[key.strip()] = value
    servers = properties.pop("bootstrap.servers", None)
    if servers is not None and servers.replace(" ", "") != args.bootstrap_servers.replace(" ", ""):
        parser.error(f"the Kafka properties' bootstrap.servers ({servers}) differ from --bootstrap-servers "
                     f"({args.bootstrap_servers}): give the servers once")
    return {f"kafka.{key}": value for key, value in properties.items()}


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    kafka_options = _kafka_options(parser, args)
    if args.interval is not None and not args.interval > 0:
        parser.error(f"--interval must be a positive number of seconds, not {args.interval:g}")
    if args.interval is not None and args.show:
        parser.error("--show prints the tables after a single run: not with --interval")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    from spark_jobs import jit
    from spark_jobs.session import session

    options = MaterializeOptions(
        args.bootstrap_servers, args.output,
        topics=tuple(t.strip() for t in (args.topics or "").split(",") if t.strip()), pattern=args.topics_pattern,
        fmt=args.format, min_partitions=args.min_partitions, kafka_options=kafka_options,
        table_format=args.table_format)
    try:
        # a small run starts its JVM with the C1 JIT compiler only (spark_jobs.jit; not under spark-submit); runs
        # at an interval keep the JVM's own, the process living on
        spark = session(args.master, conf=jit.launch_conf(options) if args.interval is None else {})
        if args.interval is not None:
            stop = threading.Event()
            with schedule.stop_on_signals(stop):
                schedule.run_every(spark, options, args.interval, stop, run,
                                   lambda summary: print(summary, flush=True))
            return 0
        summary = run(spark, options)
    except SparkJobError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(summary, flush=True)
    if args.show:
        show(spark, options, args.show)
    return 0


def show(spark: SparkSession, options: MaterializeOptions, rows: int) -> None:
    """Print each materialized table and the size of the change log."""
    if options.table_format == "delta":
        output = delta_output.DeltaOutput(spark, options.output)
        done, _ = output.state()
        named = [(topic, spark.read.format("delta").load(output.table(topic))) for topic in sorted(done.schemas)]
        logs = [spark.read.format("delta").load(output.changes(topic)) for topic in sorted(done.schemas)]
    else:
        store = OutputStore(options.output)
        folder = store.root / "tables"
        named = [(p.name, spark.read.parquet(str(p))) for p in sorted(folder.iterdir())
                 if p.is_dir() and not p.name.endswith(".old")]
        logs = [spark.read.parquet(str(store.changes))] if store.changes.is_dir() else []
    for name, table in named:
        columns = [c for c in table.columns if c not in tables.META_COLUMNS or c == "_op"]
        print(f"\n== table {name} ({table.count()} rows)")
        table.select(*columns).orderBy("_id").show(rows, truncate=40)
    if logs:
        log_table: DataFrame = logs[0]
        for more in logs[1:]:
            log_table = log_table.unionByName(more, allowMissingColumns=True)
        print(f"== change log: {log_table.count()} events")
        log_table.groupBy("topic", "date", "op").count().orderBy("topic", "date", "op").show(50, truncate=False)


if __name__ == "__main__":
    sys.exit(main())
