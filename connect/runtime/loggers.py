"""Dynamic log levels (KIP-495 / KIP-976) on Python's :mod:`logging`: Connect's ``Loggers``.

Connect names levels as log4j does; this module maps them onto Python levels and back:

=========  ==================  =====================================================
log4j      Python level        note
=========  ==================  =====================================================
``ALL``    1                   the lowest level Python honours (0 means "inherit")
``TRACE``  5 (:data:`TRACE`)   registered with :func:`logging.addLevelName`
``DEBUG``  ``DEBUG`` (10)
``INFO``   ``INFO`` (20)
``WARN``   ``WARNING`` (30)
``ERROR``  ``ERROR`` (40)
``FATAL``  ``CRITICAL`` (50)
``OFF``    2**31 - 1           above every level (log4j 1's ``OFF_INT``)
=========  ==================  =====================================================

A Python level between two of these is reported as the log4j level just below it (``15`` reads as ``DEBUG``:
everything DEBUG lets through that is at least 15), and any level above ``CRITICAL`` reads as ``OFF``.

Java logger names use dots like Python's, so ``org.apache.kafka.connect`` is the Python logger of that name; this
worker's own modules log under ``connect.*``, ``connectors.*``, ``rest.*`` and ``converters.*``. ``root`` (any case)
names the root logger, as in Connect.

Semantics follow Connect's ``Loggers``:

- listing reports the loggers whose level is set explicitly, plus ``root``, sorted by name;
- one logger reports its effective level, or nothing when no such logger exists (it is never created by a read);
- setting a level sets it explicitly on the named logger (created if need be) and on every existing descendant
  (all loggers for ``root``), and answers all their names, sorted; ``last_modified`` moves only for a logger
  whose effective level actually changed. A Java name of :data:`ALIASES` also sets the modules it stands for
  (``org.apache.kafka.clients``: kafka-python's ``kafka`` and the librdkafka producers' logger), as at start-up.

One deviation: Connect selects descendants with a plain string prefix (``org.apache.kafka.connect`` also catches
``org.apache.kafka.connectfoo``); here a descendant is a logger below the name in the dotted hierarchy, because this
worker's own ``connect`` and ``connectors`` packages would otherwise collide.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

ROOT_LOGGER_NAME = "root"

TRACE = 5
ALL = 1
OFF = 2**31 - 1

#: log4j level name -> Python level.
LEVELS: dict[str, int] = {
    "OFF": OFF,
    "FATAL": logging.CRITICAL,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": TRACE,
    "ALL": ALL,
}

#: Java logger names an operator knows -> the modules of this worker they stand for (at start-up and at run time).
ALIASES: dict[str, tuple[str, ...]] = {
    "org.apache.kafka.connect": ("connect", "rest", "converters"),
    "org.apache.kafka.connect.runtime": ("connect.runtime",),
    "org.apache.kafka.connect.runtime.rest": ("rest",),
    "org.apache.kafka.clients": ("kafka", "connect.runtime.rdkafka_producer"),
    "org.apache.kafka": ("kafka",),
    "io.debezium": ("connectors.mongodb",),
    "io.debezium.connector.mongodb": ("connectors.mongodb",),
}

if logging.getLevelName(TRACE) == f"Level {TRACE}":
    logging.addLevelName(TRACE, "TRACE")


def parse_level(name: str) -> int | None:
    """The Python level for a log4j level name (case-insensitive, as ``Level.toLevel``), or None if unknown."""
    return LEVELS.get(name.upper())


def level_name(level: int) -> str:
    """The log4j name of a Python level: the highest log4j level not above it; ``OFF`` above ``CRITICAL``."""
    if level > logging.CRITICAL:
        return "OFF"
    best = "ALL"
    best_value = ALL
    for name, value in LEVELS.items():
        if best_value < value <= level:
            best, best_value = name, value
    return best


def is_root(name: str) -> bool:
    """Whether ``name`` designates the root logger (``root`` in any case, or the empty name)."""
    return name == "" or name.lower() == ROOT_LOGGER_NAME


@dataclass(frozen=True)
class LoggerLevel:
    """A logger's level as the REST API reports it (Connect's ``LoggerLevel`` entity)."""

    level: str
    last_modified: int | None

    def to_json(self) -> dict[str, str | int | None]:
        return {"level": self.level, "last_modified": self.last_modified}


def _millis() -> int:
    return time.time_ns() // 1_000_000


class Loggers:
    """Reads and changes logger levels of this process, remembering when each was last changed through it."""

    def __init__(self, clock: Callable[[], int] = _millis, manager: logging.Manager | None = None) -> None:
        self._clock = clock
        self._manager = manager if manager is not None else logging.Logger.manager
        self._last_modified: dict[str, int] = {}
        self._lock = threading.Lock()

    def level(self, name: str) -> LoggerLevel | None:
        """The effective level of an existing logger, or None when no logger has that name."""
        logger = self._root() if is_root(name) else self._existing().get(name)
        if logger is None:
            return None
        with self._lock:
            return self._level_of(ROOT_LOGGER_NAME if is_root(name) else name, logger)

    def all_levels(self) -> dict[str, LoggerLevel]:
        """Every logger with an explicitly set level, and ``root``, sorted by name."""
        found = {name: logger for name, logger in self._existing().items() if logger.level != logging.NOTSET}
        found[ROOT_LOGGER_NAME] = self._root()
        with self._lock:
            return {name: self._level_of(name, found[name]) for name in sorted(found)}

    def set_level(self, namespace: str, level: str) -> list[str]:
        """Set ``level`` (a log4j name) on ``namespace`` and its existing descendants; their names, sorted.

        Raises :class:`ValueError` for an unknown level name.
        """
        value = parse_level(level)
        if value is None:
            raise ValueError(f"invalid log level '{level}'.")
        log.info("Setting level of namespace %s and children to %s", namespace, level.upper())
        targets: dict[str, logging.Logger]
        if is_root(namespace):
            targets = dict(self._existing())
            targets[ROOT_LOGGER_NAME] = self._root()
        else:
            targets = {}
            existing = self._existing()
            for name in (namespace, *ALIASES.get(namespace, ())):  # a Java name also sets the modules it stands for
                prefix = name + "."
                targets.update({other: logger for other, logger in existing.items() if other.startswith(prefix)})
                targets[name] = self._get(name)
        now = self._clock()
        with self._lock:
            before = {name: logger.getEffectiveLevel() for name, logger in targets.items()}
            for name, logger in targets.items():
                logger.setLevel(value)
                if before[name] != value:
                    self._last_modified[name] = now
        return sorted(targets)

    def _level_of(self, name: str, logger: logging.Logger) -> LoggerLevel:
        return LoggerLevel(level_name(logger.getEffectiveLevel()), self._last_modified.get(name))

    def _root(self) -> logging.Logger:
        return self._manager.root

    def _get(self, name: str) -> logging.Logger:
        return self._manager.getLogger(name)

    def _existing(self) -> dict[str, logging.Logger]:
        """The loggers created so far (placeholders for loggers never asked for are not loggers yet)."""
        snapshot = dict(self._manager.loggerDict)  # a C-level copy: safe while other threads create loggers
        return {name: obj for name, obj in snapshot.items() if isinstance(obj, logging.Logger)}


_default: Loggers | None = None
_default_lock = threading.Lock()


def default_loggers() -> Loggers:
    """The process-wide instance (Python's logging is process-wide, so is the bookkeeping)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Loggers()
        return _default
