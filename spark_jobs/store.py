"""The output folder of the materialization and how a run commits to it, so that a run killed at any point
leaves the previous tables readable and the next run completes the work without duplicates.

Layout of ``<output>``::

    _state.json                       committed batch number, Kafka offsets read so far, parse schemas
    tables/<topic>/                   latest state of each collection (Parquet)
    changes/topic=<topic>/date=<d>/   change log (Parquet); file names carry the batch number
    rejects/                          rejected records (Parquet); file names carry the batch number
    _work/                            staging of the running batch

A run writes everything under ``_work/`` first. It then moves the change-log and reject files of batch ``n``
into place, swaps each table directory (``tables/t`` -> ``tables/t.old``, staging -> ``tables/t``) and finally
replaces ``_state.json`` atomically. A rerun after a crash deletes the files of the uncommitted batch ``n``,
restores a table whose swap was cut in half and starts again from the committed offsets; tables swapped before
the crash are simply brought up to date again (applying the same events twice gives the same latest state).
The output must be a local (or mounted) file system path.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["OutputStore", "State"]

STATE_FILE = "_state.json"


@dataclass(frozen=True)
class State:
    """What the last committed run left: its batch number, the next offset per topic partition, the schemas."""

    batch: int = 0
    offsets: dict[str, dict[str, int]] = field(default_factory=dict)
    schemas: dict[str, str] = field(default_factory=dict)
    fmt: str = "auto"

    def to_json(self) -> str:
        return json.dumps({"batch": self.batch, "format": self.fmt, "offsets": self.offsets,
                           "schemas": self.schemas}, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> State:
        data: dict[str, Any] = json.loads(text)
        return cls(int(data["batch"]), data.get("offsets", {}), data.get("schemas", {}), data.get("format", "auto"))


class OutputStore:
    """The output folder of one materialization."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).absolute()

    @property
    def work(self) -> Path:
        return self.root / "_work"

    def table(self, topic: str) -> Path:
        return self.root / "tables" / topic

    def staged_table(self, topic: str) -> Path:
        return self.work / "tables" / topic

    @property
    def changes(self) -> Path:
        return self.root / "changes"

    @property
    def rejects(self) -> Path:
        return self.root / "rejects"

    def load(self) -> State:
        path = self.root / STATE_FILE
        return State.from_json(path.read_text(encoding="utf-8")) if path.is_file() else State()

    def recover(self, batch: int) -> None:
        """Undo what an interrupted run of ``batch`` left: staging, its change-log/reject files, half swaps."""
        shutil.rmtree(self.work, ignore_errors=True)
        for folder in (self.changes, self.rejects):
            for path in folder.rglob(f"b{batch:06d}-*") if folder.is_dir() else ():
                path.unlink()
        tables = self.root / "tables"
        for old in tables.glob("*.old") if tables.is_dir() else ():
            current = old.with_suffix("")
            if current.exists():
                shutil.rmtree(old)
            else:
                old.rename(current)

    def commit(self, state: State, topics: list[str]) -> None:
        """Move the staged batch into place, then record ``state``."""
        for staged, final in ((self.work / "changes", self.changes), (self.work / "rejects", self.rejects)):
            _move_files(staged, final, state.batch)
        for topic in topics:
            staged = self.staged_table(topic)
            if not staged.is_dir():
                continue
            current, old = self.table(topic), self.table(topic).with_name(topic + ".old")
            current.parent.mkdir(parents=True, exist_ok=True)
            if current.exists():
                current.rename(old)
            staged.rename(current)
            shutil.rmtree(old, ignore_errors=True)
        tmp = self.root / (STATE_FILE + ".tmp")
        tmp.write_text(state.to_json(), encoding="utf-8")
        os.replace(tmp, self.root / STATE_FILE)
        shutil.rmtree(self.work, ignore_errors=True)


def _move_files(staged: Path, final: Path, batch: int) -> None:
    """Data files of a Spark output folder moved under ``final`` (same partition folders), named for ``batch``."""
    if not staged.is_dir():
        return
    for path in sorted(staged.rglob("*.parquet")):
        target = final / path.parent.relative_to(staged) / f"b{batch:06d}-{path.name}"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
