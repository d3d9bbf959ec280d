"""Spark materialization: 500,000 change events of ~1 KB documents (100,000 documents inserted, then updated
and some deleted) written to a real Kafka topic in the worker's format (the product's ChangeEventConverter and
JsonConverter, JSON with schemas), then materialized on ``local[2]`` by a full run and by an incremental run
over 1 % new events.

Prints events/s of the full run (JVM start-up excluded: the session is started before timing), the time of
the incremental run and its share of the full run (in the benchmark's warm JVM, and as the command line runs it:
``python -m spark_jobs.materialize`` in a fresh JVM, once with the JIT it chooses for the run's size, see
:mod:`spark_jobs.jit`, and once with the JVM's default JIT, each on a copy of the output after the full run),
the floor (Spark's Kafka source reading the same records with no job, casting the values to strings, parsing
them once), and appends the figures to ``benchmarks/results.md``. The job and the floor take turns in one JVM:
a floor pass, then ``--rounds`` times a full run (the first into the output, the others into new outputs)
followed by a floor pass, all before the new events are written; then the incremental run ``--rounds`` times (the
first on the output, the others on copies of it made after the first full run). The ratios are of the best of
each (the JVM warms up over the first rounds, the job's and the floor's passes alike), the first runs' own
ratios printed beside them. Last, ``--interval-runs`` runs as ``--interval`` makes them: the same output
batch after batch in this JVM (Delta's state of the tables kept from the run before), 1 % new events written before
each; reported beside the goal's figures, not in them.
On a shared machine wall time follows the load: the CPU time the Spark JVM spends on the job and on the floor
(Linux ``/proc``) is reported too, the ratio of the two being the figure that other processes move least.

    python -m benchmarks.spark_materialize [--events 500000] [--rounds 3] [--interval-runs 5]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import random
import shutil
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bson import Timestamp
from kafka import KafkaProducer
from pyspark.sql import functions as F

import stack
from benchmarks import report
from connectors.mongodb.event_converter import ChangeEventConverter
from converters.json import JsonConverter
from spark_jobs.kafka_source import offset_ranges, read_range
from spark_jobs.materialize import MaterializeOptions, run
from spark_jobs.session import session

ROOT = Path(__file__).resolve().parent
STATE = ROOT.parent / ".stack" / "bench-spark"
TOPIC = "bench.shop.customers"


def document(n: int, rng: random.Random) -> dict[str, Any]:
    """About 1 KB of Extended JSON: nested documents, arrays, numbers, strings, a date."""
    words = ["".join(rng.choices(string.ascii_lowercase, k=8)) for _ in range(12)]
    return {
        "_id": n, "name": f"customer {n}", "email": f"user{n}@example.com", "active": n % 3 != 0,
        "score": rng.random() * 100, "created": dt.datetime(2024, 1, 1) + dt.timedelta(seconds=n),
        "address": {"street": " ".join(words[:3]), "city": words[3], "zip": f"{n % 100000:05d}",
                    "geo": {"lat": rng.uniform(-90, 90), "lon": rng.uniform(-180, 180)}},
        "tags": words[4:10],
        "orders": [{"sku": f"SKU-{n}-{i}", "qty": i + 1, "price": round(rng.uniform(1, 500), 2)} for i in range(6)],
        "notes": " ".join(words) * 2,
    }


def events(count: int, first_n: int, rng: random.Random, docs: int, live: list[int]) -> Iterator[dict[str, Any]]:
    """``count`` change-stream events: ``docs`` inserts (ids from ``first_n``) mixed with updates of ``live``
    documents and 2 % deletes."""
    inserted = 0
    for i in range(count):
        clock = Timestamp(1_795_000_000 + (first_n + i) // 1000, (first_n + i) % 1000 + 1)
        # the primary's wall clock advances with the cluster time (source.ts_ms, which orders changes across runs)
        wall = dt.datetime(2026, 11, 21) + dt.timedelta(milliseconds=first_n + i)
        base = {"_id": {"_data": f"82{first_n + i:030x}"}, "clusterTime": clock,
                "wallTime": wall, "ns": {"db": "shop", "coll": "customers"}}
        if inserted < docs and (not live or rng.random() < 0.5 or i >= count - docs + inserted):
            n = first_n + inserted
            doc = document(n, rng)
            inserted += 1
            live.append(n)
            yield {**base, "operationType": "insert", "fullDocument": doc, "documentKey": {"_id": n}}
        elif rng.random() < 0.02 and len(live) > 1:
            n = live.pop(rng.randrange(len(live)))
            yield {**base, "operationType": "delete", "documentKey": {"_id": n}}
        else:
            n = rng.choice(live)
            doc = document(n, rng)
            yield {**base, "operationType": "update", "fullDocument": doc, "documentKey": {"_id": n},
                   "updateDescription": {"updatedFields": {"score": doc["score"]}, "removedFields": []}}


def produce(bootstrap: str, count: int, first_n: int, docs: int, seed: int, live: list[int],
            topic: str = TOPIC, schemas: bool = True) -> tuple[int, float]:
    """Write ``count`` events (plus tombstones) to ``topic``; returns (records, seconds)."""
    started = time.monotonic()
    converter = ChangeEventConverter(topic_prefix="bench", run_id="bench")
    keys, values = JsonConverter(), JsonConverter()
    keys.configure({"schemas.enable": schemas}, is_key=True)
    values.configure({"schemas.enable": schemas})
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, batch_size=1 << 20,
                             max_request_size=8 << 20)
    records = 0
    try:
        for event in events(count, first_n, random.Random(seed), docs, live):
            for record in converter.to_records(event):
                producer.send(topic, key=keys.from_connect_data(topic, record.key_schema, record.key),
                              value=values.from_connect_data(topic, record.value_schema, record.value))
                records += 1
        producer.flush(timeout=600)
    finally:
        producer.close(timeout=30)
    return records, time.monotonic() - started


def jvm_cpu(spark: Any) -> float:
    """CPU seconds (user + system) used so far by the Spark JVM (the driver of ``local[2]``, its executor threads
    included) and the processes it started, read from ``/proc``; 0.0 where there is no ``/proc``."""
    pending, seen, total = [int(spark.sparkContext._gateway.proc.pid)], set[int](), 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    while pending:
        pid = pending.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
            for task in os.listdir(f"/proc/{pid}/task"):
                pending.extend(int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
        except OSError:
            continue
    return total


def spark_jobs_started(spark: Any) -> int:
    """How many Spark jobs the session has started so far (the highest job id + 1, from Spark's status store)."""
    sc = spark.sparkContext
    jobs = sc._jvm.scala.jdk.javaapi.CollectionConverters.asJava(sc._jsc.sc().statusStore().jobsList(None))
    return max((int(job.jobId()) + 1 for job in jobs), default=0)


def _floor(spark: Any, bootstrap: str) -> dict[str, float]:
    """Seconds Spark's Kafka source needs for the whole topic with no job at all: reading the records, reading
    them with each value cast to a string (what any JSON parsing starts from), and parsing each value once for
    two fields (what any job over these records does at the least). One pass of each; the benchmark runs it
    before the job (which also warms the JVM, as a long-running session would be) and after, keeping the best."""
    records = read_range(spark, bootstrap, offset_ranges(spark, bootstrap, topics=(TOPIC,)))
    jobs: dict[str, Callable[[], object]] = {
        "read": records.count,
        "cast": records.select(F.sum(F.length(F.col("value").cast("string")))).first,
        "parse": records.select(F.from_json(F.col("value").cast("string"), "payload struct<op: string, after: string>")
                                .alias("v")).select("v.payload.op", "v.payload.after")
        .write.format("noop").mode("overwrite").save}
    seconds = {}
    for name, job in jobs.items():
        started, cpu = time.monotonic(), jvm_cpu(spark)
        job()
        seconds[name] = time.monotonic() - started
        seconds[f"{name}_cpu"] = jvm_cpu(spark) - cpu
    return seconds


# A fresh process running the command line's main() on one output; prints its result as one JSON line
_FRESH = """
import json, sys, time
from pyspark.sql import SparkSession
from benchmarks.spark_materialize import jvm_cpu
from spark_jobs import materialize
started = time.monotonic()
code = materialize.main(sys.argv[1:])
wall = time.monotonic() - started
spark = SparkSession.getActiveSession()
bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
print("FRESH " + json.dumps({"code": code, "wall": wall, "cpu": jvm_cpu(spark),
                             "c1": "-XX:TieredStopAtLevel=1" in list(bean.getInputArguments())}), flush=True)
"""


def fresh_run(bootstrap: str, output: Path, default_jit: bool) -> dict[str, Any]:
    """``python -m spark_jobs.materialize``'s main() over ``output`` in a new process (so a new JVM): its run's
    seconds (from the summary it prints), the process's wall time from main() on (JVM start-up included), the
    JVM's CPU seconds (start-up included) and whether the JVM ran with C1 only. ``default_jit``: the user's own
    driver JVM options (a no-op property) keep the JVM's default JIT, as before :mod:`spark_jobs.jit`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_GATEWAY_PORT", "PYSPARK_SUBMIT_ARGS")}
    if default_jit:
        env["PYSPARK_SUBMIT_ARGS"] = "--driver-java-options -Dspark_jobs.benchmark=default-jit pyspark-shell"
    cmd = [sys.executable, "-c", _FRESH, "--bootstrap-servers", bootstrap, "--topics", TOPIC, "--output",
           str(output), "--master", "local[2]"]
    done = subprocess.run(cmd, cwd=ROOT.parent, env={**env, "PYTHONPATH": str(ROOT.parent)}, capture_output=True,
                          text=True, timeout=900, check=True)
    lines = done.stdout.splitlines()
    result: dict[str, Any] = json.loads(next(line for line in lines if line.startswith("FRESH "))[6:])
    summary = next(line for line in lines if line.startswith("batch "))
    result["seconds"] = float(summary.rsplit("(", 1)[1].split()[0])
    return result


class _Steps(logging.Handler):
    """The job's step timings (its INFO lines ending in seconds), kept for the report."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.endswith(" s") and record.name.startswith("spark_jobs"):
            self.lines.append(message)

    def take(self) -> list[str]:
        lines, self.lines = self.lines, []
        return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=3,
                        help="turns of the full run and the floor (and runs of the incremental run) in the JVM")
    parser.add_argument("--interval-runs", type=int, default=5,
                        help="incremental runs batch after batch on the same output, as --interval runs them")
    parser.add_argument("--driver-java-options", default="",
                        help="JVM options of the Spark driver (e.g. -XX:TieredStopAtLevel=1), noted in the report")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("spark_jobs").setLevel(logging.INFO)  # the job's own step timings
    steps = _Steps()
    logging.getLogger("spark_jobs").addHandler(steps)
    shutil.rmtree(STATE, ignore_errors=True)
    kafka_port, mongo_port = stack.free_ports(2)
    endpoints = stack.start(STATE, kafka_port=kafka_port, mongo_port=mongo_port, mongo=False)
    output = Path(tempfile.mkdtemp(prefix="spark-bench-"))
    try:
        docs = args.events // 5
        live: list[int] = []
        records, seconds = produce(endpoints.kafka_bootstrap, args.events, 0, docs, 1, live)
        print(f"produced {records} records ({args.events} events) in {seconds:.1f} s", flush=True)
        started = time.monotonic()
        jvm_options = {"spark.driver.extraJavaOptions": args.driver_java_options} if args.driver_java_options else {}
        spark = session("local[2]", conf=jvm_options)
        jvm = time.monotonic() - started
        print(f"Spark session (JVM start-up, not counted): {jvm:.1f} s", flush=True)
        options = MaterializeOptions(endpoints.kafka_bootstrap, str(output / "out"), topics=(TOPIC,))
        load_before = os.getloadavg()[0]
        floors = [_floor(spark, endpoints.kafka_bootstrap)]
        print(f"floor before the job: {floors[0]}", flush=True)
        fulls: list[tuple[Any, float]] = []
        full_steps: list[str] = []
        for turn in range(args.rounds):  # the full run and the floor taking turns, all over the same records
            target = options if turn == 0 else MaterializeOptions(endpoints.kafka_bootstrap,
                                                                  str(output / f"again-{turn}"), topics=(TOPIC,))
            cpu = jvm_cpu(spark)
            summary = run(spark, target)
            fulls.append((summary, jvm_cpu(spark) - cpu))
            taken = steps.take()
            full_steps = taken if turn == 0 else full_steps
            print(f"full run {turn + 1}: {summary}", flush=True)
            floors.append(_floor(spark, endpoints.kafka_bootstrap))
            print(f"floor after it: {floors[-1]}", flush=True)
        full = fulls[0][0]
        fresh_modes = ("chosen", "default")  # the JIT the job chooses for the run's size, the JVM's default
        copies = {mode: output / f"fresh-{mode}" for mode in fresh_modes}
        copies.update({f"warm-{turn}": output / f"warm-{turn}" for turn in range(1, args.rounds)})
        for copy in copies.values():
            shutil.copytree(output / "out", copy)
        new_events = args.events // 100
        produce(endpoints.kafka_bootstrap, new_events, args.events, new_events // 5, 2, live)
        cpu, jobs = jvm_cpu(spark), spark_jobs_started(spark)
        incremental = run(spark, options)
        incremental_cpu = jvm_cpu(spark) - cpu
        incremental_jobs = spark_jobs_started(spark) - jobs
        incremental_steps = steps.take()
        print(f"incremental run: {incremental}", flush=True)
        fresh = {mode: fresh_run(endpoints.kafka_bootstrap, copies[mode], mode == "default")
                 for mode in fresh_modes}
        print(f"fresh JVM incremental runs: {fresh}", flush=True)
        warms: list[tuple[Any, float]] = []
        for turn in range(1, args.rounds):
            cpu = jvm_cpu(spark)
            summary = run(spark, MaterializeOptions(endpoints.kafka_bootstrap, str(copies[f"warm-{turn}"]),
                                                    topics=(TOPIC,)))
            warms.append((summary, jvm_cpu(spark) - cpu))
            steps.take()
            print(f"incremental run {turn + 1}: {summary}", flush=True)
        interval_runs: list[tuple[Any, float]] = []
        for turn in range(args.interval_runs):  # as --interval runs them: the same output, batch after batch
            produce(endpoints.kafka_bootstrap, new_events, args.events + (turn + 1) * new_events, new_events // 5,
                    3 + turn, live)
            cpu = jvm_cpu(spark)
            summary = run(spark, options)
            interval_runs.append((summary, jvm_cpu(spark) - cpu))
            steps.take()
            print(f"interval run {turn + 1}: {summary}", flush=True)
        floor = {name: min(f[name] for f in floors) for name in floors[0]}
        load_end = os.getloadavg()
        rate = full.events / full.seconds
        share = incremental.seconds / full.seconds
        # the job's figures as the floor's: the best of its passes
        best_full, best_full_cpu = min(f[0].seconds for f in fulls), min(f[1] for f in fulls)
        incrementals = [(incremental, incremental_cpu), *warms]
        best_incremental = min(i[0].seconds for i in incrementals)
        best_incremental_cpu = min(i[1] for i in incrementals)
        again_text = ", ".join(f"{f[0].seconds:.1f} s (JVM CPU {f[1]:.1f} s)" for f in fulls[1:])
        warm_text = ", ".join(f"{w[0].seconds:.1f} s (JVM CPU {w[1]:.1f} s)" for w in warms)
        passes = " / ".join(f"{f['parse']:.1f}" for f in floors)
        cpu_passes = " / ".join(f"{f['parse_cpu']:.1f}" for f in floors)
        report.append([
            "", f"{report.heading('spark_materialize')}, Spark {spark.version} local[2]"
            + (f", driver JVM options {args.driver_java_options}" if args.driver_java_options else ""), "",
            f"- {full.events:,} change events ({docs:,} documents of about 1 KB, JSON with schemas, "
            f"{full.tombstones:,} tombstones) read from Kafka by a full run",
            f"- full run: {full.seconds:.1f} s → **{rate:,.0f} events/s** (JVM start-up of {jvm:.1f} s excluded); "
            f"table rows: {sum(full.table_rows.values()):,}; its steps: {'; '.join(full_steps)}",
            f"- incremental run over 1 % new events ({incremental.events:,}): {incremental.seconds:.1f} s = "
            f"**{share:.0%}** of the full run, {incremental_jobs} Spark jobs; its steps: "
            f"{'; '.join(incremental_steps)}",
            f"- the same runs again in this JVM, each full run followed by a floor pass: the full run into new "
            f"outputs {again_text}; the incremental run on copies of the output after the first full run "
            f"{warm_text}",
            "- the same incremental run as the command line runs it, `python -m spark_jobs.materialize` in a new "
            "JVM (on copies of the output after the full run): "
            + "; ".join(f"{'the JIT it chooses' if mode == 'chosen' else 'the JVM default JIT'} "
                        f"({'C1 only' if r['c1'] else 'C1 and C2'}): run {r['seconds']:.1f} s = "
                        f"**{r['seconds'] / full.seconds:.0%}** of the full run, {r['wall']:.1f} s with the JVM's "
                        f"start-up, JVM CPU {r['cpu']:.1f} s with its start-up" for mode, r in fresh.items()),
            *([f"- runs as `--interval` makes them, batch after batch on the same output in this JVM, "
               f"{new_events:,} new events written before each: "
               + ", ".join(f"{r[0].seconds:.1f} s (JVM CPU {r[1]:.1f} s)" for r in interval_runs)
               + f" → the best **{min(r[0].seconds for r in interval_runs) / best_full:.0%}** of the full run's best "
               f"(JVM CPU {min(r[1] for r in interval_runs) / best_full_cpu:.0%})"] if interval_runs else []),
            f"- the floor, same records, no job: Spark's Kafka source reading them (a count) "
            f"{floor['read']:.1f} s, reading and casting each value to a string (a sum of lengths) "
            f"{floor['cast']:.1f} s → at most **{full.records / floor['cast']:,.0f} records/s** before any "
            f"JSON is parsed; parsing each value once for its op and after alone {floor['parse']:.1f} s → at most "
            f"**{full.records / floor['parse']:,.0f} records/s** (each the best of {len(floors)} passes, one before "
            f"the job and one after each full run: parse {passes} s)",
            f"- full run, the best of its {len(fulls)} like the floor = **{floor['parse'] / best_full:.0%} of that "
            f"floor** (goal ≥ 50 %; the first full run alone {floor['parse'] / full.seconds:.0%}); incremental run, "
            f"the best of its {len(incrementals)} = **{best_incremental / best_full:.0%} of the full run's best** "
            f"(goal ≤ 10 %)",
            f"- CPU time of the Spark JVM (less moved by other processes than wall time), each the best of its passes: "
            f"full run {best_full_cpu:.1f} s, incremental run {best_incremental_cpu:.1f} s "
            f"(**{best_incremental_cpu / best_full_cpu:.0%}**), the floor's parse {floor['parse_cpu']:.1f} s (best "
            f"of {cpu_passes} s) → full run = "
            f"**{floor['parse_cpu'] / best_full_cpu:.0%} of the floor in CPU time**",
            f"- 1-minute load average before / at the end (the machine is shared with other helpers' test stacks): "
            f"{load_before:.1f} / {load_end[0]:.1f}",
        ])
        spark.stop()
    finally:
        stack.stop(STATE)
        shutil.rmtree(output, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
