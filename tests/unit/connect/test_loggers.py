"""Connect's ``Loggers`` on Python logging: level names, listing, setting a namespace, ``last_modified``."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from connect.runtime import loggers as mod
from connect.runtime.loggers import OFF, TRACE, Loggers, level_name, parse_level


class Clock:
    def __init__(self) -> None:
        self.now = 1_729_800_000_000

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def manager() -> Iterator[logging.Manager]:
    """A logger hierarchy of its own, so tests never touch the process's loggers."""
    root = logging.RootLogger(logging.INFO)
    manager = logging.Manager(root)
    yield manager


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def loggers(manager: logging.Manager, clock: Clock) -> Loggers:
    return Loggers(clock=clock, manager=manager)


@pytest.mark.parametrize(("name", "level"), [
    ("TRACE", TRACE), ("debug", logging.DEBUG), ("Info", logging.INFO), ("WARN", logging.WARNING),
    ("ERROR", logging.ERROR), ("FATAL", logging.CRITICAL), ("OFF", OFF), ("ALL", 1),
])
def test_parse_level_takes_log4j_names_in_any_case(name: str, level: int) -> None:
    assert parse_level(name) == level
    assert level_name(level) == name.upper()


@pytest.mark.parametrize("name", ["WARNING", "CRITICAL", "NOTSET", "", "VERBOSE", " INFO"])
def test_parse_level_rejects_other_names(name: str) -> None:
    assert parse_level(name) is None


def test_level_name_rounds_down_between_levels_and_is_off_above_critical() -> None:
    assert level_name(15) == "DEBUG"
    assert level_name(7) == "TRACE"
    assert level_name(35) == "WARN"
    assert level_name(logging.NOTSET) == "ALL"
    assert level_name(logging.CRITICAL + 1) == "OFF"


def test_trace_is_a_named_python_level() -> None:
    assert logging.getLevelName(TRACE) == "TRACE"


def test_root_is_listed_and_readable_by_name(loggers: Loggers) -> None:
    assert {k: v.to_json() for k, v in loggers.all_levels().items()} == {
        "root": {"level": "INFO", "last_modified": None}}
    for name in ("root", "ROOT", "Root", ""):
        level = loggers.level(name)
        assert level is not None and level.level == "INFO"


def test_listing_has_explicit_levels_only_sorted(manager: logging.Manager, loggers: Loggers) -> None:
    manager.getLogger("zeta").setLevel(logging.ERROR)
    manager.getLogger("connect.runtime.herder")  # no level of its own: not listed
    manager.getLogger("alpha.beta").setLevel(logging.DEBUG)
    listed = loggers.all_levels()
    assert list(listed) == ["alpha.beta", "root", "zeta"]
    assert listed["zeta"].level == "ERROR" and listed["alpha.beta"].level == "DEBUG"


def test_one_logger_reports_its_effective_level(manager: logging.Manager, loggers: Loggers) -> None:
    manager.getLogger("connect").setLevel(logging.WARNING)
    manager.getLogger("connect.runtime.herder")
    level = loggers.level("connect.runtime.herder")
    assert level is not None and level.to_json() == {"level": "WARN", "last_modified": None}


def test_unknown_logger_is_none_and_is_not_created(manager: logging.Manager, loggers: Loggers) -> None:
    manager.getLogger("a.b.c")
    assert loggers.level("nope") is None
    assert loggers.level("a.b") is None, "a placeholder parent is not a logger"
    assert "nope" not in manager.loggerDict


def test_set_level_covers_descendants_not_prefix_siblings(manager: logging.Manager, loggers: Loggers) -> None:
    for name in ("connect.runtime.herder", "connect.storage.offsets", "connectors.mongodb", "connect"):
        manager.getLogger(name)
    affected = loggers.set_level("connect", "debug")
    assert affected == ["connect", "connect.runtime.herder", "connect.storage.offsets"]
    assert manager.getLogger("connect.storage.offsets").level == logging.DEBUG
    assert manager.getLogger("connectors.mongodb").level == logging.NOTSET
    assert list(loggers.all_levels()) == ["connect", "connect.runtime.herder", "connect.storage.offsets", "root"]


def test_set_level_creates_the_namespace_logger(manager: logging.Manager, loggers: Loggers, clock: Clock) -> None:
    manager.getLogger("org.apache.kafka.connect.runtime.Worker")
    assert loggers.set_level("org.apache.kafka", "TRACE") == [
        "kafka", "org.apache.kafka", "org.apache.kafka.connect.runtime.Worker"]  # kafka: the module it stands for
    level = loggers.level("org.apache.kafka")
    assert level is not None and level.to_json() == {"level": "TRACE", "last_modified": clock.now}
    assert manager.getLogger("org.apache.kafka.connect.runtime.Worker").isEnabledFor(TRACE)
    assert not manager.getLogger("org.apache.kafka.connect.runtime.Worker").isEnabledFor(1)


def test_set_root_covers_every_logger(manager: logging.Manager, loggers: Loggers) -> None:
    manager.getLogger("a")
    manager.getLogger("b.c").setLevel(logging.DEBUG)
    assert loggers.set_level("ROOT", "ERROR") == ["a", "b.c", "root"]
    assert manager.root.level == logging.ERROR
    assert {k: v.level for k, v in loggers.all_levels().items()} == {"a": "ERROR", "b.c": "ERROR", "root": "ERROR"}


def test_off_silences(manager: logging.Manager, loggers: Loggers) -> None:
    logger = manager.getLogger("noisy")
    loggers.set_level("noisy", "OFF")
    assert not logger.isEnabledFor(logging.CRITICAL)
    level = loggers.level("noisy")
    assert level is not None and level.level == "OFF"
    assert "noisy" in loggers.all_levels()


def test_last_modified_moves_only_on_change(manager: logging.Manager, loggers: Loggers, clock: Clock) -> None:
    manager.getLogger("x.y")
    first = clock.now
    loggers.set_level("x", "DEBUG")
    clock.now += 5_000
    loggers.set_level("x", "DEBUG")
    listed = loggers.all_levels()
    assert listed["x"].last_modified == first and listed["x.y"].last_modified == first
    assert listed["root"].last_modified is None
    loggers.set_level("x.y", "WARN")
    assert loggers.all_levels()["x.y"].last_modified == clock.now
    assert loggers.all_levels()["x"].last_modified == first


def test_unchanged_effective_level_is_set_but_not_stamped(manager: logging.Manager, loggers: Loggers) -> None:
    manager.getLogger("quiet.child")
    assert loggers.set_level("quiet", "INFO") == ["quiet", "quiet.child"]  # root is INFO already
    listed = loggers.all_levels()
    assert listed["quiet"].to_json() == {"level": "INFO", "last_modified": None}


def test_invalid_level_raises(loggers: Loggers) -> None:
    with pytest.raises(ValueError, match=r"invalid log level 'LOUD'\."):
        loggers.set_level("x", "LOUD")


def test_default_instance_is_shared() -> None:
    assert mod.default_loggers() is mod.default_loggers()


def test_a_java_name_also_sets_the_modules_it_stands_for(manager: logging.Manager, loggers: Loggers) -> None:
    producer = manager.getLogger("connect.runtime.rdkafka_producer")  # librdkafka's lines come through it
    changed = loggers.set_level("org.apache.kafka.clients", "ERROR")
    assert changed == ["connect.runtime.rdkafka_producer", "kafka", "org.apache.kafka.clients"]
    assert producer.getEffectiveLevel() == logging.ERROR
    assert manager.getLogger("kafka").getEffectiveLevel() == logging.ERROR


def test_the_file_connector_logs_under_kafkas_class_names() -> None:
    """A level set on ``org.apache.kafka.connect.file`` reaches the FileStreamSource connector and task, and the
    answer names their loggers, as Java Connect's does (checked side by side by compat/rest_side_by_side.py)."""
    from connectors.file import source

    names = {f"org.apache.kafka.connect.file.{name}" for name in ("FileStreamSourceConnector", "FileStreamSourceTask")}
    assert {source.log.name, source.task_log.name} == names
    loggers = Loggers()
    namespace = logging.getLogger("org.apache.kafka.connect.file")
    before = {logger: logger.level for logger in (namespace, source.log, source.task_log)}
    try:
        assert names <= set(loggers.set_level("org.apache.kafka.connect.file", "TRACE"))
        assert source.task_log.isEnabledFor(TRACE)
    finally:
        for logger, level in before.items():
            logger.setLevel(level)
