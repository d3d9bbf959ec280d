"""Where a worker's CPU goes, thread by thread: user + system CPU of each thread of a process from
``/proc/<pid>/task``, named by the Python thread that runs on it (``py-spy dump`` lists each thread's OS id and
name) or else by its OS name (librdkafka's ``rdk:broker1``, ``rdk:main``...).

    tracker = thread_cpu.Tracker(pid)
    ...
    shares = tracker.stop()   # {"task": 12.3, "acks": 4.1, "rdk:broker": 2.0, ...} CPU seconds
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
_DUMP_LINE = re.compile(r'^Thread (\d+) \([^)]*\): "(.*)"$', re.MULTILINE)
_PY_SPY_CANDIDATES = ("py-spy", "/tmp/pyspy/bin/py-spy", "/work/main/.venv/bin/py-spy")


def sample(pid: int) -> dict[int, tuple[str, float]]:
    """thread id -> (OS name, CPU seconds so far) of every thread of ``pid``."""
    found: dict[int, tuple[str, float]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        comm, rest = stat.split("(", 1)[1].rsplit(")", 1)
        fields = rest.split()
        found[int(task.name)] = (comm, (int(fields[11]) + int(fields[12])) / CLK_TCK)
    return found


def python_names(pid: int) -> dict[int, str]:
    """thread id -> Python thread name, by ``py-spy dump`` (empty without py-spy)."""
    py_spy = next((path for path in map(shutil.which, _PY_SPY_CANDIDATES) if path), None)
    if py_spy is None:
        return {}
    try:
        out = subprocess.run([py_spy, "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30,
                             check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return {int(tid): name for tid, name in _DUMP_LINE.findall(out)}


def role(name: str) -> str:
    """A thread's role in a worker, from its Python or OS name."""
    if name.startswith("task-"):
        return "task"
    for suffix in ("-fetcher", "-acks"):
        if name.endswith(suffix):
            return suffix[1:]
    if "snapshot" in name:
        return "snapshot"
    if name.startswith("rdk:broker"):
        return "rdk:broker"
    if name.startswith("rdk:"):
        return name
    return "other"


class Tracker:
    """Samples a process's threads every ``interval`` seconds until :meth:`stop` (a thread that ends between
    samples keeps what it had spent at the last one), naming them by py-spy now and then."""

    def __init__(self, pid: int, interval: float = 0.5, name_every: int = 4) -> None:
        self._pid = pid
        self._first = sample(pid)
        self._latest = dict(self._first)
        self._names: dict[int, str] = {}
        self._interval = interval
        self._name_every = name_every
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="thread-cpu", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        rounds = 0
        while not self._done.wait(self._interval):
            self._take(rounds % self._name_every == 1)
            rounds += 1

    def _take(self, name: bool) -> None:
        try:
            self._latest.update(sample(self._pid))
        except OSError:  # the process ended
            return
        if name:
            self._names.update(python_names(self._pid))

    def stop(self) -> dict[str, float]:
        """CPU seconds since the tracker started, by thread role, largest first."""
        self._done.set()
        self._thread.join()
        self._take(True)
        result: dict[str, float] = {}
        for tid, (comm, seconds) in self._latest.items():
            key = role(self._names.get(tid, comm))
            result[key] = result.get(key, 0.0) + seconds - self._first.get(tid, (comm, 0.0))[1]
        return dict(sorted(result.items(), key=lambda item: -item[1]))


def line(shares: dict[str, float], events: int) -> str:
    """``task 20.1, acks 6.3, ...`` in µs per event."""
    return ", ".join(f"{key} {seconds / events * 1e6:.1f}" for key, seconds in shares.items() if seconds > 0)
