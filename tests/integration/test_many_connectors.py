"""Many connectors on one worker: ``MANY_CONNECTORS`` FileStreamSource connectors (20 in ``make test``; ``make
many-connectors`` runs 100 and appends the figures to benchmarks/results.md), one task each, each reading a file
of one line into a topic of its own. Every connector and task ends RUNNING and every line reaches its topic.
Recorded, not asserted: the time from the first ``POST`` until all of that, and the worker's resident memory,
threads and open file descriptors per connector (the worker's process and its children, before and after).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks import report
from tests.integration.support import Worker, end_offsets, unique

MANY = int(os.environ.get("MANY_CONNECTORS", "20"))
RECORD_AT = 100  # the run whose figures go to benchmarks/results.md

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300 + 6 * MANY)]


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").iterdir():
            children = (task / "children").read_text().split()
            todo.extend(int(child) for child in children)
    return found


def _usage(pid: int) -> tuple[float, int, int]:
    """Resident MiB, threads and open fds of ``pid`` and its descendants."""
    rss, threads, fds = 0.0, 0, 0
    for member in _tree(pid):
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{member}/status").read_text().splitlines()
                      if ":" in line)
        rss += int(fields["VmRSS"].split()[0]) / 1024
        threads += int(fields["Threads"])
        fds += len(os.listdir(f"/proc/{member}/fd"))
    return rss, threads, fds


def _all_running(worker: Worker, names: set[str]) -> bool:
    reply = worker.http.get("/connectors", params={"expand": "status"})
    if reply.status_code != 200:
        return False
    statuses: dict[str, Any] = reply.json()
    failed = [n for n in names if n in statuses and any(t["state"] == "FAILED" for t in statuses[n]["status"]["tasks"])]
    assert not failed, f"tasks FAILED: {failed[:5]}"
    return all(n in statuses and statuses[n]["status"]["connector"]["state"] == "RUNNING"
               and len(statuses[n]["status"]["tasks"]) == 1
               and statuses[n]["status"]["tasks"][0]["state"] == "RUNNING" for n in names)


def test_many_file_connectors_on_one_worker(worker: Worker, stack: Any, tmp_path: Path) -> None:
    pid = worker.process.pid
    assert pid is not None
    base = unique("many-")
    names = {f"{base}-{i}" for i in range(MANY)}
    for name in names:
        (tmp_path / f"{name}.txt").write_text(f"line of {name}\n")
    before = _usage(pid)
    started = time.monotonic()
    for name in sorted(names):
        reply = worker.http.post("/connectors", json={"name": name, "config": {
            "connector.class": "FileStreamSource", "tasks.max": "1", "file": str(tmp_path / f"{name}.txt"),
            "topic": name}})
        assert reply.status_code == 201, f"POST {name}: {reply.status_code} {reply.text}"
    created = time.monotonic() - started
    deadline = started + 120 + 3 * MANY
    while not _all_running(worker, names):
        assert time.monotonic() < deadline, "not every connector and task RUNNING"
        time.sleep(0.5)
    running = time.monotonic() - started
    while True:
        offsets = end_offsets(stack.kafka_bootstrap, sorted(names))
        if all(offsets.get(name, 0) >= 1 for name in names):
            break
        assert time.monotonic() < deadline, f"{sum(1 for n in names if offsets.get(n, 0) >= 1)} of {MANY} lines"
        time.sleep(0.5)
    delivered = time.monotonic() - started
    after = _usage(pid)
    figures = [
        f"{MANY} FileStreamSource connectors, 1 task each, on one worker (distributed mode, one Kafka broker):",
        "",
        "| | value |", "|---|---|",
        f"| {MANY} POSTs answered (201) | {created:.1f} s |",
        f"| every connector and task RUNNING | {running:.1f} s after the first POST |",
        f"| every file's line in its topic | {delivered:.1f} s after the first POST |",
        f"| worker RSS before / after | {before[0]:.0f} / {after[0]:.0f} MiB: {(after[0] - before[0]) / MANY:.2f} MiB "
        "per connector |",
        f"| threads before / after | {before[1]} / {after[1]}: {(after[1] - before[1]) / MANY:.1f} per connector |",
        f"| open fds before / after | {before[2]} / {after[2]}: {(after[2] - before[2]) / MANY:.1f} per connector |",
    ]
    print("\n" + "\n".join(figures))
    if MANY >= RECORD_AT:
        report.append(["", report.heading("many_connectors"), "", *figures])
