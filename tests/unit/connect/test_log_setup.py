"""The worker's log layout, JSON lines and start-up levels (connect/runtime/log_setup.py)."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from connect.runtime import log_setup


def _record(level: int, message: str, ctx: tuple[str, int | None] | None = None,
            exc: bool = False) -> logging.LogRecord:
    info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            info = sys.exc_info()
    record = logging.LogRecord("connectors.mongodb.task", level, __file__, 1, message, None, info)
    record.connector_ctx = ctx
    return record


def test_log4j_layout_with_context() -> None:
    line = log_setup.Log4jFormatter().format(_record(logging.WARNING, "Slow", ("inv", 0)))
    assert line.endswith("] WARN [inv|task-0] Slow (connectors.mongodb.task) [MainThread]"), line
    assert log_setup.Log4jFormatter().format(_record(logging.CRITICAL, "x")).split("] ")[1].startswith("FATAL x")
    assert " TRACE " in log_setup.Log4jFormatter().format(_record(5, "t"))
    tagged = log_setup.Log4jFormatter().format(_record(logging.INFO, "[inv|task-0] Started", ("inv", 0)))
    assert tagged.count("[inv|task-0]") == 1  # a message that already carries the tag keeps one
    worker = log_setup.Log4jFormatter().format(_record(logging.INFO, "Starting", ("inv", None)))
    assert "INFO [inv|worker] Starting" in worker


def test_json_lines() -> None:
    document = json.loads(log_setup.JsonFormatter().format(_record(logging.ERROR, "Failed", ("inv", 2), exc=True)))
    assert document["level"] == "ERROR" and document["connector"] == "inv" and document["task"] == 2
    assert document["logger"] == "connectors.mongodb.task" and document["message"] == "Failed"
    assert "ValueError: boom" in document["exception"] and document["time"].endswith("Z")
    plain = json.loads(log_setup.JsonFormatter().format(_record(logging.INFO, "x")))
    assert plain["connector"] is None and plain["exception"] is None


def test_startup_levels() -> None:
    root, named = log_setup.startup_levels(
        {"log4j.root.loglevel": "warn", "log4j.loggers": "a=DEBUG"},
        {"CONNECT_LOG4J_LOGGERS": "io.debezium=trace, b=ERROR"})
    assert root == "WARN" and named == [("a", "DEBUG"), ("io.debezium", "TRACE"), ("b", "ERROR")]
    assert log_setup.startup_levels({"log4j.root.loglevel": "WARN"}, {"CONNECT_LOG4J_ROOT_LOGLEVEL": "DEBUG"})[0] \
        == "DEBUG"
    with pytest.raises(ValueError, match="CONNECT_LOG4J_ROOT_LOGLEVEL"):
        log_setup.startup_levels({}, {"CONNECT_LOG4J_ROOT_LOGLEVEL": "LOUD"})
    with pytest.raises(ValueError, match=r"log4j\.loggers"):
        log_setup.startup_levels({"log4j.loggers": "a"}, {})


def test_context_is_per_thread() -> None:
    import threading

    log_setup.set_context("inv", 1)
    seen: list[object] = []
    thread = threading.Thread(target=lambda: seen.append(log_setup.context()))
    thread.start()
    thread.join()
    assert log_setup.context() == ("inv", 1) and seen == [None]
    log_setup.set_context(None)
    assert log_setup.context() is None
