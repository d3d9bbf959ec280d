"""Test doubles shared by the unit tests of a source task's send path: a task that is never started, the
producer calls those tests do not exercise, and the converters and offset store a runner is made with."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from connect.api.metrics import Metric
from connect.api.records import SourceRecord
from connect.api.task import SourceTask
from connect.runtime.worker_source_task import Converters
from connect.storage.file import FileOffsetStore
from converters.header import SimpleHeaderConverter
from converters.json import JsonConverter


class IdleTask(SourceTask):
    """The task a runner is made for: never started, only the send path runs."""

    def start(self, props: Mapping[str, str]) -> None:
        """Never started."""

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        """Nothing to stop."""


class QuietProducer:
    """The producer calls a send-path test does not exercise; subclasses add ``send`` (and transactions)."""

    @staticmethod
    def failure(error: Any) -> BaseException:
        return error if isinstance(error, BaseException) else RuntimeError(error)

    def dispatch(self) -> None:
        """Nothing is queued."""

    def metrics(self) -> list[Metric]:
        return []

    def flush(self, timeout: float | None = None) -> None:
        """Not used here."""

    def close(self, timeout: float | None = None) -> None:
        """Nothing to release."""


def json_converters() -> Converters:
    """JsonConverter for keys and values (schemas on), SimpleHeaderConverter for headers."""
    key, value = JsonConverter(), JsonConverter()
    key.configure({}, True)
    value.configure({}, False)
    return Converters(key, value, SimpleHeaderConverter())


def offset_store(tmp_path: Path) -> FileOffsetStore:
    """A started file offset store under ``tmp_path``."""
    store = FileOffsetStore(tmp_path / "offsets.json")
    store.start()
    return store
