"""Connect's ``putSafe``: a FAILED or UNASSIGNED status from a worker of an older generation never hides the status
another worker wrote for the same connector or task in a later generation (the work moved to it)."""

from __future__ import annotations

from connect.storage.base import Status
from connect.storage.config_state import ConnectorTaskId
from connect.storage.memory import MemoryStatusStore

TASK = ConnectorTaskId("c", 0)


def test_a_stale_workers_failure_or_stop_does_not_hide_the_new_owners_state() -> None:
    store = MemoryStatusStore()
    store.put_task(TASK, Status("RUNNING", None, "new:8083", 5))
    store.put_task(TASK, Status("FAILED", "fenced", "zombie:8083", 4))  # its copy failed, its producer fenced
    store.put_task(TASK, Status("UNASSIGNED", None, "zombie:8083", 4))
    store.put_connector("c", Status("RUNNING", None, "new:8083", 5))
    store.put_connector("c", Status("UNASSIGNED", None, "zombie:8083", 4))
    assert store.task(TASK) == Status("RUNNING", None, "new:8083", 5)
    assert store.connector("c") == Status("RUNNING", None, "new:8083", 5)


def test_the_same_worker_or_a_later_generation_writes_as_before() -> None:
    store = MemoryStatusStore()
    store.put_task(TASK, Status("RUNNING", None, "a:8083", 5))
    store.put_task(TASK, Status("FAILED", "boom", "a:8083", 5))  # the owner's own failure
    assert store.task(TASK) == Status("FAILED", "boom", "a:8083", 5)
    store.put_task(TASK, Status("UNASSIGNED", None, "b:8083", 6))  # a later generation's worker
    assert store.task(TASK) == Status("UNASSIGNED", None, "b:8083", 6)
    store.put_task(TASK, Status("RUNNING", None, "a:8083", 4))  # not a safe write: RUNNING always lands
    assert store.task(TASK) == Status("RUNNING", None, "a:8083", 4)
    store.put_task(TASK, None)
    assert store.task(TASK) is None
