"""Error handling of the record stages (Connect's ``RetryWithToleranceOperator`` and ``LogReporter``).

A source task runs each record through the transformation chain, then the key, value and header converters.
Each of those stages runs inside :meth:`RetryWithToleranceOperator.execute`:

* a :class:`~connect.api.errors.RetriableError` is retried until ``errors.retry.timeout`` ms have passed
  (0: never, -1: forever), waiting 300 ms, then twice as long each time, at most ``errors.retry.delay.max.ms``;
* any other error (or a retriable one past its deadline) fails the record. With ``errors.tolerance=none`` that
  fails the task ("Tolerance exceeded in error handler", the cause chained); with ``all`` the record is skipped
  and counted, and ``execute`` returns :data:`FAILED`;
* with ``errors.log.enable`` every failure is logged with the stage and the class, and with
  ``errors.log.include.messages`` the record too.

Nothing is skipped silently: a skipped record is always counted and logged at least at WARN level.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, TypeVar

from connect.api.errors import ConnectError, RetriableError
from connect.api.records import SourceRecord, describe

log = logging.getLogger(__name__)

T = TypeVar("T")

INITIAL_BACKOFF_MS: Final = 300


class Stage(StrEnum):
    """The record stages Connect names in its error reports."""

    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"


class _Failed:
    def __repr__(self) -> str:
        return "FAILED"


FAILED: Final[Any] = _Failed()
"""What :meth:`RetryWithToleranceOperator.execute` returns for a record that failed and is tolerated."""


@dataclass(frozen=True, slots=True)
class ErrorHandlingConfig:
    """The ``errors.*`` keys of a connector config (group "Error Handling")."""

    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60_000
    tolerance_all: bool = False
    log_enable: bool = False
    log_include_messages: bool = False

    @classmethod
    def parse(cls, props: Mapping[str, str]) -> ErrorHandlingConfig:
        """From a connector config (validated beforehand; unparsable values fall back to defaults)."""
        def number(name: str, default: int) -> int:
            try:
                return int(str(props.get(name, default)).strip())
            except ValueError:
                return default

        def flag(name: str) -> bool:
            return str(props.get(name, "false")).strip().lower() == "true"

        return cls(number("errors.retry.timeout", 0), number("errors.retry.delay.max.ms", 60_000),
                   str(props.get("errors.tolerance", "none")).strip().lower() == "all",
                   flag("errors.log.enable"), flag("errors.log.include.messages"))


class RetryWithToleranceOperator:
    """Runs record operations with retries and ``errors.tolerance`` for one task."""

    def __init__(self, task: str, config: ErrorHandlingConfig, stop: threading.Event) -> None:
        self.task = task
        self.config = config
        self._stop = stop
        self.failures = 0
        self.skipped = 0
        self.retries = 0
        self.errors_logged = 0
        self.last_error_ms = 0

    def metrics(self) -> dict[str, float]:
        """Connect's ``task-error-metrics`` attributes (dashes as underscores)."""
        return {"total_record_errors": self.failures, "total_record_failures": self.failures + self.retries,
                "total_records_skipped": self.skipped, "total_retries": self.retries,
                "total_errors_logged": self.errors_logged, "last_error_timestamp": self.last_error_ms}

    def execute(self, stage: Stage, executing: object, operation: Callable[[], T], record: SourceRecord,
                failed: Exception | None = None) -> T:
        """``operation()``, retried and tolerated as configured; :data:`FAILED` when the record is skipped.

        ``failed``: the error a first attempt the caller made itself already raised (its fast path calls the
        stage directly and hands the record here only when it raised): handled as if this first attempt had."""
        try:
            return self._with_retries(operation, failed)
        except Exception as exc:
            self.failures += 1
            self.last_error_ms = time.time_ns() // 1_000_000
            self._report(stage, executing, record, exc)
            if not self.config.tolerance_all:
                raise ConnectError("Tolerance exceeded in error handler") from exc
            self.skipped += 1
            return FAILED  # type: ignore[no-any-return]

    def call(self, stage: Stage, executing: object, record: SourceRecord, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` called directly; only when it raises does the record go through :meth:`execute` (handed
        that first error), so a stage that succeeds pays nothing for retries and tolerance."""
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - handed to the operator, which reports or re-raises it
            return self.execute(stage, executing, lambda: fn(*args), record, exc)

    def _with_retries(self, operation: Callable[[], T], failed: Exception | None = None) -> T:
        start: float | None = None  # taken at the first failure: a stage that succeeds pays no clock read
        attempt = 0
        while True:
            attempt += 1
            try:
                if failed is not None:
                    error, failed = failed, None
                    raise error
                return operation()
            except RetriableError:
                if start is None:
                    start = time.monotonic()
                timeout = self.config.retry_timeout_ms
                elapsed_ms = (time.monotonic() - start) * 1000
                if timeout == 0 or (timeout > 0 and elapsed_ms >= timeout) or self._stop.is_set():
                    raise
                delay = min(INITIAL_BACKOFF_MS * 2 ** (attempt - 1), self.config.retry_delay_max_ms)
                if timeout > 0:
                    delay = min(delay, max(timeout - elapsed_ms, 0))
                self.retries += 1
                log.debug("%s Retriable error, attempt %d, retrying in %d ms", self.task, attempt, delay)
                self._stop.wait(delay / 1000)

    def _report(self, stage: Stage, executing: object, record: SourceRecord, exc: BaseException) -> None:
        cls = executing if isinstance(executing, str) else f"{type(executing).__module__}.{type(executing).__name__}"
        if self.config.log_enable:
            self.errors_logged += 1
            where = f"Error encountered in task {self.task}. Executing stage '{stage}' with class '{cls}'"
            if self.config.log_include_messages:
                log.error("%s, where source record is = %s.", where, describe(record), exc_info=exc)
            else:
                log.error("%s.", where, exc_info=exc)
        elif self.config.tolerance_all:
            log.warning("%s Skipping a record of %s that failed in stage %s (%s): %s", self.task, record.topic,
                        stage, cls, exc)
