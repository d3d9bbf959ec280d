"""Exactly-once source support without Kafka: the worker setting, KIP-618's validation of connector configs (Java's
messages), and the transactional producer's settings (Connect's ``exactlyOnceSourceTaskProducerConfigs``)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from connect.api.errors import ConfigError
from connect.runtime import exactly_once, plugins, validation
from connect.runtime.worker_config import WorkerConfig

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
MONGO = "io.debezium.connector.mongodb.MongoDbConnector"
DISTRIBUTED = {"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s"}


def _errors(props: dict[str, str | None], *, support: str, connector: str = FILE_SOURCE) -> dict[str, list[str]]:
    desc = plugins.find_any(connector)
    assert desc is not None
    config, _ = WorkerConfig.parse({**DISTRIBUTED, "exactly.once.source.support": support}, distributed=True)
    report = validation.validate_connector_config(props, desc, worker_defaults=config.validation_defaults())
    return {e["value"]["name"]: e["value"]["errors"] for e in report["configs"] if e["value"]["errors"]}


def _file(**extra: str) -> dict[str, str | None]:
    return {"connector.class": FILE_SOURCE, "name": "f", "topic": "t", **extra}


def test_worker_setting_is_connects() -> None:
    config, _ = WorkerConfig.parse({**DISTRIBUTED, "exactly.once.source.support": "ENABLED"}, distributed=True)
    assert config.exactly_once_source_enabled()
    config, _ = WorkerConfig.parse(DISTRIBUTED, distributed=True)
    assert config.exactly_once_source_support == "disabled" and not config.exactly_once_source_enabled()
    with pytest.raises(ConfigError, match=r"exactly\.once\.source\.support"):
        WorkerConfig.parse({**DISTRIBUTED, "exactly.once.source.support": "sometimes"}, distributed=True)
    with pytest.raises(ConfigError, match=r"exactly\.once\.source\.support.*distributed worker"):
        WorkerConfig.parse({"offset.storage.file.filename": "/tmp/x", "exactly.once.source.support": "enabled"},
                           distributed=False)


def test_required_is_refused_unless_the_worker_and_the_connector_support_it() -> None:
    assert _errors(_file(file="/tmp/in", **{"exactly.once.support": "required"}), support="enabled") == {}
    assert _errors(_file(file="/tmp/in", **{"exactly.once.support": "required"}), support="preparing") == {
        "exactly.once.support": ["This worker does not have exactly-once source support enabled."]}
    assert _errors(_file(**{"exactly.once.support": "REQUIRED"}), support="enabled") == {
        "exactly.once.support": ["The connector does not support exactly-once semantics with the provided "
                                 "configuration."]}
    assert _errors(_file(**{"exactly.once.support": "requested"}), support="disabled") == {}
    mongo: dict[str, str | None] = {"connector.class": MONGO, "name": "m", "topic.prefix": "p",
                                    "exactly.once.support": "required",
                                    "mongodb.connection.string": "mongodb://localhost:27017/?replicaSet=rs0"}
    assert "exactly.once.support" not in _errors(mongo, support="enabled", connector=MONGO)


def test_undeclared_support_gets_javas_message(monkeypatch: pytest.MonkeyPatch) -> None:
    from connectors.file.source import FileStreamSourceConnector

    monkeypatch.setattr(FileStreamSourceConnector, "exactly_once_support", lambda self, props: None)
    errors = _errors(_file(file="/x", **{"exactly.once.support": "required"}), support="enabled")
    assert errors["exactly.once.support"][0].startswith("The connector does not implement the API required for "
                                                        "preflight validation of exactly-once source support.")


def test_connector_boundary_needs_a_connector_that_defines_transactions() -> None:
    assert _errors(_file(file="/x", **{"transaction.boundary": "connector"}), support="enabled") == {
        "transaction.boundary": ["The connector does not support connector-defined transaction boundaries with the "
                                 "given configuration. Please reconfigure it to use a different transaction boundary "
                                 "definition."]}
    assert _errors(_file(file="/x", **{"transaction.boundary": "interval",
                                       "transaction.boundary.interval.ms": "500"}), support="enabled") == {}


def test_producer_settings_force_idempotence_and_the_transactional_id(caplog: pytest.LogCaptureFixture) -> None:
    base: dict[str, Any] = {"bootstrap.servers": "k:9092", "enable.idempotence": False, "acks": "all",
                            "delivery.timeout.ms": 2**31 - 1, "max.in.flight.requests.per.connection": 1}
    settings = exactly_once.producer_settings(base, {}, "grp-conn-0")
    assert settings["enable.idempotence"] == "true" and settings["transactional.id"] == "grp-conn-0"
    assert settings["delivery.timeout.ms"] == "60000" and settings["max.in.flight.requests.per.connection"] == 5
    assert not caplog.records
    overrides = {"enable.idempotence": "false", "transactional.id": "mine"}
    with caplog.at_level(logging.WARNING):
        settings = exactly_once.producer_settings({**base, **overrides}, overrides, "grp-conn-0")
    assert settings["enable.idempotence"] == "true" and settings["transactional.id"] == "grp-conn-0"
    assert [r.getMessage() for r in caplog.records] == [
        "The value 'false' for the 'enable.idempotence' property will be ignored as it cannot be overridden for "
        "connectors when exactly-once source support is enabled. The value 'true' will be used instead.",
        "The value 'mine' for the 'transactional.id' property will be ignored as it cannot be overridden for "
        "connectors when exactly-once source support is enabled. The value 'grp-conn-0' will be used instead."]
    assert exactly_once.transactional_id("connect-cluster", "inventory", 3) == "connect-cluster-inventory-3"


def test_transaction_context_requests_are_taken_once() -> None:
    context = exactly_once.WorkerTransactionContext()
    record: Any = object()
    context.commit_transaction(record)
    context.abort_transaction()
    assert context.take_record(record) == (True, False) and context.take_record(record) == (False, False)
    assert context.take_batch() == (False, True) and context.take_batch() == (False, False)


def test_create_refuses_required_naming_the_field() -> None:
    from connect.runtime.herder import validation_errors

    config, _ = WorkerConfig.parse(DISTRIBUTED, distributed=True)
    props = {"connector.class": FILE_SOURCE, "name": "f", "topic": "t", "file": "/x",
             "exactly.once.support": "required"}
    assert validation_errors(props, config.validation_defaults()) == [
        "exactly.once.support: This worker does not have exactly-once source support enabled."]


def test_zombie_fencing_fences_the_previous_generation_once() -> None:
    """The leader's decisions (Connect's ``doFenceZombieSourceTasks``): nothing to fence for a first generation, the
    previous task count when task configs changed, nothing when one task follows one task; a task count record
    after each round, none when no new task configs came since."""
    from concurrent.futures import Future
    from types import SimpleNamespace
    from typing import cast

    from connect.distributed.zombie_fencing import ZombieFencing
    from connect.runtime.membership import StandaloneMembership
    from connect.storage.memory import MemoryConfigStore

    def submit(fn: Any) -> Future[Any]:  # the herder thread, inline
        future: Future[Any] = Future()
        future.set_result(fn())
        return future

    configs = MemoryConfigStore()
    fenced: list[tuple[str, int]] = []
    herder = SimpleNamespace(submit=submit, config_store=configs, membership=StandaloneMembership(configs),
                             worker=SimpleNamespace(fence_producers=lambda name, n, _props: fenced.append((name, n))))
    fencing = ZombieFencing(cast(Any, herder), timeout=10)
    configs.put_connector_config("c", {"connector.class": FILE_SOURCE, "topic": "t"})
    rounds: list[tuple[int | None, list[tuple[str, int]]]] = []
    for tasks in (3, 3, 1, 1):
        configs.put_task_configs("c", [{"topic": "t"}] * tasks)
        fencing.fence("c")
        fencing.fence("c")  # a second task of the same generation: nothing pending any more
        rounds.append((configs.snapshot().task_count_records.get("c"), list(fenced)))
        fenced.clear()
    assert rounds == [(3, []), (3, [("c", 3)]), (1, [("c", 3)]), (1, [])]
    assert "c" not in configs.snapshot().pending_fencing


def test_a_task_whose_generation_moved_on_does_not_start() -> None:
    """Connect's post-producer check: after ``init_transactions`` the task's configs must still be the latest ones
    and the task still this worker's."""
    from concurrent.futures import Future
    from types import SimpleNamespace
    from typing import cast

    from connect.api.errors import ConnectError
    from connect.distributed.zombie_fencing import ZombieFencing
    from connect.storage.config_state import ConnectorTaskId
    from connect.storage.memory import MemoryConfigStore

    def submit(fn: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn())
        return future

    configs = MemoryConfigStore()
    owned = {ConnectorTaskId("c", 0)}
    herder = SimpleNamespace(submit=submit, config_store=configs,
                             membership=SimpleNamespace(owns_task=lambda task: task in owned))
    fencing = ZombieFencing(cast(Any, herder), timeout=10)
    configs.put_connector_config("c", {"connector.class": FILE_SOURCE, "topic": "t"})
    configs.put_task_configs("c", [{"topic": "t"}])
    fencing.verify(ConnectorTaskId("c", 0), 0)
    with pytest.raises(ConnectError, match="has already been revoked from this worker"):
        fencing.verify(ConnectorTaskId("c", 1), 0)
    configs.put_task_configs("c", [{"topic": "u"}])
    with pytest.raises(ConnectError, match="already generated a new set of task configs"):
        fencing.verify(ConnectorTaskId("c", 0), 0)


def test_the_leaders_config_producer_is_connects(caplog: pytest.LogCaptureFixture) -> None:
    settings = exactly_once.leader_producer_settings(
        {"bootstrap.servers": "k:9092", "transactional.id": "mine", "enable.idempotence": "false"}, "grp",
        "grp-configs-leader")
    assert settings["transactional.id"] == "connect-cluster-grp"  # DistributedConfig.transactionalProducerId
    assert settings["enable.idempotence"] == "true" and settings["acks"] == "all"
    assert settings["client.id"] == "grp-configs-leader"
    assert "The value 'mine' for the 'transactional.id' property will be ignored" in caplog.text
