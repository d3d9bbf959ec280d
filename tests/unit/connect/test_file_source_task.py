"""FileStreamSourceTask's poll: with nothing new to read it waits (Java's task waits a second) instead of returning
at once, which made an idle task's loop spin a CPU core; stop() ends the wait."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pytest

from connect.api.records import SourceRecord
from connect.api.task import SourceTaskContext
from connectors.file import source

WAIT = 60.0  # the idle wait under test: far longer than any bounded wait below, so a poll that returns was woken


class _Reader:
    def offset(self, partition: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return None


class _Context:
    offset_storage_reader = _Reader()
    task_id = 0
    connector_name = "files"
    topic_readers = None
    transaction_context = None


class _Poll:
    """One poll() on a thread of its own; ``done`` is set when it returned."""

    def __init__(self, task: source.FileStreamSourceTask) -> None:
        self.done = threading.Event()
        self.result: list[SourceRecord] | None = None
        self._thread = threading.Thread(target=self._run, args=(task,), daemon=True)
        self._thread.start()

    def _run(self, task: source.FileStreamSourceTask) -> None:
        self.result = task.poll()
        self.done.set()


def _task(path: Path, monkeypatch: pytest.MonkeyPatch) -> source.FileStreamSourceTask:
    monkeypatch.setattr(source, "IDLE_WAIT", WAIT)
    task = source.FileStreamSourceTask()
    task.initialize(cast(SourceTaskContext, _Context()))
    task.start({"file": str(path), "topic": "lines"})
    return task


@pytest.mark.parametrize("content", ["", "line 0\n", "no newline yet"], ids=["empty", "read", "partial"])
def test_an_idle_poll_waits_until_stop(content: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "lines.txt"
    path.write_text(content)
    task = _task(path, monkeypatch)
    if content.endswith("\n"):
        assert [r.value for r in task.poll() or []] == ["line 0"]  # data: returned at once, no wait
    idle = _Poll(task)
    assert not idle.done.wait(0.5), "an idle poll returned at once (the task's loop would spin)"
    task.stop()
    assert idle.done.wait(10), "stop() did not end the idle poll's wait"
    assert idle.result is None
    stopped = _Poll(task)  # once stopped, a poll does not wait at all
    assert stopped.done.wait(10) and stopped.result is None


def test_a_missing_file_is_waited_for_until_stop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = _task(tmp_path / "not-yet.txt", monkeypatch)
    idle = _Poll(task)
    assert not idle.done.wait(0.5)
    task.stop()
    assert idle.done.wait(10) and idle.result is None


def test_lines_written_after_an_idle_poll_are_read_by_the_next(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "lines.txt"
    path.write_text("")
    task = _task(path, monkeypatch)
    monkeypatch.setattr(source, "IDLE_WAIT", 0.01)  # this test is about what the next poll reads, not the wait
    assert task.poll() is None
    path.write_text("line 0\nline 1\n")
    records = task.poll() or []
    assert [(r.value, r.source_offset) for r in records] == [("line 0", {"position": 7}), ("line 1", {"position": 14})]
    task.stop()
