"""Soak: one worker, 10 MongoDB connectors on 10 collections, a steady stream of writes for ``SOAK_SECONDS``
(120 in ``make test``: 40 s of warm-up, then 80 s watched; ``make soak`` runs 30 minutes and writes
benchmarks/soak-results.md). After a warm-up (the first third), the worker's resident memory, open file
descriptors and threads stay flat; every write is in Kafka at the end. Throughput and end-to-end latency are
recorded per window, not asserted.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.integration.support import Worker, create_connector, end_offsets, read_topic, unique

pytestmark = [pytest.mark.integration, pytest.mark.timeout(int(os.environ.get("SOAK_SECONDS", "120")) + 600)]

SOAK_SECONDS = float(os.environ.get("SOAK_SECONDS", "120"))
RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "soak-results.md"
CONNECTORS = 10
RATE = 100.0  # writes per second over all collections
SAMPLE_EVERY = 5.0
RSS_GROWTH_MB = 25.0  # allowed between the end of the warm-up and the end
FD_GROWTH = 10
THREAD_GROWTH = 2


@dataclass(frozen=True)
class Sample:
    at: float
    rss_mb: float
    fds: int
    threads: int
    written: int


def _sample(pid: int, at: float, written: int) -> Sample:
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return Sample(at, int(fields["VmRSS"].split()[0]) / 1024, len(os.listdir(f"/proc/{pid}/fd")),
                  int(fields["Threads"]), written)


def _write(mongo: Any, db: str, stop: threading.Event, counter: list[int]) -> None:
    started, n = time.monotonic(), 0
    while not stop.is_set():
        coll = mongo[db][f"c{n % CONNECTORS}"]
        doc_id = n // CONNECTORS
        if doc_id % 3 == 2:
            coll.update_one({"_id": doc_id - 1}, {"$set": {"v": n, "at": time.time()}})
        else:
            coll.insert_one({"_id": doc_id, "v": n, "at": time.time(), "pad": "p" * 200})
        n += 1
        counter[0] = n
        stop.wait(max(0.0, started + n / RATE - time.monotonic()))


def _median(samples: list[Sample], key: Callable[[Sample], float]) -> float:
    return statistics.median(key(s) for s in samples)


def test_ten_connectors_hold_steady(worker: Worker, stack: Any, mongo: Any) -> None:
    db, prefix = unique("soak_"), unique("soak")
    for i in range(CONNECTORS):
        create_connector(worker, unique(f"soak{i}-"), {
            "connector.class": "io.debezium.connector.mongodb.MongoDbConnector",
            "mongodb.connection.string": stack.mongo_uri, "topic.prefix": prefix,
            "collection.include.list": f"{db}.c{i}"}, timeout=120)
    pid = worker.process.pid
    assert pid is not None
    topics = [f"{prefix}.{db}.c{i}" for i in range(CONNECTORS)]
    stop, counter = threading.Event(), [0]
    writer = threading.Thread(target=_write, args=(mongo, db, stop, counter), daemon=True)
    started, began, load_before = time.monotonic(), time.strftime("%Y-%m-%d %H:%M", time.gmtime()), os.getloadavg()
    writer.start()
    samples: list[Sample] = []
    try:
        while time.monotonic() - started < SOAK_SECONDS:
            assert writer.is_alive(), "the writer stopped"
            samples.append(_sample(pid, time.monotonic() - started, counter[0]))
            stop.wait(SAMPLE_EVERY)
    finally:
        stop.set()
        writer.join(30)
    written = counter[0]
    deadline = time.monotonic() + 300
    while sum(end_offsets(stack.kafka_bootstrap, topics).values()) < written:
        assert time.monotonic() < deadline, f"{sum(end_offsets(stack.kafka_bootstrap, topics).values())} of " \
                                            f"{written} writes in Kafka"
        time.sleep(0.5)
    latency = _latency_ms(stack.kafka_bootstrap, topics[0])

    warm = [s for s in samples if s.at >= SOAK_SECONDS / 3]
    head, tail = warm[:3], warm[-3:]
    growth = _median(tail, lambda s: s.rss_mb) - _median(head, lambda s: s.rss_mb)
    conditions = (f"{began} to {time.strftime('%H:%M', time.gmtime())} UTC, {platform.machine()}, "
                  f"{os.cpu_count()} cores, 1-minute load average {load_before[0]:.1f} at the start and "
                  f"{os.getloadavg()[0]:.1f} at the end")
    report = _report(samples, written, growth, latency, conditions)
    target = RESULTS if SOAK_SECONDS >= 1800 else worker.process.state_dir / "soak-results.md"
    target.write_text(report, encoding="utf-8")
    print(f"\n{report}")
    assert growth <= RSS_GROWTH_MB, f"RSS grew {growth:.1f} MB after the warm-up:\n{report}"
    assert max(s.fds for s in tail) - min(s.fds for s in head) <= FD_GROWTH, report
    assert max(s.threads for s in tail) - min(s.threads for s in head) <= THREAD_GROWTH, report


def _latency_ms(bootstrap: str, topic: str) -> list[float]:
    """Per record of ``topic``: Kafka's record timestamp less the write's wall-clock time, in ms."""
    out = []
    for record in read_topic(bootstrap, topic, end_offsets(bootstrap, [topic])[topic], timeout=120):
        if record.value is None:
            continue
        after = json.loads(json.loads(record.value)["payload"]["after"] or "null")
        if after and "at" in after:
            at = after["at"]
            seconds = float(at["$numberDouble"]) if isinstance(at, dict) else float(at)
            out.append(record.timestamp - seconds * 1000)
    return out


def _report(samples: list[Sample], written: int, growth: float, latency: list[float], conditions: str) -> str:
    window = 300.0 if SOAK_SECONDS >= 1800 else 60.0
    rows = []
    for start in range(0, int(SOAK_SECONDS), int(window)):
        inside = [s for s in samples if start <= s.at < start + window]
        if len(inside) < 2:
            continue
        rate = (inside[-1].written - inside[0].written) / (inside[-1].at - inside[0].at)
        rows.append(f"| {start // 60}-{(start + int(window)) // 60} min | {rate:.0f} | {inside[-1].rss_mb:.0f} "
                    f"| {inside[-1].fds} | {inside[-1].threads} |")
    p50 = statistics.median(latency) if latency else float("nan")
    p99 = sorted(latency)[int(len(latency) * 0.99)] if latency else float("nan")
    return (
        f"# Soak: {CONNECTORS} MongoDB connectors, one worker, {SOAK_SECONDS / 60:.0f} min\n\n"
        f"Written by tests/integration/test_soak.py (`make soak`), {conditions}. {written} writes over "
        f"{CONNECTORS} collections, aiming at {RATE:.0f}/s, done at {written / SOAK_SECONDS:.0f}/s (each write "
        f"waits for SecantusDB's answer); all in Kafka at the end. Resident memory growth after the warm-up (first "
        f"third): {growth:+.1f} MB. Latency (write to Kafka record timestamp, first collection): p50 "
        f"{p50:.0f} ms, p99 {p99:.0f} ms.\n\n"
        "| window | writes/s | RSS (MB) | open fds | threads |\n|---|---|---|---|---|\n" + "\n".join(rows) + "\n"
    )
