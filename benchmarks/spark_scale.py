"""Spark materialization cost against table size: a latest-state table of N documents and one of 10xN (about
1 KB each, written to two Kafka topics as inserts, JSON without schemas), each materialized by a full run; then
the same number of new change events on each (1 % of N: 20 % inserts, updates of random existing documents,
2 % deletes) and an incremental run on each, ``--rounds`` times. The incremental run's time must follow the new
events, not the table: goal ≤ 1.5x on the 10x table.

Delta (MERGE, the default) and, with ``--parquet``, the Parquet format for comparison (it rewrites the table).

    python -m benchmarks.spark_scale [--documents 20000] [--rounds 3] [--parquet]
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import tempfile
from pathlib import Path

import stack
from benchmarks import report
from benchmarks.spark_materialize import produce
from spark_jobs.materialize import MaterializeOptions, run
from spark_jobs.session import session

ROOT = Path(__file__).resolve().parent
STATE = ROOT.parent / ".stack" / "bench-spark-scale"
SMALL, LARGE = "scale.shop.small", "scale.shop.large"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=20_000, help="N: documents of the small table")
    parser.add_argument("--rounds", type=int, default=3, help="incremental runs on each table")
    parser.add_argument("--parquet", action="store_true", help="measure --table-format parquet as well")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("spark_jobs").setLevel(logging.INFO)  # the job's own step timings
    shutil.rmtree(STATE, ignore_errors=True)
    kafka_port, mongo_port = stack.free_ports(2)
    endpoints = stack.start(STATE, kafka_port=kafka_port, mongo_port=mongo_port, mongo=False)
    output = Path(tempfile.mkdtemp(prefix="spark-scale-"))
    bootstrap = endpoints.kafka_bootstrap
    try:
        n = args.documents
        live = {SMALL: list[int](), LARGE: list[int]()}
        sizes = {SMALL: n, LARGE: 10 * n}
        for topic, docs in sizes.items():
            records, seconds = produce(bootstrap, docs, 0, docs, 1, live[topic], topic=topic, schemas=False)
            print(f"{topic}: {records} inserts produced in {seconds:.1f} s", flush=True)
        spark = session("local[2]")
        formats = ["delta", *(["parquet"] if args.parquet else [])]
        full: dict[tuple[str, str], float] = {}
        for fmt in formats:
            for topic in sizes:
                summary = run(spark, _options(bootstrap, output, fmt, topic))
                full[(fmt, topic)] = summary.seconds
                print(f"{fmt} full run of {topic}: {summary}", flush=True)
        new_events = max(n // 100, 1)
        incremental: dict[tuple[str, str], list[float]] = {(f, t): [] for f in formats for t in sizes}
        first = 10 * n
        for round_number in range(args.rounds):
            for topic in sizes:
                produce(bootstrap, new_events, first, new_events // 5, 10 + round_number, live[topic], topic=topic,
                        schemas=False)
            first += new_events
            for fmt in formats:
                for topic in sizes:
                    summary = run(spark, _options(bootstrap, output, fmt, topic))
                    assert summary.events == new_events, summary
                    incremental[(fmt, topic)].append(summary.seconds)
                    print(f"{fmt} incremental run of {topic}: {summary}", flush=True)
        lines = ["", f"{report.heading('spark_scale')}, Spark {spark.version} local[2]", "",
                 f"- tables of N = {n:,} and 10xN = {10 * n:,} documents of about 1 KB (JSON without schemas); "
                 f"then {args.rounds} rounds of {new_events:,} new change events (1 % of N) on each, one "
                 "incremental run each (median)"]
        for fmt in formats:
            small, large = (statistics.median(incremental[(fmt, t)]) for t in (SMALL, LARGE))
            lines.append(
                f"- {fmt}: full runs {full[(fmt, SMALL)]:.1f} s and {full[(fmt, LARGE)]:.1f} s; incremental runs "
                f"{small:.1f} s on N and {large:.1f} s on 10xN (runs: "
                f"{', '.join(f'{s:.1f}' for s in incremental[(fmt, SMALL)])} / "
                f"{', '.join(f'{s:.1f}' for s in incremental[(fmt, LARGE)])}) → **{large / small:.2f}x** "
                "(goal ≤ 1.5x)")
        lines.append(f"- load average at the end (the machine is shared): {os.getloadavg()[0]:.1f}")
        report.append(lines)
        spark.stop()
    finally:
        stack.stop(STATE)
        shutil.rmtree(output, ignore_errors=True)
    return 0


def _options(bootstrap: str, output: Path, fmt: str, topic: str) -> MaterializeOptions:
    return MaterializeOptions(bootstrap, str(output / f"{fmt}-{topic}"), topics=(topic,), table_format=fmt)


if __name__ == "__main__":
    raise SystemExit(main())
