"""Debezium's snapshot metrics (``SnapshotMeter``): states, durations, tables and rows."""

from __future__ import annotations

import pytest

from connectors.mongodb.snapshot import metrics
from connectors.mongodb.snapshot.metrics import SnapshotMeter


def _values(meter: SnapshotMeter) -> dict[str, float]:
    return {m.name.removeprefix("debezium_metrics_") + (f"[{m.labels['table']}]" if "table" in m.labels else ""):
            m.value for m in meter.samples({"QueueTotalCapacity": 8.0})}


def test_before_any_snapshot_every_attribute_is_there() -> None:
    values = _values(SnapshotMeter("p", "0"))
    assert values["SnapshotRunning"] == values["SnapshotCompleted"] == values["TotalTableCount"] == 0
    assert values["MilliSecondsSinceLastEvent"] == -1 and values["QueueTotalCapacity"] == 8


def test_pause_resume_complete_as_debeziums_meter(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1_000_000]
    monkeypatch.setattr(metrics, "_now_ms", lambda: clock[0])
    meter = SnapshotMeter("p", "0")
    meter.skipped()
    assert _values(meter)["SnapshotSkipped"] == 1
    meter.started(["db.a", "db.b"])
    clock[0] += 2_000
    meter.paused()
    clock[0] += 3_000
    values = _values(meter)
    assert (values["SnapshotPaused"], values["SnapshotRunning"], values["SnapshotSkipped"]) == (1, 0, 0)
    assert values["SnapshotPausedDurationInSeconds"] == 3  # while paused, the pause so far
    meter.resumed()
    meter.collection_done("db.a", 7)
    clock[0] += 1_000
    meter.collection_done("db.b", 0)
    meter.completed()
    clock[0] += 5_000
    values = _values(meter)
    assert (values["SnapshotCompleted"], values["SnapshotRunning"], values["SnapshotPaused"]) == (1, 0, 0)
    assert values["SnapshotDurationInSeconds"] == 6 and values["SnapshotPausedDurationInSeconds"] == 3
    assert (values["TotalTableCount"], values["RemainingTableCount"]) == (2, 0)
    assert values["RowsScanned[db.a]"] == 7 and values["TotalNumberOfEventsSeen"] == 7
    meter.aborted()  # nothing runs: no change
    assert _values(meter)["SnapshotAborted"] == 0


def test_a_parallel_run_is_read_live_then_settled() -> None:
    progress = {"db.a": 3}
    meter = SnapshotMeter("p", "0")
    meter.started(["db.a"], lambda: (dict(progress), 1, 0))
    assert _values(meter)["RowsScanned[db.a]"] == 3
    progress["db.a"] = 5
    meter.aborted()
    values = _values(meter)
    assert values["SnapshotAborted"] == 1 and values["RowsScanned[db.a]"] == 5 and values["RemainingTableCount"] == 1

