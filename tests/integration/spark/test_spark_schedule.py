"""``python -m spark_jobs.materialize --interval``: one process runs batch after batch as records arrive, and a
SIGTERM (Kubernetes' stop) ends it after the run under way, with every batch committed."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest

from stack.procs import REPO_ROOT
from tests.integration.spark.workload import produce, stored_table
from tests.integration.support import unique
from tests.unit.spark.support import change_event, json_records, mongo_documents

pytestmark = pytest.mark.integration


def _lines(stream: IO[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line.rstrip("\n"))


def _wait_line(lines: queue.Queue[str], seen: list[str], wanted: str, timeout: float = 180) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        seen.append(line)
        if wanted in line:
            return line
    raise AssertionError(f"no line with {wanted!r} within {timeout:.0f} s; stdout so far:\n" + "\n".join(seen))


@pytest.mark.timeout(400)
def test_runs_at_an_interval_follow_new_records_and_stop_on_sigterm(spark: Any, stack: Any, tmp_path: Path) -> None:
    topic = unique("every.")
    first = [change_event("insert", "db", "c", {"_id": n, "v": n}) for n in range(3)]
    produce(stack.kafka_bootstrap, topic, [r for _, r in json_records(first)])
    output = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_GATEWAY_PORT", "PYSPARK_SUBMIT_ARGS")}
    process = subprocess.Popen(
        [sys.executable, "-m", "spark_jobs.materialize", "--bootstrap-servers", stack.kafka_bootstrap, "--topics",
         topic, "--output", str(output), "--master", "local[2]", "--interval", "1"],
        cwd=REPO_ROOT, env={**env, "PYTHONPATH": str(REPO_ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []
    assert process.stdout is not None and process.stderr is not None
    threading.Thread(target=_lines, args=(process.stdout, lines), daemon=True).start()
    errors: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(process.stderr, errors), daemon=True).start()
    try:
        _wait_line(lines, seen, "batch 1: 3 records read, 3 change events")
        _wait_line(lines, seen, "batch 1: 0 records read")  # the next run found nothing new
        later = [change_event("update", "db", "c", {"_id": 1, "v": 10}, updated={"v": 10}),
                 change_event("insert", "db", "c", {"_id": 3, "v": 3})]
        produce(stack.kafka_bootstrap, topic, [r for _, r in json_records(later)])
        _wait_line(lines, seen, "batch 2: 2 records read, 2 change events")
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    stderr = "\n".join(errors.queue)
    assert "SIGTERM received: stopping after the run under way" in stderr, stderr
    assert "stopped after" in stderr, stderr
    assert stored_table(spark, output, topic) == mongo_documents(
        [{"_id": 0, "v": 0}, {"_id": 1, "v": 10}, {"_id": 2, "v": 2}, {"_id": 3, "v": 3}])
