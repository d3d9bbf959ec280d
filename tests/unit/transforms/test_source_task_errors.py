"""The source-task loop with transforms and errors.tolerance, driven with an in-process fake producer (the real
Kafka path is covered by tests/integration/transforms): dropped and skipped records keep their offsets moving,
failures with tolerance none fail the task, and records Kafka refuses are skipped with tolerance all."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from connect.api.data import STRING, Schema, Struct, Type, struct_schema
from connect.api.errors import DataError, RetriableError
from connect.api.metrics import Metric
from connect.api.records import SourceRecord
from connect.api.task import SourceTask
from connect.runtime.error_handling import ErrorHandlingConfig
from connect.runtime.task_contracts import TaskStatusListener
from connect.runtime.transformation_chain import build_chain
from connect.runtime.worker_source_task import Converters, WorkerSourceTask
from connect.storage.config_state import ConnectorTaskId
from connect.storage.file import FileOffsetStore
from converters.header import SimpleHeaderConverter
from converters.json import JsonConverter

SCHEMA = struct_schema([("n", Schema(Type.INT32)), ("s", STRING)], name="v")


class _Task(SourceTask):
    def __init__(self, values: list[Any]) -> None:
        self.values = list(values)
        self.committed: list[SourceRecord] = []

    def start(self, props: Any) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        out = [SourceRecord({"p": 0}, {"n": i}, "t", None, None, None, SCHEMA, v) for i, v in enumerate(self.values)]
        self.values = []
        return out or None

    def commit_record(self, record: SourceRecord) -> None:
        self.committed.append(record)

    def stop(self) -> None:
        pass


class _Producer:
    """Refuses (asynchronously) the records whose value contains ``refuse``."""

    def __init__(self) -> None:
        self.sent: list[bytes | None] = []

    def send(self, topic: str, *, value: bytes | None, key: bytes | None, headers: list[tuple[str, bytes]],
             partition: int | None, timestamp_ms: int | None,
             on_done: Callable[[BaseException | None], Any] | None = None) -> None:
        if value is not None and b"refuse" in value:
            if on_done is not None:
                on_done(RuntimeError("RecordTooLarge (simulated)"))
            return
        self.sent.append(value)
        if on_done is not None:
            on_done(None)

    @staticmethod
    def failure(error: Any) -> BaseException:
        """Failures are exceptions already."""
        return error if isinstance(error, BaseException) else RuntimeError(error)

    def dispatch(self) -> None:
        pass

    def metrics(self) -> list[Metric]:
        return []

    def flush(self, timeout: float | None = None) -> None:
        pass

    def close(self, timeout: float | None = None) -> None:
        pass


class _Listener(TaskStatusListener):
    def __init__(self) -> None:
        self.failed: list[str] = []
        self.started = threading.Event()

    def on_startup(self, task_id: ConnectorTaskId) -> None:
        self.started.set()

    def on_failure(self, task_id: ConnectorTaskId, trace: str) -> None:
        self.failed.append(trace)


def _run(tmp_path: Path, values: list[Any], props: dict[str, str],
         value_converter: JsonConverter | None = None) -> tuple[_Task, _Producer, _Listener, Any]:
    task, producer, listener = _Task(values), _Producer(), _Listener()
    converters = Converters(JsonConverter(), value_converter or JsonConverter(), SimpleHeaderConverter())
    converters.key.configure({}, True)
    converters.value.configure({}, False)
    store = FileOffsetStore(tmp_path / "offsets.json")
    runner = WorkerSourceTask(ConnectorTaskId("c", 0), task, {}, converters, producer, store, listener,
                              flush_interval_ms=50, flush_timeout_ms=1000, chain=build_chain(props),
                              errors=ErrorHandlingConfig.parse(props))
    runner.start()
    listener.started.wait(5)
    threading.Event().wait(0.5)
    runner.stop()
    assert runner.await_stop(10)
    offsets = json.loads(store.path.read_text()) if store.path.exists() else []
    return task, producer, listener, offsets


def _value(n: int, s: str) -> Struct:
    return Struct(SCHEMA, {"n": n, "s": s})


CAST = {"transforms": "c", "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Value",
        "transforms.c.spec": "s:int32"}


def test_filtered_records_commit_their_offsets(tmp_path: Path) -> None:
    props = {"transforms": "f", "transforms.f.type": "Filter", "transforms.f.predicate": "p",
             "predicates": "p", "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": "t"}
    task, producer, listener, offsets = _run(tmp_path, [_value(1, "a"), _value(2, "b")], props)
    assert producer.sent == [] and not listener.failed
    assert len(task.committed) == 2
    assert [json.loads(v) for _, v in offsets] == [{"n": 1}]


def test_tolerance_all_skips_what_a_transform_cannot_handle(tmp_path: Path) -> None:
    task, producer, listener, offsets = _run(tmp_path, [_value(1, "12"), _value(2, "x"), _value(3, "3")],
                                             {**CAST, "errors.tolerance": "all"})
    assert [json.loads(v or b"null")["payload"]["s"] for v in producer.sent] == [12, 3]
    assert not listener.failed and [json.loads(v) for _, v in offsets] == [{"n": 2}]
    assert len(task.committed) == 3


def test_tolerance_none_fails_the_task(tmp_path: Path) -> None:
    _, producer, listener, _ = _run(tmp_path, [_value(1, "12"), _value(2, "x")], CAST)
    assert len(producer.sent) == 1 and len(listener.failed) == 1
    assert "Tolerance exceeded in error handler" in listener.failed[0]
    assert "could not be cast" in listener.failed[0]


def test_records_kafka_refuses(tmp_path: Path) -> None:
    values = [_value(1, "ok"), _value(2, "refuse"), _value(3, "ok")]
    task, producer, listener, offsets = _run(tmp_path, values, {"errors.tolerance": "all"})
    assert len(producer.sent) == 2 and not listener.failed and len(task.committed) == 3
    assert [json.loads(v) for _, v in offsets] == [{"n": 2}]
    _, _, listener, _ = _run(tmp_path / "none", values, {})
    assert listener.failed and "RecordTooLarge" in listener.failed[0]


class _FlakyConverter(JsonConverter):
    """Fails each record's first conversion: retriably for values with s="retry", for good with s="bad"."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def from_connect_data(self, topic: str, schema: Any, value: Any, headers: Any = ()) -> bytes | None:
        s = value.get("s")
        first = s not in self.seen
        self.seen.append(s)
        if s == "bad" or (s == "retry" and first):
            raise (RetriableError if s == "retry" else DataError)(f"cannot convert {s}")
        return super().from_connect_data(topic, schema, value, headers)


def test_converter_failures_are_retried_and_tolerated(tmp_path: Path) -> None:
    converter = _FlakyConverter()
    props = {"errors.tolerance": "all", "errors.retry.timeout": "5000", "errors.retry.delay.max.ms": "10"}
    task, producer, listener, offsets = _run(tmp_path, [_value(1, "retry"), _value(2, "bad"), _value(3, "ok")],
                                             props, converter)
    assert [json.loads(v or b"null")["payload"]["s"] for v in producer.sent] == ["retry", "ok"]
    assert converter.seen == ["retry", "retry", "bad", "ok"], "a retriable failure retried once, a bad value not"
    assert not listener.failed and len(task.committed) == 3 and [json.loads(v) for _, v in offsets] == [{"n": 2}]
    converter = _FlakyConverter()
    _, producer, listener, _ = _run(tmp_path / "none", [_value(1, "bad"), _value(2, "ok")], {}, converter)
    assert producer.sent == [] and len(listener.failed) == 1
    assert "Tolerance exceeded in error handler" in listener.failed[0] and "cannot convert bad" in listener.failed[0]
