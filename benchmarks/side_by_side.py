"""Side by side, in one run: the real Debezium MongoDB connector on Java Kafka Connect (production JVM flags) and
our worker, each on a fresh stack of its own (Kafka + SecantusDB), taking turns round by round (D O, O D, ...),
over the same documents; and the services alone (the floor), measured on the same machine in the same run.

Each round stops the connector (``PUT /connectors/{c}/stop``), inserts the round's documents, resumes it and
times the drain from the resume to the broker's append time of the round's last record (the topics are created
beforehand, stamped with the append time, so the watcher polls the end offset only every 0.1 s and its polling
neither ends the timing nor takes much of the CPU the systems share); the worker process stays up, so the
JVM warms up over the rounds and the first ``--warm-up`` rounds are left out of the medians. Also: CPU seconds
of the worker's process tree per event, its peak resident memory, and the time from process start to the
connector's task RUNNING. Then the initial snapshot of a collection by a new connector
(:mod:`benchmarks.side_by_side_snapshot`) and the latency at a steady write rate
(:mod:`benchmarks.side_by_side_latency`), the systems again taking turns. The drain's floor takes a turn before
the first round and after every round, on a SecantusDB of its own; the snapshot's floor (a bare sorted read of the
same collection) before the first snapshot round and after each; each of our rounds is compared with the mean of
the floor's turns before and after it; every snapshot turn starts once both stacks are quiet. Prints a table of
ratios and appends it to ``benchmarks/results.md``.

    python -m benchmarks.side_by_side [--docs 20000] [--rounds 6] [--warm-up 2] [--ours-only]
                                      [--snapshot-docs 30000] [--snapshot-rounds 2]
                                      [--latency-rate 1000] [--latency-seconds 20] [--latency-rounds 2]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pymongo
from bson.raw_bson import RawBSONDocument
from kafka import KafkaConsumer

import stack
from benchmarks import report
from benchmarks import side_by_side_latency as latency
from benchmarks import side_by_side_snapshot as snapshots
from benchmarks.backlog_drain import document, end_offset, memory_kib, tree_cpu_seconds
from compat.debezium.harness import DebeziumConnect
from stack import procs
from stack.worker import ConnectWorker, distributed_properties

STATE = Path(__file__).resolve().parent.parent / ".stack" / "side-by-side"
# connect-distributed.sh's heap and kafka-run-class.sh's performance options (G1), not the test harness's C1 JVM
PRODUCTION_JVM = ["-Xms256M", "-Xmx2G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                  "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                  "-Djava.awt.headless=true"]
# the same producer batching for both (ours defaults to these; Java's defaults are 16 KiB batches)
PRODUCER = {"producer.batch.size": "1048576", "producer.linger.ms": "5"}
CONNECTOR = "bench"


class ProductionDebezium(DebeziumConnect):
    """Debezium on Kafka Connect started as ``connect-distributed.sh`` starts it."""

    def command(self) -> list[str]:
        command = super().command()
        java_at = next(i for i, part in enumerate(command) if part.endswith("java"))
        options_end = next(i for i, part in enumerate(command) if part.startswith("-Dlog4j2"))
        return [*command[:java_at + 1], *PRODUCTION_JVM, *command[options_end:]]


@dataclass
class Contender:
    """One system under test on its own stack."""

    name: str
    endpoints: stack.StackEndpoints
    worker: Any
    http: httpx.Client
    mongo: pymongo.MongoClient[dict[str, Any]]
    consumer: KafkaConsumer
    startup_s: float = 0.0
    drained: int = 0
    rounds: list[dict[str, float]] = field(default_factory=list)
    snapshots: list[dict[str, float]] = field(default_factory=list)
    latency: list[dict[str, float]] = field(default_factory=list)

    @property
    def topic(self) -> str:
        return f"{CONNECTOR}.bench.docs"

    def pid(self) -> int:
        pid = self.worker.pid
        assert pid is not None
        return int(pid)

    def stack_pids(self) -> list[int]:
        """The worker's and its stack's services' process ids."""
        services = stack.services(STATE / self.name / "stack")
        return [self.pid(), *(int(service.pid) for service in services if service.pid is not None)]


WATCH_S = 0.1
"""How often the watcher asks for a topic's end offset while a drain or snapshot runs (each ask costs the machine
~1-2 ms of CPU, client and broker): the timing itself ends at the last record's append time."""


def _wait(check: Callable[[], bool], timeout: float, what: str, every: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(every)


def _watch(check: Callable[[], bool], timeout: float, what: str) -> None:
    _wait(check, timeout, what, WATCH_S)


def _task_state(http: httpx.Client) -> str | None:
    reply = http.get(f"/connectors/{CONNECTOR}/status")
    tasks = reply.json().get("tasks", []) if reply.status_code == 200 else []
    return str(tasks[0]["state"]) if tasks else None


@contextlib.contextmanager
def contender(name: str, java: bool) -> Iterator[Contender]:
    """A fresh stack and a worker with the connector registered on ``bench.docs``, stopped on leaving."""
    state = STATE / name
    stack.stop(state / "stack")
    shutil.rmtree(state, ignore_errors=True)
    kafka_port, mongo_port, rest_port = stack.free_ports(3)
    endpoints = stack.start(state / "stack", kafka_port=kafka_port, mongo_port=mongo_port)
    props = {**distributed_properties(endpoints.kafka_bootstrap, rest_port, group_id=f"bench-{name}"),
             "offset.flush.interval.ms": "5000", **PRODUCER}
    worker = ProductionDebezium(state / "connect", rest_port, props) if java else \
        ConnectWorker(state / "worker", rest_port, props)
    mongo: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(endpoints.mongo_uri)
    consumer = KafkaConsumer(bootstrap_servers=endpoints.kafka_bootstrap, group_id=None)
    started = time.monotonic()
    worker.start()
    http = httpx.Client(base_url=worker.address, timeout=60)
    entry = Contender(name, endpoints, worker, http, mongo, consumer)
    try:
        mongo.bench.docs.insert_one({"_id": -1, "warmup": True})
        latency.create_topic(endpoints.kafka_bootstrap, entry.topic)
        latency.create_topic(endpoints.kafka_bootstrap, f"{CONNECTOR}.bench.{latency.COLLECTION}")
        config = {"connector.class": "io.debezium.connector.mongodb.MongoDbConnector", "tasks.max": "1",
                  "mongodb.connection.string": endpoints.mongo_uri, "topic.prefix": CONNECTOR,
                  "collection.include.list": f"bench\\.(docs|{latency.COLLECTION})"}
        http.put(f"/connectors/{CONNECTOR}/config", json=config).raise_for_status()
        _wait(lambda: _task_state(http) == "RUNNING", 180, f"{name}: connector running")
        entry.startup_s = time.monotonic() - started
        _wait(lambda: end_offset(consumer, entry.topic) >= 1, 180, f"{name}: the snapshot's record")
        entry.drained = end_offset(consumer, entry.topic)
        yield entry
    finally:
        consumer.close()
        mongo.close()
        http.close()
        worker.stop()
        stack.stop(state / "stack")


def drain_round(entry: Contender, number: int, docs: int) -> dict[str, float]:
    """Stop the connector, insert ``docs`` documents, resume it and time the drain into Kafka."""
    entry.http.put(f"/connectors/{CONNECTOR}/stop").raise_for_status()
    _wait(lambda: entry.http.get(f"/connectors/{CONNECTOR}/status").json()["connector"]["state"] == "STOPPED",
          120, f"{entry.name}: connector stopped")
    rng = random.Random(number)
    batch = [document(docs * (number + 1) + n, rng) for n in range(docs)]
    for start in range(0, docs, 1000):
        entry.mongo.bench.docs.insert_many(batch[start:start + 1000])
    target = entry.drained + docs
    pid = entry.pid()
    t0, c0 = time.time(), tree_cpu_seconds(pid)
    entry.http.put(f"/connectors/{CONNECTOR}/resume").raise_for_status()
    _watch(lambda: end_offset(entry.consumer, entry.topic) >= target, 900, f"{entry.name}: backlog drained")
    c1 = tree_cpu_seconds(pid)
    t1 = latency.last_append_s(entry.consumer, entry.topic, target - 1)
    entry.drained = end_offset(entry.consumer, entry.topic)
    _, hwm = memory_kib(pid)
    result = {"events_per_s": docs / (t1 - t0), "cpu_us_per_event": (c1 - c0) / docs * 1e6,
              "peak_rss_mib": hwm / 1024}
    print(f"round {number + 1} {entry.name}: {result['events_per_s']:,.0f} events/s, "
          f"{result['cpu_us_per_event']:.0f} µs CPU/event, peak RSS {result['peak_rss_mib']:.0f} MiB", flush=True)
    entry.rounds.append(result)
    return result


@contextlib.contextmanager
def floor_server() -> Iterator[str]:
    """A SecantusDB of the floor's own (no worker reading its change stream), its connection string."""
    state = STATE / "floor"
    stack.stop(state)
    shutil.rmtree(state, ignore_errors=True)
    endpoints = stack.start(state, mongo_port=stack.free_ports(1)[0], kafka=False)
    try:
        yield endpoints.mongo_uri
    finally:
        stack.stop(state)


def stream_floor(mongo_uri: str, events: int, number: int = 0) -> float:
    """Events/s of a raw change-stream drain from a SecantusDB, no worker in the path (round ``number`` writes
    to a collection of its own, as each drain round writes its own documents)."""
    raw: pymongo.MongoClient[RawBSONDocument] = pymongo.MongoClient(mongo_uri, document_class=RawBSONDocument)
    try:
        collection = raw.floor[f"stream{number}"]
        with collection.watch(max_await_time_ms=100) as stream:
            stream.try_next()
            token = stream.resume_token
        rng = random.Random(7)
        for start in range(0, events, 1000):
            collection.insert_many([document(n, rng) for n in range(start, min(start + 1000, events))])  # type: ignore[misc]
        seen, started = 0, time.monotonic()
        with collection.watch(resume_after=token, batch_size=2000, max_await_time_ms=200) as changes:
            while seen < events and time.monotonic() - started < 600:
                if changes.try_next() is not None:
                    seen += 1
        return seen / (time.monotonic() - started)
    finally:
        raw.close()


def _median(entry: Contender, key: str, warm_up: int) -> float:
    values = [r[key] for r in entry.rounds[warm_up:]] or [r[key] for r in entry.rounds]
    return statistics.median(values)


def _span(entry: Contender, key: str, warm_up: int) -> str:
    values = [r[key] for r in entry.rounds[warm_up:]] or [r[key] for r in entry.rounds]
    return f"{min(values):,.0f}-{max(values):,.0f}"


def _median_rows(contenders: list[Contender], results: Callable[[Contender], list[dict[str, float]]],
                 figures: tuple[tuple[str, str], ...], note: str) -> list[str]:
    """Table rows of the median of each figure over each contender's rounds, with ours / Debezium."""
    rows = []
    for key, label in figures:
        values = [statistics.median(r[key] for r in results(e)) for e in contenders]
        ratio = f"{values[0] / values[1]:.2f}x" if len(values) > 1 and values[1] else "-"
        rows.append(f"| {label} ({note}) | " + " | ".join(f"{v:,.0f}" for v in values) + f" | {ratio} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--warm-up", type=int, default=2, help="first rounds left out of the medians")
    parser.add_argument("--ours-only", action="store_true", help="no Debezium (a quick check of ours)")
    parser.add_argument("--snapshot-docs", type=int, default=30_000, help="documents of the snapshot phase")
    parser.add_argument("--snapshot-rounds", type=int, default=2)
    parser.add_argument("--latency-rate", type=int, default=1000, help="writes/s of the latency phase")
    parser.add_argument("--latency-seconds", type=float, default=20)
    parser.add_argument("--latency-rounds", type=int, default=2)
    args = parser.parse_args()
    procs.java()  # fail early without Java
    with contextlib.ExitStack() as stacks:
        contenders = [stacks.enter_context(contender("ours", java=False))]
        if not args.ours_only:
            contenders.append(stacks.enter_context(contender("debezium", java=True)))
        floor_uri = stacks.enter_context(floor_server())
        # the floor before the first round too, so each round sits between two floor turns (the floor swings by
        # a factor of 2 within one run on these machines)
        first_floor = stream_floor(floor_uri, args.docs, args.rounds)
        print(f"round 0 floor: {first_floor:,.0f} events/s", flush=True)
        floors: list[float] = []
        for number in range(args.rounds):
            order = contenders if number % 2 == 0 else list(reversed(contenders))
            for entry in order:
                drain_round(entry, number, args.docs)
            floors.append(stream_floor(floor_uri, args.docs, number))  # the floor taking its turn too
            print(f"round {number + 1} floor: {floors[-1]:,.0f} events/s", flush=True)
        for entry in contenders:
            snapshots.fill(entry.mongo, args.snapshot_docs)
        # the sorted read's floor, on our stack's collection, before the first snapshot round and after each
        stack_pids = [pid for entry in contenders for pid in entry.stack_pids()]

        def read_floor_turn() -> float:
            waited = snapshots.settle(stack_pids)
            found = snapshots.sorted_read_floor(contenders[0].endpoints.mongo_uri, args.snapshot_docs)
            print(f"snapshot round {len(read_floors)} floor: {found:,.0f} documents/s (quiet after {waited:.1f} s)",
                  flush=True)
            return found

        read_floors: list[float] = []
        if args.snapshot_rounds:
            read_floors.append(read_floor_turn())
        for number in range(args.snapshot_rounds):
            order = contenders if number % 2 == 0 else list(reversed(contenders))
            for entry in order:
                waited = snapshots.settle(stack_pids)
                result = snapshots.snapshot_round(entry.http, entry.consumer, entry.endpoints.kafka_bootstrap,
                                                  entry.endpoints.mongo_uri, entry.pid(), number,
                                                  args.snapshot_docs, _watch, {})
                print(f"snapshot round {number + 1} {entry.name}: {result['docs_per_s']:,.0f} documents/s, "
                      f"{result['snapshot_cpu_us_per_doc']:.0f} µs CPU/document (quiet after {waited:.1f} s)",
                      flush=True)
                entry.snapshots.append(result)
            read_floors.append(read_floor_turn())
        for number in range(args.latency_rounds):
            order = contenders if number % 2 == 0 else list(reversed(contenders))
            for entry in order:
                result = latency.latency_round(entry.mongo, entry.endpoints.kafka_bootstrap,
                                               f"{CONNECTOR}.bench.{latency.COLLECTION}", 10_000_000 * (number + 1),
                                               args.latency_rate, args.latency_seconds)
                print(f"latency round {number + 1} {entry.name}: p50 {result['p50_ms']:.0f} ms, "
                      f"p99 {result['p99_ms']:.0f} ms", flush=True)
                entry.latency.append(result)
        warm_floors = floors[args.warm_up:] or floors
        floor = statistics.median(warm_floors)
        ours_rounds = [r["events_per_s"] for r in contenders[0].rounds]
        around = [(before + after) / 2 for before, after in zip([first_floor, *floors[:-1]], floors, strict=True)]
        shares = [o / f for o, f in list(zip(ours_rounds, around, strict=True))[args.warm_up:]] or [0.0]
        read_floor = statistics.median(read_floors) if read_floors else 0.0
        read_shares = [r["docs_per_s"] / ((before + after) / 2) for r, before, after
                       in zip(contenders[0].snapshots, read_floors, read_floors[1:], strict=False)] or [0.0]
        load = Path("/proc/loadavg").read_text().split()[0]
        lines = [report.heading("side_by_side"), "",
                 f"- {args.rounds} rounds of {args.docs:,} documents (about 1 KB) per system, taking turns; medians "
                 f"of rounds {args.warm_up + 1}-{args.rounds} (the first {args.warm_up} warm the JVM); "
                 f"JSON with schemas; Debezium on Java Connect with {' '.join(PRODUCTION_JVM[:4])}; "
                 f"same producer batching ({PRODUCER['producer.batch.size']} B, linger 5 ms)",
                 "", "| figure | " + " | ".join(e.name for e in contenders) + " | ours / Debezium |",
                 "|---|" + "---|" * (len(contenders) + 1)]
        for key, label in (("events_per_s", "backlog drain, events/s"),
                           ("cpu_us_per_event", "worker CPU per drained event, µs"),
                           ("peak_rss_mib", "peak resident memory, MiB")):
            cells = [f"{_median(e, key, args.warm_up):,.0f} ({_span(e, key, args.warm_up)})" for e in contenders]
            ratio = (f"{_median(contenders[0], key, args.warm_up) / _median(contenders[1], key, args.warm_up):.2f}x"
                     if len(contenders) > 1 else "-")
            lines.append(f"| {label} | " + " | ".join(cells) + f" | {ratio} |")
        if args.snapshot_rounds:
            lines += _median_rows(contenders, lambda e: e.snapshots,
                                  (("docs_per_s", "initial snapshot, documents/s"),
                                   ("snapshot_cpu_us_per_doc", "worker CPU per snapshot document, µs")),
                                  f"{args.snapshot_docs:,} documents, median of {args.snapshot_rounds} rounds")
        if args.latency_rounds:
            lines += _median_rows(contenders, lambda e: e.latency,
                                  (("p50_ms", f"p50 latency at {args.latency_rate:,} writes/s, ms"),
                                   ("p99_ms", f"p99 latency at {args.latency_rate:,} writes/s, ms")),
                                  f"median of {args.latency_rounds} rounds")
        starts = [f"{e.startup_s:.1f}" for e in contenders]
        ratio = f"{contenders[0].startup_s / contenders[1].startup_s:.2f}x" if len(contenders) > 1 else "-"
        lines.append("| process start to task RUNNING, s | " + " | ".join(starts) + f" | {ratio} |")
        ours = _median(contenders[0], "events_per_s", args.warm_up)
        lines += ["", "- floor, same run, on a SecantusDB of its own, taking a turn before the first round and "
                      f"after each round: its raw change stream drains **{floor:,.0f} events/s** (no worker; median "
                      "of the same rounds, "
                      f"{min(warm_floors):,.0f}-{max(warm_floors):,.0f}); ours reaches {ours / floor:.0%} of it "
                      f"(round by round against the mean of the floor's turns before and after it: median "
                      f"{statistics.median(shares):.0%}, "
                      f"{min(shares):.0%}-{max(shares):.0%})",
                  *([f"- floor, same run: a bare `_id`-sorted read of the snapshot's collection as raw BSON, "
                     f"taking a turn before the first snapshot round and after each (every snapshot turn starting "
                     f"once both stacks are quiet), reads **{read_floor:,.0f} "
                     f"documents/s** (median of its turns); ours snapshots at "
                     f"{statistics.median(r['docs_per_s'] for r in contenders[0].snapshots) / read_floor:.0%} of it "
                     f"(round by round against the mean of the read's turns before and after it: "
                     f"{', '.join(f'{share:.0%}' for share in read_shares)})"]
                    if args.snapshot_rounds else []),
                  f"- 1-minute load average at the end: {load} on 2 cores", ""]
        report.append(lines)


if __name__ == "__main__":
    main()
