"""The worker's log output, as a Kafka Connect operator expects it.

- One format for every line (ours, uvicorn's, kafka-python's, librdkafka's through the producer's logger), with
  log4j's level names (``TRACE``, ``DEBUG``, ``INFO``, ``WARN``, ``ERROR``, ``FATAL``) and Connect's MDC
  ``connector.context`` (``[name|task-0] ``) on every line a task thread writes, in Connect's default pattern
  ``[%d] %p %X{connector.context}%m (%c) [%t]``.
- ``log.format=json`` (ours; ``CONNECT_LOG_FORMAT=json`` in a container): one JSON object per line with ``time``,
  ``level``, ``logger``, ``thread``, ``connector``, ``task``, ``message`` and ``exception``.
- Start-up levels from the worker config or the environment, with the Confluent image's conventions:
  ``log4j.root.loglevel`` / ``CONNECT_LOG4J_ROOT_LOGLEVEL`` and ``log4j.loggers`` / ``CONNECT_LOG4J_LOGGERS``
  (``name=LEVEL,name=LEVEL``); Java package names of Connect and Debezium also set this worker's modules.
  Levels change at run time through ``/admin/loggers``.
- ``rest.access.log.enable=true`` (ours, off by default) logs each REST request under ``uvicorn.access``.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import sys
import threading
import traceback
from collections.abc import Mapping

from connect.runtime import loggers

PATTERN = "[%(asctime)s] %(log4j_level)s %(connector_context)s%(message)s (%(name)s) [%(threadName)s]"

ALIASES = loggers.ALIASES  # Java logger names an operator knows -> the modules of this worker they stand for

_context = threading.local()
_HANDLER_NAME = "pyconnect"


def set_context(connector: str | None, task: int | None = None) -> None:
    """The connector (and task) the current thread works for; ``None`` clears it."""
    _context.value = None if connector is None else (connector, task)


def context() -> tuple[str, int | None] | None:
    """The current thread's connector and task, if any."""
    value: tuple[str, int | None] | None = getattr(_context, "value", None)
    return value


def _context_text(value: tuple[str, int | None] | None) -> str:
    if value is None:
        return ""
    connector, task = value
    return f"[{connector}|task-{task}]" if task is not None else f"[{connector}|worker]"


def log4j_level(levelno: int) -> str:
    """log4j's name for a Python level (``WARNING`` is ``WARN``, ``CRITICAL`` is ``FATAL``)."""
    return loggers.level_name(levelno) if levelno > loggers.ALL else "ALL"


class Log4jFormatter(logging.Formatter):
    """Connect's default layout, with the connector context unless the message already carries it."""

    def __init__(self) -> None:
        super().__init__(PATTERN)

    def format(self, record: logging.LogRecord) -> str:
        record.log4j_level = log4j_level(record.levelno)
        tag = _context_text(getattr(record, "connector_ctx", None))
        record.connector_context = f"{tag} " if tag and not record.getMessage().startswith(tag) else ""
        return super().format(record)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        stamp = datetime.datetime.fromtimestamp(record.created)
        return stamp.strftime("%Y-%m-%d %H:%M:%S") + f",{int(record.msecs):03d}"


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        ctx = getattr(record, "connector_ctx", None)
        exception = None
        if record.exc_info:
            exception = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        elif record.exc_text:
            exception = record.exc_text
        document = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": log4j_level(record.levelno), "logger": record.name, "thread": record.threadName,
            "connector": ctx[0] if ctx else None, "task": ctx[1] if ctx else None,
            "message": record.getMessage(), "exception": exception,
        }
        return json.dumps(document, ensure_ascii=False, default=str)


class _ContextFilter(logging.Filter):
    """Stamps each record with the thread's connector context (read when the record is made)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "connector_ctx"):
            record.connector_ctx = context()
        return True


def _levels(text: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(","):
        name, sep, level = item.strip().partition("=")
        if not item.strip():
            continue
        if not sep or not name.strip() or loggers.parse_level(level.strip()) is None:
            raise ValueError(f"expected name=LEVEL pairs separated by commas (LEVEL one of "
                             f"{', '.join(loggers.LEVELS)}), not {item.strip()!r}")
        pairs.append((name.strip(), level.strip().upper()))
    return pairs


def startup_levels(props: Mapping[str, str], env: Mapping[str, str]) -> tuple[str, list[tuple[str, str]]]:
    """The root level and the per-logger levels to start with: the environment wins over the worker config.
    Raises ``ValueError`` naming the setting when one is malformed."""
    root = env.get("CONNECT_LOG4J_ROOT_LOGLEVEL") or props.get("log4j.root.loglevel") or "INFO"
    if loggers.parse_level(root.strip()) is None:
        key = "CONNECT_LOG4J_ROOT_LOGLEVEL" if env.get("CONNECT_LOG4J_ROOT_LOGLEVEL") else "log4j.root.loglevel"
        raise ValueError(f"{key}: unknown level {root!r} (one of {', '.join(loggers.LEVELS)})")
    named: list[tuple[str, str]] = []
    for key, text in (("log4j.loggers", props.get("log4j.loggers", "")),
                      ("CONNECT_LOG4J_LOGGERS", env.get("CONNECT_LOG4J_LOGGERS", ""))):
        try:
            named.extend(_levels(text))
        except ValueError as exc:
            raise ValueError(f"{key}: {exc}") from exc
    return root.strip().upper(), named


def configure(props: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None) -> None:
    """Install the handler on the root logger and set the start-up levels (idempotent)."""
    props = props or {}
    env = os.environ if env is None else env
    root_level, named = startup_levels(props, env)
    json_format = (env.get("CONNECT_LOG_FORMAT") or props.get("log.format") or "text").strip().lower()
    if json_format not in ("text", "json"):
        raise ValueError(f"log.format: expected text or json, not {json_format!r}")
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonFormatter() if json_format == "json" else Log4jFormatter())
    handler.addFilter(_ContextFilter())
    handler.set_name(_HANDLER_NAME)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:  # ours from an earlier call only
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(loggers.LEVELS[root_level])
    for name in ("kafka", "pymongo"):  # chatty at INFO; an explicit setting below overrides
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers.clear()
        logger.propagate = True
    access = props.get("rest.access.log.enable", "false").strip().lower() == "true"
    logging.getLogger("uvicorn.access").disabled = not access
    for name, level in named:
        for target in (name, *ALIASES.get(name, ())):
            logging.getLogger(None if target.lower() == loggers.ROOT_LOGGER_NAME else target).setLevel(
                loggers.LEVELS[level])
