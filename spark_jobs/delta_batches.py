"""The batch log of a Delta output (``_batches/`` under ``--output``): a batch's :class:`Plan` (the Kafka offsets it
reads, written before any of its Delta writes) and :class:`Done` (what the committed batches add up to, written
after them); see :mod:`spark_jobs.delta_output`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from spark_jobs.delta_replace import Position
from spark_jobs.hadoop_fs import HadoopFolder, qualified
from spark_jobs.kafka_source import KafkaRange

__all__ = ["KEEP_BATCHES", "DeltaOutput", "Done", "Plan"]

KEEP_BATCHES = 20  # plan/done files kept in _batches (older ones are deleted)


@dataclass(frozen=True)
class Plan:
    """Batch ``batch``: the offsets it reads, fixed before it writes anything."""

    batch: int
    app: str
    fmt: str
    ranges: tuple[KafkaRange, ...]

    @property
    def records(self) -> int:
        """How many Kafka records the batch reads."""
        return sum(r.end - r.start for r in self.ranges)

    def to_json(self) -> str:
        return json.dumps({"batch": self.batch, "app": self.app, "format": self.fmt,
                           "ranges": [[r.topic, r.partition, r.start, r.end] for r in self.ranges]}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        data: dict[str, Any] = json.loads(text)
        return cls(int(data["batch"]), str(data["app"]), str(data["format"]),
                   tuple(KafkaRange(str(t), int(p), int(s), int(e)) for t, p, s, e in data["ranges"]))


@dataclass(frozen=True)
class Done:
    """What the committed batches add up to: the next offset per topic partition, the parse schemas."""

    batch: int = 0
    app: str = ""
    offsets: dict[str, dict[str, int]] = field(default_factory=dict)
    schemas: dict[str, str] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)  # rows of each latest-state table (absent: not known)
    # per latest-state table, a source position at or above every row it holds (absent: not known)
    positions: dict[str, Position] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"batch": self.batch, "app": self.app, "offsets": self.offsets, "schemas": self.schemas,
                           "rows": self.rows, "positions": {t: list(p) for t, p in self.positions.items()}},
                          indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Done:
        data: dict[str, Any] = json.loads(text)
        positions = {str(t): (int(p[0]), None if p[1] is None else int(p[1]))
                     for t, p in data.get("positions", {}).items()}
        return cls(int(data["batch"]), str(data["app"]), data["offsets"], data["schemas"],
                   {str(t): int(n) for t, n in data.get("rows", {}).items()}, positions)


class DeltaOutput:
    """The output folder: its Delta tables and its batch log."""

    def __init__(self, spark: SparkSession, output: str) -> None:
        self.root = qualified(output)
        self.log = HadoopFolder(spark, f"{self.root}/_batches")

    def table(self, topic: str) -> str:
        return f"{self.root}/tables/{topic}"

    def changes(self, topic: str) -> str:
        return f"{self.root}/changes/{topic}"

    @property
    def rejects(self) -> str:
        return f"{self.root}/rejects"

    def state(self) -> tuple[Done, Plan | None]:
        """The last committed state, and the plan of a batch that began after it but never finished."""
        names = set(self.log.names())
        done_numbers = sorted(int(n.split(".")[0]) for n in names if n.endswith(".done.json"))
        plan_numbers = sorted(int(n.split(".")[0]) for n in names if n.endswith(".plan.json"))
        done = Done.from_json(self.log.read(f"{done_numbers[-1]:08d}.done.json")) if done_numbers else Done()
        pending = [n for n in plan_numbers if n > done.batch]
        plan = Plan.from_json(self.log.read(f"{pending[-1]:08d}.plan.json")) if pending else None
        return done, plan

    def begin(self, plan: Plan) -> None:
        self.log.write(f"{plan.batch:08d}.plan.json", plan.to_json())

    def commit(self, done: Done) -> None:
        self.log.write(f"{done.batch:08d}.done.json", done.to_json())
        for name in self.log.names():
            number = name.split(".")[0]
            if number.isdigit() and int(number) <= done.batch - KEEP_BATCHES:
                self.log.delete(name)
