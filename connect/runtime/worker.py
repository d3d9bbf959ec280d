"""The worker: runs connector instances and source tasks (Connect's ``Worker`` and ``WorkerConnector``).

It owns no cluster state: the herder tells it what to run. Connector status changes and task
status changes are written to the status store as they happen.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any

from connect import clients, javalang
from connect.api.connector import SourceConnector
from connect.api.errors import ConnectError
from connect.api.metrics import Metric
from connect.api.task import SourceTask
from connect.config.providers import ConfigTransformer
from connect.runtime import exactly_once, log_setup, plugins
from connect.runtime.error_handling import ErrorHandlingConfig
from connect.runtime.kafka_python_producer import KafkaPythonProducer
from connect.runtime.rdkafka_producer import RdKafkaProducer, fence_producers
from connect.runtime.task_contracts import SourceProducer, TaskStatusListener
from connect.runtime.transformation_chain import build_chain
from connect.runtime.worker_config import WorkerConfig, prefixed
from connect.runtime.worker_metrics import ConnectorView, WorkerMetrics
from connect.runtime.worker_source_task import Converters, WorkerSourceTask
from connect.storage.base import OffsetStore, Status, StatusStore
from connect.storage.config_state import ConnectorTaskId
from connect.storage.connector_offsets import ConnectorOffsetStore
from connect.storage.kafka_log import read_until

log = logging.getLogger(__name__)


class _ConnectorContext:
    def __init__(self, name: str, on_reconfigure: Callable[[str], None], on_error: Callable[[str, Exception],
                 None]) -> None:
        self._name = name
        self._on_reconfigure = on_reconfigure
        self._on_error = on_error

    def request_task_reconfiguration(self) -> None:
        self._on_reconfigure(self._name)

    def raise_error(self, error: Exception) -> None:
        self._on_error(self._name, error)


class Worker(TaskStatusListener):
    """Registry and lifecycle of the connectors and tasks running in this process."""

    def __init__(self, config: WorkerConfig, props: Mapping[str, str], offset_store: OffsetStore,
                 status_store: StatusStore, *, generation: Callable[[], int] = lambda: 0,
                 on_reconfigure: Callable[[str], None] = lambda _name: None,
                 producer_factory: ProducerFactory | None = None,
                 offset_store_factory: Callable[[str], OffsetStore] | None = None) -> None:
        """``producer_factory`` builds each task's producer (default: :func:`kafka_producer`);
        ``offset_store_factory`` opens the offsets topic a connector names in ``offsets.storage.topic``
        (distributed workers)."""
        self.config = config
        self.props = dict(props)
        self.worker_id = config.worker_id()
        self.offset_store = offset_store
        self.status_store = status_store
        self._generation = generation
        self._on_reconfigure = on_reconfigure
        self.connectors: dict[str, tuple[SourceConnector, dict[str, str]]] = {}
        self.transformer = ConfigTransformer(self.props)
        self.tasks: dict[ConnectorTaskId, WorkerSourceTask] = {}
        self._versions: dict[str, str] = {}
        self._producer_factory = producer_factory or kafka_producer
        self._offset_store_factory = offset_store_factory
        self.fence_zombies: Callable[[str], None] = lambda _name: None
        """Set by the herder: fences a connector's earlier task generation before an exactly-once task starts."""
        self.task_generation: Callable[[str], int] = lambda _name: 0
        self.verify_task: Callable[[ConnectorTaskId, int], None] = lambda _task, _generation: None
        """Set by the herder: an exactly-once task's config generation, checked again once its producer is ready."""
        self.worker_metrics = WorkerMetrics()

    def set_generation(self, generation: Callable[[], int]) -> None:
        """Where status records get their group generation from."""
        self._generation = generation

    # --- status ---------------------------------------------------------------------------------
    def _status(self, state: str, trace: str | None = None, *, connector: str) -> Status:
        """A status record; ``version`` is the plugin's, as Connect 4.x writes it (null for a task that is gone)."""
        return Status(state, trace, self.worker_id, self._generation(), self._versions.get(connector))

    def _task_status(self, task_id: ConnectorTaskId, state: str, trace: str | None = None) -> Status:
        status = self._status(state, trace, connector=task_id.connector)
        return replace(status, version=None) if state == "UNASSIGNED" else status

    def _task_state(self, task_id: ConnectorTaskId, state: str) -> None:
        runner = self.tasks.get(task_id)
        if runner is not None:
            runner.task_metrics.set_state(state)

    def on_startup(self, task_id: ConnectorTaskId) -> None:
        self._task_state(task_id, "running")
        self.status_store.put_task(task_id, self._task_status(task_id, "RUNNING"))

    def on_failure(self, task_id: ConnectorTaskId, trace: str) -> None:
        self._task_state(task_id, "failed")
        self.status_store.put_task(task_id, self._task_status(task_id, "FAILED", trace))

    def on_shutdown(self, task_id: ConnectorTaskId) -> None:
        self._task_state(task_id, "unassigned")
        self.status_store.put_task(task_id, self._task_status(task_id, "UNASSIGNED"))

    def on_pause(self, task_id: ConnectorTaskId) -> None:
        self._task_state(task_id, "paused")
        self.status_store.put_task(task_id, self._task_status(task_id, "PAUSED"))

    def on_resume(self, task_id: ConnectorTaskId) -> None:
        self._task_state(task_id, "running")
        self.status_store.put_task(task_id, self._task_status(task_id, "RUNNING"))

    def on_topic(self, task_id: ConnectorTaskId, topic: str) -> None:
        if self.props.get("topic.tracking.enable", "true").strip().lower() != "false":
            self.status_store.put_topic(task_id.connector, task_id.task, topic, time.time_ns() // 1_000_000)

    def put_connector_state(self, name: str, state: str) -> None:
        """Record a connector state decided by the herder (PAUSED, STOPPED, RESTARTING, RUNNING)."""
        current = self.status_store.connector(name)
        if current is None or current.state != state or current.worker_id != self.worker_id:
            self.status_store.put_connector(name, self._status(state, connector=name))

    def put_task_state(self, task_id: ConnectorTaskId, state: str) -> None:
        """Record a task state decided by the herder (RESTARTING)."""
        self.status_store.put_task(task_id, self._task_status(task_id, state))

    def connector_failed(self, name: str, exc: BaseException) -> None:
        log.error("[%s] Connector failed", name, exc_info=exc)
        trace = "".join(traceback.format_exception(exc))
        self.status_store.put_connector(name, self._status("FAILED", trace, connector=name))

    # --- connectors -----------------------------------------------------------------------------
    def remember_version(self, name: str, props: Mapping[str, str]) -> None:
        """The plugin version written in the connector's and its tasks' status records."""
        desc = plugins.find(plugins.CONNECTORS, props.get("connector.class", ""))
        if desc is not None:
            self._versions[name] = desc.version

    def forget_version(self, name: str) -> None:
        """The connector was deleted: its last status records carry no version."""
        self._versions.pop(name, None)

    def start_connector(self, name: str, props: Mapping[str, str]) -> bool:
        """Instantiate and start a connector; False (and status FAILED) when it fails."""
        self.remember_version(name, props)
        try:
            desc = plugins.find(plugins.CONNECTORS, props.get("connector.class", ""))
            if desc is None:
                raise ConnectError(plugins.connector_not_found(props.get("connector.class", "")))
            connector: SourceConnector = plugins.load(desc)()
            connector.initialize(_ConnectorContext(name, self._on_reconfigure, self.connector_failed))
            log_setup.set_context(name)  # Connect's [name|worker] on the connector's start-up lines
            try:
                connector.start(self.transformer.transform(props))
            finally:
                log_setup.set_context(None)
        except Exception as exc:  # noqa: BLE001 - a connector's failure is its status, not the worker's
            self.worker_metrics.connector_startups.record(False)
            self.connector_failed(name, exc)
            return False
        self.worker_metrics.connector_startups.record(True)
        self.connectors[name] = (connector, dict(props))
        log.info("[%s] Connector started", name)
        self.status_store.put_connector(name, self._status("RUNNING", connector=name))
        return True

    def stop_connector(self, name: str, *, report: bool = True) -> None:
        """Stop a running connector (no-op when it is not running)."""
        entry = self.connectors.pop(name, None)
        if entry is None:
            return
        try:
            entry[0].stop()
        except Exception:
            log.exception("[%s] Connector threw an exception while stopping", name)
        log.info("[%s] Connector stopped", name)
        if report:
            self.status_store.put_connector(name, self._status("UNASSIGNED", connector=name))

    def connector_task_configs(self, name: str) -> list[dict[str, str]]:
        """Ask the running connector for its task configs, each with ``task.class`` added."""
        connector, props = self.connectors[name]
        max_tasks = int(props.get("tasks.max", "1"))
        resolved = self.transformer.transform(props)
        configs = [ConfigTransformer.restore(props, resolved, c) for c in connector.task_configs(max_tasks)]
        if len(configs) > max_tasks:
            raise ConnectError(f"Connector {name} generated {len(configs)} task configs, but tasks.max is "
                               f"{max_tasks}")
        task_class = connector.task_class()
        class_name = plugins.task_class_name(f"{task_class.__module__}.{task_class.__qualname__}")
        return [_java_order({**cfg, "task.class": class_name}, cfg) for cfg in configs]

    # --- tasks ----------------------------------------------------------------------------------
    def start_task(self, task_id: ConnectorTaskId, task_props: Mapping[str, str],
                   connector_props: Mapping[str, str]) -> bool:
        """Build and start a source task; False (and status FAILED) when it cannot be built."""
        self.remember_version(task_id.connector, connector_props)
        log_setup.set_context(task_id.connector, task_id.task)  # the task's producer threads inherit it
        try:
            runner = self._build_task(task_id, task_props, connector_props)
        except Exception as exc:
            log.error("%s Failed to start task", task_id, exc_info=exc)
            self.worker_metrics.task_startups.record(False)
            self.on_failure(task_id, "".join(traceback.format_exception(exc)))
            return False
        finally:
            log_setup.set_context(None)
        self.worker_metrics.task_startups.record(True)
        self.tasks[task_id] = runner
        runner.start()
        return True

    def _build_task(self, task_id: ConnectorTaskId, task_props: Mapping[str, str],
                    connector_props: Mapping[str, str]) -> WorkerSourceTask:
        task: SourceTask = _load_task_class(task_props)()
        task_props = self.transformer.transform(task_props)
        connector_props = self.transformer.transform(connector_props)
        own = self._connector_store(task_id.connector, connector_props)
        try:
            return self._build_runner(task_id, task, task_props, connector_props, own)
        except Exception:
            if own is not None:
                own.stop()
            raise

    def _build_runner(self, task_id: ConnectorTaskId, task: SourceTask, task_props: Mapping[str, str],
                      connector_props: Mapping[str, str], own: ConnectorOffsetStore | None) -> WorkerSourceTask:
        overrides = {**prefixed(self.props, "producer."), **prefixed(connector_props, "producer.override.")}
        converters = self._converters(connector_props)
        chain = build_chain(connector_props)
        timing = {"flush_interval_ms": self.config.offset_flush_interval_ms,
                  "flush_timeout_ms": self.config.offset_flush_timeout_ms}
        errors = ErrorHandlingConfig.parse(connector_props)
        store = self.offset_store if own is None else own
        close_store = None if own is None else own.stop
        if self.config.exactly_once_source_enabled():
            producer: Any = self._transactional_producer(task_id, overrides)
            boundary = exactly_once.TransactionBoundary.parse(connector_props)
            interval = connector_props.get("transaction.boundary.interval.ms")
            return exactly_once.ExactlyOnceWorkerSourceTask(
                task_id, task, task_props, converters, producer, store, self, **timing,
                chain=chain, errors=errors, close_store=close_store,
                offsets_topic=own.topic if own is not None else self.config.offset_storage_topic or "",
                mirror=None if own is None else own.mirror,
                boundary=boundary, interval_ms=int(interval) if interval else self.config.offset_flush_interval_ms,
                preflight=functools.partial(self.fence_zombies, task_id.connector),
                postflight=functools.partial(self.verify_task, task_id, self.task_generation(task_id.connector)),
                read_offsets=functools.partial(self.read_offsets_to_end, store))
        producer = self._producer_factory(self.config.bootstrap_servers, f"connector-producer-{task_id}", overrides)
        return WorkerSourceTask(task_id, task, task_props, converters, producer, store, self, **timing,
                                chain=chain, errors=errors, close_store=close_store)

    def _connector_store(self, name: str, connector_props: Mapping[str, str]) -> ConnectorOffsetStore | None:
        """The started store of the connector's own offsets topic, or None when it uses the worker's."""
        topic = connector_props.get("offsets.storage.topic", "").strip()
        if not topic or topic == self.config.offset_storage_topic:
            return None
        if self._offset_store_factory is None:
            raise ConnectError(f"offsets.storage.topic={topic} needs a distributed worker (a standalone worker keeps "
                               "offsets in offset.storage.file.filename)")
        store = ConnectorOffsetStore(topic, self._offset_store_factory(topic), self.offset_store)
        store.start()
        return store

    @contextlib.contextmanager
    def connector_offset_store(self, name: str, connector_props: Mapping[str, str]) -> Iterator[OffsetStore]:
        """The store of ``name``'s offsets for the offsets REST API (opened and closed around the call)."""
        own = self._connector_store(name, self.transformer.transform(connector_props))
        try:
            yield self.offset_store if own is None else own
        finally:
            if own is not None:
                own.stop()

    def _transactional_settings(self, task_id: ConnectorTaskId, overrides: dict[str, str]) -> dict[str, Any]:
        return exactly_once.task_producer_settings(self.config.bootstrap_servers, self.config.group_id or "",
                                                   task_id.connector, task_id.task, overrides)

    def _transactional_producer(self, task_id: ConnectorTaskId, overrides: dict[str, str]) -> RdKafkaProducer:
        return RdKafkaProducer(self._transactional_settings(task_id, overrides))

    def fence_producers(self, name: str, count: int, connector_props: Mapping[str, str]) -> None:
        """Fence the transactional producers of tasks ``0..count-1`` of ``name`` (zombie fencing, on the leader)."""
        props = self.transformer.transform(connector_props)
        overrides = {**prefixed(self.props, "producer."), **prefixed(props, "producer.override.")}
        settings = self._transactional_settings(ConnectorTaskId(name, 0), overrides)
        ids = [exactly_once.transactional_id(self.config.group_id or "", name, i) for i in range(count)]
        fence_producers(settings, ids, self.config.offset_flush_timeout_ms / 1000 + 60)

    def write_offsets_in_transaction(self, name: str, connector_props: Mapping[str, str],
                                     values: Mapping[bytes, bytes | None]) -> None:
        """Write altered or reset offsets (``values``: offset keys to values, None a tombstone) in one transaction of
        task 0's producer, as Connect's ``Worker.modifySourceConnectorOffsets`` does under
        ``exactly.once.source.support=enabled`` (``transactional.id`` ``<group.id>-<connector>-0``, the task's
        producer settings; the herder fenced the connector's tasks first). A commit marker follows them in the
        connector's offsets topic, and tasks, which read it ``read_committed``, see all of them or none. Returns
        once the topic's store has read them back. With a topic of the connector's own, the worker's topic is kept
        in sync as Connect's ``ConnectorOffsetBackingStore`` keeps it: tombstones are written there first (so a
        read never falls back to a reset offset), offsets after the commit (not waited for). Nothing is written
        (no transaction) when ``values`` is empty."""
        if not values:
            return
        props = self.transformer.transform(connector_props)
        timeout = self.config.offset_flush_timeout_ms / 1000 + 30
        own = self._connector_store(name, props)
        try:
            overrides = {**prefixed(self.props, "producer."), **prefixed(props, "producer.override.")}
            topic = own.topic if own is not None else self.config.offset_storage_topic or ""
            tombstones = {key: value for key, value in values.items() if value is None}
            if own is not None and tombstones:
                own.secondary.set(tombstones).result(timeout)
            producer = self._transactional_producer(ConnectorTaskId(name, 0), overrides)
            try:
                producer.init_transactions(timeout)
                producer.begin_transaction()
                for key, value in values.items():
                    producer.send(topic, value=value, key=key, headers=[], partition=None, timestamp_ms=None)
                producer.commit_transaction(timeout)
            finally:
                producer.close(5)
            self._read_back(self.offset_store if own is None else own.primary, values, timeout)
            if own is not None and len(tombstones) < len(values):
                own.mirror({key: value for key, value in values.items() if value is not None})
        finally:
            if own is not None:
                own.stop()

    @staticmethod
    def _read_back(store: OffsetStore, values: Mapping[bytes, bytes | None], timeout: float) -> None:
        """Read ``store``'s topic until it holds ``values`` (written in a transaction just committed)."""
        refresh = getattr(store, "refresh", None)
        if refresh is not None and not read_until(refresh, lambda: store.get(list(values)) == dict(values), timeout):
            raise ConnectError(f"The offsets written were not read back from the offsets topic in {timeout} s")

    def read_offsets_to_end(self, store: OffsetStore) -> None:
        """Catch up with the offsets topic (an exactly-once task reads committed offsets only)."""
        refresh = getattr(store, "refresh", None)
        if refresh is not None:
            refresh(self.config.offset_flush_timeout_ms / 1000 + 30)

    def _converters(self, connector_props: Mapping[str, str]) -> Converters:
        def build(kind: str, default: str, header: bool = False) -> Any:
            if kind in connector_props:
                name, settings = connector_props[kind], prefixed(connector_props, f"{kind}.")
            else:
                name, settings = self.props.get(kind, default), prefixed(self.props, f"{kind}.")
            converter = plugins.new_converter(name, header=header)
            if header:
                converter.configure(settings)
            else:
                converter.configure(settings, kind == "key.converter")
            return converter

        return Converters(
            build("key.converter", self.config.key_converter),
            build("value.converter", self.config.value_converter),
            build("header.converter", self.config.header_converter, header=True),
        )

    def metrics(self) -> list[Metric]:
        """The worker's, its connectors' and every task's metrics (read from the REST thread)."""
        views = {name: self._connector_view(name, props) for name, (_c, props) in list(self.connectors.items())}
        result = self.worker_metrics.samples(views, len(self.tasks))
        for runner in list(self.tasks.values()):
            result.extend(runner.metrics())
        return result

    def _connector_view(self, name: str, props: Mapping[str, str]) -> ConnectorView:
        status = self.status_store.connector(name)
        tasks = self.status_store.tasks(name)
        return ConnectorView(status.state.lower() if status else "unassigned", props.get("connector.class", ""),
                             self._versions.get(name, ""), [t.state.lower() for t in tasks.values()])

    def stop_tasks(self, task_ids: list[ConnectorTaskId], timeout: float | None = None) -> None:
        """Stop tasks, wait for them together up to ``timeout``, abandon the stragglers."""
        budget = self.config.task_shutdown_graceful_timeout_ms / 1000 if timeout is None else timeout
        runners = [r for tid in task_ids if (r := self.tasks.pop(tid, None)) is not None]
        for runner in runners:
            runner.stop()
        for runner in runners:
            if not runner.await_stop(budget):
                runner.cancel()

    def stop(self, timeout: float | None = None) -> None:
        """Stop every task and connector; idempotent."""
        self.stop_tasks(list(self.tasks), timeout)
        for name in list(self.connectors):
            self.stop_connector(name)


ProducerFactory = Callable[[str, str, dict[str, str]], SourceProducer]
"""Builds a task's producer from the bootstrap servers, its client id and its ``producer.*`` overrides."""


def kafka_producer(bootstrap_servers: str, client_id: str, overrides: dict[str, str]) -> SourceProducer:
    """A Kafka producer for a source task: librdkafka's (``producer.client.library=librdkafka``, the default) or
    kafka-python's (``kafka-python``), in the task's process."""
    overrides = dict(overrides)
    library = overrides.pop("client.library", "librdkafka").strip().lower()
    if overrides.pop("process.enable", None) is not None:
        _warn_process_enable()
    settings = clients.source_task_producer_settings(bootstrap_servers, client_id, overrides)
    if library == "librdkafka":
        return RdKafkaProducer(settings)
    if library != "kafka-python":
        raise ConnectError(f"Invalid value {library} for configuration producer.client.library: "
                           "expected librdkafka or kafka-python")
    return KafkaPythonProducer(settings)


@functools.cache
def _warn_process_enable() -> None:
    log.warning("producer.process.enable has no effect any more: task producers run in the task's process "
                "(librdkafka sends outside the GIL)")


def _java_order(config: dict[str, str], task_props: Mapping[str, str]) -> dict[str, str]:
    """``config`` with its keys in the order Kafka Connect writes a task config (a Java ``HashMap``'s)."""
    return {key: config[key] for key in javalang.task_config_order(list(task_props))}


def _load_task_class(task_props: Mapping[str, str]) -> type[SourceTask]:
    import importlib

    path = task_props.get("task.class", "")
    path = plugins.TASK_CLASSES.get(path, path)
    module_name, _, attr = path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConnectError(f"Cannot load task class {path}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, SourceTask)):
        raise ConnectError(f"{path} is not a SourceTask")
    return cls
