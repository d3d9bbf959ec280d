"""The output folder's commit protocol: what an interrupted run leaves is undone by the next one."""

from __future__ import annotations

from pathlib import Path

from spark_jobs.store import OutputStore, State


def _stage(store: OutputStore, topic: str, batch: int) -> None:
    (store.work / "changes" / f"topic={topic}" / "date=2026-11-21").mkdir(parents=True)
    (store.work / "changes" / f"topic={topic}" / "date=2026-11-21" / "part-0.parquet").write_text(f"c{batch}")
    (store.work / "rejects").mkdir(parents=True)
    (store.work / "rejects" / "part-0.parquet").write_text(f"r{batch}")
    store.staged_table(topic).mkdir(parents=True)
    (store.staged_table(topic) / "part-0.parquet").write_text(f"t{batch}")


def test_commit_moves_the_batch_and_records_the_state(tmp_path: Path) -> None:
    store = OutputStore(tmp_path)
    _stage(store, "a.b.c", 1)
    store.commit(State(1, {"a.b.c": {"0": 10}}, {"a.b.c": "{}"}), ["a.b.c"])
    assert store.load() == State(1, {"a.b.c": {"0": 10}}, {"a.b.c": "{}"})
    assert (store.table("a.b.c") / "part-0.parquet").read_text() == "t1"
    assert [p.name for p in store.changes.rglob("*.parquet")] == ["b000001-part-0.parquet"]
    assert not store.work.exists()


def test_recover_removes_an_uncommitted_batch_and_restores_a_half_swapped_table(tmp_path: Path) -> None:
    store = OutputStore(tmp_path)
    _stage(store, "t", 1)
    store.commit(State(1), ["t"])
    _stage(store, "t", 2)
    # batch 2 died after moving its change-log files and renaming the old table away
    (store.changes / "topic=t" / "date=2026-11-21" / "b000002-part-0.parquet").write_text("c2")
    store.table("t").rename(store.table("t").with_name("t.old"))
    store.recover(2)
    assert store.load().batch == 1
    assert (store.table("t") / "part-0.parquet").read_text() == "t1"
    assert sorted(p.name for p in store.changes.rglob("*.parquet")) == ["b000001-part-0.parquet"]
    assert not store.work.exists() and not store.table("t").with_name("t.old").exists()
